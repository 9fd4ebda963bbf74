// VIP fee tiers that follow the rolling 30-day notional volume. The tier that governs an account is
// effectiveTier(floor, volume): the higher of the tier the operator assigned (the account's tier at
// creation, or `accounts tier`) and the tier its volume earns. It is written into the account
// record's `tier` field, which is what clearing (fees), pre-trade checks (minimum notional, open
// order limits), rate limits and GET /account/vip all read (tiers.ts): one source for every reader.
//
// The field is refreshed after every ledger flush for the accounts that traded, when the UTC day
// turns (volume ages out of the window), and before GET /account and /account/vip answer.
import type { Logger } from 'pino';
import type { GatewayDb } from '../store/db';
import type { GatewayClock } from '../clock';
import type { AccountRec } from '../store/records';
import { effectiveTier, tierForVolume, VOLUME_WINDOW_DAYS, type Tier } from '../tiers';
import { floorKey, type StatsStore } from '../stats/store';
import { dayOf } from '../stats/window';

export interface VipStatus {
  /** the tier that governs execution now */
  tier: Tier;
  /** the operator-assigned minimum tier */
  floor: Tier;
  /** the tier the volume alone earns */
  volumeTier: Tier;
  /** notional volume over the UTC days [today − 29, today], micro-USDC */
  volume30dMicro: bigint;
}

export class VipService {
  private sweptDay = -1;

  constructor(
    private readonly db: GatewayDb,
    private readonly store: StatsStore,
    private readonly clock: GatewayClock,
    private readonly log: Logger,
  ) {}

  /** Notional volume of the account over the UTC days [today − 29, today] (micro-USDC). */
  volume30d(userId: string): bigint {
    const u = this.store.user(userId);
    if (!u) return 0n;
    const today = dayOf(this.clock.nowMs());
    return this.store.userVolume(u.i, today - (VOLUME_WINDOW_DAYS - 1), today);
  }

  /** The account's tier status computed now (not written). */
  status(acct: AccountRec): VipStatus {
    const floor = this.store.floor(acct.user_id) ?? acct.tier;
    const volume30dMicro = this.volume30d(acct.user_id);
    return { tier: effectiveTier(floor, volume30dMicro), floor, volumeTier: tierForVolume(volume30dMicro), volume30dMicro };
  }

  /**
   * Makes the account record's tier equal to its effective tier (writes only on a change); resolves
   * with the current record, or undefined when there is no such account.
   */
  async refresh(userId: string): Promise<AccountRec | undefined> {
    const acct = this.db.accounts.get(userId);
    if (!acct) return undefined;
    if (this.status(acct).tier === acct.tier) return acct;
    return this.db.txAsync(() => this.applyInTx(userId, undefined));
  }

  /** Sets the operator-assigned floor tier and applies the resulting effective tier. */
  async setFloor(userId: string, floor: Tier): Promise<AccountRec | undefined> {
    return this.db.txAsync(() => this.applyInTx(userId, floor));
  }

  private applyInTx(userId: string, newFloor: Tier | undefined): AccountRec | undefined {
    const acct = this.db.accounts.get(userId);
    if (!acct) return undefined;
    const known = this.store.floor(userId);
    const floor = newFloor ?? known ?? acct.tier;
    if (known !== floor) this.store.put(floorKey(userId), floor);
    const tier = effectiveTier(floor, this.volume30d(userId));
    if (tier === acct.tier) return acct;
    const next = { ...acct, tier };
    this.db.accounts.putSync(userId, next);
    this.log.info({ user_id: userId, from: acct.tier, to: tier }, 'fee tier changed');
    return next;
  }

  /** Refreshes every account whose tier is off (at start, and when the UTC day has turned). */
  async sweep(): Promise<number> {
    this.sweptDay = dayOf(this.clock.nowMs());
    const stale: string[] = [];
    for (const { key, value } of this.db.accounts.getRange()) {
      if (this.status(value).tier !== value.tier) stale.push(key);
    }
    for (const id of stale) await this.refresh(id);
    return stale.length;
  }

  /** Sweeps when the UTC day has changed since the last sweep (call periodically). */
  async sweepIfNewDay(): Promise<void> {
    if (dayOf(this.clock.nowMs()) !== this.sweptDay) await this.sweep();
  }
}
