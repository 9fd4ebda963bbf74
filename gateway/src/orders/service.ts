// Placing, reading and cancelling orders. A placement is validated, risk-checked and persisted with
// its reservation and its sealed op (outbox) in one transaction, then submitted to the sequencer;
// it is acknowledged only once the sequencer has journaled it. Fills arrive later from the committee
// (results/clearing.ts).
import { randomBytes } from 'node:crypto';
import { SequencerNackError, SequencerClosedError, type SealedOp } from '@tenebra/wire';
import { microToUsdc } from '@tenebra/config';
import type { Logger } from 'pino';
import { ApiError, fail } from '../errors';
import type { GatewayDb } from '../store/db';
import { clientIdKey } from '../store/db';
import { big, isLive, str, type AccountRec, type OrderRec, type OutboxRec } from '../store/records';
import type { InstrumentRegistry } from '../instruments';
import type { GatewayClock } from '../clock';
import type { OpSealer } from '../sharing';
import type { OutcomeWaiters } from '../results/pipeline';
import type { GatewayEvents } from '../events';
import { TIER_INFO } from '../tiers';
import { validateOrder, MAX_CLIENT_ORDER_ID } from './validate';
import { effectiveLeverage, reservation } from './margin';
import { orderView } from './view';

/** client_order_id idempotency window (spec: 24 hours). */
export const IDEMPOTENCY_MS = 24 * 3600 * 1000;

/** The sequencer as the order service uses it (SequencerClient of @tenebra/wire fits). */
export interface SequencerPort {
  readonly connected: boolean;
  submit(op: SealedOp, opts: { rid: string }): Promise<{ seq: bigint; tsNs: bigint }>;
}

export interface OrderServiceOptions {
  /** how long POST /orders waits for the journal ack before answering 202 QUEUED (default 5,000 ms) */
  ackTimeoutMs?: number;
  /** how long DELETE waits for the committee's cancel outcome before answering 202 QUEUED (default 10,000 ms) */
  cancelTimeoutMs?: number;
}

export interface Answer {
  http: 200 | 202;
  data: Record<string, unknown>;
  /** set for 202: the degraded-mode code and message */
  code?: number;
  message?: string;
}

export class OrderService {
  /** submissions in flight by order id (placements) so idempotent replays can wait for them */
  private readonly inflight = new Map<string, Promise<unknown>>();
  /** cancels in flight by order id, shared by concurrent DELETEs */
  private readonly cancelling = new Map<string, Promise<Answer>>();
  private readonly ackTimeoutMs: number;
  private readonly cancelTimeoutMs: number;

  constructor(
    private readonly db: GatewayDb,
    private readonly registry: InstrumentRegistry,
    private readonly sealer: OpSealer,
    private readonly sequencer: SequencerPort,
    private readonly waiters: OutcomeWaiters,
    private readonly events: GatewayEvents,
    private readonly clock: GatewayClock,
    private readonly log: Logger,
    opts: OrderServiceOptions = {},
  ) {
    this.ackTimeoutMs = opts.ackTimeoutMs ?? 5_000;
    this.cancelTimeoutMs = opts.cancelTimeoutMs ?? 10_000;
  }

  /** POST /orders for an authenticated account. */
  async place(acct: AccountRec, body: unknown): Promise<Answer> {
    const tier = TIER_INFO[acct.tier];
    const intent = validateOrder(body, this.registry, tier.minNotionalMicro);
    if (intent.clientOrderId !== null) {
      const prior = this.findByClientId(acct.user_id, intent.clientOrderId);
      if (prior) return this.replay(prior);
    }
    if (!this.sequencer.connected) fail('SEQUENCER_UNAVAILABLE', 'the sequencer is not reachable; nothing was submitted, retry later');

    const { inst } = intent;
    const leverage = effectiveLeverage(acct, inst);
    const need = reservation(inst, intent.qtySteps, intent.priceTicks, leverage, tier.takerFeePips);
    const orderId = this.newOrderId();
    const op = this.sealer.place(orderId, inst.symbol, { side: intent.side, type: intent.type, time_in_force: intent.tif }, intent.priceTicks, intent.qtySteps);
    const nowNs = this.clock.nowNs();

    const outboxKey = await this.db.txAsync(() => {
      const a = this.db.accounts.get(acct.user_id)!;
      if (intent.clientOrderId !== null && this.findByClientId(a.user_id, intent.clientOrderId)) {
        fail('INVALID_ORDER', 'a concurrent request with this client_order_id is being placed; retry to get its state');
      }
      if (a.open_orders >= tier.maxOpenOrders) fail('OPEN_ORDER_LIMIT', `the ${a.tier} tier allows ${tier.maxOpenOrders} open orders`);
      if ((a.open_by_symbol[inst.symbol] ?? 0) >= tier.maxOpenPerSymbol) {
        fail('OPEN_ORDER_LIMIT', `the ${a.tier} tier allows ${tier.maxOpenPerSymbol} open orders per symbol`);
      }
      const free = big(a.balance) - big(a.reserved);
      if (need > free) {
        fail('MARGIN_INSUFFICIENT', `initial margin and fees of ${microToUsdc(need)} USDC exceed free collateral of ${microToUsdc(free > 0n ? free : 0n)} USDC (leverage ${leverage}x)`);
      }
      const order: OrderRec = {
        order_id: orderId, user_id: a.user_id, client_order_id: intent.clientOrderId, symbol: inst.symbol, side: intent.side,
        type: 'limit', time_in_force: intent.tif, price_ticks: str(intent.priceTicks), qty_steps: str(intent.qtySteps),
        filled_steps: '0', notional_ts: '0', last_fill_steps: null, last_fill_ticks: null, status: 'NEW',
        cancel_reason: null, reject_reason: null, in_time_ns: str(nowNs), out_time_ns: str(nowNs), leverage,
        fee_pips: str(tier.takerFeePips), reserved: str(need), journaled: false, seq: null, placed: false,
      };
      this.db.orders.putSync(orderId, order);
      this.db.accounts.putSync(a.user_id, {
        ...a, reserved: str(big(a.reserved) + need), open_orders: a.open_orders + 1,
        open_by_symbol: { ...a.open_by_symbol, [inst.symbol]: (a.open_by_symbol[inst.symbol] ?? 0) + 1 },
      });
      if (intent.clientOrderId !== null) this.db.clientIds.putSync(clientIdKey(a.user_id, intent.clientOrderId), { order_id: orderId, at_ms: this.clock.nowMs() });
      const key = this.db.nextCounter('outbox');
      this.db.outbox.putSync(key, { rid: placeRid(orderId), kind: 'place', order_id: orderId, op, created_ns: str(nowNs) });
      return key;
    });

    const submitted = this.submit(outboxKey, placeRid(orderId), 'place', orderId, op);
    const outcome = await withTimeout(submitted, this.ackTimeoutMs);
    if (outcome === 'timeout') {
      return {
        http: 202, code: 1502, data: { order_id: orderId, client_order_id: intent.clientOrderId },
        message: 'QUEUED: the order is persisted and submitted but the sequencer has not acknowledged it yet; do not resubmit, track it with GET /orders/{orderId}',
      };
    }
    if (outcome.ok) return { http: 200, data: { order_id: orderId, client_order_id: intent.clientOrderId, status: 'NEW' } };
    throw outcome.error;
  }

  /** GET /orders/{orderId}: the account's own order. */
  get(acct: AccountRec, orderId: string): Record<string, unknown> {
    const o = this.ownOrder(acct, orderId);
    return orderView(o, this.registry.get(o.symbol)!);
  }

  /** GET /orders?client_order_id=: the account's order with that client id (within the 24 h window). */
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
    const o = this.findByClientId(acct.user_id, clientOrderId);
    if (!o) fail('ORDER_NOT_FOUND', `no order with client_order_id '${clientOrderId}' in the last 24 hours for this account`);
    return o;
  }

  /** DELETE /orders/{orderId}: submits a cancel and waits for the committee's outcome. */
  async cancel(acct: AccountRec, orderId: string): Promise<Answer> {
    const o = this.ownOrder(acct, orderId);
    if (!isLive(o.status)) fail('ORDER_NOT_LIVE', `order ${orderId} is ${o.status} and cannot be cancelled`);
    const running = this.cancelling.get(orderId);
    if (running) return running;
    if (!this.sequencer.connected) fail('SEQUENCER_UNAVAILABLE', 'the sequencer is not reachable; nothing was submitted, retry later');
    const p = this.runCancel(o).finally(() => this.cancelling.delete(orderId));
    this.cancelling.set(orderId, p);
    return p;
  }

  private async runCancel(o: OrderRec): Promise<Answer> {
    const outcome = this.waiters.wait(o.order_id);
    const op = this.sealer.cancel(o.order_id, o.symbol);
    const nowNs = this.clock.nowNs();
    const { key, rid } = await this.db.txAsync(() => {
      const key = this.db.nextCounter('outbox');
      const rid = `c-${o.order_id}-${key}`;
      this.db.outbox.putSync(key, { rid, kind: 'cancel', order_id: o.order_id, op, created_ns: str(nowNs) });
      return { key, rid };
    });
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

  /**
   * Submits an outbox op and settles its bookkeeping: on ack the op leaves the outbox (a placement
   * is marked journaled); on a nack a placement is rejected and its reservation released.
   */
  private submit(outboxKey: number, rid: string, kind: OutboxRec['kind'], orderId: string, op: SealedOp): Promise<{ ok: true } | { ok: false; error: ApiError }> {
    const p = this.sequencer.submit(op, { rid }).then(
      (ack) => {
        // Not awaited: the answer waits only for the journal; a crash before this commit just
        // resubmits the op (same rid) at the next start and the sequencer returns the same ack.
        this.db.txAsync(() => {
          this.db.outbox.removeSync(outboxKey);
          if (kind === 'place') {
            const cur = this.db.orders.get(orderId);
            if (cur) this.db.orders.putSync(orderId, { ...cur, journaled: true, seq: cur.seq ?? str(ack.seq) });
          }
        }).catch((e: unknown) => this.log.error({ rid, err: String(e) }, 'recording an ack failed'));
        return { ok: true as const };
      },
      (err: unknown) => {
        if (err instanceof SequencerClosedError) {
          // Shutting down: the op stays in the outbox and is resubmitted (same rid) at the next start.
          return { ok: false as const, error: new ApiError('SEQUENCER_UNAVAILABLE', 'the gateway is shutting down; the order will be resubmitted when it restarts') };
        }
        const detail = err instanceof SequencerNackError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
        this.log.error({ rid, order_id: orderId, err: detail }, 'sequencer refused an op');
        const cleanup = kind === 'place'
          ? this.rejectUnsequenced(outboxKey, orderId, 'SEQUENCER_REJECTED')
          : this.db.txAsync(() => this.db.outbox.removeSync(outboxKey));
        return cleanup.then(
          () => ({ ok: false as const, error: new ApiError('SEQUENCER_REJECTED', `the sequencer refused the ${kind}: ${detail}`) }),
          (e: unknown) => {
            this.log.error({ rid, err: String(e) }, 'releasing a refused op failed');
            return { ok: false as const, error: new ApiError('SEQUENCER_REJECTED', `the sequencer refused the ${kind}: ${detail}`) };
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
      this.db.accounts.putSync(a.user_id, { ...a, reserved: str(big(a.reserved) - big(o.reserved)), open_orders: a.open_orders - 1, open_by_symbol });
      const next: OrderRec = { ...o, status: 'REJECTED', reject_reason: reason, reserved: '0', out_time_ns: str(this.clock.nowNs()) };
      this.db.orders.putSync(orderId, next);
      return next;
    });
    if (ev) this.events.emit('order', { message_type: 'rejected', order: ev });
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

  private async replay(o: OrderRec): Promise<Answer> {
    const running = this.inflight.get(o.order_id);
    if (running) await running;
    const cur = this.db.orders.get(o.order_id)!;
    return { http: 200, data: { order_id: cur.order_id, client_order_id: cur.client_order_id, status: cur.status } };
  }

  private findByClientId(userId: string, clientOrderId: string): OrderRec | null {
    const hit = this.db.clientIds.get(clientIdKey(userId, clientOrderId));
    if (!hit || this.clock.nowMs() - hit.at_ms >= IDEMPOTENCY_MS) return null;
    return this.db.orders.get(hit.order_id) ?? null;
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
      const id = (randomBytes(8).readBigUInt64BE() >> 1n).toString();
      if (id !== '0' && this.db.orders.get(id) === undefined) return id;
    }
  }
}

function placeRid(orderId: string): string {
  return `p-${orderId}`;
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
