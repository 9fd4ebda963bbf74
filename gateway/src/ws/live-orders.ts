// What the channel snapshots are made of: each account's live orders (NEW or PARTIALLY_FILLED) and
// open positions as the committed gateway events last described them. Built by one scan of the store
// at start, then folded forward from the events only, so a snapshot is exactly the state after the
// events already delivered and every later event is newer than it (reading the store instead could
// see a committed batch whose events are not emitted yet, and those would then look older than the
// snapshot). A REST placement whose committee outcome is still pending appears with its first event.
import type { GatewayDb } from '../store/db';
import type { PositionUpdateReason } from '../events';
import { isLive, type OrderRec, type PositionRec } from '../store/records';

/**
 * update_reason of a position loaded from the store at start: the store keeps no reason, and every
 * open position was opened by a fill (the spec's reasons have no "snapshot" value).
 */
export const LOADED_POSITION_REASON: PositionUpdateReason = 'fill';

/**
 * A live order in the price index (the resting-order guard's view, orders/resting-guard.ts): its
 * record as the events last described it, its price parsed once per change rather than once per
 * sweep, and its place in allLiveOrders()'s order (`user`, then `seq`), so that a sweep visiting
 * only some orders can still act on them in the order a scan of every live order would.
 */
export interface IndexedOrder {
  rec: OrderRec;
  /** price_ticks parsed; null for an order without a price */
  px: bigint | null;
  /** when the account's entry in the live view was made (allLiveOrders() visits accounts in that order) */
  user: number;
  /** when the order entered its account's entry (the order within an account) */
  seq: number;
}

/**
 * One side of a symbol's live priced orders, by price: the distinct prices in ascending order and the
 * orders at each. A sweep asks for the orders outside a price range (those the mark has left
 * behind), which are the two ends of the list: O(log prices) plus the orders returned, instead of a
 * visit of every live order.
 */
export class PriceLadder {
  private readonly prices: bigint[] = [];
  private readonly levels = new Map<bigint, Set<IndexedOrder>>();

  add(e: IndexedOrder, px: bigint): void {
    let level = this.levels.get(px);
    if (!level) {
      this.levels.set(px, (level = new Set()));
      this.prices.splice(lowerBound(this.prices, px), 0, px);
    }
    level.add(e);
  }

  remove(e: IndexedOrder, px: bigint): void {
    const level = this.levels.get(px);
    if (!level || !level.delete(e) || level.size > 0) return;
    this.levels.delete(px);
    this.prices.splice(lowerBound(this.prices, px), 1);
  }

  /** Pushes every order priced below lo or above hi onto out (all of them when lo > hi). */
  outside(lo: bigint, hi: bigint, out: IndexedOrder[]): void {
    const n = this.prices.length;
    if (n === 0) return;
    let below = lowerBound(this.prices, lo); // prices[0, below) < lo
    let above = upperBound(this.prices, hi); // prices[above, n) > hi
    if (above < below) above = below; // lo > hi: every price is outside (each visited once)
    for (let i = 0; i < below; i++) for (const e of this.levels.get(this.prices[i]!)!) out.push(e);
    for (let i = above; i < n; i++) for (const e of this.levels.get(this.prices[i]!)!) out.push(e);
  }

  /** Pushes every order onto out. */
  all(out: IndexedOrder[]): void {
    for (const px of this.prices) for (const e of this.levels.get(px)!) out.push(e);
  }
}

/** A symbol's live orders in the price index. */
export interface SymbolOrders {
  buys: PriceLadder;
  sells: PriceLadder;
  /** its live orders without a price */
  unpriced: Set<IndexedOrder>;
  /** how many live orders it has */
  size: number;
}

export class LiveState {
  private readonly orders = new Map<string, Map<string, OrderRec>>();
  /** the price index: every live order by id, and each symbol's by side and price */
  private readonly indexed = new Map<string, IndexedOrder>();
  private readonly books = new Map<string, SymbolOrders>();
  /** when each account's entry in `orders` was made (see IndexedOrder.user) */
  private readonly userSeq = new Map<string, number>();
  private nextSeq = 0;
  private readonly positions = new Map<string, Map<string, PositionRec>>();
  /** update_reason of the last event per open position (snapshot frames carry it: the spec's position push has one) */
  private readonly reasons = new Map<string, Map<string, PositionUpdateReason>>();

  constructor(private readonly db: GatewayDb) {}

  /** Scans every stored order and position once (O(store)); call before events flow. */
  load(): { orders: number; positions: number } {
    let o = 0;
    let p = 0;
    for (const { value } of this.db.orders.getRange()) {
      if (isLive(value.status)) {
        this.trackOrder(value);
        o++;
      }
    }
    for (const { value } of this.db.positions.getRange()) {
      if (value.size_steps !== '0') {
        this.trackPosition(value);
        p++;
      }
    }
    return { orders: o, positions: p };
  }

  /** Folds in an order's state (a finished order leaves). */
  trackOrder(o: OrderRec): void {
    if (isLive(o.status)) this.setLive(o);
    else {
      drop(this.orders, o.user_id, o.order_id);
      if (!this.orders.has(o.user_id)) this.userSeq.delete(o.user_id);
      this.unindex(o.order_id);
    }
  }

  /** Adds an order placed over the socket that no event described yet (later events win). */
  addPlaced(o: OrderRec): void {
    if (!this.orders.get(o.user_id)?.has(o.order_id) && isLive(o.status)) this.setLive(o);
  }

  /** Sets a live order in the view and in the price index (in place when it was already live). */
  private setLive(o: OrderRec): void {
    let m = this.orders.get(o.user_id);
    if (!m) {
      this.orders.set(o.user_id, (m = new Map()));
      this.userSeq.set(o.user_id, this.nextSeq++);
    }
    m.set(o.order_id, o);
    const e = this.indexed.get(o.order_id);
    if (e) {
      const was = e.rec;
      if (was.symbol === o.symbol && was.side === o.side && was.price_ticks === o.price_ticks) {
        e.rec = o; // a fill or a flag: same place in the index
        return;
      }
      this.unplace(e);
      e.rec = o;
      e.px = o.price_ticks === null ? null : BigInt(o.price_ticks);
      this.place(e);
      return;
    }
    // a new entry in its account's map: last in that map's order, as allLiveOrders() visits it
    const n: IndexedOrder = { rec: o, px: o.price_ticks === null ? null : BigInt(o.price_ticks), user: this.userSeq.get(o.user_id)!, seq: this.nextSeq++ };
    this.indexed.set(o.order_id, n);
    this.place(n);
  }

  private unindex(orderId: string): void {
    const e = this.indexed.get(orderId);
    if (!e) return;
    this.indexed.delete(orderId);
    this.unplace(e);
  }

  private place(e: IndexedOrder): void {
    let b = this.books.get(e.rec.symbol);
    if (!b) this.books.set(e.rec.symbol, (b = { buys: new PriceLadder(), sells: new PriceLadder(), unpriced: new Set(), size: 0 }));
    b.size++;
    if (e.px === null) b.unpriced.add(e);
    else (e.rec.side === 'buy' ? b.buys : b.sells).add(e, e.px);
  }

  private unplace(e: IndexedOrder): void {
    const b = this.books.get(e.rec.symbol);
    if (!b) return;
    if (e.px === null) b.unpriced.delete(e);
    else (e.rec.side === 'buy' ? b.buys : b.sells).remove(e, e.px);
    if (--b.size === 0) this.books.delete(e.rec.symbol);
  }

  /** Each symbol with live orders, and its orders by side and price (the resting-order guard's sweep). */
  symbolOrders(): IterableIterator<[string, SymbolOrders]> {
    return this.books.entries();
  }

  /** A live order's entry in the price index. */
  indexedOrder(orderId: string): IndexedOrder | undefined {
    return this.indexed.get(orderId);
  }

  /** Folds in a position's state and the reason of the event that carried it (a flat position leaves). */
  trackPosition(p: PositionRec, reason: PositionUpdateReason = LOADED_POSITION_REASON): void {
    if (p.size_steps !== '0') {
      inner(this.positions, p.user_id).set(p.symbol, p);
      inner(this.reasons, p.user_id).set(p.symbol, reason);
    } else {
      drop(this.positions, p.user_id, p.symbol);
      drop(this.reasons, p.user_id, p.symbol);
    }
  }

  /** update_reason of the last change of an open position (LOADED_POSITION_REASON when none was seen this run). */
  lastReason(userId: string, symbol: string): PositionUpdateReason {
    return this.reasons.get(userId)?.get(symbol) ?? LOADED_POSITION_REASON;
  }

  /** The account's live orders, oldest first. */
  liveOrders(userId: string): OrderRec[] {
    return [...(this.orders.get(userId)?.values() ?? [])].sort((a, b) => cmp(BigInt(a.in_time_ns), BigInt(b.in_time_ns)));
  }

  /** Every account's live orders (no order): the resting-order guard's scan (orders/resting-guard.ts). */
  *allLiveOrders(): IterableIterator<OrderRec> {
    for (const m of this.orders.values()) yield* m.values();
  }

  /** The account's open position in a symbol as the events last described it (a new object at each change). */
  position(userId: string, symbol: string): PositionRec | undefined {
    return this.positions.get(userId)?.get(symbol);
  }

  /** The account's open positions, by symbol. */
  openPositions(userId: string): PositionRec[] {
    return [...(this.positions.get(userId)?.values() ?? [])].sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
  }
}

function inner<V>(m: Map<string, Map<string, V>>, k: string): Map<string, V> {
  let v = m.get(k);
  if (!v) m.set(k, (v = new Map()));
  return v;
}

function drop<V>(m: Map<string, Map<string, V>>, k: string, k2: string): void {
  const v = m.get(k);
  if (!v) return;
  v.delete(k2);
  if (v.size === 0) m.delete(k);
}

/** The first index whose price is >= px. */
function lowerBound(a: readonly bigint[], px: bigint): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < px) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index whose price is > px. */
function upperBound(a: readonly bigint[], px: bigint): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! <= px) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
