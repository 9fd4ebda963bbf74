// GET /orders?status=open|closed and GET /fills (docs/api.md, "Order history and fills"): shapes,
// order, filters, paging, the spec's error envelope for bad queries, and the listings after a restart.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startRig, call, newAccount, bearer, type Rig, type Account } from './harness';
import { until } from './fakes';

const O = (over: Record<string, unknown> = {}) => ({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.5, price: 3000, time_in_force: 'GTC', ...over });

async function place(rig: Rig, a: Account, body: Record<string, unknown>): Promise<string> {
  await new Promise((r) => setTimeout(r, 2)); // the spec's spacing: one placement per ms per symbol and account
  const r = await call(rig.gw, 'POST', '/api/v1/orders', body, bearer(a));
  expect(r.status, r.raw).toBe(200);
  return r.body.data.order_id as string;
}

async function get(rig: Rig, a: Account, url: string): Promise<any[]> {
  const r = await call(rig.gw, 'GET', url, undefined, bearer(a));
  expect(r.status, r.raw).toBe(200);
  expect(r.body.code).toBe(0);
  return r.body.data;
}

const ids = (list: any[]): string[] => list.map((o) => o.order_id as string);
const settled = (rig: Rig) => until(() => rig.gw.resultsCursor === BigInt(rig.seq.journal.length + 1), 10_000, 'every journaled op to be applied');

describe('order history and fills', () => {
  let rig: Rig;
  let a: Account;
  let b: Account;
  const placed: Record<string, string> = {};
  beforeAll(async () => {
    rig = await startRig();
    [a, b] = await Promise.all([newAccount(rig), newAccount(rig)]);
    // a rests three sells (two ETH, one BTC), b takes one ETH sell whole and half of the other, then cancels nothing.
    placed.s1 = await place(rig, a, O({ side: 'sell', quantity: 1, price: 3000, client_order_id: 's1' }));
    placed.s2 = await place(rig, a, O({ side: 'sell', quantity: 1, price: 3001 }));
    // above BTC's mark (about 65,000): a sell below it would book a loss the fill-loss check refuses
    placed.btc = await place(rig, a, O({ symbol: 'BTC-USDC-PERP', side: 'sell', quantity: 0.01, price: 66000 }));
    placed.t1 = await place(rig, b, O({ side: 'buy', quantity: 1.5, price: 3001, time_in_force: 'IOC', client_order_id: 't1' }));
    await settled(rig);
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('lists open orders oldest first, with a symbol filter, as GET /orders/{id} answers them', async () => {
    const open = await get(rig, a, '/api/v1/orders?status=open');
    expect(ids(open)).toEqual([placed.s2, placed.btc]);
    expect(open[0]).toMatchObject({ status: 'PARTIALLY_FILLED', filled_quantity: 0.5, remaining_quantity: 0.5, client_order_id: null });
    const single = await call(rig.gw, 'GET', `/api/v1/orders/${placed.s2}`, undefined, bearer(a));
    expect(open[0]).toEqual(single.body.data);
    expect(ids(await get(rig, a, '/api/v1/orders?status=open&symbol=BTC-USDC-PERP'))).toEqual([placed.btc]);
    expect(await get(rig, b, '/api/v1/orders?status=open')).toEqual([]);
  });

  it('lists an order whose committee outcome is pending as open', async () => {
    rig.committee.close();
    const pending = await place(rig, a, O({ side: 'buy', quantity: 0.1, price: 2900 }));
    const open = await get(rig, a, '/api/v1/orders?status=open');
    expect(ids(open)).toEqual([placed.s2, placed.btc, pending]);
    expect(open[2].status).toBe('NEW');
    await rig.committee.connect(rig.gw.urls.internalUrl);
    await settled(rig);
    const cancel = await call(rig.gw, 'DELETE', `/api/v1/orders/${pending}`, undefined, bearer(a));
    expect(cancel.status, cancel.raw).toBe(200);
    expect(ids(await get(rig, a, '/api/v1/orders?status=open'))).toEqual([placed.s2, placed.btc]);
    placed.pending = pending;
  });

  it('lists finished orders newest first, with since_ns, symbol and limit', async () => {
    const closed = await get(rig, a, '/api/v1/orders?status=closed');
    expect(ids(closed)).toEqual([placed.pending, placed.s1]);
    expect(closed[0]).toMatchObject({ status: 'CANCELLED', cancel_reason: 'USER_REQUESTED' });
    expect(closed[1]).toMatchObject({ status: 'FILLED', client_order_id: 's1' });
    expect(ids(await get(rig, a, '/api/v1/orders?status=closed&limit=1'))).toEqual([placed.pending]);
    const raw = (await call(rig.gw, 'GET', `/api/v1/orders/${placed.pending}`, undefined, bearer(a))).raw;
    const out = /"out_time_ns":(\d+)/.exec(raw)![1]!;
    expect(ids(await get(rig, a, `/api/v1/orders?status=closed&since_ns=${out}`))).toEqual([placed.pending]);
    expect(ids(await get(rig, a, `/api/v1/orders?status=closed&since_ns=${BigInt(out) + 1n}`))).toEqual([]);
    expect(await get(rig, a, '/api/v1/orders?status=closed&symbol=BTC-USDC-PERP')).toEqual([]);
    const bc = await get(rig, b, '/api/v1/orders?status=closed');
    expect(bc).toHaveLength(1);
    expect(bc[0]).toMatchObject({ order_id: placed.t1, status: 'FILLED', filled_quantity: 1.5, client_order_id: 't1' });
  });

  it('lists fills newest first: both sides, fees (negative: rebate), liquidity, integer time_ns', async () => {
    const fb = await get(rig, b, '/api/v1/fills');
    expect(fb).toHaveLength(2);
    // one taker order, two executions in one outcome: the later execution (at 3001) is listed first
    expect(fb[0]).toEqual({ fill_id: expect.stringMatching(/-1-T$/), order_id: placed.t1, client_order_id: 't1', symbol: 'ETH-USDC-PERP', side: 'buy', price: 3001, quantity: 0.5, fee: 0.3001, liquidity: 'taker', time_ns: expect.any(Number) });
    expect(fb[1]).toMatchObject({ order_id: placed.t1, price: 3000, quantity: 1, fee: 0.6, liquidity: 'taker' }); // Apex taker 2 bps
    const fa = await get(rig, a, '/api/v1/fills');
    expect(fa.map((f) => [f.order_id, f.side, f.liquidity, f.client_order_id])).toEqual([[placed.s2, 'sell', 'maker', null], [placed.s1, 'sell', 'maker', 's1']]);
    expect(fa[1].fee).toBe(-0.3); // Apex maker rebate 1 bp
    expect(fa[1].fill_id.replace(/M$/, 'T')).toBe(fb[1].fill_id);
    const raw = (await call(rig.gw, 'GET', '/api/v1/fills', undefined, bearer(b))).raw;
    const times = [...raw.matchAll(/"time_ns":(\d+)/g)].map((m) => m[1]!);
    expect(times[0]).toMatch(/^\d{19}$/); // nanoseconds, exact
    expect(await get(rig, b, `/api/v1/fills?since_ns=${BigInt(times[0]!) + 1n}`)).toEqual([]);
    expect(await get(rig, b, `/api/v1/fills?since_ns=${times[0]}&limit=1`)).toHaveLength(1);
    expect(await get(rig, b, '/api/v1/fills?symbol=BTC-USDC-PERP')).toEqual([]);
  });

  it('refuses bad queries with the spec envelope', async () => {
    const cases: [string, number, string, RegExp][] = [
      ['/api/v1/orders?status=open&limit=5', 400, 'invalid_request', /unknown query parameter 'limit'/],
      ['/api/v1/orders?status=closed&foo=1', 400, 'invalid_request', /unknown query parameter 'foo'/],
      ['/api/v1/orders?status=done', 400, 'invalid_request', /status must be 'open' or 'closed'/],
      ['/api/v1/orders', 400, 'invalid_request', /needs status=open, status=closed or client_order_id/],
      ['/api/v1/orders?client_order_id=s1&x=1', 400, 'invalid_request', /unknown query parameter 'x'/],
      ['/api/v1/orders?status=closed&limit=501', 400, 'invalid_request', /limit must be an integer from 1 to 500/],
      ['/api/v1/fills?limit=0', 400, 'invalid_request', /limit must be an integer from 1 to 500/],
      ['/api/v1/fills?since_ns=-1', 400, 'invalid_request', /since_ns must be a non-negative integer/],
      ['/api/v1/fills?since_ns=1&since_ns=2', 400, 'invalid_request', /appears more than once/],
      ['/api/v1/fills?symbol=FOO', 400, 'UNKNOWN_SYMBOL', /unknown symbol 'FOO'/],
      ['/api/v1/fills?order_id=1', 400, 'invalid_request', /unknown query parameter 'order_id'/],
    ];
    for (const [url, http, error, msg] of cases) {
      const r = await call(rig.gw, 'GET', url, undefined, bearer(a));
      expect([r.status, r.body.error, r.body.code], url).toEqual([http, error, expect.any(Number)]);
      expect(r.body.message, url).toMatch(msg);
      expect(typeof r.body.request_id).toBe('string');
    }
    const anon = await call(rig.gw, 'GET', '/api/v1/fills');
    expect([anon.status, anon.body.error]).toEqual([401, 'invalid_token']);
    expect((await call(rig.gw, 'GET', '/api/v1/orders?client_order_id=s1', undefined, bearer(a))).body.data.order_id).toBe(placed.s1);
  });

  it('lists the same after a gateway restart', async () => {
    const before = await Promise.all(['/api/v1/orders?status=open', '/api/v1/orders?status=closed', '/api/v1/fills'].map((u) => call(rig.gw, 'GET', u, undefined, bearer(a))));
    await rig.restart();
    const after = await Promise.all(['/api/v1/orders?status=open', '/api/v1/orders?status=closed', '/api/v1/fills'].map((u) => call(rig.gw, 'GET', u, undefined, bearer(a))));
    expect(after.map((r) => r.body.data)).toEqual(before.map((r) => r.body.data));
  });
});
