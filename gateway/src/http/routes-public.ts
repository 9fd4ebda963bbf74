// Token exchange and revocation, instruments, server time.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors';
import type { TokenService } from '../auth/tokens';
import type { AccountService } from '../accounts';
import type { InstrumentRegistry } from '../instruments';
import { instrumentView } from '../instruments';
import type { GatewayClock } from '../clock';
import { SCOPES, type Scope } from '../store/records';
import { API_PREFIX, requireAuth } from './app';
import { sendData, sendJson } from './reply';
import { rejectUnknownParams } from './query';

const MAX_CREDENTIAL_CHARS = 256;

export interface PublicRouteDeps {
  tokens: TokenService;
  accounts: AccountService;
  registry: InstrumentRegistry;
  clock: GatewayClock;
}

export function registerPublicRoutes(app: FastifyInstance, deps: PublicRouteDeps): void {
  app.post(`${API_PREFIX}/auth/token`, async (req, reply) => {
  rejectUnknownParams(req.query as Record<string, unknown>, []);
    const b = bodyObject(req.body, 'grant_type, client_id, client_secret and passphrase');
    if (b.grant_type === undefined) throw new ApiError('invalid_request', 'missing grant_type');
    if (typeof b.grant_type !== 'string') throw new ApiError('invalid_request', 'grant_type must be a string');
    if (b.grant_type !== 'client_credentials') throw new ApiError('unsupported_grant_type', `grant_type '${b.grant_type.slice(0, 64)}' is not supported; use client_credentials`);
    const client_id = credential(b, 'client_id');
    const client_secret = credential(b, 'client_secret');
    const passphrase = credential(b, 'passphrase');
    let requested: Scope[] | null = null;
    if (b.scope !== undefined) {
      if (typeof b.scope !== 'string') throw new ApiError('invalid_request', 'scope must be a space-separated string');
      const parts = b.scope.split(' ').filter((s) => s !== '');
      const unknown = parts.find((s) => !(SCOPES as readonly string[]).includes(s));
      if (unknown !== undefined) throw new ApiError('invalid_scope', `unknown scope '${unknown.slice(0, 32)}'; scopes are 'trade' and 'read'`);
      requested = [...new Set(parts as Scope[])];
    }
    const acct = await deps.accounts.authenticate(client_id, client_secret, passphrase);
    if (!acct) throw new ApiError('invalid_client', 'unknown client_id, wrong client_secret or wrong passphrase');
    const granted = requested ?? acct.scopes;
    const missing = granted.find((s) => !acct.scopes.includes(s));
    if (missing) throw new ApiError('invalid_scope', `this api key is not allowed the '${missing}' scope`);
    if (granted.length === 0) throw new ApiError('invalid_scope', 'request at least one scope');
    const token = await deps.tokens.issue(acct.user_id, SCOPES.filter((s) => granted.includes(s)));
    reply.header('Cache-Control', 'no-store');
    return sendJson(reply, token); // the spec's bare token object, not an envelope
  });

  app.post(`${API_PREFIX}/auth/token/revoke`, async (req, reply) => {
  rejectUnknownParams(req.query as Record<string, unknown>, []);
    const b = bodyObject(req.body, 'token');
    if (b.token === undefined) throw new ApiError('invalid_request', 'missing token');
    if (typeof b.token !== 'string' || b.token.length > 4096) throw new ApiError('invalid_request', 'token must be a string');
    await deps.tokens.revoke(b.token);
    return reply.code(204).send();
  });

  app.get(`${API_PREFIX}/instruments`, async (req, reply) => {
  rejectUnknownParams(req.query as Record<string, unknown>, []);
    const list = deps.registry.list();
    const etag = String(list.version);
    reply.header('ETag', etag);
    if (etagMatches(req.headers['if-none-match'], etag)) return reply.code(304).send();
    return sendData(req, reply, { version: list.version, updated_at: list.updated_at, instruments: list.instruments.map(instrumentView) });
  });

  app.get<{ Params: { symbol: string } }>(`${API_PREFIX}/instruments/:symbol`, async (req, reply) => {
  rejectUnknownParams(req.query as Record<string, unknown>, []);
    const inst = deps.registry.get(req.params.symbol);
    if (!inst) throw new ApiError('not_found', `unknown symbol '${req.params.symbol.slice(0, 64)}'; GET /instruments lists the symbols`);
    return sendData(req, reply, instrumentView(inst));
  });

  app.get(`${API_PREFIX}/time`, async (req, reply) => {
    requireAuth(req, null);
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    const ns = deps.clock.nowNs();
    return sendData(req, reply, { server_time: new Date(Number(ns / 1_000_000n)).toISOString(), server_time_ns: ns });
  });
}

/** The body as an object, or invalid_request naming the expected fields. */
export function bodyObject(body: unknown, fields: string): Record<string, unknown> {
  if (body === undefined) throw new ApiError('invalid_request', `missing request body; send a JSON object with ${fields}`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('invalid_request', `the request body must be a JSON object with ${fields}`);
  return body as Record<string, unknown>;
}

function credential(b: Record<string, unknown>, field: string): string {
  const v = b[field];
  if (v === undefined || v === '') throw new ApiError('invalid_request', `missing ${field}`);
  if (typeof v !== 'string' || v.length > MAX_CREDENTIAL_CHARS) throw new ApiError('invalid_request', `${field} must be a string of at most ${MAX_CREDENTIAL_CHARS} characters`);
  return v;
}

/** If-None-Match matching (RFC 9110 weak comparison): "*", a list, quoted or bare tags, W/ prefixes. */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((raw) => {
    const t = raw.trim();
    if (t === '*') return true;
    return t.replace(/^W\//, '').replace(/^"(.*)"$/, '$1') === etag;
  });
}
