// Venue-level admission of trading requests, as a preHandler hook in front of the order routes
// (which charge the per-account weighted minute budget themselves): mass quotes only for the tiers
// that have them and within their batch count, the per-symbol per-account spacing, and the system
// caps (10,000 weighted actions/s overall, 5,000 per symbol). Requests without a valid trade token
// pass through so that the route answers the authentication error.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors';
import type { TradingGuard } from '../ratelimit';
import type { TradingAction } from '../tiers';
import type { InstrumentRegistry } from '../instruments';
import { clientIdKey, type GatewayDb } from '../store/db';
import { API_PREFIX, rateHeaders } from './app';

export function registerTradingLimits(app: FastifyInstance, deps: { guard: TradingGuard; db: GatewayDb; registry: InstrumentRegistry }): void {
  const symbolOf = (req: FastifyRequest, kind: TradingAction, userId: string): string | null => {
    let s: unknown = null;
    if (kind === 'place' || kind === 'massQuote') {
      const b = req.body;
      if (b && typeof b === 'object' && !Array.isArray(b)) s = (b as Record<string, unknown>).symbol;
    } else {
      const params = req.params as Record<string, unknown> | undefined;
      const query = req.query as Record<string, unknown> | undefined;
      let orderId: unknown = params?.orderId;
      if (orderId === undefined && typeof query?.client_order_id === 'string') {
        orderId = deps.db.clientIds.get(clientIdKey(userId, query.client_order_id))?.order_id;
      }
      if (typeof orderId === 'string') {
        const o = deps.db.orders.get(orderId);
        if (o && o.user_id === userId) s = o.symbol;
      }
    }
    return typeof s === 'string' && deps.registry.get(s) ? s : null;
  };

  app.addHook('preHandler', async (req, reply) => {
    const kind = actionOf(req.method, req.routeOptions.url);
    if (kind === null) return;
    const a = req.auth;
    if (a.kind !== 'ok' || !a.claims.scopes.includes('trade')) return;
    const r = deps.guard.admit(a.account.user_id, a.account.tier, kind, symbolOf(req, kind, a.account.user_id));
    if (r.ok) return;
    if (r.error === 'rate_limited') rateHeaders(reply, r.decision);
    if (r.error === 'tier_not_eligible') throw new ApiError(r.error, r.detail);
    // Retry-After-Ms: the precise wait (Retry-After is whole seconds); docs/api.md "Rate limits"
    const ms = r.retryAfterMs ?? r.decision.retryAfter * 1000;
    throw new ApiError(r.error, r.detail, { retry_after_ms: ms }, { 'Retry-After': String(r.decision.retryAfter), 'Retry-After-Ms': String(ms) });
  });
}

/** The trading action a route performs, or null. */
export function actionOf(method: string, route: string | undefined): TradingAction | null {
  if (route === undefined) return null;
  if (method === 'POST' && route === `${API_PREFIX}/orders`) return 'place';
  if (method === 'POST' && route === `${API_PREFIX}/orders/mass-quote`) return 'massQuote';
  if (method === 'PATCH' && route === `${API_PREFIX}/orders/:orderId`) return 'modify';
  if (method === 'DELETE' && (route === `${API_PREFIX}/orders/:orderId` || route === `${API_PREFIX}/orders`)) return 'cancel';
  return null;
}
