// What a socket client knew about its live orders, and what it missed while disconnected. Events on
// the orders channel (and placement acks) keep the book of known orders; after a reconnect every
// order known as live is read over REST and each change the client never saw is reported as a
// recovered event, and the account's fills since the last event seen come from GET /fills. A gateway
// killed between a fill and its push, or a fill during the outage, is found this way: the REST
// listings are written in the same transaction as the fill (docs/api.md, "Order history and fills").
import type { Fill, Order, OrderEvent, OrderEventType, OrderStatus } from './types';

/** The message_type a recovered change reports for the status REST answers. */
const RECOVERED_TYPE: Record<OrderStatus, OrderEventType | null> = {
  NEW: null, PARTIALLY_FILLED: 'partial_fill', FILLED: 'filled', CANCELLED: 'cancelled', REJECTED: 'rejected',
};
const MAX_SEEN_FILLS = 10_000;

/** a − b of two exact decimal strings (either sign), as an exact decimal string. */
export function subDecimal(a: string, b: string): string {
  const [ia, sa] = scaled(a);
  const [ib, sb] = scaled(b);
  const s = Math.max(sa, sb);
  const d = ia * 10n ** BigInt(s - sa) - ib * 10n ** BigInt(s - sb);
  const neg = d < 0n;
  const digits = (neg ? -d : d).toString().padStart(s + 1, '0');
  const int = digits.slice(0, digits.length - s);
  const frac = s > 0 ? digits.slice(digits.length - s).replace(/0+$/, '') : '';
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

function scaled(x: string): [bigint, number] {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(x.trim());
  if (!m) throw new TypeError(`not a decimal: ${x}`);
  const frac = m[3] ?? '';
  const v = BigInt(m[2]! + frac);
  return [m[1] ? -v : v, frac.length];
}

const positive = (d: string): boolean => !d.startsWith('-') && /[1-9]/.test(d);

export class OrderBook {
  /** order id → the last state this client saw (only orders it last saw live) */
  readonly #live = new Map<string, Pick<Order, 'status' | 'filled_quantity'>>();
  readonly #seenFills = new Set<string>();
  /** newest out_time_ns of any order event seen (ns, integer string): where GET /fills resumes */
  #lastNs: bigint | undefined;

  get liveIds(): string[] {
    return [...this.#live.keys()];
  }

  get resumeNs(): bigint | undefined {
    return this.#lastNs;
  }

  /** A placement the venue acknowledged (status NEW, nothing filled). */
  placed(orderId: string): void {
    if (orderId && !this.#live.has(orderId)) this.#live.set(orderId, { status: 'NEW', filled_quantity: '0' });
  }

  /** An orders-channel event (update), or a snapshot item (`snapshot`: it only adds orders not known). */
  saw(o: Order, snapshot = false): void {
    const ns = BigInt(o.out_time_ns);
    if (this.#lastNs === undefined || ns > this.#lastNs) this.#lastNs = ns;
    if (snapshot && this.#live.has(o.order_id)) return; // the snapshot's state hides what changed meanwhile
    if (o.status === 'NEW' || o.status === 'PARTIALLY_FILLED') this.#live.set(o.order_id, { status: o.status, filled_quantity: o.filled_quantity });
    else this.#live.delete(o.order_id);
  }

  /**
   * The event this client missed for an order, given its state over REST, or null when REST says
   * nothing new. last_fill_qty is the quantity filled since the client's last view (so summing it
   * over events still counts every fill once); last_fill_price the order's most recent fill price.
   */
  recover(o: Order): OrderEvent | null {
    const known = this.#live.get(o.order_id);
    if (!known) return null; // an event already reported it (or it was never ours to follow)
    const delta = subDecimal(o.filled_quantity, known.filled_quantity);
    if (o.status === known.status && !positive(delta)) return null;
    const type = RECOVERED_TYPE[o.status];
    if (type === null) return null;
    this.saw(o);
    const filled = positive(delta);
    return { ...o, message_type: type, last_fill_qty: filled ? delta : null, last_fill_price: filled ? o.last_fill_price : null };
  }

  /** True the first time a fill id is offered. */
  newFill(f: Fill): boolean {
    if (this.#seenFills.has(f.fill_id)) return false;
    this.#seenFills.add(f.fill_id);
    if (this.#seenFills.size > MAX_SEEN_FILLS) this.#seenFills.delete(this.#seenFills.values().next().value as string);
    const ns = BigInt(f.time_ns);
    if (this.#lastNs === undefined || ns > this.#lastNs) this.#lastNs = ns;
    return true;
  }
}
