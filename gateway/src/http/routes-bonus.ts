// GET /account/bonuses (scope read): the taker bonuses the account received as a maker (instant and
// hourly totals), its liquidity in hourly windows not yet paid, and its recent hourly payouts. An
// extension: the spec names the bonuses but no endpoint for them (docs/api.md, "Taker bonuses").
import type { FastifyInstance } from 'fastify';
import { microToUsdc } from '@tenebra/config';
import { ApiError } from '../errors';
import { RawNumber } from '../json';
import type { GatewayDb } from '../store/db';
import type { HourlyBonus } from '../bonus/hourly';
import { HOUR_MS } from '../bonus/arithmetic';
import { rejectUnknownParams, limitParam } from '../stats/window';
import { API_PREFIX, requireAuth } from './app';
import { sendData } from './reply';

const MAX_LIST = 100;
const usdc = (micro: bigint): RawNumber => new RawNumber(microToUsdc(micro));
const iso = (ms: number): string => new Date(ms).toISOString();

export function registerBonusRoutes(app: FastifyInstance, deps: { db: GatewayDb; hourly: HourlyBonus }): void {
  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/account/bonuses`, async (req, reply) => {
    const token = requireAuth(req, 'read');
    rejectUnknownParams(req.query, ['limit']);
    const limit = limitParam(req.query, 24, MAX_LIST);
    const acct = deps.db.accounts.get(token.user_id) ?? token;
    return sendData(req, reply, {
      instant_total: usdc(BigInt(acct.bonus_instant ?? '0')),
      hourly_total: usdc(BigInt(acct.bonus_hourly ?? '0')),
      accruing: deps.hourly.accruing(acct.user_id).map((a) => ({
        window_start: iso(a.window_start_ms), window_end: iso(a.window_start_ms + HOUR_MS),
        maker_notional: usdc(a.notional), window_maker_notional: usdc(a.window_notional), window_taker_fees: usdc(a.window_taker_fees),
      })),
      payouts: deps.hourly.payouts(acct.user_id, limit).map((p) => ({
        window_start: iso(p.start_ms), window_end: iso(p.start_ms + HOUR_MS), amount: usdc(BigInt(p.amount)),
        maker_notional: usdc(BigInt(p.notional)), window_maker_notional: usdc(BigInt(p.window_notional)), paid_at: iso(p.paid_at_ms),
      })),
    });
  });
}
