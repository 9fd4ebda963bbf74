// POST /orders, GET/PATCH/DELETE /orders/{orderId}, GET/DELETE /orders?client_order_id=,
// POST /orders/mass-quote. docs/orders.md describes bodies, answers and codes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors';
import type { OrderService, Answer, PlacementClaim } from '../orders/service';
import type { RateLimiter } from '../ratelimit';
import { ACTION_WEIGHT_MILLI, TIER_INFO } from '../tiers';
import type { AccountRec } from '../store/records';
import { API_PREFIX, rateHeaders, requireAuth } from './app';
import { sendData, sendJson } from './reply';
import { rejectUnknownParams } from './query';

declare module 'fastify' {
  interface FastifyRequest {
    /** POST /orders: this request's hold on its client_order_id (see OrderService.claimPlacement) */
    placementClaim?: PlacementClaim | null;
  }
}

export function registerOrderRoutes(app: FastifyInstance, orders: OrderService, limiter: RateLimiter): void {
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
      chargeAction(limiter, reply, acct, ACTION_WEIGHT_MILLI.place);
    } catch (e) {
      req.placementClaim?.release();
      throw e;
    }
    return answer(req, reply, await orders.place(acct, req.body, req.placementClaim ?? null));
  });

  app.post(`${API_PREFIX}/orders/mass-quote`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    chargeAction(limiter, reply, acct, ACTION_WEIGHT_MILLI.massQuote);
    return answer(req, reply, await orders.massQuote(acct, req.body));
  });

  app.get<{ Params: { orderId: string } }>(`${API_PREFIX}/orders/:orderId`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    return sendData(req, reply, orders.get(acct, req.params.orderId));
  });

  app.patch<{ Params: { orderId: string } }>(`${API_PREFIX}/orders/:orderId`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    chargeAction(limiter, reply, acct, ACTION_WEIGHT_MILLI.modify);
    return answer(req, reply, await orders.modify(acct, req.params.orderId, req.body));
  });

  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/orders`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    rejectUnknownParams(req.query as Record<string, unknown>, ['client_order_id']);
    return sendData(req, reply, orders.getByClientId(acct, req.query.client_order_id));
  });

  app.delete<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/orders`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query as Record<string, unknown>, ['client_order_id']);
    chargeAction(limiter, reply, acct, ACTION_WEIGHT_MILLI.cancel);
    return answer(req, reply, await orders.cancelByClientId(acct, req.query.client_order_id));
  });

  app.delete<{ Params: { orderId: string } }>(`${API_PREFIX}/orders/:orderId`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    chargeAction(limiter, reply, acct, ACTION_WEIGHT_MILLI.cancel);
    return answer(req, reply, await orders.cancel(acct, req.params.orderId));
  });
}

/** Charges a trading action against the account's per-minute budget; 429 with that budget's headers when spent. */
function chargeAction(limiter: RateLimiter, reply: FastifyReply, acct: AccountRec, weightMilli: number): void {
  const d = limiter.action(`acct:${acct.user_id}`, TIER_INFO[acct.tier].ordersPerMinute, weightMilli);
  if (!d.allowed) {
    rateHeaders(reply, d);
    throw new ApiError('rate_limited', `trading action budget of ${d.limit} weighted actions per minute is spent; retry after ${d.retryAfter} s`, undefined, { 'Retry-After': String(d.retryAfter) });
  }
}

function answer(req: FastifyRequest, reply: FastifyReply, a: Answer): FastifyReply {
  if (a.http === 200) return sendData(req, reply, a.data);
  // 202: degraded mode (code 1502): accepted for processing, outcome not known yet.
  return sendJson(reply.code(202), { code: a.code ?? 1502, message: a.message ?? 'QUEUED', data: a.data, timestamp: new Date().toISOString(), request_id: req.id });
}
