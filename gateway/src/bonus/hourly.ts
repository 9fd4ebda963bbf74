// Pays the hourly taker bonus: when a UTC hour has ended (gateway clock), its pool is split across
// the makers of the window (bonus/arithmetic.ts splitHourly) and credited to their balances, in
// one transaction with the payout records, the venue's fee income and the deletion of the window's
// accruals. The window's totals record is the "unpaid" marker: once the transaction has committed it
// is gone, so a restart or a second timer tick pays nothing again.
import type { Logger } from 'pino';
import type { GatewayDb } from '../store/db';
import type { GatewayClock } from '../clock';
import type { BonusEvent, GatewayEvents } from '../events';
import { big, str } from '../store/records';
import { VENUE_FEES_KEY } from '../results/clearing';
import { HOUR_MS, hourOf, splitHourly, type MakerLiquidity } from './arithmetic';
import {
  CLOSED_KEY, accrualKey, lastPaidWindow, payoutKey, totalsKey, windowKey, windowOfKey,
  type AccrualRec, type PayoutRec, type TotalsRec, type WindowRec,
} from './store';

export interface HourlyBonusOptions {
  /** how often due windows are looked for (ms); default 10,000 */
  checkIntervalMs?: number;
}

export class HourlyBonus {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<WindowRec[]> | null = null;
  private readonly checkIntervalMs: number;

  constructor(
    private readonly db: GatewayDb,
    private readonly clock: GatewayClock,
    private readonly events: GatewayEvents,
    private readonly log: Logger,
    opts: HourlyBonusOptions = {},
  ) {
    this.checkIntervalMs = opts.checkIntervalMs ?? 10_000;
  }

  /** Pays what is due now (windows a downtime left unpaid), then checks periodically. */
  start(): void {
    if (this.timer) return;
    const tick = (): void => {
      this.payDue().catch((e: unknown) => this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'hourly taker bonus payout failed'));
    };
    tick();
    this.timer = setInterval(tick, this.checkIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Pays every unpaid window that ended before the current hour, oldest first; resolves with the windows paid. */
  payDue(): Promise<WindowRec[]> {
    // One payout run at a time; a caller arriving meanwhile waits for it and then runs its own.
    const prev = this.running ?? Promise.resolve([]);
    const run = prev.catch(() => []).then(() => this.payDueNow());
    this.running = run;
    void run.finally(() => {
      if (this.running === run) this.running = null;
    }).catch(() => undefined);
    return run;
  }

  private async payDueNow(): Promise<WindowRec[]> {
    const current = hourOf(this.clock.nowMs());
    const due: number[] = [];
    for (const key of this.db.bonuses.getKeys({ start: 'T', end: 'U' })) {
      const w = windowOfKey(key);
      if (w < current) due.push(w);
    }
    const paid: WindowRec[] = [];
    for (const w of due) {
      const r = await this.db.txAsync(() => this.payWindow(w));
      if (!r) continue;
      paid.push(r.window);
      this.log.info({ window: w, pool: r.window.pool, paid: r.window.paid, remainder: r.window.remainder, makers: r.window.makers }, 'hourly taker bonus paid');
      for (const ev of r.events) this.events.emit('bonus', ev);
    }
    return paid;
  }

  /** Inside a transaction: pays window w if it is still unpaid. */
  private payWindow(w: number): { window: WindowRec; events: BonusEvent[] } | null {
    const totals = this.db.bonuses.get(totalsKey(w)) as TotalsRec | undefined;
    if (!totals) return null; // paid already (or nothing accrued)
    const makers: MakerLiquidity[] = [];
    const prefix = accrualKey(w, '');
    for (const { key, value } of this.db.bonuses.getRange({ start: prefix, end: `${prefix}\uffff` })) {
      const a = value as AccrualRec;
      makers.push({ user_id: key.slice(prefix.length), notional: big(a.notional), weighted: big(a.weighted) });
    }
    const split = splitHourly(big(totals.taker_fees), makers);
    const nowMs = this.clock.nowMs();
    const startMs = w * HOUR_MS;
    const windowNotional = makers.reduce((s, m) => s + m.notional, 0n);
    const events: BonusEvent[] = [];
    let paid = 0n;
    for (const p of split.payouts) {
      const acct = this.db.accounts.get(p.user_id);
      if (!acct) {
        // Cannot happen (makers are accounts); the amount stays with the venue, in the remainder.
        this.log.error({ window: w, user_id: p.user_id }, 'hourly taker bonus for an unknown account; kept by the venue');
        continue;
      }
      this.db.accounts.putSync(p.user_id, {
        ...acct, balance: str(big(acct.balance) + p.amount), bonus_hourly: str(big(acct.bonus_hourly ?? '0') + p.amount),
      });
      this.db.bonuses.putSync(payoutKey(p.user_id, w), {
        window: w, start_ms: startMs, amount: str(p.amount), notional: str(p.notional), window_notional: str(windowNotional), paid_at_ms: nowMs,
      } satisfies PayoutRec);
      paid += p.amount;
      events.push({ user_id: p.user_id, kind: 'hourly', window_start_ms: startMs, window_end_ms: startMs + HOUR_MS, amount: p.amount, notional: p.notional, at_ns: this.clock.nowNs() });
    }
    const rec: WindowRec = {
      window: w, start_ms: startMs, end_ms: startMs + HOUR_MS, taker_fees: totals.taker_fees, notional: str(windowNotional),
      pool: str(split.pool), paid: str(paid), remainder: str(split.pool - paid), makers: makers.length, paid_at_ms: nowMs,
    };
    this.db.bonuses.putSync(windowKey(w), rec);
    for (const m of makers) this.db.bonuses.removeSync(accrualKey(w, m.user_id));
    this.db.bonuses.removeSync(totalsKey(w));
    if (w > lastPaidWindow(this.db)) this.db.bonuses.putSync(CLOSED_KEY, w);
    if (paid !== 0n) this.db.meta.putSync(VENUE_FEES_KEY, str(big((this.db.meta.get(VENUE_FEES_KEY) as string | undefined) ?? '0') - paid));
    return { window: rec, events };
  }

  /** A paid window's summary, or undefined. */
  window(w: number): WindowRec | undefined {
    return this.db.bonuses.get(windowKey(w)) as WindowRec | undefined;
  }

  /** The account's hourly payouts, newest first. */
  payouts(userId: string, limit = 24): PayoutRec[] {
    const prefix = payoutKey(userId, 0).slice(0, -10);
    const out: PayoutRec[] = [];
    for (const { value } of this.db.bonuses.getRange({ start: `${prefix}\uffff`, end: prefix, reverse: true, limit })) out.push(value as PayoutRec);
    return out;
  }

  /** The account's accrual in windows not yet paid (its maker notional and the windows' totals). */
  accruing(userId: string): { window_start_ms: number; notional: bigint; window_notional: bigint; window_taker_fees: bigint }[] {
    const out: { window_start_ms: number; notional: bigint; window_notional: bigint; window_taker_fees: bigint }[] = [];
    for (const { key, value } of this.db.bonuses.getRange({ start: 'T', end: 'U' })) {
      const w = windowOfKey(key);
      const t = value as TotalsRec;
      const mine = this.db.bonuses.get(accrualKey(w, userId)) as AccrualRec | undefined;
      out.push({ window_start_ms: w * HOUR_MS, notional: big(mine?.notional ?? '0'), window_notional: big(t.notional), window_taker_fees: big(t.taker_fees) });
    }
    return out;
  }
}
