// Which orders of each account are live (NEW or PARTIALLY_FILLED), for orders-channel snapshots and
// cancel-on-disconnect. Orders are stored by their random id with no index by account, so this
// in-memory index is built by one scan at start and then follows the committed order events and the
// placements made over the socket. A REST placement whose committee outcome is still pending shows up
// with its first event (open, partial_fill, ...), not in a snapshot taken before it.
import type { GatewayDb } from '../store/db';
import { isLive, type OrderRec } from '../store/records';

export class LiveOrders {
  private readonly byUser = new Map<string, Set<string>>();

  constructor(private readonly db: GatewayDb) {}

  /** Scans every stored order once (O(orders)); call before events flow. */
  load(): number {
    let n = 0;
    for (const { value } of this.db.orders.getRange()) {
      if (isLive(value.status)) {
        this.add(value.user_id, value.order_id);
        n++;
      }
    }
    return n;
  }

  /** Records an order's current state (adds a live one, drops a finished one). */
  track(o: Pick<OrderRec, 'user_id' | 'order_id' | 'status'>): void {
    if (isLive(o.status)) this.add(o.user_id, o.order_id);
    else this.remove(o.user_id, o.order_id);
  }

  /** The account's live orders as currently stored, oldest entry first (finished ones are dropped on the way). */
  orders(userId: string): OrderRec[] {
    const ids = this.byUser.get(userId);
    if (!ids) return [];
    const out: OrderRec[] = [];
    for (const id of [...ids]) {
      const o = this.db.orders.get(id);
      if (o && o.user_id === userId && isLive(o.status)) out.push(o);
      else this.remove(userId, id);
    }
    out.sort((a, b) => (BigInt(a.in_time_ns) < BigInt(b.in_time_ns) ? -1 : BigInt(a.in_time_ns) > BigInt(b.in_time_ns) ? 1 : 0));
    return out;
  }

  private add(userId: string, orderId: string): void {
    let s = this.byUser.get(userId);
    if (!s) this.byUser.set(userId, (s = new Set()));
    s.add(orderId);
  }

  private remove(userId: string, orderId: string): void {
    const s = this.byUser.get(userId);
    if (!s) return;
    s.delete(orderId);
    if (s.size === 0) this.byUser.delete(userId);
  }
}
