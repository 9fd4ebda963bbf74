// Placing, reading, modifying and cancelling orders, and mass quotes. A placement is validated,
// priced against the oracle, risk-checked and persisted with its reservation and its sealed op
// (outbox) in one transaction, then submitted to the sequencer; it is acknowledged only once the
// sequencer has journaled it. Fills, cancels, modifies and expiries arrive later from the committee
// (results/clearing.ts). docs/orders.md describes the rules; the order of the checks is:
//   [before the handler: weighted budget, spacing and system caps (http/trading-limits.ts)] →
//   idempotency (client_order_id) → body → instrument status → liquidation lockout →
//   sequencer link → mark price (fail closed) → minimum notional →
//   [in one transaction] open-order limits → book depth → live client_order_id → position limit →
//   leverage → margin.
import { SequencerNackError, SequencerClosedError, type SealedOp } from '@tenebra/wire';
import { MAX_BOOK_UNITS, microToUsdc, OP_TRACE, traceNow, traceOp, type InstrumentSpec } from '@tenebra/config';
import { fillRandom } from '@tenebra/seal';
import type { Logger } from 'pino';
import { ApiError, fail, type ErrorName } from '../errors';
import type { GatewayDb } from '../store/db';
import { clientIdKey, positionKey } from '../store/db';
import { big, isLive, str, type AccountRec, type OrderRec, type OutboxRec } from '../store/records';
import type { InstrumentRegistry } from '../instruments';
import type { GatewayClock } from '../clock';
import type { OpSealer } from '../sharing';
import type { OutcomeWaiters } from '../results/pipeline';
import { modifyWaitKey } from '../results/clearing';
import type { GatewayEvents } from '../events';
import { TIER_INFO } from '../tiers';
import {
  validateOrder, checkMinNotional, clientOrderIdOf, bodyObject, stepsField, ticksField, nanosField, oneOf,
  MAX_CLIENT_ORDER_ID, type OrderIntent,
} from './validate';
import { effectiveLeverage, reservation } from './margin';
import { priceOrder, checkPositionLimit, checkLeverage, checkPriceBand, openQtyKey, type PriceBand, type Priced } from './risk';
import { checkFillLoss } from './fill-loss';
import { QuoteRest } from './quote-rest';
import { PriceWindows } from './price-window';
import { depthKey, riskTicksOf, type RequestedCancelReason } from './fields';
import type { PriceOracle } from './oracle';
import { GttScheduler } from './expiry';
import { orderView } from './view';
import { indexOrder } from '../store/history';

/** client_order_id idempotency window (spec: 24 hours). */
export const IDEMPOTENCY_MS = 24 * 3600 * 1000;
/** Spec: per-symbol book depth cap (live resting-capable orders). */
export const DEFAULT_MAX_BOOK_DEPTH = 100_000;
/** Spec: a mass quote holds at most 20 cancel-replace legs. */
export const MAX_MASS_QUOTE_LEGS = 20;
/** How often expired client_order_id entries of finished orders are pruned. */
const PRUNE_EVERY_MS = 10 * 60_000;
/** Entries pruned per sweep (a sweep is one transaction). */
const PRUNE_BATCH = 10_000;

/** The sequencer as the order service uses it (SequencerClient of @tenebra/wire fits). */
export interface SequencerPort {
  readonly connected: boolean;
  submit(op: SealedOp, opts: { rid: string }): Promise<{ seq: bigint; tsNs: bigint }>;
}

export interface OrderServiceOptions {
  /** how long POST /orders waits for the journal ack before answering 202 QUEUED (default 5,000 ms) */
  ackTimeoutMs?: number;
  /** how long DELETE / PATCH wait for the committee's outcome before answering 202 QUEUED (default 10,000 ms) */
  cancelTimeoutMs?: number;
  /** per-symbol cap of live GTC/GTT orders (default 100,000) */
  maxBookDepth?: number;
  /** a limit price must lie within the mark ± this many basis points, or each instrument's band ('instrument'; default 0: no check; the gateway process passes its config's or 'instrument') */
  priceBandBps?: PriceBand;
  /**
   * Why the committee cannot match new orders now (its preprocessing reserve ran out while nodes are
   * down), or null: placements are then refused before anything is submitted (503 / 1505).
   */
  matchingPaused?: () => string | null;
}

export interface OrderServiceDeps {
  db: GatewayDb;
  registry: InstrumentRegistry;
  sealer: OpSealer;
  sequencer: SequencerPort;
  waiters: OutcomeWaiters;
  events: GatewayEvents;
  clock: GatewayClock;
  log: Logger;
  oracle: PriceOracle;
}

export interface Answer {
  http: 200 | 202;
  data: Record<string, unknown>;
  /** set for 202: the degraded-mode code and message */
  code?: number;
  message?: string;
}

/** A placement checked and priced, before its transaction. */
interface Candidate {
  orderId: string;
  intent: OrderIntent;
  priced: Priced;
  op: SealedOp;
  nowNs: bigint;
  /** the account as the lockout check read it (ownerId reuses it: no write can come between) */
  account?: AccountRec | undefined;
}

type SubmitOutcome = { ok: true } | { ok: false; error: ApiError };

/** How long a request waits for the journal's ack (then 202 QUEUED). The SDK's waits must exceed ack + outcome. */
export const DEFAULT_ACK_TIMEOUT_MS = 5_000;
/** How long a cancel, modify or mass quote then waits for the committee's outcome (then 202 QUEUED). */
export const DEFAULT_CANCEL_TIMEOUT_MS = 10_000;

/** A request's hold on a client_order_id while its placement runs (claimPlacement). */
export interface PlacementClaim {
  /** Lets waiting duplicates look again (idempotent). */
  release(): void;
}

const NO_CLAIM: PlacementClaim = { release: () => undefined };

export class OrderService {
  /** submissions in flight by order id (placements) so idempotent replays can wait for them */
  private readonly inflight = new Map<string, Promise<unknown>>();
  /** acks not yet recorded (recordAck) */
  private acked: { rid: string; outboxKey: number; kind: OutboxRec['kind']; orderId: string; seq: string }[] = [];
  /** placements being prepared, by client id key: a concurrent duplicate waits for the first */
  private readonly claims = new Map<string, Promise<void>>();
  /** cancels in flight by order id, shared by concurrent DELETEs */
  private readonly cancelling = new Map<string, Promise<Answer>>();
  private readonly ackTimeoutMs: number;
  private readonly cancelTimeoutMs: number;
  private readonly maxBookDepth: number;
  private readonly priceBandBps: PriceBand;
  private readonly matchingPaused: () => string | null;
  private readonly db: GatewayDb;
  private readonly registry: InstrumentRegistry;
  private readonly sealer: OpSealer;
  private readonly sequencer: SequencerPort;
  private readonly waiters: OutcomeWaiters;
  private readonly events: GatewayEvents;
  private readonly clock: GatewayClock;
  private readonly log: Logger;
  private readonly oracle: PriceOracle;
  readonly expiry: GttScheduler;
  /** the spec's quote-rest rule: 1 ms between price improvements per symbol and side */
  private readonly quoteRest = new QuoteRest();
  /** the span of each book's live prices, kept below the committee's comparison window */
  readonly windows: PriceWindows;
  private pruneTimer: NodeJS.Timeout | null = null;

  constructor(deps: OrderServiceDeps, opts: OrderServiceOptions = {}) {
    ({ db: this.db, registry: this.registry, sealer: this.sealer, sequencer: this.sequencer, waiters: this.waiters,
      events: this.events, clock: this.clock, log: this.log, oracle: this.oracle } = deps);
    this.ackTimeoutMs = opts.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS;
    this.cancelTimeoutMs = opts.cancelTimeoutMs ?? DEFAULT_CANCEL_TIMEOUT_MS;
    this.maxBookDepth = opts.maxBookDepth ?? DEFAULT_MAX_BOOK_DEPTH;
    this.priceBandBps = opts.priceBandBps ?? 0;
    this.matchingPaused = opts.matchingPaused ?? (() => null);
    if (this.priceBandBps !== 'instrument' && (!Number.isInteger(this.priceBandBps) || this.priceBandBps < 0)) throw new RangeError(`priceBandBps must be a non-negative integer, got ${opts.priceBandBps}`);
    this.windows = new PriceWindows(this.db, () => this.clock.nowMs());
    this.windows.load();
    this.expiry = new GttScheduler(this.db, this.clock, (symbol) => this.submitExpire(symbol), this.log);
  }

  /** Starts the GTT expiry scheduler and the client_order_id pruning. */
  start(): void {
    this.expiry.start();
    this.pruneTimer = setInterval(() => {
      this.pruneClientIds().catch((e: unknown) => this.log.warn({ err: String(e) }, 'pruning client_order_ids failed'));
    }, PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  stop(): void {
    this.expiry.stop();
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.pruneTimer = null;
  }

  // ---------------------------------------------------------------------------------------------
  // Placement

  /** POST /orders for an authenticated account. `claim`: the client id claim claimPlacement() took for this request. */
  async place(acct: AccountRec, body: unknown, claim: PlacementClaim | null = null): Promise<Answer> {
    if (claim) {
      try {
        return await this.placeNew(acct, bodyObject(body));
      } finally {
        claim.release();
      }
    }
    const first = await this.claimPlacement(acct, body);
    if ('replay' in first) return first.replay;
    return this.place(acct, body, first.claim ?? NO_CLAIM);
  }

  /**
   * Idempotency before anything else looks at a placement (REST runs it ahead of the venue's
   * admission hooks, so a repeat is never refused for spacing): a client_order_id seen within 24 h
   * answers with the original order's current state (waiting for a placement of the same id still in
   * progress); otherwise this request takes the id's claim, released when its placement ends.
   */
  async claimPlacement(acct: AccountRec, body: unknown): Promise<{ replay: Answer } | { claim: PlacementClaim | null }> {
    const b = bodyObject(body);
    const coid = clientOrderIdOf(b);
    if (coid === null) return { claim: null };
    const key = clientIdKey(acct.user_id, coid);
    for (;;) {
      const prior = this.findByClientId(acct.user_id, coid);
      if (prior) return { replay: await this.replay(prior) };
      const running = this.claims.get(key);
      if (!running) break;
      await running; // the first request with this id decides; then look again
    }
    // No await between the last look and the claim: a concurrent duplicate sees it.
    let release!: () => void;
    const done = new Promise<void>((r) => { release = r; });
    this.claims.set(key, done);
    let released = false;
    return {
      claim: {
        release: () => {
          if (released) return;
          released = true;
          this.claims.delete(key);
          release();
        },
      },
    };
  }

  private async placeNew(acct: AccountRec, b: Record<string, unknown>): Promise<Answer> {
    const tIn = OP_TRACE ? traceNow() : 0;
    const c = this.candidate(acct, b);
    if (OP_TRACE) traceOp(this.log, 'gw-accept', { order_id: c.orderId }, tIn);
    const ownerId = await this.ownerId(acct.user_id, c.account);
    c.op = this.sealer.place(c.orderId, c.intent.inst.symbol, {
      side: c.intent.side, type: c.intent.type, tif: c.intent.tif, priceTicks: c.priced.bookTicks, qtySteps: c.intent.qtySteps,
      ownerId, expiresAtNs: c.intent.expiresAtNs, aon: c.intent.aon, minFillSteps: c.intent.minFillSteps,
    });
    if (OP_TRACE) traceOp(this.log, 'gw-sealed', { order_id: c.orderId });
    const outboxKey = await this.db.txAsync(() => this.admit(acct.user_id, c, new Set()));
    if (OP_TRACE) traceOp(this.log, 'gw-admitted', { order_id: c.orderId });
    if (c.intent.tif === 'GTT') this.expiry.watch({ order_id: c.orderId, symbol: c.intent.inst.symbol, expires_at_ns: str(c.intent.expiresAtNs!) });
    const submitted = this.submit(outboxKey, placeRid(c.orderId), 'place', c.orderId, c.op);
    const outcome = await withTimeout(submitted, this.ackTimeoutMs);
    if (outcome === 'timeout') {
      return {
        http: 202, code: 1502, data: { order_id: c.orderId, ...clientIdField(c.intent.clientOrderId) },
        message: 'QUEUED: the order is persisted and submitted but the sequencer has not acknowledged it yet; do not resubmit, track it with GET /orders/{orderId}',
      };
    }
    if (outcome.ok) return { http: 200, data: { order_id: c.orderId, ...clientIdField(c.intent.clientOrderId), status: 'NEW' } };
    throw outcome.error;
  }

  /** Refuses a placement while the committee cannot match (degraded mode; cancels still go through and queue). */
  private checkMatching(): void {
    const why = this.matchingPaused();
    if (why !== null) throw new ApiError('RESERVE_EXHAUSTED', `degraded mode: ${why}; nothing was submitted, retry once system_health is no longer reserve_exhausted (GET /system/health)`, undefined, { 'Retry-After': '5' });
  }

  /** Every check that needs no transaction, in order; returns the candidate (its op is sealed by the caller). */
  private candidate(acct: AccountRec, b: Record<string, unknown>): Candidate {
    const tier = TIER_INFO[acct.tier];
    const nowNs = this.clock.nowNs();
    const intent = validateOrder(b, this.registry, tier.minNotionalMicro, nowNs);
    const account = this.checkLockout(acct.user_id);
    if (!this.sequencer.connected) fail('SEQUENCER_UNAVAILABLE', 'the sequencer is not reachable; nothing was submitted, retry later');
    this.checkMatching();
    const priced = priceOrder(intent, this.oracle, this.priceBandBps);
    if (intent.priceTicks === null) checkMinNotional(intent.inst, intent.qtySteps, priced.priceTicks ?? priced.markTicks, tier.minNotionalMicro);
    return { orderId: this.newOrderId(), intent, priced, op: null as unknown as SealedOp, nowNs, account };
  }

  /**
   * Inside a transaction: the checks that read account state, then the writes (order, reservation,
   * counters, client id, outbox). Throws before writing anything when a check fails.
   * `batchIds` holds client ids already used by earlier legs of the same mass quote.
   */
  private admit(userId: string, c: Candidate, batchIds: Set<string>): number {
    const a = this.db.accounts.get(userId)!;
    const tier = TIER_INFO[a.tier];
    const { intent, priced } = c;
    const inst = intent.inst;
    if (a.in_liquidation) fail('ACCOUNT_IN_LIQUIDATION', 'the account is being liquidated; new orders are blocked');
    if (a.open_orders >= tier.maxOpenOrders) fail('OPEN_ORDER_LIMIT', `the ${a.tier} tier allows ${tier.maxOpenOrders} open orders`);
    if ((a.open_by_symbol[inst.symbol] ?? 0) >= tier.maxOpenPerSymbol) {
      fail('OPEN_ORDER_LIMIT', `the ${a.tier} tier allows ${tier.maxOpenPerSymbol} open orders per symbol`);
    }
    const resting = intent.tif === 'GTC' || intent.tif === 'GTT';
    const depth = (this.db.meta.get(depthKey(inst.symbol)) as number | undefined) ?? 0;
    if (resting && depth >= this.maxBookDepth) fail('BOOK_DEPTH_EXCEEDED', `${inst.symbol} holds ${depth} open orders, the book depth cap; retry later`);
    if (intent.clientOrderId !== null) {
      const key = clientIdKey(a.user_id, intent.clientOrderId);
      const hit = this.db.clientIds.get(key);
      const other = hit ? this.db.orders.get(hit.order_id) : undefined;
      if (batchIds.has(intent.clientOrderId) || (other && isLive(other.status))) {
        fail('DUPLICATE_CLIENT_ORDER_ID', `another live order (${other?.order_id ?? 'in this batch'}) uses client_order_id '${intent.clientOrderId}'`);
      }
      if (hit && this.clock.nowMs() - hit.at_ms < IDEMPOTENCY_MS) {
        // Only a placement racing its duplicate in another process could get here.
        fail('DUPLICATE_CLIENT_ORDER_ID', `client_order_id '${intent.clientOrderId}' was used less than 24 hours ago`);
      }
    }
    const pos = this.db.positions.get(positionKey(a.user_id, inst.symbol));
    checkPositionLimit(inst, a, pos, intent.side, intent.qtySteps);
    const leverage = intent.leverage ?? effectiveLeverage(a, inst);
    checkLeverage(inst, pos, intent.side, intent.qtySteps, priced.riskTicks, priced.markTicks, leverage);
    checkFillLoss(inst, pos, intent.side, intent.qtySteps, priced.bookTicks, priced.markTicks, leverage);
    const quote = resting && intent.type === 'limit';
    if (quote) this.quoteRest.check(a.user_id, inst.symbol, intent.side, priced.bookTicks, c.nowNs);
    const need = reservation(inst, intent.qtySteps, priced.riskTicks, leverage, tier.takerFeePips);
    const free = big(a.balance) - big(a.reserved);
    if (need > free) {
      fail('MARGIN_INSUFFICIENT', `initial margin and fees of ${microToUsdc(need)} USDC exceed free collateral of ${microToUsdc(free > 0n ? free : 0n)} USDC (leverage ${leverage}x)`);
    }
    // last check: the committee compares prices inside the book's window (orders/price-window.ts)
    this.windows.admit(inst, c.orderId, priced.bookTicks);

    const nowStr = str(c.nowNs);
    const order: OrderRec = {
      order_id: c.orderId, user_id: a.user_id, client_order_id: intent.clientOrderId, symbol: inst.symbol, side: intent.side,
      type: intent.type, time_in_force: intent.tif, price_ticks: priced.priceTicks === null ? null : str(priced.priceTicks),
      qty_steps: str(intent.qtySteps), filled_steps: '0', notional_ts: '0', last_fill_steps: null, last_fill_ticks: null, status: 'NEW',
      cancel_reason: null, reject_reason: null, in_time_ns: nowStr, out_time_ns: nowStr, leverage,
      fee_pips: str(tier.takerFeePips), reserved: str(need), journaled: false, seq: null, placed: false,
      risk_ticks: str(priced.riskTicks), book_ticks: str(priced.bookTicks), peg_reference: intent.pegReference, expires_at_ns: intent.expiresAtNs === null ? null : str(intent.expiresAtNs),
      aon: intent.aon, min_fill_steps: intent.minFillSteps === null ? null : str(intent.minFillSteps), in_book: resting,
      pending_modify: null, cancel_requested: null,
    };
    this.db.orders.putSync(c.orderId, order);
    indexOrder(this.db, order);
    const qk = openQtyKey(inst.symbol, intent.side);
    this.db.accounts.putSync(a.user_id, {
      ...a, reserved: str(big(a.reserved) + need), open_orders: a.open_orders + 1,
      open_by_symbol: { ...a.open_by_symbol, [inst.symbol]: (a.open_by_symbol[inst.symbol] ?? 0) + 1 },
      open_qty: { ...(a.open_qty ?? {}), [qk]: str(big(a.open_qty?.[qk] ?? '0') + intent.qtySteps) },
    });
    if (resting) this.db.meta.putSync(depthKey(inst.symbol), depth + 1);
    if (intent.clientOrderId !== null) {
      this.db.clientIds.putSync(clientIdKey(a.user_id, intent.clientOrderId), { order_id: c.orderId, at_ms: this.clock.nowMs() });
      batchIds.add(intent.clientOrderId);
    }
    const key = this.db.nextCounter('outbox');
    this.db.outbox.putSync(key, { rid: placeRid(c.orderId), kind: 'place', order_id: c.orderId, op: c.op, created_ns: nowStr });
    if (quote) this.quoteRest.record(a.user_id, inst.symbol, intent.side, priced.bookTicks, c.nowNs);
    return key;
  }

  /**
   * The account's owner id for self-trade prevention (assigned once, on its first order). `read`: the
   * account as read earlier in the same synchronous stretch (each read decodes the whole record).
   */
  private async ownerId(userId: string, read?: AccountRec): Promise<number> {
    const cur = read ?? this.db.accounts.get(userId)!;
    if (cur.owner_id !== undefined) return cur.owner_id;
    return this.db.txAsync(() => {
      const a = this.db.accounts.get(userId)!;
      if (a.owner_id !== undefined) return a.owner_id;
      const id = this.db.nextCounter('owner_id');
      // the committee compares owner ids (self-trade test) as book values: below 2^COMPARISON_BITS
      if (BigInt(id) > MAX_BOOK_UNITS) throw new Error(`owner id space exhausted (${id} > ${MAX_BOOK_UNITS})`);
      this.db.accounts.putSync(userId, { ...a, owner_id: id });
      return id;
    });
  }

  /** Refuses a locked-out account; returns the account as read (undefined when there is none). */
  private checkLockout(userId: string): AccountRec | undefined {
    const a = this.db.accounts.get(userId);
    if (a?.in_liquidation) fail('ACCOUNT_IN_LIQUIDATION', 'the account is being liquidated; new orders are blocked');
    return a;
  }

  /**
   * Mass quotes are for the Prime and Apex tiers. (The per-symbol spacing, the system caps and the
   * mass-quote batch count are TradingGuard's: http/trading-limits.ts applies it to every trading
   * route before the handler runs, and the WebSocket applies its own limits.)
   */
  private checkMassQuoteTier(acct: AccountRec): void {
    if (TIER_INFO[acct.tier].massQuotesPerMinute === null) {
      throw new ApiError('tier_not_eligible', `mass quotes are available to the Prime and Apex tiers; this account is ${acct.tier}`);
    }
  }

  /** Sets or clears the liquidation lockout of an account (new orders refused with ACCOUNT_IN_LIQUIDATION). */
  async setLiquidationLockout(userId: string, on: boolean): Promise<void> {
    await this.db.txAsync(() => {
      const a = this.db.accounts.get(userId);
      if (!a) throw new ApiError('not_found', `no account ${userId}`);
      this.db.accounts.putSync(userId, { ...a, in_liquidation: on });
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  /** GET /orders/{orderId}: the account's own order. */
  get(acct: AccountRec, orderId: string): Record<string, unknown> {
    const o = this.ownOrder(acct, orderId);
    return orderView(o, this.registry.get(o.symbol)!);
  }

  /** GET /orders?client_order_id=: the account's order with that client id (within the 24 h window, or still live). */
  getByClientId(acct: AccountRec, clientOrderId: unknown): Record<string, unknown> {
    const o = this.byClientId(acct, clientOrderId);
    return orderView(o, this.registry.get(o.symbol)!);
  }

  /** DELETE /orders?client_order_id=: cancels the account's order with that client id. */
  cancelByClientId(acct: AccountRec, clientOrderId: unknown): Promise<Answer> {
    return this.cancel(acct, this.byClientId(acct, clientOrderId).order_id);
  }

  private byClientId(acct: AccountRec, clientOrderId: unknown): OrderRec {
    if (typeof clientOrderId !== 'string' || clientOrderId.length === 0 || clientOrderId.length > MAX_CLIENT_ORDER_ID) {
      throw new ApiError('invalid_request', `the query parameter client_order_id (1 to ${MAX_CLIENT_ORDER_ID} characters) is required; listing orders is not supported`);
    }
    const o = this.findByClientId(acct.user_id, clientOrderId, true);
    if (!o) fail('ORDER_NOT_FOUND', `no order with client_order_id '${clientOrderId}' in the last 24 hours for this account`);
    return o;
  }

  // ---------------------------------------------------------------------------------------------
  // Cancel

  /**
   * DELETE /orders/{orderId}: submits a cancel and waits for the committee's outcome. `reason` is
   * the cancel_reason recorded (USER_REQUESTED unless the system cancels, e.g. CANCEL_ON_DISCONNECT).
   */
  async cancel(acct: AccountRec, orderId: string, reason: RequestedCancelReason = 'USER_REQUESTED'): Promise<Answer> {
    const o = this.ownOrder(acct, orderId);
    if (!isLive(o.status)) fail('ORDER_NOT_LIVE', `order ${orderId} is ${o.status} and cannot be cancelled`);
    const running = this.cancelling.get(orderId);
    if (running) return running;
    if (!this.sequencer.connected) fail('SEQUENCER_UNAVAILABLE', 'the sequencer is not reachable; nothing was submitted, retry later');
    const p = this.runCancel(o, reason).finally(() => this.cancelling.delete(orderId));
    this.cancelling.set(orderId, p);
    return p;
  }

  private async runCancel(o: OrderRec, reason: RequestedCancelReason): Promise<Answer> {
    const outcome = this.waiters.wait(o.order_id);
    const op = this.sealer.cancel(o.order_id, o.symbol);
    const { key, rid } = await this.db.txAsync(() => this.persistCancel(o.order_id, op, reason));
    const submitted = await withTimeout(this.submit(key, rid, 'cancel', o.order_id, op), this.ackTimeoutMs);
    if (submitted !== 'timeout' && !submitted.ok) {
      this.waiters.abandon(o.order_id);
      throw submitted.error;
    }
    const result = await withTimeout(outcome, this.cancelTimeoutMs);
    if (result === 'timeout') {
      this.waiters.abandon(o.order_id);
      return {
        http: 202, code: 1502, data: { order_id: o.order_id, client_order_id: o.client_order_id },
        message: 'QUEUED: the cancel is submitted but its outcome is not known yet; track the order with GET /orders/{orderId}',
      };
    }
    const cur = this.db.orders.get(o.order_id)!;
    if (result === 'not_live') fail('ORDER_NOT_LIVE', `order ${o.order_id} is no longer live (${cur.status}); nothing was cancelled`);
    return { http: 200, data: orderView(cur, this.registry.get(cur.symbol)!) };
  }

  /** In a transaction: records the requested cancel reason and puts the cancel op in the outbox. */
  private persistCancel(orderId: string, op: SealedOp, reason: RequestedCancelReason): { key: number; rid: string } {
    const cur = this.db.orders.get(orderId);
    if (cur && isLive(cur.status) && (cur.cancel_requested ?? null) === null) this.db.orders.putSync(orderId, { ...cur, cancel_requested: reason });
    const key = this.db.nextCounter('outbox');
    const rid = `c-${orderId}-${key}`;
    this.db.outbox.putSync(key, { rid, kind: 'cancel', order_id: orderId, op, created_ns: str(this.clock.nowNs()) });
    return { key, rid };
  }

  // ---------------------------------------------------------------------------------------------
  // Modify

  /**
   * PATCH /orders/{orderId}: changes `quantity` (the new total size, above what has filled) and/or
   * `price` (limit orders) of a live GTC/GTT order. A quantity decrease alone keeps time priority
   * (committee mode `reduce`); a price change or a quantity increase loses it (mode `replace`: the
   * order re-enters as a taker with the modify's sequence number and may trade at once). Waits for
   * the committee's outcome like DELETE.
   */
  async modify(acct: AccountRec, orderId: string, changes: unknown): Promise<Answer> {
    const ch = bodyObject(changes);
    for (const k of Object.keys(ch)) {
      if (!['price', 'quantity', 'time_in_force', 'expiry_time'].includes(k)) fail('INVALID_ORDER', `unknown field '${k}'; a modify may carry price and quantity`);
    }
    const o = this.ownOrder(acct, orderId);
    const inst = this.registry.get(o.symbol)!;
    if (!isLive(o.status)) fail('ORDER_NOT_LIVE', `order ${orderId} is ${o.status} and cannot be modified`);
    if (ch.time_in_force !== undefined && ch.time_in_force !== null && oneOf(ch.time_in_force, 'time_in_force', ['GTC', 'GTT', 'IOC', 'FOK'] as const) !== o.time_in_force) {
      fail('UNSUPPORTED_ORDER', 'time_in_force cannot be modified; cancel the order and place a new one');
    }
    if (ch.expiry_time !== undefined && ch.expiry_time !== null && (o.expires_at_ns ?? null) !== str(nanosField(ch.expiry_time, 'expiry_time'))) {
      fail('UNSUPPORTED_ORDER', 'expiry_time cannot be modified; cancel the order and place a new one');
    }
    if (o.time_in_force !== 'GTC' && o.time_in_force !== 'GTT') fail('UNSUPPORTED_ORDER', `only resting orders (GTC, GTT) can be modified; this one is ${o.time_in_force}`);
    if (o.pending_modify) fail('ORDER_BUSY', `a modify of order ${orderId} is still in progress; retry when it has been applied`);
    const oldQty = big(o.qty_steps);
    const oldPrice = big(o.price_ticks!);
    const newQty = ch.quantity === undefined || ch.quantity === null ? oldQty : stepsField(ch.quantity, 'quantity', inst);
    let newPrice = oldPrice;
    if (ch.price !== undefined && ch.price !== null) {
      if (o.type !== 'limit') fail('UNSUPPORTED_ORDER', `the price of a ${o.type} order cannot be modified (a peg follows its reference: the gateway re-prices it); modify quantity, or cancel and place`);
      newPrice = ticksField(ch.price, 'price', inst);
    }
    return this.submitModify(acct, o, inst, newQty, newPrice);
  }

  /**
   * The re-pegger's modify (orders/repeg.ts): moves a resting peg order to priceTicks through the
   * same path as PATCH (checks, reservation hold, outbox, sequencer, committee outcome), so the
   * price change is a `replace` that loses time priority. Not counted against the account's
   * trading budgets: the venue, not the user, initiates it.
   */
  async repeg(orderId: string, priceTicks: bigint): Promise<Answer> {
    const o = this.db.orders.get(orderId);
    if (!o || o.type !== 'peg') fail('ORDER_NOT_FOUND', `no peg order ${orderId}`);
    if (!isLive(o.status)) fail('ORDER_NOT_LIVE', `order ${orderId} is ${o.status} and cannot be re-pegged`);
    if (o.time_in_force !== 'GTC' && o.time_in_force !== 'GTT') fail('UNSUPPORTED_ORDER', `only resting pegs (GTC, GTT) are re-pegged; this one is ${o.time_in_force}`);
    if (o.pending_modify) fail('ORDER_BUSY', `a modify of order ${orderId} is still in progress`);
    const acct = this.db.accounts.get(o.user_id);
    if (!acct) fail('ORDER_NOT_FOUND', `the owner of order ${orderId} has no account`);
    return this.submitModify(acct, o, this.registry.get(o.symbol)!, big(o.qty_steps), priceTicks);
  }

  /** A checked modify of a live resting order to newQty / newPrice, submitted and awaited (PATCH and the re-pegger). */
  private async submitModify(acct: AccountRec, o: OrderRec, inst: InstrumentSpec, newQty: bigint, newPrice: bigint): Promise<Answer> {
    const orderId = o.order_id;
    const oldQty = big(o.qty_steps);
    const filled = big(o.filled_steps);
    const oldPrice = big(o.price_ticks!);
    const priceChange = newPrice !== oldPrice;
    if (!priceChange && newQty === oldQty) fail('INVALID_ORDER', 'nothing to modify: give a new price or quantity');
    if (newQty <= filled) fail('INVALID_QUANTITY', `quantity must exceed the filled quantity (${o.filled_steps} steps); cancel to stop the order`);
    const tier = TIER_INFO[acct.tier];
    validateQtyBounds(inst, newQty);
    checkMinNotional(inst, newQty, newPrice, tier.minNotionalMicro);
    if (inst.status !== 'trading') fail('INSTRUMENT_HALTED', `${inst.symbol} is not accepting orders (status ${inst.status})`);
    this.checkLockout(acct.user_id);
    if (!this.sequencer.connected) fail('SEQUENCER_UNAVAILABLE', 'the sequencer is not reachable; nothing was submitted, retry later');
    const ref = this.oracle.reference(inst.symbol);
    if (!ref.ok) fail('MARK_PRICE_UNAVAILABLE', `${ref.detail}; modifies are refused until the mark price is fresh`);
    if (priceChange && o.type === 'limit') checkPriceBand(inst, newPrice, ref.quote.mid, this.priceBandBps);

    const mode = priceChange || newQty > oldQty ? 'replace' : 'reduce';
    const delta = newQty - oldQty;
    const op = this.sealer.modify(orderId, o.symbol, mode, delta, priceChange ? newPrice : null);
    const outcome = this.waiters.wait(modifyWaitKey(orderId));
    let key: number;
    try {
      key = await this.db.txAsync(() => {
        const cur = this.db.orders.get(orderId)!;
        if (!isLive(cur.status)) fail('ORDER_NOT_LIVE', `order ${orderId} is ${cur.status} and cannot be modified`);
        if (cur.pending_modify) fail('ORDER_BUSY', `a modify of order ${orderId} is still in progress; retry when it has been applied`);
        if (cur.qty_steps !== o.qty_steps || (cur.price_ticks ?? null) !== (o.price_ticks ?? null)) fail('ORDER_BUSY', `order ${orderId} changed while this modify was prepared; retry`);
        const a = this.db.accounts.get(acct.user_id)!;
        const pos = this.db.positions.get(positionKey(a.user_id, o.symbol));
        if (delta > 0n) {
          checkPositionLimit(inst, a, pos, o.side, delta);
          checkLeverage(inst, pos, o.side, delta, newPrice, ref.quote.mid, cur.leverage);
        }
        if (priceChange || delta > 0n) checkFillLoss(inst, pos, o.side, newQty - big(cur.filled_steps), newPrice, ref.quote.mid, cur.leverage);
        const requote = priceChange && o.type === 'limit';
        const nowNs = this.clock.nowNs();
        if (requote) this.quoteRest.check(a.user_id, o.symbol, o.side, newPrice, nowNs);
        const curFilled = big(cur.filled_steps);
        const need = newQty > curFilled ? reservation(inst, newQty - curFilled, newPrice, cur.leverage, big(cur.fee_pips)) : 0n;
        const hold = need > big(cur.reserved) ? need - big(cur.reserved) : 0n;
        const free = big(a.balance) - big(a.reserved);
        if (hold > free) fail('MARGIN_INSUFFICIENT', `the modified order needs ${microToUsdc(hold)} USDC more margin and fees than it holds; free collateral is ${microToUsdc(free > 0n ? free : 0n)} USDC`);
        // last check: the committee compares prices inside the book's window (orders/price-window.ts)
        if (priceChange) this.windows.admit(inst, orderId, newPrice);
        this.db.orders.putSync(orderId, { ...cur, pending_modify: { qty_steps: str(newQty), price_ticks: str(newPrice), hold: str(hold) } });
        if (hold > 0n) this.db.accounts.putSync(a.user_id, { ...a, reserved: str(big(a.reserved) + hold) });
        const k = this.db.nextCounter('outbox');
        this.db.outbox.putSync(k, { rid: `m-${orderId}-${k}`, kind: 'modify', order_id: orderId, op, created_ns: str(nowNs) });
        if (requote) this.quoteRest.record(a.user_id, o.symbol, o.side, newPrice, nowNs);
        return k;
      });
    } catch (e) {
      this.waiters.abandon(modifyWaitKey(orderId));
      throw e;
    }
    const submitted = await withTimeout(this.submit(key, `m-${orderId}-${key}`, 'modify', orderId, op), this.ackTimeoutMs);
    if (submitted !== 'timeout' && !submitted.ok) {
      this.waiters.abandon(modifyWaitKey(orderId));
      throw submitted.error;
    }
    const result = await withTimeout(outcome, this.cancelTimeoutMs);
    if (result === 'timeout') {
      this.waiters.abandon(modifyWaitKey(orderId));
      return {
        http: 202, code: 1502, data: { order_id: orderId, client_order_id: o.client_order_id },
        message: 'QUEUED: the modify is submitted but its outcome is not known yet; track the order with GET /orders/{orderId}',
      };
    }
    const cur = this.db.orders.get(orderId)!;
    if (result === 'not_live') fail('ORDER_NOT_LIVE', `order ${orderId} is no longer live (${cur.status}); nothing was modified`);
    if (result === 'rejected') fail('MODIFY_REJECTED', `the committee refused the modify of order ${orderId}; the order is unchanged`);
    return { http: 200, data: orderView(cur, inst) };
  }

  // ---------------------------------------------------------------------------------------------
  // Mass quote

  /**
   * POST /orders/mass-quote (Prime and Apex): up to 20 cancel-replace legs on one symbol, one
   * weighted action. Body `{symbol?, legs: [{cancel_order_id? | cancel_client_order_id?, place?}]}`
   * (`symbol`, optional, must be the legs' symbol). Every leg
   * is validated first (a malformed leg refuses the whole batch); then, in leg order, each leg's
   * cancel and then its placement are submitted, all persisted in one transaction, and sequenced in
   * that order. Legs succeed or fail one by one: the answer lists each leg's cancel and place result.
   */
  async massQuote(acct: AccountRec, body: unknown): Promise<Answer> {
    const b = bodyObject(body);
    for (const k of Object.keys(b)) if (k !== 'legs' && k !== 'symbol') fail('INVALID_ORDER', `unknown field '${k}'; a mass quote is {symbol?, legs: [...]}`);
    if (b.symbol !== undefined && typeof b.symbol !== 'string') fail('INVALID_ORDER', "'symbol' must be a string");
    if (!Array.isArray(b.legs) || b.legs.length === 0 || b.legs.length > MAX_MASS_QUOTE_LEGS) {
      fail('INVALID_ORDER', `'legs' must be an array of 1 to ${MAX_MASS_QUOTE_LEGS} cancel-replace legs`);
    }
    const tier = TIER_INFO[acct.tier];
    this.checkMassQuoteTier(acct);
    const nowNs = this.clock.nowNs();

    // 1. Shape of every leg (no state read yet beyond the account's own orders).
    interface Leg { cancel: OrderRec | null; cancelMissing: string | null; place: Record<string, unknown> | null; intent: OrderIntent | null }
    const legs: Leg[] = [];
    let symbol: string | null = typeof b.symbol === 'string' ? b.symbol : null;
    if (symbol !== null && !this.registry.get(symbol)) fail('UNKNOWN_SYMBOL', `unknown symbol '${symbol}'; GET /instruments lists the symbols`);
    const sameSymbol = (s: string, i: number): void => {
      if (symbol === null) symbol = s;
      else if (symbol !== s) fail('INVALID_ORDER', `legs[${i}]: every leg of a mass quote must be on one symbol (${symbol}), not ${s}`);
    };
    for (let i = 0; i < b.legs.length; i++) {
      const leg = bodyObject(b.legs[i], `legs[${i}]`);
      for (const k of Object.keys(leg)) {
        if (!['cancel_order_id', 'cancel_client_order_id', 'place'].includes(k)) fail('INVALID_ORDER', `legs[${i}]: unknown field '${k}'; a leg has cancel_order_id or cancel_client_order_id, and/or place`);
      }
      const byId = leg.cancel_order_id ?? null;
      const byClient = leg.cancel_client_order_id ?? null;
      if (byId !== null && byClient !== null) fail('INVALID_ORDER', `legs[${i}]: give cancel_order_id or cancel_client_order_id, not both`);
      const place = leg.place === undefined || leg.place === null ? null : bodyObject(leg.place, `legs[${i}].place`);
      if (byId === null && byClient === null && place === null) fail('INVALID_ORDER', `legs[${i}]: a leg needs a cancel, a place, or both`);
      let cancel: OrderRec | null = null;
      let cancelMissing: string | null = null;
      if (byId !== null || byClient !== null) {
        let found: OrderRec | null = null;
        if (byId !== null) {
          if (typeof byId !== 'string' || !/^[1-9][0-9]{0,19}$/.test(byId)) fail('INVALID_ORDER', `legs[${i}].cancel_order_id must be an order_id string`);
          const rec = this.db.orders.get(byId);
          found = rec && rec.user_id === acct.user_id ? rec : null;
        } else {
          if (typeof byClient !== 'string' || byClient.length === 0 || byClient.length > MAX_CLIENT_ORDER_ID) fail('INVALID_ORDER', `legs[${i}].cancel_client_order_id must be 1 to ${MAX_CLIENT_ORDER_ID} characters`);
          found = this.findByClientId(acct.user_id, byClient, true);
        }
        if (found) {
          sameSymbol(found.symbol, i);
          cancel = found;
        } else {
          cancelMissing = String(byId ?? byClient);
        }
      }
      let intent: OrderIntent | null = null;
      if (place) {
        try {
          intent = validateOrder(place, this.registry, tier.minNotionalMicro, nowNs);
        } catch (e) {
          if (e instanceof ApiError) throw new ApiError(errorName(e), `legs[${i}].place: ${e.message.slice(e.kind.error.length + 2)}`);
          throw e;
        }
        sameSymbol(intent.inst.symbol, i);
      }
      legs.push({ cancel, cancelMissing, place, intent });
    }
    if (symbol === null) fail('ORDER_NOT_FOUND', 'no leg names an order of this account or a placement');
    const sym: string = symbol;
    const fresh = this.checkLockout(acct.user_id);
    if (!this.sequencer.connected) fail('SEQUENCER_UNAVAILABLE', 'the sequencer is not reachable; nothing was submitted, retry later');
    if (legs.some((l) => l.place)) this.checkMatching();

    // 2. Price and seal every placement; replays of client ids answer with the original order.
    const ownerId = await this.ownerId(acct.user_id, fresh);
    type PlaceResult = Record<string, unknown>;
    const placeResults: (PlaceResult | null)[] = legs.map(() => null);
    const candidates: (Candidate | null)[] = legs.map(() => null);
    for (let i = 0; i < legs.length; i++) {
      const leg = legs[i]!;
      if (!leg.intent) continue;
      const coid = leg.intent.clientOrderId;
      const prior = coid === null ? null : this.findByClientId(acct.user_id, coid);
      if (prior) {
        placeResults[i] = { code: 0, replay: true, order_id: prior.order_id, client_order_id: prior.client_order_id, status: prior.status };
        continue;
      }
      try {
        const priced = priceOrder(leg.intent, this.oracle, this.priceBandBps);
        if (leg.intent.priceTicks === null) checkMinNotional(leg.intent.inst, leg.intent.qtySteps, priced.priceTicks ?? priced.markTicks, tier.minNotionalMicro);
        const c: Candidate = { orderId: this.newOrderId(), intent: leg.intent, priced, nowNs, op: null as unknown as SealedOp };
        c.op = this.sealer.place(c.orderId, sym, {
          side: c.intent.side, type: c.intent.type, tif: c.intent.tif, priceTicks: priced.bookTicks, qtySteps: c.intent.qtySteps,
          ownerId, expiresAtNs: c.intent.expiresAtNs, aon: c.intent.aon, minFillSteps: c.intent.minFillSteps,
        });
        candidates[i] = c;
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        placeResults[i] = legError(e);
      }
    }
    const cancelOps = legs.map((l) => (l.cancel && isLive(l.cancel.status) ? this.sealer.cancel(l.cancel.order_id, l.cancel.symbol) : null));

    // 3. One transaction: cancels and placements in leg order (each leg's risk sees the earlier legs).
    interface Sub { key: number; rid: string; kind: 'place' | 'cancel'; orderId: string; op: SealedOp; leg: number }
    const cancelResults: (Record<string, unknown> | null)[] = legs.map(() => null);
    const cancelWaits = new Map<number, Promise<unknown>>();
    for (let i = 0; i < legs.length; i++) {
      const l = legs[i]!;
      if (l.cancelMissing !== null) cancelResults[i] = { code: 1420, error: 'ORDER_NOT_FOUND', order_id: l.cancelMissing, message: `ORDER_NOT_FOUND: no order ${l.cancelMissing} for this account` };
      else if (l.cancel && !isLive(l.cancel.status)) cancelResults[i] = { code: 1421, error: 'ORDER_NOT_LIVE', order_id: l.cancel.order_id, status: l.cancel.status, message: `ORDER_NOT_LIVE: order ${l.cancel.order_id} is ${l.cancel.status}` };
      else if (l.cancel && !this.cancelling.has(l.cancel.order_id)) cancelWaits.set(i, this.waiters.wait(l.cancel.order_id));
    }
    const subs = await this.db.txAsync(() => {
      const out: Sub[] = [];
      const batchIds = new Set<string>();
      for (let i = 0; i < legs.length; i++) {
        const op = cancelOps[i];
        const l = legs[i]!;
        if (op && cancelWaits.has(i)) {
          const { key, rid } = this.persistCancel(l.cancel!.order_id, op, 'USER_REQUESTED');
          out.push({ key, rid, kind: 'cancel', orderId: l.cancel!.order_id, op, leg: i });
        }
        const c = candidates[i];
        if (!c) continue;
        try {
          const key = this.admit(acct.user_id, c, batchIds);
          out.push({ key, rid: placeRid(c.orderId), kind: 'place', orderId: c.orderId, op: c.op, leg: i });
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          placeResults[i] = legError(e);
          candidates[i] = null;
        }
      }
      return out;
    });

    // 4. Submit in leg order (one link: the sequencer receives them in this order), then wait.
    const acks = subs.map((s) => ({ s, p: this.submit(s.key, s.rid, s.kind, s.orderId, s.op) }));
    for (const c of candidates) if (c && c.intent.tif === 'GTT') this.expiry.watch({ order_id: c.orderId, symbol: sym, expires_at_ns: str(c.intent.expiresAtNs!) });
    await Promise.all(acks.map(async ({ s, p }) => {
      const r = await withTimeout(p, this.ackTimeoutMs);
      if (s.kind === 'place') {
        const c = candidates[s.leg]!;
        if (r === 'timeout') placeResults[s.leg] = { code: 1502, error: 'QUEUED', order_id: c.orderId, ...clientIdField(c.intent.clientOrderId), message: 'QUEUED: persisted and submitted, not acknowledged yet; do not resubmit' };
        else if (r.ok) placeResults[s.leg] = { code: 0, order_id: c.orderId, ...clientIdField(c.intent.clientOrderId), status: 'NEW' };
        else placeResults[s.leg] = legError(r.error);
        return;
      }
      if (r !== 'timeout' && !r.ok) {
        this.waiters.abandon(s.orderId);
        cancelResults[s.leg] = { ...legError(r.error), order_id: s.orderId };
        return;
      }
      const res = await withTimeout(cancelWaits.get(s.leg)!, this.cancelTimeoutMs);
      const cur = this.db.orders.get(s.orderId)!;
      if (res === 'timeout') {
        this.waiters.abandon(s.orderId);
        cancelResults[s.leg] = { code: 1502, error: 'QUEUED', order_id: s.orderId, message: 'QUEUED: the cancel is submitted but its outcome is not known yet' };
      } else if (res === 'cancelled') {
        cancelResults[s.leg] = { code: 0, order_id: s.orderId, status: cur.status, cancel_reason: cur.cancel_reason };
      } else {
        cancelResults[s.leg] = { code: 1421, error: 'ORDER_NOT_LIVE', order_id: s.orderId, status: cur.status, message: `ORDER_NOT_LIVE: order ${s.orderId} was no longer live (${cur.status})` };
      }
    }));
    // A leg whose cancel was already running for another request: report the order's state.
    for (let i = 0; i < legs.length; i++) {
      const l = legs[i]!;
      if (l.cancel && cancelResults[i] === null) {
        const cur = this.db.orders.get(l.cancel.order_id)!;
        cancelResults[i] = { code: isLive(cur.status) ? 1502 : 0, order_id: cur.order_id, status: cur.status, cancel_reason: cur.cancel_reason };
      }
    }
    return {
      http: 200,
      data: {
        symbol: sym,
        legs: legs.map((l, i) => ({
          ...(l.cancel || l.cancelMissing !== null ? { cancel: cancelResults[i] } : {}),
          ...(l.place ? { place: placeResults[i] } : {}),
        })),
      },
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Expiry

  /** Submits an expire op for a symbol (the GTT scheduler's callback). */
  private async submitExpire(symbol: string): Promise<void> {
    if (!this.sequencer.connected) throw new Error('sequencer link down');
    const op = this.sealer.expire(symbol);
    const key = await this.db.txAsync(() => {
      const k = this.db.nextCounter('outbox');
      this.db.outbox.putSync(k, { rid: `e-${symbol}-${k}`, kind: 'expire', order_id: '', op, created_ns: str(this.clock.nowNs()) });
      return k;
    });
    const r = await this.submit(key, `e-${symbol}-${key}`, 'expire', '', op);
    if (!r.ok) throw r.error;
  }

  // ---------------------------------------------------------------------------------------------
  // Submission

  /**
   * Submits an outbox op and settles its bookkeeping: on ack the op leaves the outbox (a placement
   * is marked journaled); on a nack a placement is rejected and its reservation released, a modify's
   * hold released.
   */
  private submit(outboxKey: number, rid: string, kind: OutboxRec['kind'], orderId: string, op: SealedOp): Promise<SubmitOutcome> {
    const p = this.sequencer.submit(op, { rid }).then(
      (ack) => {
        if (OP_TRACE) traceOp(this.log, 'gw-acked', { order_id: orderId, seq: str(ack.seq) });
        // Not awaited: the answer waits only for the journal; a crash before this commit just
        // resubmits the op (same rid) at the next start and the sequencer returns the same ack.
        this.recordAck({ rid, outboxKey, kind, orderId, seq: str(ack.seq) });
        return { ok: true as const };
      },
      (err: unknown) => {
        if (err instanceof SequencerClosedError) {
          // Shutting down: the op stays in the outbox and is resubmitted (same rid) at the next start.
          return { ok: false as const, error: new ApiError('SEQUENCER_UNAVAILABLE', 'the gateway is shutting down; the operation will be resubmitted when it restarts') };
        }
        const detail = err instanceof SequencerNackError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
        this.log.error({ rid, order_id: orderId, err: detail }, 'sequencer refused an op');
        const cleanup = kind === 'place'
          ? this.rejectUnsequenced(outboxKey, orderId, 'RISK_CHECK_FAILED')
          : kind === 'modify' ? this.releaseModify(outboxKey, orderId) : this.db.txAsync(() => this.db.outbox.removeSync(outboxKey));
        const error = new ApiError('SEQUENCER_REJECTED', `the sequencer refused the ${kind}: ${detail}`);
        return cleanup.then(
          () => ({ ok: false as const, error }),
          (e: unknown) => {
            this.log.error({ rid, err: String(e) }, 'releasing a refused op failed');
            return { ok: false as const, error };
          },
        );
      },
    );
    if (kind === 'place') {
      this.inflight.set(orderId, p);
      void p.finally(() => this.inflight.delete(orderId));
    }
    return p;
  }

  /**
   * Acks arriving in one event-loop turn (the acks of one journal group commit) are recorded in one
   * transaction: their ops leave the outbox and placements are marked journaled.
   */
  private recordAck(a: { rid: string; outboxKey: number; kind: OutboxRec['kind']; orderId: string; seq: string }): void {
    this.acked.push(a);
    if (this.acked.length === 1) setImmediate(() => void this.flushAcks());
  }

  /** Records the acks waiting for recordAck's turn now (the gateway's stop calls it before closing the store). */
  flushAcks(): Promise<void> {
    const batch = this.acked;
    if (batch.length === 0) return Promise.resolve();
    this.acked = [];
    return this.db.txAsync(() => {
      for (const { outboxKey, kind, orderId, seq } of batch) {
        this.db.outbox.removeSync(outboxKey);
        if (kind === 'place') {
          const cur = this.db.orders.get(orderId);
          if (cur) this.db.orders.putSync(orderId, { ...cur, journaled: true, seq: cur.seq ?? seq });
        }
      }
    }).catch((e: unknown) => this.log.error({ rids: batch.map((b) => b.rid), err: String(e) }, 'recording acks failed'));
  }

  /** A placement the sequencer refused: it never reached the book, so reject it and free its reservation. */
  private async rejectUnsequenced(outboxKey: number, orderId: string, reason: string): Promise<void> {
    const ev = await this.db.txAsync(() => {
      this.db.outbox.removeSync(outboxKey);
      const o = this.db.orders.get(orderId);
      if (!o || o.placed || !isLive(o.status)) return null;
      const a = this.db.accounts.get(o.user_id)!;
      const open_by_symbol = { ...a.open_by_symbol };
      const left = (open_by_symbol[o.symbol] ?? 1) - 1;
      if (left > 0) open_by_symbol[o.symbol] = left;
      else delete open_by_symbol[o.symbol];
      const qk = openQtyKey(o.symbol, o.side);
      const open_qty = { ...(a.open_qty ?? {}) };
      const q = big(open_qty[qk] ?? '0') - big(o.qty_steps);
      if (q > 0n) open_qty[qk] = str(q);
      else delete open_qty[qk];
      this.db.accounts.putSync(a.user_id, { ...a, reserved: str(big(a.reserved) - big(o.reserved)), open_orders: a.open_orders - 1, open_by_symbol, open_qty });
      if (o.in_book) this.db.meta.putSync(depthKey(o.symbol), Math.max(0, ((this.db.meta.get(depthKey(o.symbol)) as number | undefined) ?? 1) - 1));
      const next: OrderRec = { ...o, status: 'REJECTED', reject_reason: reason, reserved: '0', in_book: false, out_time_ns: str(this.clock.nowNs()) };
      this.db.orders.putSync(orderId, next);
      indexOrder(this.db, next);
      return next;
    });
    if (ev) this.events.emit('order', { message_type: 'rejected', order: ev });
  }

  /** A modify the sequencer refused: release its hold; the order is unchanged. */
  private async releaseModify(outboxKey: number, orderId: string): Promise<void> {
    await this.db.txAsync(() => {
      this.db.outbox.removeSync(outboxKey);
      const o = this.db.orders.get(orderId);
      if (!o || !o.pending_modify) return;
      const a = this.db.accounts.get(o.user_id)!;
      this.db.accounts.putSync(a.user_id, { ...a, reserved: str(big(a.reserved) - big(o.pending_modify.hold)) });
      this.db.orders.putSync(orderId, { ...o, pending_modify: null });
    });
    this.waiters.abandon(modifyWaitKey(orderId));
  }

  /** Resubmits, under their original rids, the ops a previous run persisted but never saw acknowledged. */
  resubmitOutbox(): number {
    let count = 0;
    for (const { key, value } of this.db.outbox.getRange()) {
      const rec: OutboxRec = value;
      count++;
      void this.submit(key, rec.rid, rec.kind, rec.order_id, rec.op).then((r) => {
        if (r.ok) this.log.info({ rid: rec.rid, kind: rec.kind }, 'resubmitted op acknowledged');
      });
    }
    if (count) this.log.info({ count }, 'resubmitting unacknowledged ops from the outbox');
    return count;
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  /** An idempotent replay: waits for the original's journal ack, then answers its current state (the order object). */
  private async replay(o: OrderRec): Promise<Answer> {
    const running = this.inflight.get(o.order_id);
    if (running) await running;
    const cur = this.db.orders.get(o.order_id)!;
    return { http: 200, data: orderView(cur, this.registry.get(cur.symbol)!) };
  }

  /**
   * The order a client id names within the 24 h window; with `orLive`, also an older one that is
   * still live (it keeps its client id until it ends).
   */
  private findByClientId(userId: string, clientOrderId: string, orLive = false): OrderRec | null {
    const hit = this.db.clientIds.get(clientIdKey(userId, clientOrderId));
    if (!hit) return null;
    const o = this.db.orders.get(hit.order_id) ?? null;
    if (this.clock.nowMs() - hit.at_ms < IDEMPOTENCY_MS) return o;
    return orLive && o && isLive(o.status) ? o : null;
  }

  /** Removes client ids older than the window whose orders have ended (bounded work per sweep). */
  async pruneClientIds(): Promise<number> {
    const now = this.clock.nowMs();
    const stale: string[] = [];
    for (const { key, value } of this.db.clientIds.getRange()) {
      if (now - value.at_ms < IDEMPOTENCY_MS) continue;
      const o = this.db.orders.get(value.order_id);
      if (o && isLive(o.status)) continue;
      stale.push(key);
      if (stale.length >= PRUNE_BATCH) break;
    }
    if (stale.length) await this.db.txAsync(() => {
      for (const k of stale) {
        const v = this.db.clientIds.get(k);
        if (v && now - v.at_ms >= IDEMPOTENCY_MS) this.db.clientIds.removeSync(k);
      }
    });
    return stale.length;
  }

  private ownOrder(acct: AccountRec, orderId: string): OrderRec {
    if (!/^[1-9][0-9]{0,19}$/.test(orderId)) throw new ApiError('invalid_request', 'orderId must be the decimal order_id string returned by POST /orders');
    const o = this.db.orders.get(orderId);
    if (!o || o.user_id !== acct.user_id) fail('ORDER_NOT_FOUND', `no order ${orderId} for this account`);
    return o;
  }

  /** A fresh random 63-bit order id (decimal string); random so ids reveal nothing about volume. */
  private newOrderId(): string {
    for (;;) {
      const id = (randomU64() >> 1n).toString();
      if (id !== '0' && this.db.orders.get(id) === undefined) return id;
    }
  }
}

/** Throws INVALID_QUANTITY unless min_qty <= qty <= max_qty. */
function validateQtyBounds(inst: InstrumentSpec, qtySteps: bigint): void {
  const min = stepsOf(inst.min_qty, inst);
  const max = stepsOf(inst.max_qty, inst);
  if (qtySteps < min) fail('INVALID_QUANTITY', `quantity is below min_qty ${inst.min_qty} for ${inst.symbol}`);
  if (qtySteps > max) fail('INVALID_QUANTITY', `quantity is above max_qty ${inst.max_qty} for ${inst.symbol}`);
}

function stepsOf(text: string, inst: InstrumentSpec): bigint {
  return stepsField(text, 'limit', inst);
}

function errorName(e: ApiError): ErrorName {
  return e.kind.error as ErrorName;
}

/** A leg's failure as it appears in a mass quote answer. */
function legError(e: ApiError): Record<string, unknown> {
  return { code: e.kind.code, error: e.kind.error, message: e.message };
}

function placeRid(orderId: string): string {
  return `p-${orderId}`;
}

/** client_order_id of a placement answer: always the key, null when none was sent (issue 26 item 10; docs/orders.md). */
function clientIdField(id: string | null): { client_order_id: string | null } {
  return { client_order_id: id };
}

/** p's value, or 'timeout' after ms (p keeps running; its own handlers finish the bookkeeping). */
async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => r('timeout'), ms);
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

/** A random 64-bit value from the shared CSPRNG pool (one randomFillSync per 16 KiB, @tenebra/seal). */
const U64 = new Uint8Array(8);
function randomU64(): bigint {
  fillRandom(U64, 0, 8);
  return new DataView(U64.buffer).getBigUint64(0);
}
