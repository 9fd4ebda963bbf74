// The maker side of the fill-loss check (orders/fill-loss.ts; issue 26, item 12). A resting order
// passed the check against the mark at its placement; when the mark moves away from it (a bid left
// far above a falling mark, an ask far below a rising one), a fill at its price would book a loss
// its margin cannot carry and leave a position beyond bankruptcy whose deficit others would pay.
// Every risk-monitor evaluation re-checks the resting orders of each symbol whose mark moved and
// cancels those that would now breach, with cancel_reason SYSTEM_CANCEL (docs/orders.md). The same
// sweep ends every live order of a delisted instrument (SYSTEM_CANCEL; issue 26, item 8), and every
// order the mark has left outside the committee's price window (orders/price-window.ts, ADR 0024).
import type { Logger } from 'pino';
import { positionKey, type GatewayDb } from '../store/db';
import { big, isLive, type AccountRec, type OrderRec, type PositionRec } from '../store/records';
import { microPerTickStep, type InstrumentSpec } from '@tenebra/config';
import type { InstrumentRegistry } from '../instruments';
import type { PriceOracle } from './oracle';
import { breaches, fillLoss, instrumentBandBps } from './fill-loss';
import { windowKeepTicks } from './price-window';
import type { IndexedOrder, LiveState, SymbolOrders } from '../ws/live-orders';

const minOf = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const maxOf = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/**
 * Whether fillLoss sees the same position in both: it reads size_steps, basis_ts and margin only.
 * The view gets a new object at every position event, also the risk monitor's mark_price push of an
 * unchanged record at each tick the mark moves. Comparing objects sent every loss-side order of a
 * re-marked position back to fillLoss at each sweep.
 */
function sameForFillLoss(a: PositionRec | undefined, b: PositionRec | undefined): boolean {
  if (a === b) return true;
  return a !== undefined && b !== undefined && a.size_steps === b.size_steps && a.basis_ts === b.basis_ts && a.margin === b.margin;
}

/**
 * Pushes onto out the orders of a symbol that a sweep's checks can act on (in no particular order):
 * all of them when it is delisted (at null); else a bid above the mark or an ask below it, and any
 * order farther from the mark than keep. A bid in [mark - keep, mark] and an ask in [mark, mark + keep]
 * pass both checks untouched (with keep < 0 no order does, as in the checks themselves).
 */
export function ordersToCheck(book: SymbolOrders, at: { mark: bigint; keep: bigint } | null, out: IndexedOrder[]): void {
  if (at === null) {
    book.buys.all(out);
    book.sells.all(out);
    for (const e of book.unpriced) out.push(e);
    return;
  }
  const { mark, keep } = at;
  book.buys.outside(mark - keep, minOf(mark, mark + keep), out);
  book.sells.outside(maxOf(mark, mark - keep), mark + keep, out);
}

export interface RestingGuardDeps {
  db: GatewayDb;
  registry: InstrumentRegistry;
  oracle: PriceOracle;
  log: Logger;
  /** every account's live orders by symbol, side and price (the channel hub's view of committed events; a new object at each change) */
  live: Pick<LiveState, 'symbolOrders' | 'indexedOrder'>;
  /** an account's open position in a symbol in the same view (a new object at each change) */
  livePosition: (userId: string, symbol: string) => PositionRec | undefined;
  cancel: (acct: AccountRec, orderId: string, reason: 'SYSTEM_CANCEL') => Promise<unknown>;
}

/** More than the roundings of a fill-loss slack (loss and floor up, credit and its PnL share down): micro-USDC. */
const SLACK_ROUNDING = 8n;

/** A cancel a sweep's checks called for, with the log line that says why (done in the view's order). */
interface Act {
  e: IndexedOrder;
  /** requestCancel's own reason line (a delisted instrument), else null */
  why: string | null;
  /** the price window's line, or the fill-loss line (o.order_id is e's: the store's record of it) */
  info: Record<string, unknown> | null;
  warn: Record<string, unknown> | null;
}

/** A symbol's side of one sweep: its instrument, fresh mark and price-window margin. */
interface SymbolCheck {
  delisted: boolean;
  inst: InstrumentSpec;
  mark: bigint;
  /** how far (ticks) a live price may sit from the mark before the window cancels it */
  keep: bigint;
  /** its orders were checked at this very mark */
  unmoved: boolean;
}

export class RestingOrderGuard {
  /** mark (ticks) each symbol's orders were last checked at */
  private readonly checkedAt = new Map<string, bigint>();
  /**
   * Loss-side orders found clear of the fill-loss line, by the view's order object: the farthest mark
   * from their price at which they are known clear, and the position object beside it. A fill's slack
   * (credit - loss - floor) never shrinks as the mark moves toward the order's price (for a bid it
   * grows by k x open_qty x (1 - 1.1 x maintenance ratio) per tick the mark rises: the closing part's
   * lower loss and lower equity cancel; the same for an ask as the mark falls), and it shrinks by at
   * most 2 x k x remaining per tick the mark moves away (k: micro-USDC per tick-step; the loss grows
   * by k x remaining, an ask's floor by 1.1 x maintenance ratio of that at most). So an order found
   * clear by S micro-USDC at mark m stays clear down to m - (S - SLACK_ROUNDING) / (2 k remaining) for a
   * bid (up to m + that for an ask; SLACK_ROUNDING covers the roundings of loss, floor and credit),
   * until the order changes (a new object in the view) or what fillLoss reads of its position does
   * (size, basis, margin; see sameForFillLoss): then it is checked again. The
   * check reads the view, and the store only to confirm a breach: reading the store for every
   * loss-side order was 10-15% of the gateway's CPU under a sustained load.
   */
  private readonly clearFrom = new WeakMap<OrderRec, { mark: bigint; pos: PositionRec | undefined }>();
  /** orders a cancel was requested for (a failed one is retried at the next sweep) */
  private readonly cancelling = new Set<string>();

  constructor(private readonly deps: RestingGuardDeps) {}

  /** Re-checks the live orders of every symbol whose fresh mark moved since its last check; returns the cancels requested. */
  sweep(): number {
    // A symbol is looked at when it has a live order not being cancelled (as when every live order
    // was visited: its check time moves on only then).
    const checked: [string, SymbolCheck][] = [];
    const held = this.cancellingBySymbol();
    // Only the orders a check can act on, from the view's price index: every order of a delisted
    // symbol; else a bid above the mark or an ask below it (the loss side), and an order farther
    // from the mark than the price window keeps (ADR 0024). A bid in [mark - keep, mark] and an ask
    // in [mark, mark + keep] pass both checks without a look, as they did in a visit of every order
    // (thousands under load, four times a second: 6% of the gateway's CPU at 20 instruments).
    // Each order's checks read the view and the store only, and what they decide is done after all
    // of them, in the order a visit of every live order would have acted in (the view's account,
    // then order): a cancel's synchronous part changes nothing another order's checks read (its
    // transaction runs in a later batch), so only the cancels and their log lines need that order.
    const visit: IndexedOrder[] = [];
    const acts: Act[] = [];
    for (const [symbol, book] of this.deps.live.symbolOrders()) {
      if (book.size <= (held.get(symbol) ?? 0)) continue;
      const ctx = this.symbolCheck(symbol);
      if (ctx === null) continue;
      if (!ctx.delisted) checked.push([symbol, ctx]);
      if (ctx.unmoved) continue;
      visit.length = 0;
      ordersToCheck(book, ctx.delisted ? null : ctx, visit);
      for (const e of visit) {
        if (this.cancelling.has(e.rec.order_id)) continue;
        const act = this.check(e, ctx);
        if (act !== null) acts.push(act);
      }
    }
    if (acts.length > 1) acts.sort((a, b) => a.e.user - b.e.user || a.e.seq - b.e.seq);
    let cancels = 0;
    for (const { e, why, info, warn } of acts) {
      if (info) this.deps.log.info(info, 'resting order cancelled: the mark left it outside the price window');
      if (warn) this.deps.log.warn(warn, 'resting order cancelled: the mark moved so far that its fill would leave its margin below the first tranche');
      if (this.requestCancel(e.rec.order_id, why)) cancels++;
    }
    for (const [symbol, ctx] of checked) this.checkedAt.set(symbol, ctx.mark);
    if (this.cancelling.size > 10_000) this.cancelling.clear(); // only a duplicate guard
    return cancels;
  }

  /** One live order's checks at its symbol's mark: the cancel they call for, or null. */
  private check(e: IndexedOrder, ctx: SymbolCheck): Act | null {
    const live = e.rec;
    // A delisted market never trades again: its orders end (also those left by a restart).
    if (ctx.delisted) return { e, why: 'the instrument is delisted', info: null, warn: null };
    // a bid at or below the mark, an ask at or above it, books no loss: most of a book, no store read
    if (e.px === null) return null;
    const px = e.px; // = big(live.price_ticks), parsed when the view took the record
    const mark = ctx.mark;
    // The price window (orders/price-window.ts): an order the mark has left so far behind that the
    // band around the mark no longer fits beside it is cancelled, or it would refuse new prices.
    if (px - mark > ctx.keep || mark - px > ctx.keep) {
      return { e, why: null, warn: null, info: { order_id: live.order_id, symbol: live.symbol, price_ticks: live.price_ticks, mark_ticks: mark.toString(), keep_ticks: ctx.keep.toString() } };
    }
    if (live.side === 'buy' ? px <= mark : px >= mark) return null;
    const livePos = this.deps.livePosition(live.user_id, live.symbol);
    const clear = this.clearFrom.get(live);
    if (clear && (live.side === 'buy' ? mark >= clear.mark : mark <= clear.mark) && sameForFillLoss(clear.pos, livePos)) {
      clear.pos = livePos; // the same inputs: the next look compares objects only
      return null;
    }
    // First from the view (no store read): a fill's event replaces the objects, so a clear result
    // holds until then; a breach is confirmed from the store before anything is cancelled.
    const liveLeft = big(live.qty_steps) - big(live.filled_steps);
    if (liveLeft <= 0n) return null;
    const seen = fillLoss(ctx.inst, livePos, live.side, liveLeft, px, mark, live.leverage);
    if (!breaches(seen)) {
      const slack = seen.creditMicro - seen.lossMicro - seen.floorMicro;
      if (slack >= SLACK_ROUNDING) {
        const { num, den } = microPerTickStep(ctx.inst);
        const ticks = ((slack - SLACK_ROUNDING) * den) / (2n * liveLeft * num);
        this.clearFrom.set(live, { mark: live.side === 'buy' ? mark - ticks : mark + ticks, pos: livePos });
      }
      return null;
    }
    const o = this.deps.db.orders.get(live.order_id);
    if (!o || !isLive(o.status) || o.price_ticks === null || (o.cancel_requested ?? null) !== null) return null;
    const remaining = big(o.qty_steps) - big(o.filled_steps);
    if (remaining <= 0n) return null;
    const pos = this.deps.db.positions.get(positionKey(o.user_id, o.symbol));
    const f = fillLoss(ctx.inst, pos, o.side, remaining, big(o.price_ticks), mark, o.leverage);
    if (!breaches(f)) return null;
    return { e, why: null, info: null, warn: { order_id: o.order_id, symbol: o.symbol, price_ticks: o.price_ticks, mark_ticks: mark.toString(), loss_micro: f.lossMicro.toString(), credit_micro: f.creditMicro.toString() } };
  }

  /** How many of each symbol's live orders a cancel is in flight for (usually none). */
  private cancellingBySymbol(): Map<string, number> {
    const out = new Map<string, number>();
    for (const id of this.cancelling) {
      const e = this.deps.live.indexedOrder(id);
      if (e) out.set(e.rec.symbol, (out.get(e.rec.symbol) ?? 0) + 1);
    }
    return out;
  }

  /** What this sweep checks a symbol's orders against; null for an unknown symbol or one without a fresh mark. */
  private symbolCheck(symbol: string): SymbolCheck | null {
    const inst = this.deps.registry.get(symbol);
    if (!inst) return null;
    if (inst.status === 'delisted') return { delisted: true, inst, mark: 0n, keep: 0n, unmoved: false };
    const ref = this.deps.oracle.reference(symbol);
    if (!ref.ok) return null; // no fresh mark: nothing is decided on stale data
    const mark = ref.quote.mid;
    const keep = windowKeepTicks(inst, (mark * BigInt(instrumentBandBps(inst))) / 10_000n);
    return { delisted: false, inst, mark, keep, unmoved: this.checkedAt.get(symbol) === mark };
  }

  /** Submits a SYSTEM_CANCEL of a live order (once at a time); false when there is nothing to cancel. */
  private requestCancel(orderId: string, why: string | null): boolean {
    const o = this.deps.db.orders.get(orderId);
    if (!o || !isLive(o.status) || (o.cancel_requested ?? null) !== null) return false;
    const acct = this.deps.db.accounts.get(o.user_id);
    if (!acct) return false;
    if (why !== null) this.deps.log.info({ order_id: orderId, symbol: o.symbol }, `resting order cancelled: ${why}`);
    this.cancelling.add(orderId);
    this.deps.cancel(acct, orderId, 'SYSTEM_CANCEL').then(
      () => this.cancelling.delete(orderId),
      (e: unknown) => {
        this.cancelling.delete(orderId);
        this.checkedAt.delete(o.symbol); // look again at the next sweep
        this.deps.log.warn({ order_id: orderId, err: e instanceof Error ? e.message : String(e) }, 'system cancel of a live order failed; retried at the next sweep');
      },
    );
    return true;
  }
}
