// GTT expiry. Every op the committee applies first expires the book's GTT orders due at the op's
// sequenced time, but a quiet book sees no ops: this scheduler watches the live GTT orders and, when
// one is due by the gateway clock, submits an `expire` op for its symbol. The committee expires at the
// op's sequenced time (never the gateway's), so a due order that is still live afterwards (the
// sequencer's clock behind ours) is simply retried a little later.
import type { Logger } from 'pino';
import type { GatewayClock } from '../clock';
import type { GatewayDb } from '../store/db';
import { isLive, type OrderRec } from '../store/records';

/** Pause before submitting another expire op for the same symbol. */
export const EXPIRE_RETRY_MS = 100;
/** Bound on GTT orders watched (live GTT orders are bounded by accounts × open-order limits). */
const MAX_WATCHED = 1_000_000;

interface Due {
  atNs: bigint;
  orderId: string;
  symbol: string;
}

export class GttScheduler {
  /** watched orders by expiry, earliest first */
  private readonly queue: Due[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** symbol -> gateway ms before which no new expire op is sent for it */
  private readonly quietUntil = new Map<string, number>();

  constructor(
    private readonly db: GatewayDb,
    private readonly clock: GatewayClock,
    private readonly submitExpire: (symbol: string) => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** Loads every live GTT order and starts the timer. */
  start(): void {
    this.running = true;
    for (const { value } of this.db.orders.getRange()) {
      if (value.time_in_force === 'GTT' && isLive(value.status) && value.expires_at_ns) this.watch(value);
    }
    this.arm();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Watches a GTT order (after its placement committed). */
  watch(o: Pick<OrderRec, 'order_id' | 'symbol' | 'expires_at_ns'>): void {
    if (!o.expires_at_ns) return;
    if (this.queue.length >= MAX_WATCHED) {
      this.log.error({ order_id: o.order_id }, 'GTT scheduler full: this order expires only when its book sees an op');
      return;
    }
    const d: Due = { atNs: BigInt(o.expires_at_ns), orderId: o.order_id, symbol: o.symbol };
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.queue[mid]!.atNs <= d.atNs) lo = mid + 1;
      else hi = mid;
    }
    this.queue.splice(lo, 0, d);
    if (lo === 0) this.arm();
  }

  /** Orders watched (tests, metrics). */
  get size(): number {
    return this.queue.length;
  }

  private arm(): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const next = this.queue[0];
    if (!next) return;
    const waitMs = Number((next.atNs - this.clock.nowNs()) / 1_000_000n);
    this.timer = setTimeout(() => this.fire(), Math.min(Math.max(waitMs + 1, 1), 60_000));
    this.timer.unref();
  }

  /** Submits an expire op per symbol with due live orders; keeps watching the ones still live. */
  private fire(): void {
    this.timer = null;
    const nowNs = this.clock.nowNs();
    const nowMs = this.clock.nowMs();
    const still: Due[] = [];
    const symbols = new Set<string>();
    while (this.queue.length > 0 && this.queue[0]!.atNs <= nowNs) {
      const d = this.queue.shift()!;
      const o = this.db.orders.get(d.orderId);
      if (!o || !isLive(o.status)) continue; // gone: expired, filled or cancelled
      still.push(d);
      if ((this.quietUntil.get(d.symbol) ?? 0) <= nowMs) symbols.add(d.symbol);
    }
    for (const symbol of symbols) {
      this.quietUntil.set(symbol, nowMs + EXPIRE_RETRY_MS);
      this.submitExpire(symbol).catch((e: unknown) => this.log.warn({ symbol, err: String(e) }, 'expire op not submitted; retrying'));
    }
    // Still-live due orders are checked again after the retry pause.
    for (const d of still) this.watch({ order_id: d.orderId, symbol: d.symbol, expires_at_ns: (nowNs + BigInt(EXPIRE_RETRY_MS) * 1_000_000n).toString() });
    for (const [s, until] of this.quietUntil) if (until <= nowMs - 60_000) this.quietUntil.delete(s);
    this.arm();
  }
}
