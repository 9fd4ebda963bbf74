// Keeps resting peg orders at their reference (docs/orders.md, "Peg orders follow their
// reference"). Every pollMs it compares each resting peg's price with its reference (mid, bid or
// ask of the oracle's fresh quote) and, when they differ by at least minMoveTicks and the order was
// not re-pegged in the last minIntervalMs, re-prices it through OrderService.repeg: the same checked
// modify PATCH uses, sequenced and applied by the committee on shares (a `replace`, so the order
// loses time priority). Each re-price costs committee work, hence the throttle.
//
// Skipped: orders whose placement outcome is not applied yet, with a modify or cancel in flight,
// or whose symbol has no fresh reference (a stale oracle re-prices nothing: the order keeps its last
// price until the feed is fresh again, rather than following a price nobody publishes).
import { MAX_BOOK_UNITS, instrumentBySymbol, maxPriceTicks } from '@tenebra/config';
import type { Logger } from 'pino';
import type { GatewayDb } from '../store/db';
import type { GatewayClock } from '../clock';
import type { GatewayEvents, OrderEvent } from '../events';
import { big, isLive, type OrderRec } from '../store/records';
import { ApiError } from '../errors';
import type { PriceOracle } from './oracle';
import type { Answer } from './service';

export interface RepegOptions {
  /** false: pegs keep their entry price (default true) */
  enabled?: boolean;
  /** how often resting pegs are compared with their reference (ms); default 250, the primary feed's cadence */
  pollMs?: number;
  /** at most one re-price per order in this many ms (gateway clock); default 1,000 */
  minIntervalMs?: number;
  /** re-price only when the reference moved at least this many ticks from the order's price; default 1 */
  minMoveTicks?: bigint;
  /** re-prices in flight at once, across orders; default 64 */
  maxInFlight?: number;
}

/** The order service as the re-pegger uses it. */
export interface RepegPort {
  repeg(orderId: string, priceTicks: bigint): Promise<Answer>;
}

/** True for an order the re-pegger follows: a live resting peg. */
const isRestingPeg = (o: OrderRec): boolean => o.type === 'peg' && isLive(o.status) && (o.time_in_force === 'GTC' || o.time_in_force === 'GTT');

export class Repegger {
  /** live resting peg order ids */
  private readonly pegs = new Set<string>();
  /** order id -> gateway ms of its last re-price attempt */
  private readonly lastMs = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private readonly off: () => void;
  readonly enabled: boolean;
  private readonly pollMs: number;
  private readonly minIntervalMs: number;
  private readonly minMoveTicks: bigint;
  private readonly maxInFlight: number;

  constructor(
    private readonly db: GatewayDb,
    private readonly oracle: PriceOracle,
    private readonly orders: RepegPort,
    private readonly clock: GatewayClock,
    events: GatewayEvents,
    private readonly log: Logger,
    opts: RepegOptions = {},
  ) {
    this.enabled = opts.enabled ?? true;
    this.pollMs = opts.pollMs ?? 250;
    this.minIntervalMs = opts.minIntervalMs ?? 1_000;
    this.minMoveTicks = opts.minMoveTicks ?? 1n;
    this.maxInFlight = opts.maxInFlight ?? 64;
    const onOrder = (e: OrderEvent): void => this.follow(e.order);
    events.on('order', onOrder);
    this.off = () => events.off('order', onOrder);
  }

  /** Finds the resting pegs in the store (one pass at start; events keep the set current after). */
  start(): void {
    if (!this.enabled || this.timer) return;
    for (const { value } of this.db.orders.getRange()) if (isRestingPeg(value)) this.pegs.add(value.order_id);
    this.timer = setInterval(() => {
      try {
        void this.runOnce(); // never rejects: each re-price handles its own failure
      } catch (e) {
        this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 're-peg pass failed');
      }
    }, this.pollMs);
    this.timer.unref();
  }

  /** Stops the timer; re-prices in flight finish on their own (their outcome is the committee's). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.off();
  }

  /** Resting pegs followed now. */
  get followed(): number {
    return this.pegs.size;
  }

  private follow(o: OrderRec): void {
    if (o.type !== 'peg') return;
    if (isRestingPeg(o)) this.pegs.add(o.order_id);
    else {
      this.pegs.delete(o.order_id);
      this.lastMs.delete(o.order_id);
    }
  }

  /**
   * One pass: submits the re-prices that are due; resolves when those submitted in this pass are
   * applied (or failed). Per symbol, pegs moving away from the other side of the book (a buy down, a
   * sell up) go first, and those moving toward it only once those are applied: otherwise an ask
   * re-pegged down could cross the same account's still-stale bid and self-trade prevention would
   * cancel it.
   */
  runOnce(): Promise<void> {
    const now = this.clock.nowMs();
    const due = new Map<string, { retreat: [OrderRec, bigint][]; advance: [OrderRec, bigint][] }>();
    let count = this.inFlight.size;
    for (const id of this.pegs) {
      if (count >= this.maxInFlight) break;
      if (this.inFlight.has(id)) continue;
      const last = this.lastMs.get(id);
      if (last !== undefined && now - last < this.minIntervalMs) continue;
      const o = this.db.orders.get(id);
      if (!o || !isRestingPeg(o)) {
        this.pegs.delete(id);
        continue;
      }
      const target = this.target(o);
      if (target === null) continue;
      this.lastMs.set(id, now);
      count++;
      const sym = due.get(o.symbol) ?? { retreat: [], advance: [] };
      const retreats = o.side === 'buy' ? target < big(o.price_ticks!) : target > big(o.price_ticks!);
      (retreats ? sym.retreat : sym.advance).push([o, target]);
      due.set(o.symbol, sym);
    }
    const passes: Promise<void>[] = [];
    for (const { retreat, advance } of due.values()) {
      const first = Promise.all(retreat.map(([o, p]) => this.track(o.order_id, this.reprice(o, p))));
      const gates = advance.map(([o, p]) => this.track(o.order_id, first.then(() => this.reprice(o, p))));
      passes.push(first.then(() => Promise.all(gates)).then(() => undefined));
    }
    return Promise.all(passes).then(() => undefined);
  }

  /** Marks the order in flight until p settles. */
  private track(orderId: string, p: Promise<void>): Promise<void> {
    const done = p.finally(() => {
      this.inFlight.delete(orderId);
    });
    this.inFlight.set(orderId, done);
    return done;
  }

  /** The price the peg should have now, or null when it should stay (not placed yet, busy, no fresh reference, moved less than the threshold). */
  private target(o: OrderRec): bigint | null {
    if (!o.placed || o.pending_modify || (o.cancel_requested ?? null) !== null || o.price_ticks === null || !o.peg_reference) return null;
    const ref = this.oracle.reference(o.symbol);
    if (!ref.ok) return null; // stale or missing reference: keep the last price (fail closed)
    const p = ref.quote[o.peg_reference];
    const inst = instrumentBySymbol(o.symbol);
    if (p <= 0n || p > (inst ? maxPriceTicks(inst) : MAX_BOOK_UNITS)) return null; // above the book's price ceiling: keep the last price
    const cur = big(o.price_ticks);
    const move = p > cur ? p - cur : cur - p;
    return move >= this.minMoveTicks && move > 0n ? p : null;
  }

  private reprice(o: OrderRec, priceTicks: bigint): Promise<void> {
    return this.orders.repeg(o.order_id, priceTicks).then(
      (a) => {
        this.log.debug({ order_id: o.order_id, from: o.price_ticks, to: priceTicks.toString(), http: a.http }, 'peg re-priced');
      },
      (e: unknown) => {
        // Refused (margin, minimum notional, lockout, link down, a user's modify in flight): the
        // order keeps its price; the next pass after the throttle interval tries again.
        const why = e instanceof ApiError ? e.message : e instanceof Error ? e.stack : String(e);
        this.log.warn({ order_id: o.order_id, to: priceTicks.toString(), err: why }, 'peg re-price refused; the order keeps its price');
      },
    );
  }
}
