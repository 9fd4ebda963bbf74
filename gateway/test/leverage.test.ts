// Leverage per symbol and isolated margin (issue 26 item 2): GET/POST /positions/{symbol}/leverage,
// POST /positions/{symbol}/margin, the per-order `leverage` field, and the codes of each refusal.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ApiError, TenebraRestClient } from '@tenebra/client';
import { call, bearer, summary, type Account, type Rig } from './harness';
import type { PositionEvent } from '../src/events';
import { startOrderRig, account, post, settled, getOrder, type OrderRig } from './order-rig';

const ETH = 'ETH-USDC-PERP';
const order = (side: string, quantity: number, price: number, over: Record<string, unknown> = {}) =>
  ({ symbol: ETH, side, type: 'limit', quantity, price, time_in_force: 'GTC', ...over });

describe('leverage and isolated margin', () => {
  let rig: OrderRig;
  let a: Account;
  let b: Account;
  let c: Account;
  const events: PositionEvent[] = [];
  beforeAll(async () => {
    rig = await startOrderRig();
    [a, b, c] = await Promise.all([account(rig, 'Apex', '100000', { leverage: 5 }), account(rig, 'Apex', '100000', { leverage: 5 }), account(rig, 'Apex', '1000', { leverage: 50 })]);
    rig.sim.market.set(ETH, 300_000n); // mark 3000
    rig.sim.primary.publish();
    rig.gw.events.on('position', (e: PositionEvent) => events.push(e));
  });
  afterAll(async () => {
    await rig?.close();
  });
  const lev = (x: Account, symbol: string, body?: unknown) =>
    call(rig.gw, body === undefined ? 'GET' : 'POST', `/api/v1/positions/${symbol}/leverage`, body, bearer(x));
  const margin = (x: Account, body: unknown, symbol = ETH) => call(rig.gw, 'POST', `/api/v1/positions/${symbol}/margin`, body, bearer(x));
  const reserved = async (x: Account): Promise<string> => String((await summary(rig as unknown as Rig, x.user_id)).reserved);
  const balance = async (x: Account): Promise<string> => String((await summary(rig as unknown as Rig, x.user_id)).balance);
  /** Publishes an ETH oracle mid and waits until the risk monitor marks x's ETH position at it (its accepted mark). */
  const markAt = async (x: Account, ticks: bigint): Promise<void> => {
    rig.sim.market.set(ETH, ticks);
    rig.sim.primary.publish();
    const want = Number(ticks) / 100;
    for (let i = 0; i < 100; i++) {
      const ps = (await call(rig.gw, 'GET', '/api/v1/positions', undefined, bearer(x))).body.data.positions as { symbol: string; mark_price: number }[];
      if (ps.find((p) => p.symbol === ETH)?.mark_price === want) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the risk monitor did not mark ETH at ${want} within 5 s`);
  };
  const expectErr = (r: { status: number; body: Record<string, any>; raw: string }, http: number, error: string, msg?: RegExp) => {
    expect([r.status, r.body.error], r.raw).toEqual([http, error]);
    if (msg) expect(r.body.message).toMatch(msg);
  };

  it('GET leverage: the account default, capped at the instrument maximum', async () => {
    const r = await lev(a, ETH);
    expect(r.status, r.raw).toBe(200);
    expect(r.body.data).toEqual({ symbol: ETH, leverage: 5, max_leverage: 10 });
    expect((await lev(c, 'DOGE-USDC-PERP')).body.data).toEqual({ symbol: 'DOGE-USDC-PERP', leverage: 5, max_leverage: 5 }); // 50 capped at 5
  });

  it('POST leverage: above the maximum is LEVERAGE_EXCEEDED (1406); malformed is invalid_request; unknown symbol 404', async () => {
    for (const v of [11, 10.5, '11']) {
      const r = await lev(a, ETH, { leverage: v });
      expect([r.status, r.body.code, r.body.error], r.raw).toEqual([400, 1406, 'LEVERAGE_EXCEEDED']);
      expect(r.body.message).toMatch(/above the maximum of 10x for ETH-USDC-PERP/);
    }
    for (const body of [{ leverage: 2.5 }, { leverage: 0 }, { leverage: -1 }, { leverage: 'x' }, {}, { leverage: 2, margin: 1 }, [2]]) {
      expectErr(await lev(a, ETH, body), 400, 'invalid_request');
    }
    expectErr(await lev(a, 'NOPE-USDC-PERP', { leverage: 2 }), 404, 'not_found');
    expectErr(await call(rig.gw, 'POST', `/api/v1/positions/${ETH}/leverage`, { leverage: 2 }), 401, 'invalid_token');
    expect((await lev(a, ETH)).body.data.leverage).toBe(5); // nothing refused changed it
  });

  it('POST leverage sets the margin of new orders on that symbol only; a per-order leverage overrides it', async () => {
    const set = await lev(a, ETH, { leverage: 2 });
    expect(set.status, set.raw).toBe(200);
    expect(set.body.data).toEqual({ symbol: ETH, leverage: 2, max_leverage: 10 });
    expect((await lev(a, ETH)).body.data.leverage).toBe(2);
    expect((await lev(a, 'BTC-USDC-PERP')).body.data.leverage).toBe(5);
    expect((await post(rig, a, order('buy', 1, 3000))).status).toBe(200);
    expect(await reserved(a)).toBe('1500.6'); // 3000 / 2 + 0.02% taker fee
    const over = await post(rig, a, order('buy', 1, 2990, { leverage: 11 }));
    expect([over.status, over.body.code, over.body.error], over.raw).toEqual([400, 1406, 'LEVERAGE_EXCEEDED']);
    expectErr(await post(rig, a, order('buy', 1, 2990, { leverage: 1.5 })), 400, 'INVALID_ORDER', /whole number from 1 to 10/);
    const own = await post(rig, a, order('buy', 1, 2990, { leverage: 10 }));
    expect(own.status, own.raw).toBe(200);
    expect(await reserved(a)).toBe('1800.198'); // + 2990 / 10 + 0.598
    const del = await call(rig.gw, 'DELETE', `/api/v1/orders/${own.body.data.order_id}`, undefined, bearer(a));
    expect(del.status, del.raw).toBe(200);
  });

  it('the position takes the leverage of the order that opened it; margin add and remove with their checks', async () => {
    const sell = await post(rig, b, order('sell', 1, 3000, { time_in_force: 'IOC' }));
    await settled(rig);
    expect((await getOrder(rig, b, sell.body.data.order_id)).status).toBe('FILLED');
    const pos = async (x: Account) => (await call(rig.gw, 'GET', '/api/v1/positions', undefined, bearer(x))).body.data.positions.find((p: any) => p.symbol === ETH);
    expect(await pos(a)).toMatchObject({ side: 'long', size: 1, margin: 1500, leverage: 2 });
    expect(await pos(b)).toMatchObject({ side: 'short', size: 1, margin: 600, leverage: 5 });

    const before = await balance(a);
    const add = await margin(a, { action: 'add', amount: 100 });
    expect(add.status, add.raw).toBe(200);
    expect(add.body.data).toMatchObject({ symbol: ETH, side: 'long', size: 1, margin: 1600, leverage: 2 });
    expect(Number(await balance(a))).toBeCloseTo(Number(before) - 100, 6);
    expect(events.filter((e) => e.update_reason === 'margin').at(-1)).toMatchObject({ update_reason: 'margin', position: { user_id: a.user_id, symbol: ETH, margin: '1600000000' } });
    // at the entry price, everything above the initial margin (1500) can leave, and no more
    const over = await margin(a, { action: 'remove', amount: '100.000001' });
    expect([over.status, over.body.code, over.body.error], over.raw).toEqual([400, 1410, 'MARGIN_INSUFFICIENT']);
    expect(over.body.message).toMatch(/at most 100 USDC can be removed/);
    expect((await margin(a, { action: 'remove', amount: 100 })).body.data.margin).toBe(1500);
    expect(await balance(a)).toBe(before);
    // adding more than free collateral
    expect((await margin(c, { action: 'add', amount: 1 })).body.error).toBe('not_found'); // c has no ETH position
    const free = 100000 - Number(await reserved(a)) - 1500 - 0.6;
    const tooMuch = await margin(a, { action: 'add', amount: Math.ceil(free) + 1 });
    expect([tooMuch.status, tooMuch.body.code], tooMuch.raw).toEqual([400, 1410]);
    // malformed bodies
    for (const body of [{ action: 'withdraw', amount: 1 }, { action: 'add' }, { action: 'add', amount: 0 }, { action: 'add', amount: -1 }, { action: 'add', amount: '0.0000001' }, { action: 'add', amount: 1, x: 1 }]) {
      expectErr(await margin(a, body), 400, 'invalid_request');
    }
  });

  it('leverage on an open position: raising it frees margin to remove; lowering it tops the margin up from free collateral', async () => {
    expect((await lev(a, ETH, { leverage: 10 })).status).toBe(200);
    const p1 = await margin(a, { action: 'remove', amount: 1200 }); // 1500 - 3000/10
    expect(p1.status, p1.raw).toBe(200);
    expect(p1.body.data).toMatchObject({ margin: 300, leverage: 10 });
    expect((await margin(a, { action: 'remove', amount: '0.000001' })).body.code).toBe(1410);
    const before = Number(await balance(a));
    expect((await lev(a, ETH, { leverage: 5 })).status).toBe(200);
    const p2 = (await call(rig.gw, 'GET', '/api/v1/positions', undefined, bearer(a))).body.data.positions.find((p: any) => p.symbol === ETH);
    expect(p2).toMatchObject({ margin: 600, leverage: 5 });
    expect(Number(await balance(a))).toBeCloseTo(before - 300, 6);
    expect(events.filter((e) => e.update_reason === 'margin').at(-1)).toMatchObject({ update_reason: 'margin', position: { leverage: 5, margin: '600000000' } });
    // a loss at the mark is not withdrawable: at 2900 the long has lost 100
    await markAt(a, 290_000n);
    expect((await margin(a, { action: 'add', amount: 50 })).status).toBe(200);
    const r = await margin(a, { action: 'remove', amount: 1 }); // 650 - 600 - 100 < 0
    expect([r.status, r.body.code], r.raw).toEqual([400, 1410]);
    // back at 3000 before the next test draws on this position's margin (it raced the mark once)
    await markAt(a, 300_000n);
  });

  it('lowering leverage beyond free collateral is MARGIN_INSUFFICIENT and changes nothing', async () => {
    const poor = await account(rig, 'Apex', '400', { leverage: 10 });
    const buy = await post(rig, poor, order('buy', 1, 3000, { time_in_force: 'GTC' }));
    expect(buy.status, buy.raw).toBe(200);
    expect((await post(rig, b, order('sell', 1, 3000, { time_in_force: 'IOC' }))).status).toBe(200);
    await settled(rig);
    // margin 300; 5x needs 600: 300 more than the ~99.4 left
    const r = await lev(poor, ETH, { leverage: 5 });
    expect([r.status, r.body.code, r.body.error], r.raw).toEqual([400, 1410, 'MARGIN_INSUFFICIENT']);
    expect((await lev(poor, ETH)).body.data.leverage).toBe(10);
  });

  it('the SDK speaks the routes: leverage, setLeverage, adjustMargin, and a per-order leverage', async () => {
    const rest = new TenebraRestClient({ baseUrl: rig.gw.urls.baseUrl, credentials: { apiKey: a.api_key, apiSecret: a.api_secret, passphrase: a.passphrase } });
    expect(await rest.setLeverage('SOL-USDC-PERP', 4)).toEqual({ symbol: 'SOL-USDC-PERP', leverage: 4, max_leverage: 10 });
    expect(await rest.leverage('SOL-USDC-PERP')).toEqual({ symbol: 'SOL-USDC-PERP', leverage: 4, max_leverage: 10 });
    const over = await rest.setLeverage('SOL-USDC-PERP', 20).catch((e: unknown) => e);
    expect(over).toBeInstanceOf(ApiError);
    expect(over).toMatchObject({ httpStatus: 400, code: 1406, error: 'LEVERAGE_EXCEEDED' });
    const p = await rest.adjustMargin(ETH, 'add', '1.5');
    expect(p).toMatchObject({ symbol: ETH, side: 'long' });
    expect((await rest.adjustMargin(ETH, 'remove', '1.5')).margin).not.toBe(p.margin);
    expect(await rest.adjustMargin('SOL-USDC-PERP', 'add', 1).catch((e: unknown) => e)).toMatchObject({ httpStatus: 404, error: 'not_found' });
    const placed = await rest.placeOrder({ symbol: ETH, side: 'buy', type: 'limit', quantity: '0.1', price: '2900', time_in_force: 'GTC', leverage: 11 }).catch((e: unknown) => e);
    expect(placed).toMatchObject({ code: 1406, error: 'LEVERAGE_EXCEEDED' });
  });
});
