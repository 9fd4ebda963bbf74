// The decrypted trading ops of the socket (order.place / order.cancel / order.modify), executed by the
// same order service as the REST routes; answers become the encrypted Ack. A placement refused before
// it entered the book is also announced as a `rejected` event, a refused cancel or modify as
// `cancel_rejected` / `modify_rejected` (unless the committee's outcome already announced it).
import { randomBytes } from 'node:crypto';
import type { Ack, CancelOrder, EdgeSequencerRequest, ModifyOrder, OrderUpdate, PlaceOrder } from '@tenebra/session';
import type { Logger } from 'pino';
import { ApiError } from '../errors';
import type { GatewayClock } from '../clock';
import type { InstrumentRegistry } from '../instruments';
import type { Answer } from '../orders/service';
import { minuteBudgetRefusal, type RateLimiter } from '../ratelimit';
import type { TradingAction } from '../tiers';
import type { AccountRec, OrderRec } from '../store/records';
import type { GatewayDb } from '../store/db';
import type { ChannelHub } from './hub';
import { orderUpdate } from './views';

/** The order service as the socket uses it (OrderService fits; modify once the service offers it). */
export interface OrderPort {
  place(acct: AccountRec, body: unknown): Promise<Answer>;
  cancel(acct: AccountRec, orderId: string): Promise<Answer>;
  getByClientId(acct: AccountRec, clientOrderId: unknown): Record<string, unknown>;
  modify?: (acct: AccountRec, orderId: string, changes: Record<string, unknown>) => Promise<Answer>;
}

/** The spec's reject_reason values (Events: orders channel). */
const SPEC_REJECT_REASONS = new Set([
  'MARGIN_INSUFFICIENT', 'POSITION_LIMIT_EXCEEDED', 'LEVERAGE_EXCEEDED', 'INSUFFICIENT_LIQUIDITY', 'INVALID_PRICE',
  'DUPLICATE_CLIENT_ORDER_ID', 'INSTRUMENT_HALTED', 'ACCOUNT_IN_LIQUIDATION', 'RISK_CHECK_FAILED',
]);

/** The spec's reject_reason for a gateway error name (its own when it is one, else RISK_CHECK_FAILED). */
export function specRejectReason(errorName: string): string {
  return SPEC_REJECT_REASONS.has(errorName) ? errorName : 'RISK_CHECK_FAILED';
}

/** Venue admission of one trading action (spacing per symbol, system caps, tier eligibility): null = admitted. */
export type Admit = (acct: AccountRec, kind: TradingAction, symbol: string | null) => ApiError | null;

export interface TradingDeps {
  orders: OrderPort;
  /** the same admission the REST order routes apply before the service (absent: none) */
  admit?: Admit;
  registry: InstrumentRegistry;
  limiter: RateLimiter;
  db: GatewayDb;
  hub: ChannelHub;
  clock: GatewayClock;
  log: Logger;
  /** told of every placement's answer (http 200/202 or the refusal's status and code) and how long it took (s): metrics */
  onPlacement?: (http: number, code: number | undefined, seconds: number) => void;
}

/** What the op needs from the header: the symbol_id it was sealed with. */
export interface TradeContext {
  acct: AccountRec;
  scopes: readonly string[];
  symbolId: number;
}

export class SocketTrading {
  constructor(private readonly d: TradingDeps) {}

  /** Executes one decrypted op; never throws (every failure is an Ack with a non-zero code). */
  async execute(ctx: TradeContext, request: EdgeSequencerRequest): Promise<Ack> {
    try {
      if (!ctx.scopes.includes('trade')) throw new ApiError('insufficient_scope', "trading ops need the 'trade' scope; the token lacks it");
      if ('place' in request) return await this.place(ctx, request.place);
      if ('cancel' in request) return await this.cancel(ctx, request.cancel);
      return await this.modify(ctx, request.modify);
    } catch (e) {
      if (e instanceof ApiError) return refusal(e, '', '');
      this.d.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'socket trading op failed');
      return { code: 50000, message: 'internal_error: the gateway failed to handle the op; it was logged', order_id: '', client_order_id: '', reject_reason: '' };
    }
  }

  private async place(ctx: TradeContext, p: PlaceOrder): Promise<Ack> {
    const inst = this.d.registry.get(p.symbol);
    if (inst && ctx.symbolId !== inst.symbol_id) {
      return badHeader(`header.symbol_id ${ctx.symbolId} does not match ${p.symbol} (symbol_id ${inst.symbol_id})`, p.client_order_id);
    }
    const body: Record<string, unknown> = {
      symbol: p.symbol, side: p.side, type: p.type, quantity: p.quantity, time_in_force: p.time_in_force,
      ...(p.price !== undefined ? { price: p.price } : {}),
      ...(p.expiry_time !== undefined ? { expiry_time: p.expiry_time } : {}),
      ...(p.aon !== undefined ? { aon: p.aon } : {}),
      ...(p.min_fill_size !== undefined ? { min_fill_size: p.min_fill_size } : {}),
      ...(p.client_order_id !== undefined ? { client_order_id: p.client_order_id } : {}),
      ...(p.peg_reference !== undefined ? { peg_reference: p.peg_reference } : {}),
      ...(p.leverage !== undefined ? { leverage: p.leverage } : {}),
    };
    let answer: Answer;
    const t0 = performance.now();
    try {
      this.charge(ctx.acct, 'place', inst ? inst.symbol : null);
      answer = await this.d.orders.place(ctx.acct, body);
      this.d.onPlacement?.(answer.http, answer.code, (performance.now() - t0) / 1000);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      this.d.onPlacement?.(e.kind.http, e.kind.code, (performance.now() - t0) / 1000);
      // Refused before entering the book: announce it as a rejected order under a fresh id.
      const orderId = freshOrderId();
      const reason = specRejectReason(e.kind.error);
      this.d.hub.emitLocal(ctx.acct.user_id, this.rejectedUpdate(orderId, p, reason));
      return { ...refusal(e, orderId, p.client_order_id ?? ''), status: 'REJECTED', reject_reason: reason };
    }
    const data = answer.data as { order_id?: string; client_order_id?: string | null; status?: Ack['status'] };
    if (data.order_id) {
      const rec = this.d.db.orders.get(data.order_id);
      if (rec) this.d.hub.live.addPlaced(rec);
    }
    return accepted(answer, data.order_id ?? '', data.client_order_id ?? p.client_order_id ?? '', data.status);
  }

  private async cancel(ctx: TradeContext, c: CancelOrder): Promise<Ack> {
    const o = this.target(ctx, c);
    const before = this.d.hub.refusalCount(o.order_id);
    try {
      this.charge(ctx.acct, 'cancel', o.symbol);
      const answer = await this.d.orders.cancel(ctx.acct, o.order_id);
      return accepted(answer, o.order_id, o.client_order_id ?? '', (answer.data as { status?: Ack['status'] }).status);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      this.announceRefusal(ctx, o.order_id, before, 'cancel_rejected', e.kind.error);
      return refusal(e, o.order_id, o.client_order_id ?? '');
    }
  }

  private async modify(ctx: TradeContext, m: ModifyOrder): Promise<Ack> {
    const o = this.target(ctx, m);
    const before = this.d.hub.refusalCount(o.order_id);
    const changes: Record<string, unknown> = {
      ...(m.price !== undefined ? { price: m.price } : {}),
      ...(m.quantity !== undefined ? { quantity: m.quantity } : {}),
      ...(m.time_in_force !== undefined ? { time_in_force: m.time_in_force } : {}),
      ...(m.expiry_time !== undefined ? { expiry_time: m.expiry_time } : {}),
    };
    try {
      if (!this.d.orders.modify) throw new ApiError('UNSUPPORTED_ORDER', 'modify is not supported by this gateway yet; cancel and place a new order');
      this.charge(ctx.acct, 'modify', o.symbol);
      const answer = await this.d.orders.modify(ctx.acct, o.order_id, changes);
      return accepted(answer, o.order_id, o.client_order_id ?? '', (answer.data as { status?: Ack['status'] }).status);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      this.announceRefusal(ctx, o.order_id, before, 'modify_rejected', e.kind.error);
      return refusal(e, o.order_id, o.client_order_id ?? '');
    }
  }

  /** The account's order a cancel/modify names; checks the header's symbol_id (0 or the order's). */
  private target(ctx: TradeContext, t: CancelOrder | ModifyOrder): OrderRec {
    let orderId: string;
    if (t.order_id !== undefined) orderId = t.order_id;
    else orderId = String(this.d.orders.getByClientId(ctx.acct, t.client_order_id).order_id);
    const o = /^[1-9][0-9]{0,19}$/.test(orderId) ? this.d.db.orders.get(orderId) : undefined;
    if (!o || o.user_id !== ctx.acct.user_id) throw new ApiError('ORDER_NOT_FOUND', `no order ${orderId.slice(0, 24)} for this account`);
    const inst = this.d.registry.get(o.symbol)!;
    if (t.symbol !== undefined && t.symbol !== o.symbol) throw new ApiError('ORDER_NOT_FOUND', `order ${orderId} is not on ${t.symbol.slice(0, 32)}`);
    if (ctx.symbolId !== 0 && ctx.symbolId !== inst.symbol_id) {
      throw new ApiError('invalid_request', `header.symbol_id ${ctx.symbolId} does not match the order's ${o.symbol} (symbol_id ${inst.symbol_id}); send its id or 0`);
    }
    return o;
  }

  /** Announces a refused cancel/modify unless the committee's outcome already did. */
  private announceRefusal(ctx: TradeContext, orderId: string, before: number, type: 'cancel_rejected' | 'modify_rejected', reason: string): void {
    if (this.d.hub.refusalCount(orderId) > before) return;
    const o = this.d.db.orders.get(orderId);
    const inst = o && this.d.registry.get(o.symbol);
    if (o && inst) this.d.hub.emitLocal(ctx.acct.user_id, orderUpdate(o, inst, type, reason));
  }

  /** Admits the action as the REST routes do (venue admission, then the account's weighted minute budget). */
  private charge(acct: AccountRec, kind: TradingAction, symbol: string | null): void {
    const refused = this.d.admit?.(acct, kind, symbol);
    if (refused) throw refused;
    const budget = minuteBudgetRefusal(this.d.limiter, acct, kind);
    if (budget) throw new ApiError('rate_limited', budget.detail);
  }

  private rejectedUpdate(orderId: string, p: PlaceOrder, reason: string): OrderUpdate {
    const now = this.d.clock.nowNs().toString();
    return {
      message_type: 'rejected', order_id: orderId, symbol: p.symbol, side: p.side, type: p.type, time_in_force: p.time_in_force,
      quantity: p.quantity, filled_quantity: '0', remaining_quantity: '0', status: 'REJECTED', in_time_ns: now, out_time_ns: now,
      reject_reason: reason,
      ...(p.client_order_id !== undefined ? { client_order_id: p.client_order_id } : {}),
      ...(p.price !== undefined ? { price: p.price } : {}),
    };
  }
}

function accepted(a: Answer, orderId: string, clientOrderId: string, status: Ack['status'] | undefined): Ack {
  return {
    code: a.http === 200 ? 0 : (a.code ?? 1502), message: a.http === 200 ? '' : (a.message ?? 'QUEUED'),
    order_id: orderId, client_order_id: clientOrderId, ...(status ? { status } : {}), reject_reason: '',
  };
}

function refusal(e: ApiError, orderId: string, clientOrderId: string): Ack {
  return { code: e.kind.code, message: e.message, order_id: orderId, client_order_id: clientOrderId, reject_reason: e.kind.error };
}

function badHeader(detail: string, clientOrderId: string | undefined): Ack {
  return { code: 40000, message: `invalid_request: ${detail}`, order_id: '', client_order_id: clientOrderId ?? '', reject_reason: 'invalid_request' };
}

/** An id for a placement refused before it entered the book (63-bit random, like venue order ids). */
function freshOrderId(): string {
  for (;;) {
    const id = (randomBytes(8).readBigUInt64BE() >> 1n).toString();
    if (id !== '0') return id;
  }
}
