// GET /account/vip (scope read), GET /vip/tiers (public), and the operator route that assigns an
// account's floor tier (POST /admin/accounts/{user_id}/tier, loopback + admin secret).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { microToUsdc } from '@tenebra/config';
import { ApiError } from '../errors';
import { RawNumber } from '../json';
import type { VipService } from '../vip/service';
import type { GatewayClock } from '../clock';
import { isTier, TIERS } from '../tiers';
import { tiersView, vipView } from '../account/view';
import { rejectUnknownParams } from '../stats/window';
import { ADMIN_PREFIX, API_PREFIX, requireAuth } from './app';
import { sendData } from './reply';
import { bodyObject } from './routes-public';

const ADMIN_SECRET_HEADER = 'x-admin-secret';
const usdc = (micro: string | undefined): RawNumber => new RawNumber(microToUsdc(BigInt(micro ?? '0')));
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export interface VipRouteDeps {
  vip: VipService;
  clock: GatewayClock;
  adminSecret: string;
}

export function registerVipRoutes(app: FastifyInstance, deps: VipRouteDeps): void {
  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/account/vip`, async (req, reply) => {
    const token = requireAuth(req, 'read');
    rejectUnknownParams(req.query, []);
    const acct = (await deps.vip.refresh(token.user_id)) ?? token;
    // Taker bonuses received as a maker (USDC); GET /account/bonuses has the detail.
    const bonuses_received = { instant: usdc(acct.bonus_instant), hourly: usdc(acct.bonus_hourly) };
    return sendData(req, reply, { ...vipView(deps.vip.status(acct), deps.clock.nowMs()), bonuses_received });
  });

  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/vip/tiers`, async (req, reply) => {
    rejectUnknownParams(req.query, []);
    return sendData(req, reply, tiersView());
  });

  const secretDigest = createHash('sha256').update(deps.adminSecret).digest();
  app.post<{ Params: { userId: string } }>(`${ADMIN_PREFIX}/accounts/:userId/tier`, async (req, reply) => {
    adminGuard(req, secretDigest);
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    const b = bodyObject(req.body, 'tier');
    if (!isTier(b.tier)) throw new ApiError('invalid_request', `tier must be one of ${TIERS.join(', ')}`);
    const unknown = Object.keys(b).find((k) => k !== 'tier');
    if (unknown !== undefined) throw new ApiError('invalid_request', `unknown field '${unknown.slice(0, 32)}'; send {tier}`);
    const acct = /^0x[0-9a-f]{40}$/.test(req.params.userId) ? await deps.vip.setFloor(req.params.userId, b.tier) : undefined;
    if (!acct) throw new ApiError('not_found', `no account ${req.params.userId.slice(0, 64)}`);
    req.log.info({ user_id: acct.user_id, assigned: b.tier, effective: acct.tier }, 'assigned tier set');
    return sendData(req, reply, { user_id: acct.user_id, assigned_tier: b.tier, tier: acct.tier });
  });
}

/** Loopback plus the admin secret header (same rule as routes-admin.ts). */
function adminGuard(req: FastifyRequest, secretDigest: Buffer): void {
  if (!LOOPBACK.has(req.socket.remoteAddress ?? '')) throw new ApiError('forbidden', 'admin routes accept loopback connections only');
  const given = req.headers[ADMIN_SECRET_HEADER];
  const digest = createHash('sha256').update(typeof given === 'string' ? given : '').digest();
  if (!timingSafeEqual(digest, secretDigest)) throw new ApiError('forbidden', `missing or wrong ${ADMIN_SECRET_HEADER} header`);
}
