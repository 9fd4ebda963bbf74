// The REST client against the mock gateway (node:http, the spec's envelope and headers).
import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, NetworkError, StaleOrderError, TenebraRestClient, TokenBucket, type RestClientOptions } from '@tenebra/client';
import { API_KEY, MockGateway } from './mock-gateway';

const gw = new MockGateway();
let baseUrl = '';
let sleeps: number[] = [];

function client(extra: Partial<RestClientOptions> = {}): TenebraRestClient {
  // random 0: retries wait exactly the nominal delay (jitter only adds); placements may retry past their maximum age
  return new TenebraRestClient({ baseUrl, credentials: API_KEY, sleep: async (ms) => void sleeps.push(ms), random: () => 0, placementMaxAgeMs: Infinity, ...extra });
}

const count = (method: string, path: RegExp) => gw.requests.filter((r) => r.method === method && path.test(r.path)).length;

beforeAll(async () => {
  ({ baseUrl } = await gw.start());
});
afterAll(() => gw.stop());
beforeEach(() => {
  sleeps = [];
  gw.requests.length = 0;
});

describe('tokens', () => {
  it('exchanges credentials once and refreshes before expiry', async () => {
    let now = Date.now();
    const c = client({ now: () => now });
    await c.time();
    await c.time();
    expect(count('POST', /^\/auth\/token$/)).toBe(1);
    const body = JSON.parse(gw.requests.find((r) => r.path === '/auth/token')!.body) as Record<string, string>;
    expect(body).toEqual({ grant_type: 'client_credentials', client_id: API_KEY.apiKey, client_secret: API_KEY.apiSecret, passphrase: API_KEY.passphrase });
    now += 845_000; // 55 s left of 900: inside the 60 s refresh margin
    await c.time();
    expect(count('POST', /^\/auth\/token$/)).toBe(2);
    expect(gw.requests.filter((r) => r.path === '/time').map((r) => r.auth).every((a) => a?.startsWith('Bearer tok-'))).toBe(true);
  });

  it('refreshes once and retries on 401 token_expired; shares concurrent refreshes', async () => {
    const c = client();
    await c.account();
    gw.expireTokens();
    const [a, b] = await Promise.all([c.accountVip(), c.positions()]);
    expect(a['tier']).toBe('Core');
    expect(b).toHaveLength(1);
    expect(count('POST', /^\/auth\/token$/)).toBe(2); // the first plus ONE shared refresh
  });

  it('bad credentials are a typed ApiError; revoke answers 204', async () => {
    const bad = new TenebraRestClient({ baseUrl, credentials: { ...API_KEY, passphrase: 'wrong' } });
    const e = await bad.time().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ httpStatus: 401, code: 40100, error: 'invalid_client' });
    gw.requests.length = 0;
    const c = client();
    await c.time();
    await c.revokeToken();
    expect(count('POST', /^\/auth\/token\/revoke$/)).toBe(1);
    await c.time(); // a new token is exchanged after the revoke
    expect(count('POST', /^\/auth\/token$/)).toBe(2);
  });
});

describe('public data', () => {
  it('caches instruments with ETag / If-None-Match and resolves symbol_id', async () => {
    const c = client();
    const first = await c.listInstruments();
    expect(first.version).toBe(gw.instrumentsVersion);
    const eth = first.instruments.find((i) => i.symbol === 'ETH-USDC-PERP')!;
    expect(eth).toMatchObject({ symbol_id: 10, tick_size: '0.01', maker_fee_bps: '-0.5', max_leverage: '10', expires_at: null });
    const second = await c.listInstruments();
    expect(second).toBe(first);
    const [r1, r2] = gw.requests.filter((r) => r.path === '/instruments');
    expect(r1!.auth).toBeUndefined();
    expect(r2).toBeDefined();
    expect(await c.symbolId('BTC-USDC-PERP')).toBe(7);
    gw.instrumentsVersion++;
    const third = await c.listInstruments();
    expect(third).not.toBe(first);
    expect(third.version).toBe(gw.instrumentsVersion);
    await expect(c.symbolId('NOPE-USDC-PERP')).rejects.toThrow(/unknown symbol/);
    expect((await c.getInstrument('BTC-USDC-PERP')).tick_size).toBe('0.1');
  });

  it('tiers and statistics (bare objects) need no token', async () => {
    const c = new TenebraRestClient({ baseUrl });
    expect(await c.vipTiers()).toHaveProperty('tiers');
    expect((await c.statsOverview({ range: '7d' })).volume_24h).toBe('123.45');
    const series = await c.statsSeries({ metric: 'volume', assets: ['BTC', 'ETH'] });
    expect(series.points[0]?.by_asset?.['BTC']).toBe('1.5');
    expect(gw.requests.find((r) => r.path.startsWith('/stats/platform/series'))!.path).toBe('/stats/platform/series?metric=volume&assets=BTC%2CETH');
    expect(gw.requests.every((r) => r.auth === undefined)).toBe(true);
  });
});

describe('orders', () => {
  it('places with exact decimals and a generated client_order_id, then polls the order', async () => {
    const c = client();
    const placed = await c.placeOrder({ symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.001, price: '65000.10', time_in_force: 'GTC' });
    expect(placed.status).toBe('NEW');
    expect(placed.client_order_id).toMatch(/^[0-9a-f-]{36}$/);
    const raw = gw.requests.find((r) => r.path === '/orders')!.body;
    expect(raw).toContain('"quantity":0.001');
    expect(raw).toContain('"price":65000.1');
    const order = await c.getOrder(placed.order_id);
    expect(order).toMatchObject({ order_id: placed.order_id, price: '65000.1', quantity: '0.001', average_fill_price: null, in_time_ns: '1736899200123456789' });
    expect((await c.getOrderByClientId(placed.client_order_id)).order_id).toBe(placed.order_id);
    expect(await c.modifyOrder(placed.order_id, { price: 65001 })).toMatchObject({ price: '65001' });
    expect(await c.cancelOrderByClientId(placed.client_order_id)).toMatchObject({ status: 'CANCELLED' });
    expect(await c.cancelOrder(placed.order_id)).toMatchObject({ status: 'CANCELLED' });
  });

  it('backs off on 429 using Retry-After and re-sends the same client_order_id', async () => {
    const c = client();
    await c.time();
    gw.failNext(/^\/orders$/, 2, 429, { 'Retry-After': '2' });
    const before = gw.orders.size;
    const placed = await c.placeOrder({ symbol: 'BTC-USDC-PERP', side: 'sell', type: 'limit', quantity: '0.002', price: '70000', time_in_force: 'GTC' });
    expect(sleeps).toEqual([2000, 2000]);
    const bodies = gw.requests.filter((r) => r.path === '/orders').map((r) => JSON.parse(r.body) as { client_order_id: string });
    expect(bodies).toHaveLength(3);
    expect(new Set(bodies.map((b) => b.client_order_id))).toEqual(new Set([placed.client_order_id]));
    expect(gw.orders.size).toBe(before + 1);
  });

  it('a placement is never sent later than its maximum age: StaleOrderError instead of a late retry', async () => {
    let now = 1_000_000;
    const c = client({ placementMaxAgeMs: undefined, now: () => now, sleep: async (ms) => { sleeps.push(ms); now += ms; } });
    await c.time();
    gw.failNext(/^\/orders$/, 1, 429, { 'Retry-After': '26' }); // a spent trading budget: 26 s
    const before = count('POST', /^\/orders$/);
    const e = (await c.placeOrder({ symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '1', time_in_force: 'GTC', client_order_id: 'stale-1' }).catch((x: unknown) => x)) as StaleOrderError;
    expect(e).toBeInstanceOf(StaleOrderError);
    expect(e).toMatchObject({ clientOrderId: 'stale-1', maxAgeMs: 500, maybePlaced: false });
    expect(sleeps).toEqual([]); // did not sleep 26 s first
    expect(count('POST', /^\/orders$/)).toBe(before + 1);
    // 503 backoff of 1 s also exceeds the default 500 ms; a caller can allow more per call
    gw.failNext(/^\/orders$/, 1, 503);
    await expect(c.placeOrder({ symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '1', time_in_force: 'GTC' })).rejects.toBeInstanceOf(StaleOrderError);
    gw.failNext(/^\/orders$/, 1, 503);
    expect((await c.placeOrder({ symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '1', time_in_force: 'GTC' }, { maxAgeMs: 5000 })).status).toBe('NEW');
    expect(sleeps).toEqual([1000]);
  });

  it('waits the precise Retry-After-Ms of the 1 ms spacing rule, not the whole-second Retry-After', async () => {
    const c = client();
    await c.time();
    gw.failNext(/^\/orders$/, 1, 429, { 'Retry-After': '1', 'Retry-After-Ms': '1' });
    await c.placeOrder({ symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '1', time_in_force: 'GTC' });
    expect(sleeps).toEqual([1]);
  });

  it('paces requests client-side with the tier table (Core: burst 5, 2/s; 10 weighted actions/min)', async () => {
    let now = 5_000_000;
    const c = client({ tier: 'Core', now: () => now, sleep: async (ms) => { sleeps.push(ms); now += ms; } });
    for (let i = 0; i < 5; i++) await c.time();
    expect(sleeps).toEqual([]); // the burst
    await c.time();
    expect(sleeps).toEqual([500]); // then 2 per second
    const b = new TokenBucket(10, 10 / 60_000, () => now);
    b.take(10);
    expect(b.waitMs(1)).toBe(6000); // one weighted placement per 6 s once the minute's 10 are spent
    expect(b.waitMs(0.2)).toBe(1200); // a cancel weighs 0.2
  });

  it('uses X-RateLimit-Reset when there is no Retry-After; too long a wait is thrown', async () => {
    const c = client();
    await c.time();
    gw.failNext(/^\/positions$/, 1, 429, { 'X-RateLimit-Reset': String(Math.floor(Date.now() / 1000) + 3) });
    await c.positions();
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(1000);
    expect(sleeps[0]).toBeLessThanOrEqual(3000);
    gw.failNext(/^\/positions$/, 1, 429, { 'Retry-After': '120' });
    const e = (await c.positions().catch((x: unknown) => x)) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ httpStatus: 429, error: 'rate_limited', retryAfterMs: 120_000 });
  });

  it('a placement that meets a full venue (503) is retried with backoff from 1 s; a modify is not', async () => {
    const c = client();
    await c.time();
    gw.failNext(/^\/orders$/, 2, 503);
    const placed = await c.placeOrder({ symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '1', time_in_force: 'IOC', client_order_id: 'retry-503' });
    expect(placed.client_order_id).toBe('retry-503');
    expect(sleeps).toEqual([1000, 2000]);
    gw.failNext(/^\/orders\//, 1, 503);
    await expect(c.modifyOrder(placed.order_id, { price: 2 })).rejects.toMatchObject({ httpStatus: 503, code: 1503 });
  });

  it('a queued order (202 / 1502) is not resubmitted', async () => {
    const c = client();
    await c.time();
    gw.failNext(/^\/orders$/, 1, 202);
    const e = (await c.placeOrder({ symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '1', time_in_force: 'GTC' }).catch((x: unknown) => x)) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect(e.queued).toBe(true);
    expect(count('POST', /^\/orders$/)).toBe(1);
  });

  it('error envelopes become ApiError with code, name and request id', async () => {
    const c = client();
    const e = (await c.getOrder('nope').catch((x: unknown) => x)) as ApiError;
    expect(e).toMatchObject({ httpStatus: 404, code: 1420, error: 'ORDER_NOT_FOUND' });
    expect(e.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(c.rateLimit).toMatchObject({ limit: 60, remaining: 59 });
  });

  it('mass quote: client ids on place legs, at most 20 legs', async () => {
    const c = client();
    const leg = { cancel_order_id: '1', place: { symbol: 'BTC-USDC-PERP', side: 'buy' as const, type: 'limit' as const, quantity: '1', price: '1', time_in_force: 'GTC' as const } };
    expect(await c.massQuote({ legs: [leg, leg] })).toEqual({ legs: 2 });
    const body = JSON.parse(gw.requests.find((r) => r.path === '/orders/mass-quote')!.body) as { legs: Array<{ place: { client_order_id: string } }> };
    expect(body.legs[0]!.place.client_order_id).not.toBe(body.legs[1]!.place.client_order_id);
    await expect(c.massQuote({ legs: Array(21).fill(leg) })).rejects.toThrow(/1 to 20 legs/);
  });

  it('account, positions, vip, settlement, time', async () => {
    const c = client();
    expect(await c.account()).toEqual({ balance: '1000000.123456', tier: 'Core' });
    expect((await c.positions())[0]).toMatchObject({ size: '0.5', entry_price: '65000.1', margin: '3250.005', funding_accrued: '-0.01' });
    expect(await c.accountVip()).toMatchObject({ tier: 'Core' });
    expect(await c.settlementStatus('b-1')).toEqual({ batch_id: 'b-1', status: 'confirmed' });
    expect(await c.time()).toEqual({ server_time: '2025-01-15T00:00:00.123Z', server_time_ns: '1736899200123456789' });
  });

  it('a refused connection is retried only as far as allowed, then a NetworkError', async () => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as net.AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const c = new TenebraRestClient({ baseUrl: `http://127.0.0.1:${port}/api/v1`, maxRetries: 2, sleep: async (ms) => void sleeps.push(ms), random: () => 0 });
    const e = (await c.listInstruments().catch((x: unknown) => x)) as NetworkError;
    expect(e).toBeInstanceOf(NetworkError);
    expect(e.maybeExecuted).toBe(false);
    expect(sleeps).toEqual([1000, 2000]);
  });

  // ADR 0050: an attempt that timed out may have executed at the venue; what the retry then answers
  // must not read as the call's own outcome (chaos-real seed 25: a cancel's retry got 409).
  describe('after an attempt that may have executed', () => {
    const timedOut = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    const refused = () => Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    /** A fetch that answers each attempt from the script: a response, or a transport failure. */
    const scripted = (answers: Array<() => Response | Error>) => {
      const f = (async () => {
        const a = answers.shift()!();
        if (a instanceof Error) throw a;
        return a;
      }) as typeof fetch;
      return { f };
    };
    const notLive = () => new Response(JSON.stringify({ code: 1421, error: 'ORDER_NOT_LIVE', message: 'ORDER_NOT_LIVE: order 7 is CANCELLED and cannot be cancelled', timestamp: 't', request_id: 'r' }), { status: 409 });

    it("a retry's error says an earlier attempt may have executed", async () => {
      const { f } = scripted([timedOut, notLive]);
      const c = new TenebraRestClient({ baseUrl: 'http://venue.test/api/v1', accessToken: 'tok', fetch: f, maxRetries: 2, sleep: async (ms) => void sleeps.push(ms), random: () => 0 });
      const e = (await c.cancelOrder('7').catch((x: unknown) => x)) as ApiError;
      expect(e).toBeInstanceOf(ApiError);
      expect([e.httpStatus, e.error, e.earlierAttemptMaybeExecuted]).toEqual([409, 'ORDER_NOT_LIVE', true]);
      expect(sleeps).toEqual([1000]);
    });

    it('the first answer is the call\'s own: no doubt', async () => {
      const { f } = scripted([notLive]);
      const c = new TenebraRestClient({ baseUrl: 'http://venue.test/api/v1', accessToken: 'tok', fetch: f });
      expect(await c.cancelOrder('7').catch((x: unknown) => x)).toMatchObject({ httpStatus: 409, earlierAttemptMaybeExecuted: false });
    });

    it('a NetworkError after a timed-out attempt and a refused one may have executed', async () => {
      const { f } = scripted([timedOut, refused]);
      const c = new TenebraRestClient({ baseUrl: 'http://venue.test/api/v1', accessToken: 'tok', fetch: f, maxRetries: 1, sleep: async (ms) => void sleeps.push(ms), random: () => 0 });
      const e = (await c.cancelOrder('7').catch((x: unknown) => x)) as NetworkError;
      expect(e).toBeInstanceOf(NetworkError);
      expect(e.maybeExecuted).toBe(true); // the last attempt was refused, the first may have landed
    });
  });
});
