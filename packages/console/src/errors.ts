// The spec's error envelope (docs/api.md) for every refused console request.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

const KINDS = {
  invalid_request: [400, 40000],
  invalid_token: [401, 40103],
  forbidden: [403, 40301],
  not_found: [404, 40400],
  conflict: [409, 40900],
  payload_too_large: [413, 41300],
  unsupported_media_type: [415, 41500],
  internal_error: [500, 50000],
} as const;
export type ErrorName = keyof typeof KINDS;

export function sendError(res: ServerResponse, error: ErrorName, message: string, headers: Record<string, string> = {}): void {
  const [http, code] = KINDS[error];
  sendJson(res, http, { code, error, message: `${error}: ${message}`, timestamp: new Date().toISOString(), request_id: randomUUID() }, headers);
}

export function sendOk(res: ServerResponse, data: unknown): void {
  sendJson(res, 200, { code: 0, data, timestamp: new Date().toISOString(), request_id: randomUUID() });
}

export function sendJson(res: ServerResponse, http: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(http, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
}
