// REST conformance of the gateway: envelope and headers on every response, every authentication
// error row of the spec, instruments with ETag/304, server time, rate limits, admin guard, bad bodies.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { SignJWT } from 'jose';
import { INSTRUMENTS } from '@tenebra/config';
import { ManualClock } from '../src/clock';
import { ADMIN_SECRET_HEADER } from '../src/http/routes-admin';
import { startRig, call, newAccount, bearer, type Rig, type Json, type Account } from './harness';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SPEC_SYMBOLS = ['AAVE', 'ADA', 'APT', 'ARB', 'AVAX', 'BNB', 'BTC', 'DOGE', 'DOT', 'ETH', 'HYPE', 'LINK', 'NEAR', 'PEPE', 'POL', 'SOL', 'SUI', 'TRX', 'UNI', 'XRP'].map((b) => `${b}-USDC-PERP`);

function expectHeaders(r: Json): void {
  expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(String(r.headers[h])).toMatch(/^\d+$/);
  expect(Number(r.headers['x-ratelimit-reset'])).toBeGreaterThan(1_600_000_000);
}

function expectOk(r: Json, status = 200): Record<string, any> {
  expect(r.status, r.raw).toBe(status);
  expectHeaders(r);
  expect(r.body.code).toBe(0);
  expect(r.body.timestamp).toMatch(ISO_MS);
  expect(r.body.request_id).toBe(r.headers['x-request-id']);
  expect(r.body.message).toBeUndefined();
  return r.body.data;
}

function expectError(r: Json, status: number, error: string): void {
  expect(r.status, r.raw).toBe(status);
  expectHeaders(r);
  expect(Number.isInteger(r.body.code) && r.body.code !== 0).toBe(true);
  expect(r.body.error).toBe(error);
  expect(r.body.message).toMatch(new RegExp(`^${error}: .{8,}`));
  expect(r.body.timestamp).toMatch(ISO_MS);
  expect(r.body.request_id).toBe(r.headers['x-request-id']);
  expect(r.body.data).toBeUndefined();
}

describe('REST envelope, auth, instruments, time', () => {
  let rig: Rig;
  let clock: ManualClock;
  let acct: Account;
  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0));
    rig = await startRig({ clock, publicLimits: { perMinute: 1000, perSecond: 1000, burst: 1000 } });
    acct = await newAccount(rig, 'Apex');
  });
  afterAll(async () => {
    await rig?.close();
  });

  const tokenBody = (a: Account, over: Record<string, unknown> = {}) => ({
    grant_type: 'client_credentials', client_id: a.api_key, client_secret: a.api_secret, passphrase: a.passphrase, ...over,
  });

  it('issues the bare token object with a 900 s JWT and both scopes', async () => {
    const r = await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct));
    expect(r.status).toBe(200);
    expectHeaders(r);
    expect(Object.keys(r.body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(r.body.token_type).toBe('Bearer');
    expect(r.body.expires_in).toBe(900);
    expect(r.body.scope).toBe('trade read');
    expect(r.body.access_token.split('.')).toHaveLength(3);
    // form encoding works too (OAuth clients often send it)
    const form = await rig.gw.app.inject({
      method: 'POST', url: '/api/v1/auth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(tokenBody(acct) as Record<string, string>).toString(),
    });
    expect(form.statusCode).toBe(200);
  });

  it('gives unique request ids and the envelope on success and on errors', async () => {
    const a = await call(rig.gw, 'GET', '/api/v1/instruments');
    const b = await call(rig.gw, 'GET', '/api/v1/instruments');
    expectOk(a);
    expectOk(b);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    expectError(await call(rig.gw, 'GET', '/api/v1/nope'), 404, 'not_found');
    expectError(await call(rig.gw, 'PUT', '/api/v1/instruments'), 404, 'not_found');
  });

  describe('authentication errors (spec table, row by row)', () => {
    it('400 invalid_request: missing grant_type, missing passphrase, invalid JSON, no body', async () => {
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct, { grant_type: undefined })), 400, 'invalid_request');
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct, { passphrase: undefined })), 400, 'invalid_request');
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token', '{"grant_type": "client_credentials",'), 400, 'invalid_request');
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token'), 400, 'invalid_request');
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token', '[1,2]'), 400, 'invalid_request');
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct, { client_secret: 42 })), 400, 'invalid_request');
    });

    it('400 unsupported_grant_type', async () => {
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct, { grant_type: 'password' })), 400, 'unsupported_grant_type');
    });

    it('401 invalid_client: unknown client_id, wrong secret, wrong passphrase', async () => {
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct, { client_id: 'ak_unknown' })), 401, 'invalid_client');
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct, { client_secret: `${acct.api_secret}x` })), 401, 'invalid_client');
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct, { passphrase: `${acct.passphrase}x` })), 401, 'invalid_client');
    });

    it('401 token_expired after 900 s', async () => {
      const tok = (await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct))).body.access_token as string;
      expectOk(await call(rig.gw, 'GET', '/api/v1/time', undefined, bearer({ token: tok })));
      clock.advance(899_000);
      expectOk(await call(rig.gw, 'GET', '/api/v1/time', undefined, bearer({ token: tok })));
      clock.advance(1_000);
      expectError(await call(rig.gw, 'GET', '/api/v1/time', undefined, bearer({ token: tok })), 401, 'token_expired');
      acct.token = (await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct))).body.access_token;
    });

    it('401 token_revoked; revoking unknown or malformed tokens is a 204 no-op', async () => {
      const tok = (await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct))).body.access_token as string;
      const rv = await call(rig.gw, 'POST', '/api/v1/auth/token/revoke', { token: tok });
      expect(rv.status).toBe(204);
      expect(rv.raw).toBe('');
      expectHeaders(rv);
      expectError(await call(rig.gw, 'GET', '/api/v1/time', undefined, bearer({ token: tok })), 401, 'token_revoked');
      expect((await call(rig.gw, 'POST', '/api/v1/auth/token/revoke', { token: 'not.a.token' })).status).toBe(204);
      expect((await call(rig.gw, 'POST', '/api/v1/auth/token/revoke', { token: tok })).status).toBe(204);
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token/revoke', {}), 400, 'invalid_request');
      // the account's other tokens still work
      expectOk(await call(rig.gw, 'GET', '/api/v1/time', undefined, bearer(acct)));
    });

    it('403 insufficient_scope for a read-only token on order placement', async () => {
      const tok = await call(rig.gw, 'POST', '/api/v1/auth/token', tokenBody(acct, { scope: 'read' }));
      expect(tok.body.scope).toBe('read');
      const order = { symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.01, price: 50000, time_in_force: 'GTC' };
      expectError(await call(rig.gw, 'POST', '/api/v1/orders', order, bearer({ token: tok.body.access_token })), 403, 'insufficient_scope');
      expectError(await call(rig.gw, 'DELETE', '/api/v1/orders/123', undefined, bearer({ token: tok.body.access_token })), 403, 'insufficient_scope');
      // a read-only api key cannot even ask for trade
      const ro = await newAccount(rig, 'Core', '10', { scopes: ['read'] });
      expectError(await call(rig.gw, 'POST', '/api/v1/orders', order, bearer(ro)), 403, 'insufficient_scope');
      expectError(await call(rig.gw, 'POST', '/api/v1/auth/token', { ...tokenBody(ro as Account), scope: 'trade' }), 400, 'invalid_scope');
    });

    it('401 invalid_token without a bearer token, with a malformed one, or one of another environment', async () => {
      expectError(await call(rig.gw, 'GET', '/api/v1/time'), 401, 'invalid_token');
      expectError(await call(rig.gw, 'GET', '/api/v1/time', undefined, { authorization: 'Basic abc' }), 401, 'invalid_token');
      expectError(await call(rig.gw, 'GET', '/api/v1/time', undefined, { authorization: `Bearer ${acct.token}x` }), 401, 'invalid_token');
      const foreign = await new SignJWT({ scope: 'trade read' }).setProtectedHeader({ alg: 'HS256' }).setSubject(acct.user_id).setJti('j1')
        .setIssuer('tenebra-gateway').setAudience('tenebra:production').setIssuedAt(Math.floor(clock.nowMs() / 1000)).setExpirationTime(Math.floor(clock.nowMs() / 1000) + 900)
        .sign(new TextEncoder().encode(rig.env.jwtSecret));
      expectError(await call(rig.gw, 'GET', '/api/v1/time', undefined, { authorization: `Bearer ${foreign}` }), 401, 'invalid_token');
    });
  });

  it('stores api secrets and passphrases only as scrypt hashes', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const dir = rig.env.config.dataDir;
    const blob = readdirSync(dir).map((f) => readFileSync(join(dir, f))).reduce((a, b) => Buffer.concat([a, b]), Buffer.alloc(0));
    expect(blob.includes(Buffer.from(acct.api_secret))).toBe(false);
    expect(blob.includes(Buffer.from(acct.passphrase))).toBe(false);
    expect(blob.includes(Buffer.from('scrypt$'))).toBe(true);
  });

  describe('instruments', () => {
    it('lists the 20 spec symbols with every field, exact numbers and a symbol_id', async () => {
      const r = await call(rig.gw, 'GET', '/api/v1/instruments');
      const data = expectOk(r);
      expect(data.version).toBe(1);
      expect(data.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(r.headers.etag).toBe('1');
      expect(data.instruments.map((i: any) => i.symbol)).toEqual(SPEC_SYMBOLS);
      expect(new Set(data.instruments.map((i: any) => i.symbol_id)).size).toBe(20);
      const fields = ['symbol', 'base_asset', 'quote_asset', 'type', 'status', 'tick_size', 'step_size', 'min_qty', 'max_qty', 'min_notional', 'contract_size', 'margin_asset', 'max_leverage', 'maker_fee_bps', 'taker_fee_bps', 'initial_margin_ratio', 'maintenance_margin_ratio', 'listed_at', 'expires_at'];
      for (const i of data.instruments) {
        for (const f of fields) expect(i, `${i.symbol}.${f}`).toHaveProperty(f);
        expect(i.quote_asset).toBe('USDC');
        expect(i.margin_asset).toBe('USDC');
        expect(i.type).toBe('perp');
        expect(i.status).toBe('trading');
        expect(i.expires_at).toBeNull();
        expect(i.contract_size).toBe(1);
        for (const f of ['tick_size', 'step_size', 'min_qty', 'max_qty', 'min_notional', 'max_leverage', 'maker_fee_bps', 'taker_fee_bps', 'initial_margin_ratio', 'maintenance_margin_ratio']) {
          expect(typeof i[f], `${i.symbol}.${f}`).toBe('number');
        }
        expect(i.initial_margin_ratio).toBeGreaterThan(i.maintenance_margin_ratio);
      }
      // PEPE's tick is written exactly (1e-8), not as a rounded float
      expect(r.raw).toContain('"tick_size":0.00000001');
      const one = expectOk(await call(rig.gw, 'GET', '/api/v1/instruments/BTC-USDC-PERP'));
      expect(one.symbol).toBe('BTC-USDC-PERP');
      expect(one.symbol_id).toBe(INSTRUMENTS.find((i) => i.symbol === 'BTC-USDC-PERP')!.symbol_id);
      expectError(await call(rig.gw, 'GET', '/api/v1/instruments/FOO-USDC-PERP'), 404, 'not_found');
    });

    it('answers If-None-Match with 304 and an empty body while unchanged; the version rises on a change', async () => {
      for (const inm of ['1', '"1"', 'W/"1"', '"7", "1"', '*']) {
        const r = await call(rig.gw, 'GET', '/api/v1/instruments', undefined, { 'if-none-match': inm });
        expect(r.status, inm).toBe(304);
        expect(r.raw).toBe('');
        expectHeaders(r);
      }
      expect((await call(rig.gw, 'GET', '/api/v1/instruments', undefined, { 'if-none-match': '"2"' })).status).toBe(200);
      const admin = { [ADMIN_SECRET_HEADER]: rig.env.adminSecret };
      const ch = await call(rig.gw, 'POST', '/admin/instruments/DOGE-USDC-PERP/status', { status: 'halted' }, admin);
      expect(expectOk(ch).version).toBe(2);
      const r = await call(rig.gw, 'GET', '/api/v1/instruments', undefined, { 'if-none-match': '1' });
      const data = expectOk(r);
      expect(r.headers.etag).toBe('2');
      expect(data.instruments.find((i: any) => i.symbol === 'DOGE-USDC-PERP').status).toBe('halted');
      const order = { symbol: 'DOGE-USDC-PERP', side: 'buy', type: 'limit', quantity: 1000, price: 0.2, time_in_force: 'GTC' };
      const rej = await call(rig.gw, 'POST', '/api/v1/orders', order, bearer(acct));
      expectError(rej, 400, 'INSTRUMENT_HALTED');
      expect(rej.body.code).toBe(1407);
      expectOk(await call(rig.gw, 'POST', '/admin/instruments/DOGE-USDC-PERP/status', { status: 'trading' }, admin));
    });
  });

  it('GET /time: ISO time with ms and exact integer nanoseconds; needs a token', async () => {
    const r = await call(rig.gw, 'GET', '/api/v1/time', undefined, bearer(acct));
    const data = expectOk(r);
    expect(data.server_time).toMatch(ISO_MS);
    const ns = /"server_time_ns":(\d+)/.exec(r.raw)![1]!;
    expect(ns.length).toBeGreaterThanOrEqual(19);
    expect(BigInt(ns) / 1_000_000n).toBe(BigInt(Date.parse(data.server_time)));
  });

  it('admin routes need the admin secret', async () => {
    expectError(await call(rig.gw, 'POST', '/admin/accounts', { tier: 'Core', deposit: '1' }), 403, 'forbidden');
    expectError(await call(rig.gw, 'POST', '/admin/accounts', { tier: 'Core', deposit: '1' }, { [ADMIN_SECRET_HEADER]: 'wrong' }), 403, 'forbidden');
    const admin = { [ADMIN_SECRET_HEADER]: rig.env.adminSecret };
    expectError(await call(rig.gw, 'POST', '/admin/accounts', { tier: 'Gold', deposit: '1' }, admin), 400, 'invalid_request');
    expectError(await call(rig.gw, 'POST', '/admin/accounts', { tier: 'Core', deposit: '1.0000001' }, admin), 400, 'invalid_request');
    const dep = await call(rig.gw, 'POST', `/admin/accounts/${acct.user_id}/deposits`, { amount: '12.5', deposit_id: 'd1' }, admin);
    expect(expectOk(dep).credited).toBe(true);
    const again = await call(rig.gw, 'POST', `/admin/accounts/${acct.user_id}/deposits`, { amount: '12.5', deposit_id: 'd1' }, admin);
    expect(expectOk(again).credited).toBe(false);
    expect(expectOk(again).balance).toBe('100012.5');
  });

  it('rejects bad bodies with the envelope: wrong media type, oversized, not JSON', async () => {
    const plain = await rig.gw.app.inject({ method: 'POST', url: '/api/v1/orders', headers: { 'content-type': 'text/plain', ...bearer(acct) }, payload: 'hi' });
    expect(plain.statusCode).toBe(400);
    expect(JSON.parse(plain.body).error).toBe('invalid_request');
    expect(plain.headers['x-request-id']).toBeTruthy();
    const big = await call(rig.gw, 'POST', '/api/v1/orders', { symbol: 'x'.repeat(70_000) }, bearer(acct));
    expectError(big, 413, 'payload_too_large');
    expectError(await call(rig.gw, 'POST', '/api/v1/orders', '{nope', bearer(acct)), 400, 'invalid_request');
  });
});

describe('rate limits', () => {
  let rig: Rig;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 30));
    rig = await startRig({ clock, publicLimits: { perMinute: 8, perSecond: 100, burst: 100 } });
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('per IP without a token: the minute budget, then 429 with Retry-After and the headers', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await call(rig.gw, 'GET', '/api/v1/instruments');
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-limit']).toBe('8');
      seen.push(Number(r.headers['x-ratelimit-remaining']));
    }
    expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
    const r = await call(rig.gw, 'GET', '/api/v1/instruments');
    expectError(r, 429, 'rate_limited');
    expect(r.headers['retry-after']).toBe('30');
    expect(r.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(r.headers['x-ratelimit-reset'])).toBe(Math.floor(clock.nowMs() / 60_000) * 60 + 60);
    clock.advance(30_000); // next minute window
    expect((await call(rig.gw, 'GET', '/api/v1/instruments')).status).toBe(200);
  });

  it('per account by tier: Core burst 5 then 2 per second; orders per minute by weight', async () => {
    clock.advance(60_000);
    const core = await newAccount(rig, 'Core', '100000');
    clock.advance(60_000);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await call(rig.gw, 'GET', '/api/v1/time', undefined, bearer(core))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const r = await call(rig.gw, 'GET', '/api/v1/time', undefined, bearer(core));
    expect(r.headers['retry-after']).toBe('1');
    expect(r.headers['x-ratelimit-limit']).toBe('5');
    clock.advance(1_000); // 2 tokens back
    expect((await call(rig.gw, 'GET', '/api/v1/time', undefined, bearer(core))).status).toBe(200);
    const ok = await call(rig.gw, 'GET', '/api/v1/time', undefined, bearer(core));
    expect(ok.status).toBe(200);
    expect(ok.headers['x-ratelimit-limit']).toBe('60');
    // Core: 10 weighted actions per minute; a rejected order still counts as an action.
    clock.advance(60_000);
    const bad = { symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.001, price: 1, time_in_force: 'GTC' };
    const codes: number[] = [];
    for (let i = 0; i < 11; i++) {
      clock.advance(1_000);
      codes.push((await call(rig.gw, 'POST', '/api/v1/orders', bad, bearer(core))).status);
    }
    expect(codes.slice(0, 10).every((c) => c === 400)).toBe(true);
    expect(codes[10]).toBe(429);
  });
});
