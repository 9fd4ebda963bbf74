// The HTTP server's edge, below fastify's routing: what node's http server would otherwise answer by
// itself (malformed HTTP, oversized headers, an unknown Expect, timeouts, refused WebSocket upgrades)
// gets the spec's error envelope with X-Request-Id and the X-RateLimit-* headers, written raw on the
// socket; slow or unfinished requests are bounded in time, and each address in open connections.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../errors';
import type { RateDecision } from '../ratelimit';

export interface EdgeOptions {
  /** an unfinished request head is answered 408 and closed after this long (node's headersTimeout) */
  headersTimeoutMs: number;
  /** a request (head and body) not fully received after this long is answered 408 and closed (requestTimeout) */
  requestTimeoutMs: number;
  /** how often node checks the two timeouts (connectionsCheckingInterval; a timeout fires up to this late) */
  timeoutCheckMs: number;
  /** open TCP connections per remote address (HTTP keep-alive, SSE and WebSocket alike); more are answered 429 and closed */
  maxConnectionsPerIp: number;
}

// 15 s for a body of at most 64 KB is generous even on a slow mobile link; 512 connections leave room
// for the SDK's pool of 256 keep-alive sockets plus 64 WebSockets from one host.
export const DEFAULT_EDGE_OPTIONS: EdgeOptions = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  timeoutCheckMs: 1_000,
  maxConnectionsPerIp: 512,
};

/** The options node's http.createServer takes for them (fastify's `http` option). */
export function serverOptions(o: EdgeOptions): { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number; requireHostHeader: false } {
  // A missing Host is refused by our onRequest hook instead, with the envelope (node's answer is a bare 400).
  return { headersTimeout: o.headersTimeoutMs, requestTimeout: o.requestTimeoutMs, connectionsCheckingInterval: o.timeoutCheckMs, requireHostHeader: false };
}

/** The public per-address rate decision (charged: raw answers count against the address's budget). */
export type RateForIp = (ip: string) => RateDecision;

/** The error envelope with its headers (X-Request-Id, X-RateLimit-*, Retry-After on 429), closing the connection. */
export function errorEnvelope(e: ApiError, rate: RateDecision, extra: Record<string, string> = {}): { status: number; headers: Record<string, string>; body: string } {
  const id = randomUUID();
  const body = JSON.stringify({ code: e.kind.code, message: e.message, error: e.kind.error, timestamp: new Date().toISOString(), request_id: id });
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-Id': id,
    'X-RateLimit-Limit': String(rate.limit),
    'X-RateLimit-Remaining': String(rate.remaining),
    'X-RateLimit-Reset': String(rate.reset),
    ...(e.kind.http === 429 ? { 'Retry-After': String(Math.max(1, rate.retryAfter)) } : {}),
    ...extra,
    Connection: 'close',
  };
  return { status: e.kind.http, headers, body };
}

/** errorEnvelope as the text of one raw HTTP/1.1 response. */
export function rawErrorResponse(e: ApiError, rate: RateDecision, extra: Record<string, string> = {}): string {
  const { status, headers, body } = errorEnvelope(e, rate, extra);
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n${lines.join('\r\n')}\r\n\r\n${body}`;
}

const answered = new WeakSet<Duplex>();

/** Writes the envelope raw on the socket once, then closes it (destroyed if the peer does not read it). */
export function answerRaw(socket: Duplex, e: ApiError, rate: RateDecision, extra: Record<string, string> = {}): void {
  if (answered.has(socket) || socket.destroyed) return;
  answered.add(socket);
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // the peer may keep sending or never read; the answer is final either way
  setTimeout(() => socket.destroy(), 2_000).unref();
  socket.end(rawErrorResponse(e, rate, extra), () => socket.destroy());
}

/** The envelope for one of node's client errors (parser errors, timeouts, header overflow). */
export function clientErrorToApi(err: NodeJS.ErrnoException): ApiError {
  const code = err.code ?? '';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'ERR_HTTP_HEADERS_TIMEOUT') {
    return new ApiError('request_timeout', 'the request was not received in time; send the whole request (head and body, as long as its Content-Length says) without pausing');
  }
  if (code === 'HPE_HEADER_OVERFLOW') return new ApiError('headers_too_large', 'the request head exceeds the 16 KB the gateway reads; send fewer or shorter headers');
  const reason = (err as { reason?: unknown }).reason;
  const what = typeof reason === 'string' && reason !== '' ? reason : code || 'parse error';
  return new ApiError('invalid_request', `malformed HTTP request (${what}); send one HTTP/1.1 request with a single valid Content-Length or chunked body`);
}

/**
 * Installs the edge on node's server: client errors (fastify's clientErrorHandler is replaced, so
 * the caller passes this as that option), unknown Expect values, and the per-address connection cap.
 */
export function guardServer(server: Server, opts: EdgeOptions, rateFor: RateForIp): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const e = new ApiError('expectation_failed', `Expect: '${String(req.headers.expect).slice(0, 64)}' is not supported; the gateway answers only 100-continue`);
    const { status, headers, body } = errorEnvelope(e, rateFor(req.socket.remoteAddress ?? 'unknown'));
    res.writeHead(status, headers);
    res.end(body);
  });
  const perIp = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress ?? 'unknown';
    const n = (perIp.get(ip) ?? 0) + 1;
    if (n > opts.maxConnectionsPerIp) {
      answerRaw(socket, new ApiError('rate_limited', `more than ${opts.maxConnectionsPerIp} open connections from this address; reuse keep-alive connections`), rateFor(ip));
      return;
    }
    perIp.set(ip, n);
    socket.once('close', () => {
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left > 0) perIp.set(ip, left);
      else perIp.delete(ip);
    });
  });
}

/** fastify's clientErrorHandler: the envelope for what node's parser refused. */
export function clientErrorHandler(rateFor: RateForIp): (err: NodeJS.ErrnoException, socket: Duplex) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // a response already under way on this socket cannot be followed by another
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    answerRaw(socket, clientErrorToApi(err), rateFor((socket as Socket).remoteAddress ?? 'unknown'));
  };
}
