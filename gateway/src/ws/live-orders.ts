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

export class LiveState {
  private readonly orders = new Map<string, Map<string, OrderRec>>();
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
    if (isLive(o.status)) inner(this.orders, o.user_id).set(o.order_id, o);
    else drop(this.orders, o.user_id, o.order_id);
  }

  /** Adds an order placed over the socket that no event described yet (later events win). */
  addPlaced(o: OrderRec): void {
    const m = inner(this.orders, o.user_id);
    if (!m.has(o.order_id) && isLive(o.status)) m.set(o.order_id, o);
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

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
