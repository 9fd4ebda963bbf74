// GET /system/health (no token): the system_health payload the WebSocket pushes (docs/websocket.md),
// on REST for clients and monitors without a session: status, causes, live nodes, the results
// backlog and what the committee's preprocessing reserve still covers (docs/api.md, "Health";
// docs/decisions/0016-outage-capacity.md). The spec has no health route; this one is an extension.
import type { FastifyInstance } from 'fastify';
import type { SystemHealth } from '@tenebra/session';
import { rejectUnknownParams } from '../stats/window';
import { API_PREFIX } from './app';
import { sendData } from './reply';

export const HEALTH_PATH = `${API_PREFIX}/system/health`;

/** health: assesses now and returns the payload (HealthMonitor: refresh() then current). */
export function registerHealthRoutes(app: FastifyInstance, deps: { health: () => SystemHealth }): void {
  app.get<{ Querystring: Record<string, unknown> }>(HEALTH_PATH, async (req, reply) => {
    rejectUnknownParams(req.query, []);
    reply.header('Cache-Control', 'no-store');
    return sendData(req, reply, deps.health());
  });
}
