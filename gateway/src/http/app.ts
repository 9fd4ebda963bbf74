// The REST server (fastify 5): request ids, authentication and rate limits on every request, the
// spec's envelope on every response and error, strict body parsing. Routes live in routes-*.ts.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Duplex } from 'node:stream';
import { ApiError } from '../errors';
import type { TokenClaims, TokenService } from '../auth/tokens';
import type { AccountService } from '../accounts';
import type { AccountRec, Scope } from '../store/records';
import type { RateLimiter, RateDecision } from '../ratelimit';
import { PUBLIC_REST_LIMITS, TIER_INFO, type RestLimits } from '../tiers';
import { sendError } from './reply';
import { DEFAULT_EDGE_OPTIONS, clientErrorHandler, guardServer, answerRaw, serverOptions, type EdgeOptions } from './edge';

export const API_PREFIX = '/api/v1';
export const ADMIN_PREFIX = '/admin';
export const BODY_LIMIT = 64 * 1024;
/** The only routes that take form bodies (OAuth clients often send them); every other body is JSON. */
const FORM_ROUTES: ReadonlySet<string> = new Set([`${API_PREFIX}/auth/token`, `${API_PREFIX}/auth/token/revoke`]);

/** What onRequest learned about the caller's bearer token. */
export type AuthState =
  | { kind: 'none' }
  | { kind: 'ok'; claims: TokenClaims; account: AccountRec }
  | { kind: 'error'; error: ApiError };

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthState;
  }
  interface FastifyInstance {
    /** Answers a raw socket (a refused WebSocket upgrade) with the error envelope and closes it. */
    refuseRaw(socket: Duplex, e: ApiError, extraHeaders?: Record<string, string>): void;
    /** Every route registered (method, url pattern): the fuzzer and the route-wide checks walk it. */
    routeTable: { method: string; url: string }[];
  }
}

export interface HttpDeps {
  log: Logger;
  tokens: TokenService;
  accounts: AccountService;
  limiter: RateLimiter;
  publicLimits?: RestLimits;
  /** timeouts and the per-address connection cap of the HTTP server (http/edge.ts) */
  edge?: Partial<EdgeOptions>;
}

/** The authenticated account of a request that needs `scope` (or any valid token when scope is null). */
export function requireAuth(req: FastifyRequest, scope: Scope | null): AccountRec {
  const a = req.auth;
  if (a.kind === 'error') throw a.error;
  if (a.kind === 'none') throw new ApiError('invalid_token', 'this endpoint needs Authorization: Bearer <ACCESS_TOKEN>; get one from POST /auth/token');
  if (scope !== null && !a.claims.scopes.includes(scope)) {
    throw new ApiError('insufficient_scope', `this endpoint needs the '${scope}' scope; the token has '${a.claims.scopes.join(' ')}'`);
  }
  return a.account;
}

/** Applies one rate decision to the reply headers. */
export function rateHeaders(reply: FastifyReply, d: RateDecision): void {
  reply.header('X-RateLimit-Limit', String(d.limit));
  reply.header('X-RateLimit-Remaining', String(d.remaining));
  reply.header('X-RateLimit-Reset', String(d.reset));
}

/** Builds the fastify instance with hooks, parsers and error handling (routes are registered by the caller). */
export function buildApp(deps: HttpDeps): FastifyInstance {
  const edge: EdgeOptions = { ...DEFAULT_EDGE_OPTIONS, ...deps.edge };
  // Answers written below fastify (raw) spend the address's public budget like any request.
  const rateFor = (ip: string): RateDecision => deps.limiter.request(`ip:${ip}`, deps.publicLimits ?? PUBLIC_REST_LIMITS);
  const app = Fastify({
    http: serverOptions(edge),
    requestTimeout: edge.requestTimeoutMs,
    clientErrorHandler: clientErrorHandler(rateFor),
    loggerInstance: deps.log.child({ component: 'http' }) as unknown as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    frameworkErrors: (err, req, reply) => {
      reply.header('X-Request-Id', req.id);
      fallbackRateHeaders(reply);
      void sendError(req, reply, new ApiError('invalid_request', `malformed request: ${err.message}`));
    },
  });
  app.decorateRequest('auth', null as never);
  app.decorate('refuseRaw', (socket: Duplex, e: ApiError, extra: Record<string, string> = {}) => {
    answerRaw(socket, e, rateFor((socket as { remoteAddress?: string }).remoteAddress ?? 'unknown'), extra);
  });
  guardServer(app.server, edge, rateFor);
  const routeTable: { method: string; url: string }[] = [];
  app.decorate('routeTable', routeTable);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routeTable.push({ method, url: r.url });
  });

  // Bodies: strict JSON, and form encoding for the OAuth token endpoints (clients often send it).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      done(new ApiError('invalid_request', `the request body is not valid JSON (${(e as Error).message})`), undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (req, body, done) => {
    if (!FORM_ROUTES.has(req.routeOptions.url ?? '')) {
      return done(new ApiError('invalid_request', 'send this body as application/json; only the token endpoints (POST /auth/token, /auth/token/revoke) accept application/x-www-form-urlencoded'), undefined);
    }
    const params = new URLSearchParams(String(body));
    const out: Record<string, string> = {};
    for (const [k, v] of params) {
      if (k in out) return done(new ApiError('invalid_request', `form field '${k}' appears more than once`), undefined);
      out[k] = v;
    }
    done(null, out);
  });

  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
    req.auth = await authenticate(req, deps);
    const key = req.auth.kind === 'ok' ? `acct:${req.auth.account.user_id}` : `ip:${req.ip}`;
    const limits = req.auth.kind === 'ok' ? TIER_INFO[req.auth.account.tier].rest : (deps.publicLimits ?? PUBLIC_REST_LIMITS);
    const d = deps.limiter.request(key, limits);
    rateHeaders(reply, d);
    if (!d.allowed) {
      reply.header('Retry-After', String(d.retryAfter));
      return sendError(req, reply, new ApiError('rate_limited', `request budget exhausted; retry after ${d.retryAfter} s`));
    }
    // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400 (node's own answer would be a bare one)
    if (req.raw.httpVersion === '1.1' && req.headers.host === undefined) {
      reply.header('Connection', 'close');
      return sendError(req, reply, new ApiError('invalid_request', 'an HTTP/1.1 request needs a Host header'));
    }
  });

  app.setErrorHandler((err, req, reply) => {
    if (!reply.hasHeader('X-RateLimit-Limit')) fallbackRateHeaders(reply);
    if (err instanceof ApiError) return sendError(req, reply, err);
    const e = err as { code?: string; statusCode?: number; message: string };
    switch (e.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendError(req, reply, new ApiError('payload_too_large', `the request body exceeds ${BODY_LIMIT} bytes`));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendError(req, reply, new ApiError('invalid_request', 'send bodies as application/json (token endpoints also accept application/x-www-form-urlencoded)'));
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return sendError(req, reply, new ApiError('invalid_request', 'the request body is not valid JSON'));
    }
    if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
      return sendError(req, reply, new ApiError('invalid_request', `malformed request: ${e.message}`));
    }
    req.log.error({ err: err instanceof Error ? err.stack : String(err), url: req.url }, 'request failed');
    return sendError(req, reply, new ApiError('internal_error', 'the gateway failed to handle the request; it was logged'));
  });

  app.setNotFoundHandler((req, reply) => {
    sendError(req, reply, new ApiError('not_found', `no route ${req.method} ${req.url.split('?')[0]}`));
  });

  app.addHook('onResponse', async (req, reply) => {
    req.log.debug({ method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });
  return app;
}

/** Headers for responses produced before onRequest ran (framework errors): the public budget, unspent. */
function fallbackRateHeaders(reply: FastifyReply): void {
  const l = PUBLIC_REST_LIMITS;
  reply.header('X-RateLimit-Limit', String(l.perMinute));
  reply.header('X-RateLimit-Remaining', String(l.perMinute));
  reply.header('X-RateLimit-Reset', String(Math.ceil((Math.floor(Date.now() / 60_000) + 1) * 60)));
}

async function authenticate(req: FastifyRequest, deps: HttpDeps): Promise<AuthState> {
  const h = req.headers.authorization;
  if (h === undefined) return { kind: 'none' };
  const m = /^Bearer ([A-Za-z0-9_\-.]+)$/.exec(h);
  if (!m) return { kind: 'error', error: new ApiError('invalid_token', 'the Authorization header must be "Bearer <ACCESS_TOKEN>"') };
  const check = await deps.tokens.verify(m[1]!);
  if (!check.ok) return { kind: 'error', error: new ApiError(check.error, check.detail) };
  const account = deps.accounts.get(check.claims.userId);
  if (!account) return { kind: 'error', error: new ApiError('invalid_token', 'the token belongs to no account') };
  return { kind: 'ok', claims: check.claims, account };
}
