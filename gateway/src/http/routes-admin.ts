// Operator routes for the accounts CLI: accepted only from loopback with the admin secret header.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { timingSafeEqual, createHash } from 'node:crypto';
import { INSTRUMENT_STATUSES, microToUsdc, type InstrumentStatus } from '@tenebra/config';
import { ApiError } from '../errors';
import type { AccountService } from '../accounts';
import { MAX_LEVERAGE, MIN_LEVERAGE } from '../accounts';
import type { InstrumentRegistry } from '../instruments';
import type { GatewayDb } from '../store/db';
import { big, SCOPES, type AccountRec, type Scope } from '../store/records';
import { isTier, TIERS } from '../tiers';
import type { GatewayClock } from '../clock';
import { usdcField } from './usdc-field';
import { ADMIN_PREFIX } from './app';
import { sendData } from './reply';
import { bodyObject } from './routes-public';
import { rejectUnknownParams } from './query';

export const ADMIN_SECRET_HEADER = 'x-admin-secret';
export const DEFAULT_LEVERAGE = 10;
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export interface AdminDeps {
  adminSecret: string;
  accounts: AccountService;
  registry: InstrumentRegistry;
  db: GatewayDb;
  clock: GatewayClock;
}

export function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps): void {
  const secretDigest = createHash('sha256').update(deps.adminSecret).digest();
  const guard = (req: FastifyRequest): void => {
    if (!LOOPBACK.has(req.socket.remoteAddress ?? '')) throw new ApiError('forbidden', 'admin routes accept loopback connections only');
    const given = req.headers[ADMIN_SECRET_HEADER];
    const digest = createHash('sha256').update(typeof given === 'string' ? given : '').digest();
    if (!timingSafeEqual(digest, secretDigest)) throw new ApiError('forbidden', `missing or wrong ${ADMIN_SECRET_HEADER} header`);
  };

  app.post(`${ADMIN_PREFIX}/accounts`, async (req, reply) => {
    guard(req);
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    const b = bodyObject(req.body, 'tier, deposit and optionally leverage, scopes, passphrase');
    if (!isTier(b.tier)) throw new ApiError('invalid_request', `tier must be one of ${TIERS.join(', ')}`);
    const deposit = usdcField(b.deposit ?? '0', 'deposit', true);
    let leverage = DEFAULT_LEVERAGE;
    if (b.leverage !== undefined) {
      if (typeof b.leverage !== 'number' || !Number.isInteger(b.leverage) || b.leverage < MIN_LEVERAGE || b.leverage > MAX_LEVERAGE) {
        throw new ApiError('invalid_request', `leverage must be an integer from ${MIN_LEVERAGE} to ${MAX_LEVERAGE}`);
      }
      leverage = b.leverage;
    }
    let scopes: Scope[] = [...SCOPES];
    if (b.scopes !== undefined) {
      const list = typeof b.scopes === 'string' ? b.scopes.split(/[ ,]+/).filter(Boolean) : b.scopes;
      if (!Array.isArray(list) || list.length === 0 || !list.every((s) => (SCOPES as readonly unknown[]).includes(s))) {
        throw new ApiError('invalid_request', "scopes must be a non-empty list of 'trade' and 'read'");
      }
      scopes = [...new Set(list as Scope[])];
    }
    const passphrase = optionalPassphrase(b.passphrase);
    const creds = await deps.accounts.create({ tier: b.tier, leverage, depositMicro: deposit, scopes, ...(passphrase ? { passphrase } : {}) });
    req.log.info({ user_id: creds.user_id, tier: b.tier, leverage }, 'account created');
    return sendData(req, reply, { ...creds, tier: b.tier, leverage, scopes, balance: microToUsdc(deposit) });
  });

  app.get<{ Params: { userId: string } }>(`${ADMIN_PREFIX}/accounts/:userId`, async (req, reply) => {
    guard(req);
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    const acct = mustAccount(deps, req.params.userId);
    return sendData(req, reply, accountSummary(deps.db, acct));
  });

  app.post<{ Params: { userId: string } }>(`${ADMIN_PREFIX}/accounts/:userId/deposits`, async (req, reply) => {
    guard(req);
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    mustAccount(deps, req.params.userId);
    const b = bodyObject(req.body, 'amount and optionally deposit_id');
    const amount = usdcField(b.amount, 'amount', false);
    if (b.deposit_id !== undefined && (typeof b.deposit_id !== 'string' || b.deposit_id.length === 0 || b.deposit_id.length > 128)) {
      throw new ApiError('invalid_request', 'deposit_id must be a string of 1 to 128 characters');
    }
    const r = deps.accounts.deposit(req.params.userId, amount, b.deposit_id as string | undefined);
    req.log.info({ user_id: req.params.userId, amount: microToUsdc(amount), credited: r.credited }, 'deposit');
    return sendData(req, reply, { user_id: r.account.user_id, amount: microToUsdc(amount), credited: r.credited, balance: microToUsdc(big(r.account.balance)) });
  });

  app.post<{ Params: { userId: string } }>(`${ADMIN_PREFIX}/accounts/:userId/rotate`, async (req, reply) => {
    guard(req);
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    mustAccount(deps, req.params.userId);
    const b = req.body === undefined ? {} : bodyObject(req.body, 'optionally passphrase');
    const passphrase = optionalPassphrase(b.passphrase);
    const creds = await deps.accounts.rotate(req.params.userId, passphrase);
    req.log.info({ user_id: req.params.userId }, 'api key rotated');
    return sendData(req, reply, creds);
  });

  app.post<{ Params: { symbol: string } }>(`${ADMIN_PREFIX}/instruments/:symbol/status`, async (req, reply) => {
    guard(req);
    rejectUnknownParams(req.query as Record<string, unknown>, []);
    if (!deps.registry.get(req.params.symbol)) throw new ApiError('not_found', `unknown symbol '${req.params.symbol.slice(0, 64)}'`);
    const b = bodyObject(req.body, 'status');
    if (typeof b.status !== 'string' || !(INSTRUMENT_STATUSES as readonly string[]).includes(b.status)) {
      throw new ApiError('invalid_request', `status must be one of ${INSTRUMENT_STATUSES.join(', ')}`);
    }
    const version = deps.registry.setStatus(req.params.symbol, b.status as InstrumentStatus, new Date(deps.clock.nowMs()).toISOString());
    return sendData(req, reply, { symbol: req.params.symbol, status: b.status, version });
  });
}

function mustAccount(deps: AdminDeps, userId: string): AccountRec {
  const acct = /^0x[0-9a-f]{40}$/.test(userId) ? deps.accounts.get(userId) : undefined;
  if (!acct) throw new ApiError('not_found', `no account ${userId.slice(0, 64)}`);
  return acct;
}

function optionalPassphrase(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length < 8 || v.length > 128) throw new ApiError('invalid_request', 'passphrase must be a string of 8 to 128 characters');
  return v;
}

/** Balances (USDC decimal strings) and open positions of an account, for operators and tests. */
export function accountSummary(db: GatewayDb, acct: AccountRec): Record<string, unknown> {
  const positions = [];
  for (const { value } of db.positions.getRange({ start: `${acct.user_id}\n`, end: `${acct.user_id}\u000b` })) positions.push(value);
  return {
    user_id: acct.user_id, user_uuid: acct.user_uuid, tier: acct.tier, leverage: acct.leverage, scopes: acct.scopes,
    balance: microToUsdc(big(acct.balance)), reserved: microToUsdc(big(acct.reserved)),
    free_collateral: microToUsdc(big(acct.balance) - big(acct.reserved)), deposited: microToUsdc(big(acct.deposited)),
    withdrawn: microToUsdc(big(acct.withdrawn ?? '0')),
    open_orders: acct.open_orders, positions,
  };
}
