// GET /positions (scope read): the account's open positions as {positions: [Position]}.
import type { FastifyInstance } from 'fastify';
import type { GatewayDb } from '../store/db';
import type { InstrumentRegistry } from '../instruments';
import { positionView, positionsOf } from '../positions/view';
import { big } from '../store/records';
import { rejectUnknownParams } from '../stats/window';
import { API_PREFIX, requireAuth } from './app';
import type { MarkSource } from '../risk-monitor/mark-book';
import { sendData } from './reply';

export function registerPositionRoutes(app: FastifyInstance, deps: { db: GatewayDb; registry: InstrumentRegistry; marks?: MarkSource }): void {
  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/positions`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    rejectUnknownParams(req.query, []);
    const positions = positionsOf(deps.db, acct.user_id)
      .filter((p) => big(p.size_steps) !== 0n)
      .map((p) => positionView(p, deps.registry.get(p.symbol)!, deps.marks?.markTicks(p.symbol) ?? null));
    return sendData(req, reply, { positions });
  });
}
