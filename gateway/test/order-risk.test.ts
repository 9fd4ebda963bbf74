// Pre-trade checks (every reject reason with its trade code), limits, and client_order_id
// idempotency (including concurrent duplicates and the 24 h window).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { call, bearer, summary, type Account, type Rig } from './harness';
import { ManualClock } from '../src/clock';
import { until } from './fakes';
import { DEFAULT_PRICE_BAND } from '../src/orders/risk';
import { instrumentBandBps } from '../src/orders/fill-loss';
import { instrumentBySymbol } from '@tenebra/config';
import { ADMIN_SECRET_HEADER } from '../src/http/routes-admin';
import { startOrderRig, account, post, getOrder, settled, relogin, spaced, type OrderRig } from './order-rig';

const order = (symbol: string, side: string, quantity: number, price: number, over: Record<string, unknown> = {}) =>
  ({ symbol, side, type: 'limit', quantity, price, time_in_force: 'GTC', ...over });

describe("the limit price band of the gateway process (priceBandBps, default each instrument's band)", () => {
  let rig: OrderRig;
  let a: Account;
  beforeAll(async () => {
    rig = await startOrderRig({ priceBandBps: DEFAULT_PRICE_BAND });
    a = await account(rig);
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('the bands: half of initial minus maintenance margin ratio (10x: 2.5%, 8x: 3.75%, 5x: 5%)', () => {
    const band = (s: string) => instrumentBandBps(instrumentBySymbol(s)!);
    expect([band('BTC-USDC-PERP'), band('ETH-USDC-PERP'), band('NEAR-USDC-PERP'), band('DOGE-USDC-PERP'), band('PEPE-USDC-PERP')]).toEqual([250, 250, 375, 500, 500]);
  });

  it("INVALID_PRICE (1402) for a limit price outside the instrument's band, placed or modified; market caps are not limited by it", async () => {
    rig.sim.market.set('NEAR-USDC-PERP', 5_000n); // mark 5.000, NEAR's band 3.75%: limit prices 4.813 to 5.187
    rig.sim.primary.publish();
    const n = rig.seq.journal.length;
    for (const [side, price] of [['buy', 5.188], ['sell', 4.812], ['buy', 100], ['sell', 2.5]] as const) {
      const r = await post(rig, a, order('NEAR-USDC-PERP', side, 50, price));
      expect([r.status, r.body.code, r.body.error], JSON.stringify(r.body)).toEqual([400, 1402, 'INVALID_PRICE']);
      expect(r.body.message).toMatch(/outside the acceptable range 4\.813 to 5\.187 \(the mark 5 ± 3\.75%, NEAR-USDC-PERP's price band\)/);
    }
    expect(rig.seq.journal.length).toBe(n); // nothing refused reached the sequencer
    for (const price of [4.813, 5.187]) expect((await post(rig, a, order('NEAR-USDC-PERP', 'sell', 50, price))).status).toBe(200);
    const live = await post(rig, a, order('NEAR-USDC-PERP', 'buy', 50, 4.9));
    await spaced();
    const mod = await call(rig.gw, 'PATCH', `/api/v1/orders/${live.body.data.order_id}`, { price: 4.7 }, bearer(a));
    expect([mod.status, mod.body.code, mod.body.error]).toEqual([400, 1402, 'INVALID_PRICE']);
    // a market order's cap protects its sender: a cap outside the band is accepted while its fill
    // would not book a loss at the mark that its margin cannot carry (4.8 on NEAR at 8x: 4% < 12.5% - 5.5%)
    const capped = await post(rig, a, { symbol: 'NEAR-USDC-PERP', side: 'sell', type: 'market', quantity: 60, price: 4.8, time_in_force: 'IOC' });
    expect(capped.status, JSON.stringify(capped.body)).toBe(200);
  });
});

describe('pre-trade checks', () => {
  let rig: OrderRig;
  let a: Account;
  let b: Account;
  beforeAll(async () => {
    rig = await startOrderRig();
    [a, b] = await Promise.all([account(rig), account(rig)]);
  });
  afterAll(async () => {
    await rig?.close();
  });
  const expectReject = (r: { status: number; body: Record<string, any> }, http: number, code: number, error: string) => {
    expect([r.status, r.body.code, r.body.error], JSON.stringify(r.body)).toEqual([http, code, error]);
    expect(r.body.message.startsWith(`${error}: `)).toBe(true);
    expect(typeof r.body.request_id).toBe('string');
  };

  it('fails closed without a fresh mark: MARK_PRICE_UNAVAILABLE (1408); the secondary feed covers a primary outage', async () => {
    rig.sim.market.remove('NEAR-USDC-PERP');
    rig.sim.primary.publish();
    rig.sim.secondary.publish();
    const n = rig.seq.journal.length;
    expectReject(await post(rig, a, order('NEAR-USDC-PERP', 'buy', 30, 5)), 400, 1408, 'MARK_PRICE_UNAVAILABLE');
    expect(rig.seq.journal.length).toBe(n);
    rig.sim.market.set('NEAR-USDC-PERP', 5_000n);
    rig.sim.secondary.publish(); // the primary still has no quote: the secondary serves
    expect(rig.gw.oracle.reference('NEAR-USDC-PERP')).toMatchObject({ ok: true, source: 'secondary' });
    expect((await post(rig, a, order('NEAR-USDC-PERP', 'buy', 30, 5))).status).toBe(200);
    rig.sim.primary.publish();
    expect(rig.gw.oracle.reference('NEAR-USDC-PERP')).toMatchObject({ ok: true, source: 'primary' });
  });

  it('ACCOUNT_IN_LIQUIDATION (1411) while the lockout is set; cancels still work', async () => {
    const live = await post(rig, b, order('DOGE-USDC-PERP', 'buy', 1000, 0.15));
    await rig.gw.orders.setLiquidationLockout(b.user_id, true);
    expectReject(await post(rig, b, order('DOGE-USDC-PERP', 'buy', 1000, 0.15)), 400, 1411, 'ACCOUNT_IN_LIQUIDATION');
    await spaced();
    expect((await call(rig.gw, 'DELETE', `/api/v1/orders/${live.body.data.order_id}`, undefined, bearer(b))).status).toBe(200);
    await rig.gw.orders.setLiquidationLockout(b.user_id, false);
    expect((await post(rig, b, order('DOGE-USDC-PERP', 'buy', 1000, 0.15))).status).toBe(200);
  });

  it('INSTRUMENT_HALTED (1407) for placements and modifies; cancels still work', async () => {
    const live = await post(rig, a, order('TRX-USDC-PERP', 'buy', 1000, 0.12));
    const admin = { [ADMIN_SECRET_HEADER]: rig.env.adminSecret };
    expect((await call(rig.gw, 'POST', '/admin/instruments/TRX-USDC-PERP/status', { status: 'halted' }, admin)).status).toBe(200);
    expectReject(await post(rig, a, order('TRX-USDC-PERP', 'buy', 1000, 0.12)), 400, 1407, 'INSTRUMENT_HALTED');
    await spaced();
    expectReject(await call(rig.gw, 'PATCH', `/api/v1/orders/${live.body.data.order_id}`, { quantity: 900 }, bearer(a)), 400, 1407, 'INSTRUMENT_HALTED');
    await spaced();
    expect((await call(rig.gw, 'DELETE', `/api/v1/orders/${live.body.data.order_id}`, undefined, bearer(a))).status).toBe(200);
    expect((await call(rig.gw, 'POST', '/admin/instruments/TRX-USDC-PERP/status', { status: 'trading' }, admin)).status).toBe(200);
  });

  it('halted: resting orders stay (the market resumes with its book); delisted: every live order ends with SYSTEM_CANCEL, new ones refused 1407', async () => {
    const admin = { [ADMIN_SECRET_HEADER]: rig.env.adminSecret };
    const live = await post(rig, a, order('POL-USDC-PERP', 'buy', 300, 0.4));
    const other = await post(rig, b, order('POL-USDC-PERP', 'sell', 300, 0.6));
    await settled(rig);
    expect((await call(rig.gw, 'POST', '/admin/instruments/POL-USDC-PERP/status', { status: 'halted' }, admin)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 600)); // two risk-monitor sweeps
    expect((await getOrder(rig, a, live.body.data.order_id)).status).toBe('NEW');
    expect((await call(rig.gw, 'POST', '/admin/instruments/POL-USDC-PERP/status', { status: 'delisted' }, admin)).status).toBe(200);
    expectReject(await post(rig, a, order('POL-USDC-PERP', 'buy', 300, 0.4)), 400, 1407, 'INSTRUMENT_HALTED');
    await until(async () => (await getOrder(rig, b, other.body.data.order_id)).status === 'CANCELLED', 10_000);
    await until(async () => (await getOrder(rig, a, live.body.data.order_id)).status === 'CANCELLED', 10_000);
    for (const [acct, id] of [[a, live.body.data.order_id], [b, other.body.data.order_id]] as const) {
      expect((await getOrder(rig, acct, id)).cancel_reason).toBe('SYSTEM_CANCEL');
    }
  });

  it('POSITION_LIMIT_EXCEEDED (1409): position + live orders on a side may not pass 10 × max_qty', async () => {
    // ETH: max_qty 5000, limit 50,000 ETH. Live buys count toward the long side.
    // (prices within ETH's 655.36 USDC price window and near enough the mark to stay, ADR 0024)
    const big = await account(rig, 'Apex', '20000000');
    for (let i = 0; i < 10; i++) {
      const r = await post(rig, big, order('ETH-USDC-PERP', 'buy', 5000, 2800));
      expect(r.status, r.raw).toBe(200);
    }
    expectReject(await post(rig, big, order('ETH-USDC-PERP', 'buy', 0.1, 2850)), 400, 1409, 'POSITION_LIMIT_EXCEEDED');
    const other = await post(rig, big, order('ETH-USDC-PERP', 'sell', 5000, 3200));
    expect(other.status, other.raw).toBe(200); // the other side is free
  });

  it('MARGIN_INSUFFICIENT (1410), not LEVERAGE_EXCEEDED: no adding to a position the mark has pushed past max leverage; reducing is fine', async () => {
    expect((await post(rig, b, order('BTC-USDC-PERP', 'sell', 0.01, 65000))).status).toBe(200);
    const buy = await post(rig, a, order('BTC-USDC-PERP', 'buy', 0.01, 65000, { time_in_force: 'IOC' }));
    await settled(rig);
    expect((await getOrder(rig, a, buy.body.data.order_id)).status).toBe('FILLED');
    // 63,000: a's 10x long is past max leverage (equity 45 USDC on 630 of notional, 14x) but above
    // maintenance (5%: 31.5 USDC). At 58,000 it lost more than its margin, so the risk monitor's next
    // tick (every 250 ms) put the account into liquidation and the reducing sell below raced it.
    rig.sim.market.set('BTC-USDC-PERP', 630_000n);
    rig.sim.primary.publish();
    // LEVERAGE_EXCEEDED is the spec's "requested leverage above instrument maximum" (leverage.test.ts)
    expectReject(await post(rig, a, order('BTC-USDC-PERP', 'buy', 0.01, 63000)), 400, 1410, 'MARGIN_INSUFFICIENT');
    await new Promise((r) => setTimeout(r, 600)); // two monitor ticks: still not liquidating
    const reduce = await post(rig, a, order('BTC-USDC-PERP', 'sell', 0.01, 70000));
    expect(reduce.status, reduce.raw).toBe(200);
    rig.sim.market.set('BTC-USDC-PERP', 650_000n);
    rig.sim.primary.publish();
  });

  it("MARGIN_INSUFFICIENT (1410): an uncapped market buy reserves at its implicit cap, the mark plus SOL's band (2.5%)", async () => {
    const poor = await account(rig, 'Apex', '400');
    // 1 SOL at mark 150 × 1.025 = 153.75 → 15.375 margin; 27 SOL → 415.125 + fee > 400 (was: the
    // mark plus 10%, before every market order carried the band's cap; 25 SOL → 384.375 + fee fits)
    expectReject(await post(rig, poor, { symbol: 'SOL-USDC-PERP', side: 'buy', type: 'market', quantity: 27, time_in_force: 'IOC' }), 400, 1410, 'MARGIN_INSUFFICIENT');
    expect((await post(rig, poor, { symbol: 'SOL-USDC-PERP', side: 'buy', type: 'market', quantity: 25, time_in_force: 'IOC' })).status).toBe(200);
    await settled(rig);
    expect((await summary(rig as unknown as Rig, poor.user_id)).reserved).toBe('0');
  });

  it('OPEN_ORDER_LIMIT (1412) by tier per symbol', async () => {
    const sel = await account(rig, 'Select', '100000'); // 15 open orders per symbol (Core's 5 would hit its burst of 5 requests first)
    for (let i = 0; i < 15; i++) {
      const r = await post(rig, sel, order('ADA-USDC-PERP', 'buy', 200, 0.4));
      expect(r.status, r.raw).toBe(200);
    }
    expectReject(await post(rig, sel, order('ADA-USDC-PERP', 'buy', 200, 0.4)), 400, 1412, 'OPEN_ORDER_LIMIT');
  });
});

describe('book depth cap', () => {
  it('BOOK_DEPTH_EXCEEDED (1413) once a symbol holds the cap of live GTC/GTT orders (cap 3 here); IOC is not capped', async () => {
    const rig = await startOrderRig({ maxBookDepth: 3 });
    try {
      const [a, b] = await Promise.all([account(rig), account(rig)]);
      for (let i = 0; i < 3; i++) expect((await post(rig, i % 2 ? a : b, order('ARB-USDC-PERP', 'buy', 200, 0.8 - i / 1000))).status).toBe(200);
      const r = await post(rig, a, order('ARB-USDC-PERP', 'sell', 200, 0.9));
      expect([r.status, r.body.code, r.body.error]).toEqual([400, 1413, 'BOOK_DEPTH_EXCEEDED']);
      expect((await post(rig, a, order('ARB-USDC-PERP', 'buy', 200, 0.7, { time_in_force: 'IOC' }))).status).toBe(200);
      expect((await post(rig, a, order('ADA-USDC-PERP', 'buy', 300, 0.4))).status).toBe(200); // per symbol
      // a fill frees a place
      const hit = await post(rig, a, order('ARB-USDC-PERP', 'sell', 200, 0.8, { time_in_force: 'IOC' }));
      await settled(rig);
      expect((await getOrder(rig, a, hit.body.data.order_id)).status).toBe('FILLED');
      expect((await post(rig, a, order('ARB-USDC-PERP', 'sell', 200, 0.9))).status).toBe(200);
    } finally {
      await rig.close();
    }
  });
});

describe('client_order_id idempotency', () => {
  let rig: OrderRig;
  let clock: ManualClock;
  let a: Account;
  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 2, 1, 12, 0, 0));
    rig = await startOrderRig({ clock });
    a = await account(rig);
  });
  afterAll(async () => {
    await rig?.close();
  });
  const place = async (body: Record<string, unknown>) => {
    clock.advance(2); // the spec's spacing, on the manual clock
    return call(rig.gw, 'POST', '/api/v1/orders', body, bearer(a));
  };

  it('concurrent duplicates create one order and all answer it', async () => {
    rig.seq.hold = true; // the first is still waiting for its journal ack while the others arrive
    const body = order('ETH-USDC-PERP', 'buy', 0.1, 2900, { client_order_id: 'race-1' });
    const n = rig.seq.journal.length;
    clock.advance(2);
    const all = Array.from({ length: 5 }, () => call(rig.gw, 'POST', '/api/v1/orders', body, bearer(a)));
    await new Promise((r) => setTimeout(r, 100));
    rig.seq.release();
    const rs = await Promise.all(all);
    const ids = new Set(rs.map((r) => r.body.data?.order_id));
    expect(rs.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(ids.size).toBe(1);
    expect(rig.seq.journal.length - n).toBe(1);
    expect(rs.every((r) => r.body.data.client_order_id === 'race-1')).toBe(true);
  });

  it('a repeat with another body returns the original and creates nothing; after 24 h a live order keeps the id (DUPLICATE_CLIENT_ORDER_ID)', async () => {
    const first = await place(order('ETH-USDC-PERP', 'buy', 0.1, 2800, { client_order_id: 'k-1' }));
    const n = rig.seq.journal.length;
    const again = await place(order('SOL-USDC-PERP', 'sell', 5, 200, { client_order_id: 'k-1' }));
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ order_id: first.body.data.order_id, client_order_id: 'k-1', symbol: 'ETH-USDC-PERP', status: 'NEW' });
    expect(rig.seq.journal.length).toBe(n);

    clock.advance(24 * 3600 * 1000 + 1);
    rig.sim.primary.publish(); // keep the mark fresh on the manual clock
    await relogin(rig, a);
    const dup = await place(order('ETH-USDC-PERP', 'buy', 0.1, 2800, { client_order_id: 'k-1' }));
    expect([dup.status, dup.body.code, dup.body.error]).toEqual([409, 1414, 'DUPLICATE_CLIENT_ORDER_ID']);
    // still found by its client id while live
    expect((await call(rig.gw, 'GET', '/api/v1/orders?client_order_id=k-1', undefined, bearer(a))).body.data.order_id).toBe(first.body.data.order_id);
    clock.advance(2);
    expect((await call(rig.gw, 'DELETE', '/api/v1/orders?client_order_id=k-1', undefined, bearer(a))).status).toBe(200);
    // released: the id now creates a new order, and names it
    const fresh = await place(order('ETH-USDC-PERP', 'buy', 0.1, 2800, { client_order_id: 'k-1' }));
    expect(fresh.status, fresh.raw).toBe(200);
    expect(fresh.body.data.order_id).not.toBe(first.body.data.order_id);
    expect((await call(rig.gw, 'GET', '/api/v1/orders?client_order_id=k-1', undefined, bearer(a))).body.data.order_id).toBe(fresh.body.data.order_id);
    await settled(rig);
    expect((await getOrder(rig, a, first.body.data.order_id)).status).toBe('CANCELLED');
  });

  it('a finished order older than 24 h releases its id; pruning forgets it', async () => {
    const o = await place(order('SOL-USDC-PERP', 'buy', 1, 140, { client_order_id: 'old-1', time_in_force: 'IOC' }));
    await settled(rig);
    clock.advance(24 * 3600 * 1000 + 1);
    rig.sim.primary.publish();
    await relogin(rig, a);
    expect(await rig.gw.orders.pruneClientIds()).toBeGreaterThanOrEqual(1);
    expect((await call(rig.gw, 'GET', '/api/v1/orders?client_order_id=old-1', undefined, bearer(a))).body.code).toBe(1420);
    const again = await place(order('SOL-USDC-PERP', 'buy', 1, 140, { client_order_id: 'old-1', time_in_force: 'IOC' }));
    expect(again.body.data.order_id).not.toBe(o.body.data.order_id);
  });
});
