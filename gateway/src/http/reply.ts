// The spec's response envelope: {code, data | message, timestamp (ISO 8601 with ms), request_id}.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { stringify } from '../json';
import type { ApiError } from '../errors';

/** Sends HTTP 200 (or `http`) with {code: 0, data, timestamp, request_id}. */
export function sendData(req: FastifyRequest, reply: FastifyReply, data: unknown, http = 200): FastifyReply {
  return sendJson(reply.code(http), { code: 0, data, timestamp: new Date().toISOString(), request_id: req.id });
}

/** Sends an error envelope for e: {code, message, error, timestamp, request_id[, data]}. */
export function sendError(req: FastifyRequest, reply: FastifyReply, e: ApiError): FastifyReply {
  if (e.headers) for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
  return sendJson(reply.code(e.kind.http), {
    code: e.kind.code, message: e.message, error: e.kind.error, timestamp: new Date().toISOString(), request_id: req.id,
    ...(e.data === undefined ? {} : { data: e.data }),
  });
}

/** Sends a body through the exact JSON writer (bigints and RawNumbers verbatim). */
export function sendJson(reply: FastifyReply, body: unknown): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(stringify(body));
}
