// POST /orders, GET/PATCH/DELETE /orders/{orderId}, GET/DELETE /orders?client_order_id=,
// POST /orders/mass-quote. docs/orders.md describes bodies, answers and codes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors';
import type { OrderService, Answer } from '../orders/service';
import type { RateLimiter } from '../ratelimit';
import { ACTION_WEIGHT_MILLI, TIER_INFO } from '../tiers';
import type { AccountRec } from '../store/records';
import { API_PREFIX, rateHeaders, requireAuth } from './app';
import { sendData, sendJson } from './reply';

export function registerOrderRoutes(app: FastifyInstance, orders: OrderService, limiter: RateLimiter): void {
  app.post(`${API_PREFIX}/orders`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    chargeAction(limiter, reply, acct, ACTION_WEIGHT_MILLI.place);
    return answer(req, reply, await orders.place(acct, req.body));
  });

  app.post(`${API_PREFIX}/orders/mass-quote`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    chargeAction(limiter, reply, acct, ACTION_WEIGHT_MILLI.massQuote);
    return answer(req, reply, await orders.massQuote(acct, req.body));
  });

  app.get<{ Params: { orderId: string } }>(`${API_PREFIX}/orders/:orderId`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    return sendData(req, reply, orders.get(acct, req.params.orderId));
  });

  app.patch<{ Params: { orderId: string } }>(`${API_PREFIX}/orders/:orderId`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    chargeAction(limiter, reply, acct, ACTION_WEIGHT_MILLI.modify);
    return answer(req, reply, await orders.modify(acct, req.params.orderId, req.body));
  });

  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/orders`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    return sendData(req, reply, orders.getByClientId(acct, req.query.client_order_id));
  });

  app.delete<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/orders`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
    chargeAction(limiter, reply, acct, ACTION_WEIGHT_MILLI.cancel);
    return answer(req, reply, await orders.cancelByClientId(acct, req.query.client_order_id));
  });

  app.delete<{ Params: { orderId: string } }>(`${API_PREFIX}/orders/:orderId`, async (req, reply) => {
    const acct = requireAuth(req, 'trade');
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
