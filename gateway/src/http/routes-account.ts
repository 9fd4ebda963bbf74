// GET /account (scope read): balances, VIP tier and account configuration.
import type { FastifyInstance } from 'fastify';
import type { GatewayDb } from '../store/db';
import type { VipService } from '../vip/service';
import type { GatewayClock } from '../clock';
import type { InstrumentRegistry } from '../instruments';
import type { MarkSource } from '../risk-monitor/mark-book';
import { accountUnrealizedMicro } from '../risk-monitor/account-marks';
import { accountView } from '../account/view';
import { positionsOf } from '../positions/view';
import { rejectUnknownParams } from '../stats/window';
import { API_PREFIX, requireAuth } from './app';
import { sendData } from './reply';

export interface AccountRouteDeps {
  db: GatewayDb;
  vip: VipService;
  clock: GatewayClock;
  env: string;
  /** with marks: unrealized PnL and equity at the current marks */
  registry?: InstrumentRegistry;
  marks?: MarkSource;
}

export function registerAccountRoutes(app: FastifyInstance, deps: AccountRouteDeps): void {
  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/account`, async (req, reply) => {
    const token = requireAuth(req, 'read');
    rejectUnknownParams(req.query, []);
    // The tier is brought up to date first, so what this answers is what execution charges.
    const acct = (await deps.vip.refresh(token.user_id)) ?? token;
    const status = deps.vip.status(acct);
    const scopes = req.auth.kind === 'ok' ? req.auth.claims.scopes : [];
    const positions = positionsOf(deps.db, acct.user_id);
    const unrealizedPnl = accountUnrealizedMicro(positions, (s) => deps.registry?.get(s), deps.marks);
    return sendData(req, reply, accountView({ acct, positions, env: deps.env, tokenScopes: scopes, vip: status, unrealizedPnl }));
  });
}
