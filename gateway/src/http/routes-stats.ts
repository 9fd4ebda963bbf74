// GET /stats/platform/overview and /series: public (no token), the per-IP budget applies.
//
// The spec calls the overview "a bare object" while every REST response carries the envelope; the
// answer satisfies both readings: the statistics object's own fields at the top level AND the
// envelope members (code 0, data = the same object, timestamp, request_id). No field name collides.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StatsService } from '../stats/service';
import { API_PREFIX } from './app';
import { sendJson } from './reply';

export function registerStatsRoutes(app: FastifyInstance, stats: StatsService): void {
  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/stats/platform/overview`, async (req, reply) => {
    return sendStats(req, reply, stats.overview(req.query));
  });
  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/stats/platform/series`, async (req, reply) => {
    return sendStats(req, reply, stats.series(req.query));
  });
}

function sendStats(req: FastifyRequest, reply: FastifyReply, obj: Record<string, unknown>): FastifyReply {
  reply.header('Cache-Control', 'public, max-age=60');
  return sendJson(reply, { ...obj, code: 0, data: obj, timestamp: new Date().toISOString(), request_id: req.id });
}
