// The mark-to-market and liquidation monitor (spec: States, "Margin model", "Margin health tiers",
// "Liquidation ladder"; docs/risk.md). Every intervalMs (default 250 ms) it:
//   1. reads each traded symbol's mark from the oracle (mark-book.ts); a stale or missing mark skips
//      the symbol entirely: nothing is marked, funded or liquidated on stale data (logged once);
//   2. settles funding when a funding interval ended (funding.ts);
//   3. marks every open position: `position` events with update_reason mark_price when the mark moved
//      (the channel hub throttles them to one a second per position), a `margin_alert` when the
//      health tier changes (Healthy clears it);
//   4. runs the liquidation ladder (liquidation-ladder.ts): on the first tranche the account's
//      lockout is set (orders refused with 1411 ACCOUNT_IN_LIQUIDATION) and all its resting orders
//      are cancelled with cancel_reason LIQUIDATION; the lockout lifts when no position of the
//      account is being liquidated any more (recovered above 130%, or closed and the pause over).
//   5. escalates a bankrupt position (equity < 0) to auto-deleveraging and the backstop: insurance
//      fund, socialized loss, market halt (deleveraging.ts, coverDeficit); a funding payment beyond a
//      margin takes the same backstop path.
// Persistent: positions (with their ladder progress and funding), the vault's positions, the
// insurance fund, each market's socialized count, the last funding time per symbol and the
// lockouts this monitor set; a halt is the instrument's persisted status, written in the same
// transaction as the deficit that caused it. In memory
// (recomputed after a restart): the tier last reported and the mark last announced per position.
import { fromUnits, type InstrumentSpec } from '@tenebra/config';
import type { Logger } from 'pino';
import type { GatewayClock } from '../clock';
import type { GatewayEvents, PositionUpdateReason } from '../events';
import type { InstrumentRegistry } from '../instruments';
import { positionKey, type GatewayDb } from '../store/db';
import { big, isLive, str, type AccountRec, type LadderState, type OrderRec, type PositionRec } from '../store/records';
import { liquidationPrice } from '../positions/view';
import { markPosition, marginRatioText, type PositionMarks } from './position-marks';
import { recovered, tierOf, worse, type HealthTier } from './health-tiers';
import { applyTranche, dueTranche, emptyVaultPosition, LIQUIDATION_VAULT_ID, TRANCHES } from './liquidation-ladder';
import { DEFAULT_FUNDING_INTERVAL_MS, DEFAULT_FUNDING_RATE_PIPS, fundingBoundary, fundingPaymentMicro, settleFunding } from './funding';
import { InsuranceFund } from './insurance-fund';
import { adlCandidates, bankruptcyPriceTicks, bearLoss, socializeLoss, type SocializedShare } from './deleveraging';
import { reducePosition } from '../positions/reduce';
import { DEFAULT_FUNDING_RELEASE_PAYERS, recordFundingPaid } from './funding-ledger';
import type { MarkBook } from './mark-book';

export interface RiskMonitorOptions {
  /** evaluation period, ms (default 250); 0 runs no timer (tests call tick()) */
  intervalMs: number;
  /** funding interval, ms (default 1 hour) */
  fundingIntervalMs: number;
  /** funding rate per interval in pips (1e-6) of notional, by symbol; others use defaultFundingRatePips */
  fundingRatePips: Readonly<Record<string, bigint>>;
  defaultFundingRatePips: bigint;
  /** share of net fee income funding the insurance fund, bps (default 1,000 = 10%) */
  insuranceFeeShareBps: bigint;
  /** distinct payers a published funding amount sums at least (funding-ledger.ts); 1 = every accrual */
  fundingReleasePayers: number;
  /**
   * Backstop tier 3: a market whose losses socialized since it last went (back) to trading exceed
   * this many micro-USDC is halted until an operator sets it trading again, which starts the count
   * at 0 (default 10,000 USDC). A deficit nothing could cover halts it at once.
   */
  socializedLossHaltMicro: bigint;
}

export const DEFAULT_RISK_OPTIONS: RiskMonitorOptions = {
  intervalMs: 250,
  fundingIntervalMs: DEFAULT_FUNDING_INTERVAL_MS,
  fundingRatePips: {},
  defaultFundingRatePips: DEFAULT_FUNDING_RATE_PIPS,
  insuranceFeeShareBps: 1_000n,
  fundingReleasePayers: DEFAULT_FUNDING_RELEASE_PAYERS,
  socializedLossHaltMicro: 10_000_000_000n,
};

/** What the monitor needs of the order service (docs/orders.md). */
export interface LiquidationOrderPort {
  cancel(acct: AccountRec, orderId: string, reason: 'LIQUIDATION'): Promise<unknown>;
  setLiquidationLockout(userId: string, on: boolean): Promise<void>;
}

export interface RiskMonitorDeps {
  db: GatewayDb;
  registry: InstrumentRegistry;
  events: GatewayEvents;
  clock: GatewayClock;
  log: Logger;
  marks: MarkBook;
  orders: LiquidationOrderPort;
  /** the account's live orders (the channel hub's view of committed events) */
  liveOrders: (userId: string) => readonly OrderRec[];
  /** net venue fee income so far, micro-USDC (funds the insurance fund) */
  venueFees: () => bigint;
  /** re-checks resting orders against the mark after each evaluation (orders/resting-guard.ts) */
  restingOrders?: { sweep(): number };
}

const FUNDING_AT = (symbol: string): string => `risk:funding_at:${symbol}`;
/**
 * micro-USDC socialized in a market since it last went to trading (backstop tier 2; the total
 * decides tier 3). Losses socialized while it is halted add to it; the status change back to
 * trading removes it, in that change's transaction (InstrumentRegistry.onStatusChange).
 */
const SOCIALIZED = (symbol: string): string => `risk:socialized:${symbol}`;
const LOCKOUT_PREFIX = 'risk:lockout:';

/** What the backstop did with one deficit. */
interface Cover {
  deficit: bigint;
  absorbed: bigint;
  shares: SocializedShare[];
  uncovered: bigint;
  /** the market's socialized total after this one (since it last went to trading) */
  socializedTotal: bigint;
  /** backstop tier 3: something stayed uncovered, or the total passed the threshold */
  halt: boolean;
  /** this cover halted the market (written in its transaction); false when it was halted already */
  haltedNow: boolean;
}

const NO_COVER: Cover = { deficit: 0n, absorbed: 0n, shares: [], uncovered: 0n, socializedTotal: 0n, halt: false, haltedNow: false };

export class RiskMonitor {
  readonly options: RiskMonitorOptions;
  readonly fund: InsuranceFund;
  private readonly db: GatewayDb;
  private readonly log: Logger;
  /** health tier last reported per position key (absent: Healthy, nothing reported) */
  private readonly tiers = new Map<string, HealthTier>();
  /** mark (ticks) last announced per position key */
  private readonly announced = new Map<string, bigint>();
  /**
   * updated_ns of the state last announced on the event bus per position key (by anyone: clearing's
   * fill, this monitor, settlement), seeded from the store at the first evaluation. A position whose
   * stored state differs was changed by a commit whose events are not out yet: lmdb's readers see a
   * commit before its writer's callback announces it, so a tick in between would mark a position the
   * client has not heard of (ADR 0026's duplicate). Its mark waits for the next tick.
   */
  private readonly announcedState = new Map<string, string>();
  /** unannounced states held back one tick (a change that nobody announces is marked at the next) */
  private readonly heldBack = new Map<string, string>();
  private seeded = false;
  /** symbols whose mark is stale, since when (ms), so the log says it once */
  private readonly stale = new Map<string, number>();
  /** accounts whose lockout this monitor set (mirrors the persisted risk:lockout: keys) */
  private locked: Set<string> | null = null;
  /** orders a LIQUIDATION cancel was requested for, by order id */
  private readonly cancelling = new Set<string>();
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: RiskMonitorDeps, opts: Partial<RiskMonitorOptions> = {}) {
    this.options = { ...DEFAULT_RISK_OPTIONS, ...opts };
    if (!(this.options.fundingIntervalMs > 0)) throw new Error('risk monitor: fundingIntervalMs must be > 0');
    if (!Number.isInteger(this.options.fundingReleasePayers) || this.options.fundingReleasePayers < 1) throw new Error('risk monitor: fundingReleasePayers must be a positive integer');
    this.db = deps.db;
    this.log = deps.log;
    this.fund = new InsuranceFund(deps.db, deps.venueFees, this.options.insuranceFeeShareBps);
    deps.events.on('position', (e) => {
      const key = positionKey(e.position.user_id, e.position.symbol);
      this.announcedState.set(key, e.position.updated_ns);
      this.heldBack.delete(key);
    });
    // The threshold applies anew once a market trades again (an operator's resume): the count
    // restarts in the status change's own transaction, whoever makes it (admin route or other).
    deps.registry.onStatusChange((symbol, status, previous) => {
      if (status !== 'trading') return;
      const total = this.db.meta.get(SOCIALIZED(symbol)) as string | undefined;
      if (total === undefined) return;
      this.db.meta.removeSync(SOCIALIZED(symbol));
      this.log.info({ symbol, previous, socialized_total: total }, 'market trading again: its socialized-loss count starts at 0');
    });
  }

  start(): void {
    if (this.timer || this.options.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a running evaluation. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** The funding rate (pips per interval) of a symbol. */
  fundingRate(symbol: string): bigint {
    return this.options.fundingRatePips[symbol] ?? this.options.defaultFundingRatePips;
  }

  /** The tier last reported for a position (Healthy when none). */
  tierOf(userId: string, symbol: string): HealthTier {
    return this.tiers.get(positionKey(userId, symbol)) ?? 'Healthy';
  }

  /** One evaluation of every position; concurrent calls share the running one. Never rejects. */
  tick(): Promise<void> {
    if (this.running) return this.running;
    const run = this.evaluateAll()
      .catch((e: unknown) => this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'risk monitor evaluation failed'))
      .finally(() => {
        this.running = null;
      });
    this.running = run;
    return run;
  }

  private async evaluateAll(): Promise<void> {
    this.locked ??= this.loadLockouts();
    const now = this.deps.clock.nowMs();
    const bySymbol = new Map<string, PositionRec[]>();
    const seeding = !this.seeded;
    this.seeded = true;
    for (const { value } of this.db.positions.getRange()) {
      // what was stored before this process announced anything: clients learn it from snapshots
      if (seeding) {
        const key = positionKey(value.user_id, value.symbol);
        if (!this.announcedState.has(key)) this.announcedState.set(key, value.updated_ns);
      }
      const list = bySymbol.get(value.symbol);
      if (list) list.push(value);
      else bySymbol.set(value.symbol, [value]);
    }
    const liquidating = new Set<string>();
    // Until the first await the scanned records are what positions.get() would return (nothing else
    // runs in between, and lmdb's read snapshot only moves on a commit's callback), so a position's
    // evaluation may use its scanned record instead of reading and decoding it again. Most ticks
    // await nothing: funding is due once an interval and tranches are rare.
    let fresh = true;
    for (const [symbol, list] of bySymbol) {
      const inst = this.deps.registry.get(symbol);
      if (!inst) continue;
      const watched = list.filter((p) => p.user_id !== LIQUIDATION_VAULT_ID && this.watched(p));
      const anyOpen = list.some((p) => p.size_steps !== '0');
      if (watched.length === 0 && !anyOpen) {
        if (this.fundingMarkDue(symbol, now)) {
          await this.skipFunding(symbol, now); // nobody to charge this interval
          fresh = false;
        }
        continue;
      }
      const r = this.deps.marks.refresh(symbol);
      if (!r.ok) {
        this.noteStale(symbol, now, r.detail);
        for (const p of watched) if (p.liquidation) liquidating.add(p.user_id); // keep the state as it is
        continue;
      }
      this.noteFresh(symbol, now);
      // the market's positions, by key: the backstop re-reads them inside its transactions rather
      // than scanning the whole table for each bankrupt position (one opened by a fill since this
      // scan is left out of that evaluation's ADL and socialization; it is new at this mark anyway)
      const market = list.map((p) => positionKey(p.user_id, symbol));
      if (this.fundingDue(symbol, now)) {
        await this.fundIfDue(symbol, inst, r.ticks, now);
        fresh = false;
      }
      for (const p of watched) {
        const key = positionKey(p.user_id, symbol);
        let active = this.evaluateQuick(key, inst, r.ticks, now, fresh ? p : undefined);
        if (active === undefined) {
          active = await this.evaluate(key, inst, r.ticks, now, market);
          fresh = false;
        }
        if (active) liquidating.add(p.user_id);
      }
    }
    await this.syncLockouts(liquidating);
    this.deps.restingOrders?.sweep();
  }

  /** A position worth evaluating: open, in a ladder, or with a tier / mark state to clear. */
  private watched(p: PositionRec): boolean {
    const key = positionKey(p.user_id, p.symbol);
    return p.size_steps !== '0' || !!p.liquidation || this.tiers.has(key) || this.announced.has(key);
  }

  private noteStale(symbol: string, now: number, detail: string): void {
    if (this.stale.has(symbol)) return;
    this.stale.set(symbol, now);
    this.log.warn({ symbol, detail }, 'mark price stale or missing: positions of this symbol are not marked, funded or liquidated until it is fresh');
  }

  private noteFresh(symbol: string, now: number): void {
    const since = this.stale.get(symbol);
    if (since === undefined) return;
    this.stale.delete(symbol);
    this.log.info({ symbol, stale_ms: now - since }, 'mark price fresh again');
  }

  // ---------------------------------------------------------------------------------------------
  // One position

  /**
   * evaluate() without its writes: marks and reports a position outside any ladder that no tranche
   * or deleveraging is due for (nearly every one, every tick), synchronously and with the same
   * events; undefined when evaluate() must run instead (nothing was done then). `scanned`: the
   * position's current record when the caller knows it (else it is read).
   */
  private evaluateQuick(key: string, inst: InstrumentSpec, mark: bigint, now: number, scanned: PositionRec | undefined): boolean | undefined {
    const p = scanned ?? this.db.positions.get(key);
    if (!p) return false;
    if (p.liquidation) return undefined;
    const size = big(p.size_steps);
    if (size === 0n) {
      this.report(p, inst, 'Healthy', null);
      this.tiers.delete(key);
      this.announced.delete(key);
      return false;
    }
    const m = markPosition(p, inst, mark);
    const tier = tierOf(m.equityMicro, m.maintenanceMicro);
    if (m.equityMicro < 0n || dueTranche(null, tier, now) !== null) return undefined;
    this.report(p, inst, tier, m);
    if (this.announced.get(key) !== mark) {
      if (!this.stateAnnounced(key, p)) return false; // its commit's own events come first
      this.emitPosition('mark_price', p);
    }
    this.announced.set(key, mark);
    return false;
  }

  /**
   * The position's stored state is the one last announced (see announcedState), or was held back
   * at the previous tick already: its events had a whole tick to come, so whatever changed it
   * announces nothing, and the mark must not wait for ever.
   */
  private stateAnnounced(key: string, p: PositionRec): boolean {
    if (this.announcedState.get(key) === p.updated_ns) return true;
    if (this.heldBack.get(key) === p.updated_ns) {
      this.heldBack.delete(key);
      this.announcedState.set(key, p.updated_ns);
      return true;
    }
    this.heldBack.set(key, p.updated_ns);
    return false;
  }

  /** Marks, liquidates and reports one position; true while its ladder is active. */
  private async evaluate(key: string, inst: InstrumentSpec, mark: bigint, now: number, market: readonly string[]): Promise<boolean> {
    let p = this.db.positions.get(key);
    if (!p) return false;
    let size = big(p.size_steps);
    let ladder = p.liquidation ?? null;
    if (ladder) {
      const side = size > 0n ? 'long' : 'short';
      // After T3 the ladder (and the lockout) lasts until its pause is over; before, a position
      // closed or flipped by fills in flight ends it.
      const over = ladder.done >= TRANCHES.length ? now >= ladder.resume_at_ms : size === 0n || side !== ladder.side;
      if (over) {
        p = (await this.clearLadder(key, 'ended')) ?? p;
        ladder = null;
      }
    }
    if (size === 0n && !ladder) {
      this.report(p, inst, 'Healthy', null);
      this.tiers.delete(key);
      this.announced.delete(key);
      return false;
    }
    let m = markPosition(p, inst, mark);
    if (ladder && ladder.done < TRANCHES.length && recovered(m.equityMicro, m.maintenanceMicro)) {
      p = (await this.clearLadder(key, 'recovered')) ?? p;
      ladder = null;
      this.log.info({ user_id: p.user_id, symbol: p.symbol, margin_ratio: marginRatioText(m) }, 'position recovered above 130%: liquidation ended');
    }
    let tier = tierOf(m.equityMicro, m.maintenanceMicro);
    // Bankrupt (equity < 0 at the mark): a tranche keeps the equity, so none can restore solvency;
    // escalate at once, pause or not (every tick lost widens what the counterparties give up).
    const bankrupt = size !== 0n && m.equityMicro < 0n;
    const due = bankrupt ? (ladder?.done ?? 0) : dueTranche(ladder, tier, now);
    let changed = false;
    if (due !== null) {
      if (due === 0) await this.lock(p.user_id); // before the tranche: nothing new may be placed meanwhile
      const after = bankrupt ? await this.deleverage(key, inst, mark, now, market) : await this.runTranche(key, inst, due, mark, now, market);
      if (after) {
        p = after;
        ladder = p.liquidation ?? null;
        size = big(p.size_steps);
        m = markPosition(p, inst, mark);
        tier = tierOf(m.equityMicro, m.maintenanceMicro);
        changed = true;
      }
    }
    // While liquidating, the position reports at least the tier of its last tranche (until recovery).
    this.report(p, inst, ladder ? worse(tier, TRANCHES[ladder.done - 1]!.tier) : tier, m);
    const known = changed || this.stateAnnounced(key, p);
    if (!changed && size !== 0n && this.announced.get(key) !== mark && known) this.emitPosition('mark_price', p);
    if (known) this.announced.set(key, mark);
    return ladder !== null;
  }

  /** Emits a margin_alert when the position's tier changed. */
  private report(p: PositionRec, inst: InstrumentSpec, tier: HealthTier, m: PositionMarks | null): void {
    const key = positionKey(p.user_id, p.symbol);
    const prev = this.tiers.get(key) ?? 'Healthy';
    if (tier === prev) return;
    if (tier === 'Healthy') this.tiers.delete(key);
    else this.tiers.set(key, tier);
    const mark = m?.markTicks ?? this.deps.marks.markTicks(p.symbol);
    try {
      this.deps.events.emit('margin_alert', {
        user_id: p.user_id, symbol: p.symbol, tier,
        margin_ratio: m ? marginRatioText(m) : '0',
        mark_price: mark === null ? '0' : fromUnits(mark, inst.tick_size),
        liquidation_price: liquidationPrice(p, inst),
        at_ns: this.deps.clock.nowNs(),
      });
    } catch (e) {
      this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'a margin_alert listener failed');
    }
  }

  private emitPosition(reason: PositionUpdateReason, position: PositionRec): void {
    try {
      this.deps.events.emit('position', { update_reason: reason, position });
    } catch (e) {
      this.log.error({ err: e instanceof Error ? e.stack : String(e), reason }, 'a position listener failed');
    }
  }

  /** Ends a position's ladder (persisted); returns the updated record. */
  private async clearLadder(key: string, why: string): Promise<PositionRec | null> {
    const out = await this.db.txAsync(() => {
      const cur = this.db.positions.get(key);
      if (!cur?.liquidation) return cur ?? null;
      const next = { ...cur, liquidation: null };
      this.db.positions.putSync(key, next);
      return next;
    });
    this.log.info({ user_id: out?.user_id, symbol: out?.symbol, why }, 'liquidation ladder cleared');
    return out;
  }

  /** Tranche i of the position at the mark, with the vault and the insurance fund, in one transaction. */
  private async runTranche(key: string, inst: InstrumentSpec, i: number, mark: bigint, now: number, market: readonly string[]): Promise<PositionRec | null> {
    const nowNs = this.deps.clock.nowNs();
    const r = await this.db.txAsync(() => {
      const p = this.db.positions.get(key);
      // re-read inside the transaction: a fill may have moved the position since it was evaluated
      if (!p || p.size_steps === '0' || (p.liquidation?.done ?? 0) !== i) return null;
      const acct = this.db.accounts.get(p.user_id);
      if (!acct) throw new Error(`internal: position owner ${p.user_id} has no account`);
      const vkey = positionKey(LIQUIDATION_VAULT_ID, p.symbol);
      const vault = this.db.positions.get(vkey) ?? emptyVaultPosition(p.symbol, nowNs);
      const t = applyTranche(p, vault, acct, inst, i, mark, now, nowNs);
      this.db.positions.putSync(key, t.position);
      this.db.positions.putSync(vkey, t.vault);
      this.db.accounts.putSync(acct.user_id, t.account);
      return { ...t, cover: this.coverDeficit(p.symbol, inst, mark, t.deficitMicro, nowNs, market) };
    });
    if (!r) return null;
    const pos = r.position;
    const fields = {
      user_id: pos.user_id, symbol: pos.symbol, tranche: TRANCHES[i]!.tier, steps: r.steps.toString(), mark_ticks: mark.toString(),
      size_left: pos.size_steps, pnl: r.pnlMicro.toString(), deficit: r.deficitMicro.toString(),
    };
    this.log.warn(fields, 'liquidation tranche transferred to the liquidation vault');
    this.emitPosition('liquidation', pos);
    if (pos.size_steps === '0') this.emitPosition('closed', pos);
    this.emitPosition('liquidation', r.vault);
    this.afterCover(pos.symbol, r.cover, fields);
    return pos;
  }

  /**
   * Escalation (spec: "tranches cannot restore solvency"): a bankrupt position is closed whole at its
   * bankruptcy price against the best-ranked opposite positions (auto-deleveraging, deleveraging.ts);
   * what they cannot take goes to the vault at the mark as the last tranche, its deficit to the
   * backstop. One transaction.
   */
  private async deleverage(key: string, inst: InstrumentSpec, mark: bigint, now: number, market: readonly string[]): Promise<PositionRec | null> {
    const nowNs = this.deps.clock.nowNs();
    const last = TRANCHES.length - 1;
    const r = await this.db.txAsync(() => {
      const p0 = this.db.positions.get(key);
      // re-read inside the transaction: a fill may have moved the position since it was evaluated
      if (!p0 || p0.size_steps === '0' || markPosition(p0, inst, mark).equityMicro >= 0n) return null;
      const acct0 = this.db.accounts.get(p0.user_id);
      if (!acct0) throw new Error(`internal: position owner ${p0.user_id} has no account`);
      const p = { ...p0 };
      const acct = { ...acct0 };
      const size = big(p.size_steps);
      const side = size > 0n ? 1n : -1n;
      const absSize = size * side;
      const ladder: LadderState = p.liquidation ?? { original_steps: str(absSize), side: side > 0n ? 'long' : 'short', done: 0, transferred_steps: '0', resume_at_ms: 0 };
      const bankruptcy = bankruptcyPriceTicks(p, inst);
      const { taken, remaining } = this.closeAgainstRanked(p, side, absSize, inst, mark, bankruptcy, nowNs, market);
      let deficit = 0n;
      const placed = absSize - remaining;
      if (placed > 0n) {
        const before = big(acct.balance);
        reducePosition(inst, acct, p, placed, bankruptcy, nowNs);
        // The bankrupt loses exactly the margin of what was placed: the price is rounded against it
        // (under a tick × size beyond its margin: a deficit), and the flooring of the parts can leave
        // a few micro-USDC either way; nothing goes back to its balance (a surplus is the fund's).
        const short = before - big(acct.balance);
        if (short !== 0n) {
          acct.balance = str(before);
          p.realized_pnl = str(big(p.realized_pnl) + short);
          if (short > 0n) deficit += short;
          else this.fund.credit(-short);
        }
      }
      let out = p;
      let account = acct;
      let vault: PositionRec | null = null;
      if (remaining > 0n) {
        const vkey = positionKey(LIQUIDATION_VAULT_ID, p.symbol);
        const t = applyTranche({ ...p, liquidation: ladder }, this.db.positions.get(vkey) ?? emptyVaultPosition(p.symbol, nowNs), acct, inst, last, mark, now, nowNs);
        out = t.position;
        account = t.account;
        vault = t.vault;
        deficit += t.deficitMicro;
        this.db.positions.putSync(vkey, vault);
      } else {
        out = { ...p, liquidation: { ...ladder, done: TRANCHES.length, resume_at_ms: now + TRANCHES[last]!.pauseMs } };
      }
      this.db.positions.putSync(key, out);
      this.db.accounts.putSync(account.user_id, account);
      return { position: out, vault, taken, bankruptcy, placed, remaining, deficit, cover: this.coverDeficit(p.symbol, inst, mark, deficit, nowNs, market) };
    });
    if (!r) return null;
    const pos = r.position;
    const fields = {
      user_id: pos.user_id, symbol: pos.symbol, mark_ticks: mark.toString(), bankruptcy_ticks: r.bankruptcy.toString(),
      deleveraged: r.placed.toString(), to_vault: r.remaining.toString(), deficit: r.deficit.toString(),
    };
    this.log.warn({ ...fields, counterparties: r.taken.map((t) => ({ user_id: t.position.user_id, steps: t.steps.toString(), pnl: t.pnl.toString() })) },
      'bankrupt position auto-deleveraged at its bankruptcy price');
    for (const t of r.taken) {
      this.emitPosition('liquidation', t.position);
      if (t.position.size_steps === '0') this.emitPosition('closed', t.position);
    }
    this.emitPosition('liquidation', pos);
    if (pos.size_steps === '0') this.emitPosition('closed', pos);
    if (r.vault) this.emitPosition('liquidation', r.vault);
    this.afterCover(pos.symbol, r.cover, fields);
    return pos;
  }

  /**
   * ADL's counterparties, inside deleverage's transaction: up to `steps` of the opposite side among
   * the market's positions (`market`: keys), best ranked first, each closed at the bankruptcy price
   * (written). Returns them and what none took.
   */
  private closeAgainstRanked(
    bankrupt: PositionRec, side: 1n | -1n, steps: bigint, inst: InstrumentSpec, mark: bigint, bankruptcy: bigint, nowNs: bigint, market: readonly string[],
  ): { taken: { position: PositionRec; steps: bigint; pnl: bigint }[]; remaining: bigint } {
    const taken: { position: PositionRec; steps: bigint; pnl: bigint }[] = [];
    let remaining = steps;
    for (const c of adlCandidates(this.readMarket(market), side, inst, mark, bankruptcy, new Set([bankrupt.user_id, LIQUIDATION_VAULT_ID]))) {
      if (remaining === 0n) break;
      const held = big(c.position.size_steps);
      const absHeld = held < 0n ? -held : held;
      const q = remaining < absHeld ? remaining : absHeld;
      const position = { ...c.position };
      const stored = this.db.accounts.get(position.user_id);
      if (!stored) throw new Error(`internal: position owner ${position.user_id} has no account`);
      const account = { ...stored };
      const pnl = reducePosition(inst, account, position, q, bankruptcy, nowNs);
      this.db.positions.putSync(c.key, position);
      this.db.accounts.putSync(account.user_id, account);
      taken.push({ position, steps: q, pnl });
      remaining -= q;
    }
    return { taken, remaining };
  }

  /** The market's positions as stored now (inside a transaction: with its writes so far), by key. */
  private readMarket(keys: readonly string[]): { key: string; value: PositionRec }[] {
    const out: { key: string; value: PositionRec }[] = [];
    for (const key of keys) {
      const value = this.db.positions.get(key);
      if (value) out.push({ key, value });
    }
    return out;
  }

  /**
   * The backstop for a deficit in `symbol`, inside the caller's transaction: the insurance fund
   * absorbs what it can (tier 1), the market's profitable positions (`market`: keys) bear the rest
   * (tier 2, deleveraging.ts), what nobody could bear is recorded as uncovered, and tier 3 halts the
   * market in this same transaction, so the halt and its cause commit together (a crash between
   * them would otherwise lose the halt for good).
   */
  private coverDeficit(symbol: string, inst: InstrumentSpec, mark: bigint, deficit: bigint, nowNs: bigint, market: readonly string[]): Cover {
    if (deficit <= 0n) return NO_COVER;
    const rest = this.fund.absorb(deficit);
    const { shares, uncovered } = socializeLoss(this.readMarket(market), inst, mark, rest, new Set([LIQUIDATION_VAULT_ID]));
    const bearing = shares.map((sh) => {
      const next = bearLoss(sh.position, sh.micro, nowNs);
      this.db.positions.putSync(sh.key, next);
      return { ...sh, position: next };
    });
    this.fund.recordUncovered(uncovered);
    const socialized = rest - uncovered;
    // The count runs until the market trades again (the status listener removes it then), halt or not.
    const socializedTotal = big((this.db.meta.get(SOCIALIZED(symbol)) as string | undefined) ?? '0') + socialized;
    if (socialized > 0n) this.db.meta.putSync(SOCIALIZED(symbol), str(socializedTotal));
    const halt = uncovered > 0n || (socialized > 0n && socializedTotal > this.options.socializedLossHaltMicro);
    const haltedNow = halt && this.deps.registry.writeStatus(symbol, 'halted', new Date(this.deps.clock.nowMs()).toISOString());
    return { deficit, absorbed: deficit - rest, shares: bearing, uncovered, socializedTotal, halt, haltedNow };
  }

  /** After coverDeficit's transaction committed: logs and announces what it did, and shows a halt it wrote. */
  private afterCover(symbol: string, c: Cover, fields: Record<string, string>): void {
    if (c.deficit === 0n) return;
    if (c.absorbed > 0n) this.log.warn({ ...fields, absorbed: c.absorbed.toString() }, 'liquidation deficit absorbed by the insurance fund');
    if (c.shares.length > 0) {
      this.log.warn({ ...fields, socialized: c.shares.map((s) => ({ user_id: s.position.user_id, micro: s.micro.toString() })), market_total: c.socializedTotal.toString() },
        'liquidation deficit beyond the insurance fund socialized over the profitable positions of the market');
      for (const s of c.shares) this.emitPosition('liquidation', s.position);
    }
    if (!c.halt) return;
    if (c.uncovered > 0n) this.log.error({ ...fields, uncovered: c.uncovered.toString() }, 'liquidation deficit NOT covered: the insurance fund and the profitable positions could not bear it');
    const detail = { symbol, socialized_total: c.socializedTotal.toString(), threshold: this.options.socializedLossHaltMicro.toString(), uncovered: c.uncovered.toString() };
    if (c.haltedNow) {
      this.deps.registry.reload(); // the live list (orders, GET /instruments, the instruments channel) shows the committed halt
      this.log.error(detail, 'market halted pending manual intervention (backstop tier 3): an operator sets it trading again');
    } else {
      // tier 3 reached again while the market is halted (or not trading): nothing more to do, but say so
      this.log.error({ ...detail, status: this.deps.registry.get(symbol)?.status }, 'market already halted: backstop tier 3 reached again (losses keep being socialized while it is halted)');
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Lockout and cancels

  private loadLockouts(): Set<string> {
    const out = new Set<string>();
    for (const { key } of this.db.meta.getRange({ start: LOCKOUT_PREFIX, end: `${LOCKOUT_PREFIX}\uffff` })) out.add(String(key).slice(LOCKOUT_PREFIX.length));
    return out;
  }

  /** Sets the account's lockout (and records that this monitor owns it), then cancels its resting orders. */
  private async lock(userId: string): Promise<void> {
    const locked = (this.locked ??= this.loadLockouts());
    if (!locked.has(userId)) {
      await this.deps.orders.setLiquidationLockout(userId, true);
      await this.db.txAsync(() => this.db.meta.putSync(`${LOCKOUT_PREFIX}${userId}`, 1));
      locked.add(userId);
      this.log.warn({ user_id: userId }, 'account in liquidation: new orders blocked, resting orders cancelled');
    }
    this.cancelResting(userId);
  }

  /** Locks accounts being liquidated (again cancelling what rests) and lifts the lockouts no longer needed. */
  private async syncLockouts(liquidating: ReadonlySet<string>): Promise<void> {
    for (const u of liquidating) await this.lock(u);
    for (const u of [...(this.locked ?? [])]) {
      if (liquidating.has(u)) continue;
      await this.deps.orders.setLiquidationLockout(u, false);
      await this.db.txAsync(() => this.db.meta.removeSync(`${LOCKOUT_PREFIX}${u}`));
      this.locked?.delete(u);
      this.log.info({ user_id: u }, 'liquidation over: the account may place orders again');
    }
  }

  /**
   * Cancels the account's live orders with cancel_reason LIQUIDATION, without waiting for the
   * committee (the evaluation must not stall). Repeated every evaluation while the ladder lasts, so
   * an order that rests only later (its placement was in flight) is cancelled too.
   */
  private cancelResting(userId: string): void {
    const acct = this.db.accounts.get(userId);
    if (!acct) return;
    for (const o of this.deps.liveOrders(userId)) {
      if (this.cancelling.has(o.order_id) || !isLive(o.status)) continue;
      this.cancelling.add(o.order_id);
      void this.deps.orders.cancel(acct, o.order_id, 'LIQUIDATION').then(
        () => undefined,
        (e: unknown) => {
          this.cancelling.delete(o.order_id); // retried at the next evaluation
          this.log.warn({ user_id: userId, order_id: o.order_id, err: String(e) }, 'liquidation cancel failed; retrying');
        },
      );
    }
    if (this.cancelling.size > 10_000) this.cancelling.clear(); // only a retry guard: forgetting is harmless
  }

  // ---------------------------------------------------------------------------------------------
  // Funding

  /** Whether skipFunding() would write (the symbol's funding mark is not at this interval yet). */
  private fundingMarkDue(symbol: string, now: number): boolean {
    return (this.db.meta.get(FUNDING_AT(symbol)) as number | undefined) !== fundingBoundary(now, this.options.fundingIntervalMs);
  }

  /** Whether fundIfDue() would do anything: the symbol was never seen, or an interval ended since its last payment. */
  private fundingDue(symbol: string, now: number): boolean {
    const last = this.db.meta.get(FUNDING_AT(symbol)) as number | undefined;
    return last === undefined || fundingBoundary(now, this.options.fundingIntervalMs) > last;
  }

  /** Records the current funding interval of a symbol nobody holds (so nothing is charged for it later). */
  private async skipFunding(symbol: string, now: number): Promise<void> {
    const boundary = fundingBoundary(now, this.options.fundingIntervalMs);
    if ((this.db.meta.get(FUNDING_AT(symbol)) as number | undefined) === boundary) return;
    await this.db.txAsync(() => this.db.meta.putSync(FUNDING_AT(symbol), boundary));
  }

  /**
   * Settles one funding payment on every open position of the symbol when a funding interval ended
   * since the last one (several missed intervals, e.g. while the gateway was down or the mark stale,
   * are charged once). The first interval a symbol is seen in is not charged.
   */
  private async fundIfDue(symbol: string, inst: InstrumentSpec, mark: bigint, now: number): Promise<void> {
    const boundary = fundingBoundary(now, this.options.fundingIntervalMs);
    const last = this.db.meta.get(FUNDING_AT(symbol)) as number | undefined;
    if (last === undefined) return this.skipFunding(symbol, now);
    if (boundary <= last) return;
    const rate = this.fundingRate(symbol);
    const nowNs = this.deps.clock.nowNs();
    const r = await this.db.txAsync(() => {
      if (((this.db.meta.get(FUNDING_AT(symbol)) as number | undefined) ?? 0) >= boundary) return null;
      const changed: PositionRec[] = [];
      const market: string[] = [];
      let net = 0n;
      let paid = 0n;
      let deficit = 0n;
      const payers: string[] = [];
      for (const { key, value: p } of this.db.positions.getRange()) {
        if (p.symbol !== symbol) continue;
        market.push(key);
        if (p.size_steps === '0') continue;
        const amount = fundingPaymentMicro(big(p.size_steps), mark, rate, inst);
        if (amount === 0n) continue;
        const f = settleFunding(p, amount, nowNs, p.user_id === LIQUIDATION_VAULT_ID);
        this.db.positions.putSync(key, f.position);
        changed.push(f.position);
        net += f.settledMicro;
        if (f.settledMicro < 0n) {
          paid -= f.settledMicro;
          payers.push(p.user_id);
        }
        deficit += f.deficitMicro;
      }
      recordFundingPaid(this.db, now, inst.base_asset, paid, payers, this.options.fundingReleasePayers);
      // Receivers got all theirs; payers paid all but `deficit`. Payers rounded up and receivers down,
      // so the residual (what full payments would leave over) is >= 0 while longs and shorts balance:
      // it is the fund's. The unpaid part is a deficit like a liquidation's: fund, socialized loss,
      // halt (one path, so it is never money created and recorded nowhere).
      const residual = deficit - net;
      if (residual > 0n) this.fund.credit(residual);
      const cover = this.coverDeficit(symbol, inst, mark, residual < 0n ? deficit - residual : deficit, nowNs, market);
      this.db.meta.putSync(FUNDING_AT(symbol), boundary);
      return { changed, residual, deficit, cover };
    });
    if (!r) return;
    this.log.info({ symbol, rate_pips: rate.toString(), mark_ticks: mark.toString(), positions: r.changed.length, residual: r.residual.toString() }, 'funding settled');
    if (r.deficit > 0n) this.log.error({ symbol, deficit: r.deficit.toString() }, 'funding payments exceeded the margin left: the deficit goes to the backstop (insurance fund, socialized loss, halt)');
    for (const p of r.changed) this.emitPosition('funding', p);
    this.afterCover(symbol, r.cover, { symbol, cause: 'funding', deficit: r.cover.deficit.toString() });
  }
}
