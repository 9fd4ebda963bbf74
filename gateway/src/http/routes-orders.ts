// POST /orders, GET/PATCH/DELETE /orders/{orderId}, GET/DELETE /orders?client_order_id=,
// GET /orders?status=open|closed,
// POST /orders/mass-quote. docs/orders.md describes bodies, answers and codes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors';
import type { OrderService, Answer, PlacementClaim } from '../orders/service';
import { minuteBudgetRefusal, type RateLimiter } from '../ratelimit';
import type { TradingAction } from '../tiers';
import type { AccountRec } from '../store/records';
import { API_PREFIX, rateHeaders, requireAuth } from './app';
import { sendData, sendJson } from './reply';
import { listClosedOrders, listOpenOrders, type HistoryDeps } from './routes-history';
import { rejectUnknownParams, singleParam } from './query';

declare module 'fastify' {
  interface FastifyRequest {
    /** POST /orders: this request's hold on its client_order_id (see OrderService.claimPlacement) */
    placementClaim?: PlacementClaim | null;
  }
}

/**
 * onPlaced: told of every order id a placement answered NEW (REST) so the orders channel's snapshot
 * lists it before its committee outcome (issue 26 item 11; the socket's placements do the same).
 */
export function registerOrderRoutes(app: FastifyInstance, orders: OrderService, limiter: RateLimiter, history: HistoryDeps, onPlaced: (orderId: string) => void = () => {}): void {
  // Idempotency first: registered before the venue's admission hook (gateway.ts), this answers a
  // repeated client_order_id with the original order before spacing or budgets can refuse it, and
  // makes the first request of an id hold it so that racing repeats wait for its outcome.
  app.addHook('preHandler', async (req, reply) => {
    if (req.method !== 'POST' || req.routeOptions.url !== `${API_PREFIX}/orders`) return;
    const a = req.auth;
    if (a.kind !== 'ok' || !a.claims.scopes.includes('trade')) return;
    let r: Awaited<ReturnType<OrderService['claimPlacement']>>;
    try {
      r = await orders.claimPlacement(a.account, req.body);
    } catch (e) {
      if (e instanceof ApiError) return; // a malformed body: the handler answers it
      throw e;
    }
    if ('replay' in r) return answer(req, reply, r.replay);
    req.placementClaim = r.claim;
  });
  // A request refused after it took a claim (budget, spacing) releases it.
  app.addHook('onResponse', async (req) => {
    req.placementClaim?.release();
  });

  app.post(`${API_PREFIX}/orders`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    try {
      chargeAction(limiter, reply, acct, 'place');
    } catch (e) {
      req.placementClaim?.release();
      throw e;
    }
    const a = await orders.place(acct, req.body, req.placementClaim ?? null);
    const id = (a.data as { order_id?: unknown } | undefined)?.order_id;
    if (typeof id === 'string') onPlaced(id);
    return answer(req, reply, a);
  });

  app.post(`${API_PREFIX}/orders/mass-quote`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    chargeAction(limiter, reply, acct, 'massQuote');
    const a = await orders.massQuote(acct, req.body);
    for (const leg of legResults(a.data)) if (leg.code === 0 && typeof leg.order_id === 'string') onPlaced(leg.order_id);
    return answer(req, reply, a);
  });

  app.get<{ Params: { orderId: string } }>(`${API_PREFIX}/orders/:orderId`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    return sendData(req, reply, orders.get(acct, req.params.orderId));
  });

  app.patch<{ Params: { orderId: string } }>(`${API_PREFIX}/orders/:orderId`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    chargeAction(limiter, reply, acct, 'modify');
    return answer(req, reply, await orders.modify(acct, req.params.orderId, req.body));
  });

  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/orders`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    // One path, three reads: by client_order_id, or a listing by status (routes-history.ts). A name
    // no read takes is refused first, so a typo is named as such rather than as a missing status.
    rejectUnknownParams(req.query, ['status', 'client_order_id', 'symbol', 'since_ns', 'limit']);
    const status = singleParam(req.query, 'status');
    if (status === 'open') return sendData(req, reply, listOpenOrders(history, acct.user_id, req.query));
    if (status === 'closed') return sendData(req, reply, listClosedOrders(history, acct.user_id, req.query));
    if (status !== undefined) throw new ApiError('invalid_request', "status must be 'open' or 'closed'");
    if (req.query.client_order_id === undefined) throw new ApiError('invalid_request', 'GET /orders needs status=open, status=closed or client_order_id');
    rejectUnknownParams(req.query, ['client_order_id']);
    return sendData(req, reply, orders.getByClientId(acct, req.query.client_order_id));
  });

  app.delete<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/orders`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query as Record<string, unknown>, ['client_order_id']);
    chargeAction(limiter, reply, acct, 'cancel');
    return answer(req, reply, await orders.cancelByClientId(acct, req.query.client_order_id));
  });

  app.delete<{ Params: { orderId: string } }>(`${API_PREFIX}/orders/:orderId`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    chargeAction(limiter, reply, acct, 'cancel');
    return answer(req, reply, await orders.cancel(acct, req.params.orderId));
  });
}

/** The per-leg place results of a mass quote's answer (shape in docs/orders.md), [] when absent. */
function legResults(data: unknown): { code?: unknown; order_id?: unknown }[] {
  const legs = (data as { legs?: unknown } | undefined)?.legs;
  if (!Array.isArray(legs)) return [];
  return legs.map((l) => ((l as { place?: unknown }).place ?? {}) as { code?: unknown; order_id?: unknown });
}

/** Charges a trading action against the account's per-minute budget; 429 with that budget's headers when spent. */
function chargeAction(limiter: RateLimiter, reply: FastifyReply, acct: AccountRec, kind: TradingAction): void {
  const refused = minuteBudgetRefusal(limiter, acct, kind);
  if (refused) {
    rateHeaders(reply, refused.decision);
    throw new ApiError('rate_limited', refused.detail, undefined, { 'Retry-After': String(refused.decision.retryAfter) });
  }
}

function answer(req: FastifyRequest, reply: FastifyReply, a: Answer): FastifyReply {
  if (a.http === 200) return sendData(req, reply, a.data);
  // 202: degraded mode (code 1502): accepted for processing, outcome not known yet.
  return sendJson(reply.code(202), { code: a.code ?? 1502, message: a.message ?? 'QUEUED', data: a.data, timestamp: new Date().toISOString(), request_id: req.id });
}
