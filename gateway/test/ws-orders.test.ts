// Encrypted trading ops against a committee stand-in that runs the real matching (order-rig.ts): the
// orders channel carries `modified`, time-in-force cancellations (IOC_REMAINDER, FOK, GTT_EXPIRED)
// and self-trade prevention exactly as the REST state says.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startOrderRig, account, settled, getOrder, spaced, type OrderRig } from './order-rig';
import { summary, type Account, type Rig } from './harness';
import { until } from './fakes';
import { RawWs, orderPushes, ETH } from './ws-helpers';

const SOL = 16;
let rig: OrderRig;
let a: Account;
let b: Account;
let ca: RawWs;
let cb: RawWs;

const sol = (over: Record<string, unknown>) => ({
  place: { symbol: 'SOL-USDC-PERP', side: 'sell', type: 'limit', quantity: '1', price: '150', time_in_force: 'GTC', ...over } as any,
});

async function ready(acct: Account): Promise<RawWs> {
  const c = await RawWs.open(rig.gw.urls.wsUrl);
  expect((await c.login(acct.token)).f.code).toBe(0);
  expect((await c.setup()).f.code).toBe(0);
  expect((await c.request('subscribe', { channel: 'orders' })).f.code).toBe(0);
  return c;
}

async function trade(c: RawWs, req: any, symbolId = SOL) {
  await spaced();
  return c.trade(req, symbolId);
}

/** The orders-channel events of one order, in order. */
const eventsOf = (c: RawWs, orderId: string) => orderPushes(c).filter((p) => p.u?.order_id === orderId).map((p) => p.u);

beforeAll(async () => {
  rig = await startOrderRig();
  [a, b] = await Promise.all([account(rig), account(rig)]);
  [ca, cb] = await Promise.all([ready(a), ready(b)]);
});
afterAll(async () => {
  await Promise.all([ca?.close(), cb?.close()]);
  await rig?.close();
});

describe('orders channel with real matching', () => {
  it('order.modify: ack, then a `modified` event with the new price; the REST order agrees', async () => {
    const m = await trade(ca, sol({ price: '151', quantity: '2', client_order_id: 'm-1' }));
    expect(m.code, m.message).toBe(0);
    await settled(rig);
    const ack = await trade(ca, { modify: { order_id: m.order_id, price: '152.5' } });
    expect(ack).toMatchObject({ code: 0, order_id: m.order_id });
    await settled(rig);
    await until(() => eventsOf(ca, m.order_id).find((u) => u.message_type === 'modified'), 5_000, 'modified');
    expect(eventsOf(ca, m.order_id).find((u) => u.message_type === 'modified')).toMatchObject({ price: '152.5', quantity: '2', status: 'NEW' });
    expect(await getOrder(rig, a, m.order_id)).toMatchObject({ price: 152.5, status: 'NEW' });
  });

  it('IOC remainder and GTT expiry are reported with their cancel reasons, an unfillable FOK as rejected', async () => {
    const rest = await trade(ca, sol({ price: '149', quantity: '1', client_order_id: 'ioc-maker' }));
    await settled(rig);
    const ioc = await trade(cb, sol({ side: 'buy', price: '149', quantity: '3', time_in_force: 'IOC', client_order_id: 'ioc-1' }));
    expect(ioc.code, ioc.message).toBe(0);
    const fok = await trade(cb, sol({ side: 'buy', price: '149.5', quantity: '50', time_in_force: 'FOK', client_order_id: 'fok-1' }));
    const gtt = await trade(cb, sol({ side: 'buy', price: '140', quantity: '1', time_in_force: 'GTT', expiry_time: ((BigInt(Date.now()) + 300n) * 1_000_000n).toString(), client_order_id: 'gtt-1' }));
    expect(gtt.code, gtt.message).toBe(0);
    await settled(rig);
    await until(() => eventsOf(cb, ioc.order_id).some((u) => u.status === 'CANCELLED'), 5_000, 'IOC remainder');
    expect(eventsOf(cb, ioc.order_id).map((u) => u.message_type)).toEqual(['partial_fill', 'cancelled']);
    expect(eventsOf(cb, ioc.order_id).at(-1)).toMatchObject({ cancel_reason: 'IOC_REMAINDER', filled_quantity: '1', remaining_quantity: '2' });
    expect(eventsOf(ca, rest.order_id).at(-1)).toMatchObject({ message_type: 'filled' });
    // FOK without the liquidity: acknowledged (it passed the pre-trade checks), then rejected by
    // matching with INSUFFICIENT_LIQUIDITY, never filled; REST shows the same (docs/orders.md)
    expect(fok.code, fok.message).toBe(0);
    await until(() => eventsOf(cb, fok.order_id).some((u) => u.status !== 'NEW'), 5_000, 'FOK outcome');
    expect(eventsOf(cb, fok.order_id).map((u) => u.message_type)).toEqual(['rejected']);
    expect(eventsOf(cb, fok.order_id).at(-1)).toMatchObject({ status: 'REJECTED', reject_reason: 'INSUFFICIENT_LIQUIDITY', filled_quantity: '0' });
    expect(await getOrder(rig, b, fok.order_id)).toMatchObject({ status: 'REJECTED', reject_reason: 'INSUFFICIENT_LIQUIDITY', cancel_reason: null });
    await until(() => eventsOf(cb, gtt.order_id).some((u) => u.message_type === 'cancelled'), 10_000, 'GTT expiry');
    expect(eventsOf(cb, gtt.order_id).at(-1)).toMatchObject({ cancel_reason: 'GTT_EXPIRED', status: 'CANCELLED' });
  });

  it('last_fill_qty / last_fill_price are the fill of the event: set on fill events only, never repeated by modified, cancelled or snapshot frames', async () => {
    const eth = (over: Record<string, unknown>) => ({
      place: { symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: '2', price: '3010', time_in_force: 'GTC', ...over } as any,
    });
    const m = await trade(ca, eth({ client_order_id: 'lf-maker' }), ETH);
    expect(m.code, m.message).toBe(0);
    await settled(rig);
    const t = await trade(cb, eth({ side: 'buy', quantity: '0.5', time_in_force: 'IOC' }), ETH);
    expect(t.code, t.message).toBe(0);
    await settled(rig);
    await until(() => eventsOf(ca, m.order_id).some((u) => u.message_type === 'partial_fill'), 5_000, 'partial fill');
    expect((await trade(ca, { modify: { order_id: m.order_id, quantity: '1.5' } }, ETH)).code).toBe(0);
    await settled(rig);
    await until(() => eventsOf(ca, m.order_id).some((u) => u.message_type === 'modified'), 5_000, 'modified');

    // a fresh subscription's snapshot holds the partially filled order, but reports no fill
    const fresh = await ready(a);
    try {
      await fresh.waitFor((r) => r.f.channel === 'orders' && r.f.snapshot_complete === true, 'snapshot');
      const snap = orderPushes(fresh).find((p) => p.type === 'snapshot' && p.u?.order_id === m.order_id)!.u;
      expect(snap).toMatchObject({ message_type: 'partial_fill', status: 'PARTIALLY_FILLED', filled_quantity: '0.5', quantity: '1.5' });
      expect(snap.last_fill_qty).toBeUndefined();
      expect(snap.last_fill_price).toBeUndefined();
    } finally {
      await fresh.close();
    }

    expect((await trade(ca, { cancel: { order_id: m.order_id } }, ETH)).code).toBe(0);
    await settled(rig);
    await until(() => eventsOf(ca, m.order_id).some((u) => u.message_type === 'cancelled'), 5_000, 'cancelled');
    const events = eventsOf(ca, m.order_id);
    expect(events.map((u) => u.message_type)).toEqual(['open', 'partial_fill', 'modified', 'cancelled']);
    expect(events[1]).toMatchObject({ last_fill_qty: '0.5', last_fill_price: '3010' });
    for (const u of [events[0], events[2], events[3]]) {
      expect(u.last_fill_qty, u.message_type).toBeUndefined(); // protobuf: absent = the spec's null
      expect(u.last_fill_price, u.message_type).toBeUndefined();
    }
    // summing the events' fills gives the filled quantity: no fill is counted twice
    const summed = events.reduce((s, u) => s + Number(u.last_fill_qty ?? 0), 0);
    expect(summed).toBe(Number(events.at(-1).filled_quantity));
    // REST answers no event: GET keeps the order's most recent fill (docs/orders.md)
    expect(await getOrder(rig, a, m.order_id)).toMatchObject({ status: 'CANCELLED', last_fill_qty: 0.5, last_fill_price: 3010 });
  });

  it('self-trade prevention is reported as a cancellation with SELF_TRADE_PREVENTION', async () => {
    const mine = await trade(ca, sol({ price: '148', quantity: '1', client_order_id: 'stp-maker' }));
    await settled(rig);
    const cross = await trade(ca, sol({ side: 'buy', price: '148', quantity: '1', client_order_id: 'stp-taker' }));
    expect(cross.code, cross.message).toBe(0);
    await settled(rig);
    await until(() => [mine.order_id, cross.order_id].some((id) => eventsOf(ca, id).some((u) => u.cancel_reason === 'SELF_TRADE_PREVENTION')), 5_000, 'STP');
    const reasons = [mine.order_id, cross.order_id].flatMap((id) => eventsOf(ca, id).map((u) => u.cancel_reason)).filter(Boolean);
    expect(reasons).toContain('SELF_TRADE_PREVENTION');
    expect(eventsOf(ca, mine.order_id).every((u) => u.filled_quantity === '0')).toBe(true);
  });

  it('order.place carries a per-order leverage: above max_leverage it is rejected LEVERAGE_EXCEEDED (1406), within it reserves at that leverage', async () => {
    const over = await trade(cb, sol({ side: 'buy', price: '140', quantity: '1', client_order_id: 'lev-11', leverage: 11 }));
    expect(over).toMatchObject({ code: 1406, reject_reason: 'LEVERAGE_EXCEEDED', client_order_id: 'lev-11' });
    await until(() => orderPushes(cb).some((p) => p.u?.client_order_id === 'lev-11'), 5_000, 'rejected event');
    expect(orderPushes(cb).find((p) => p.u?.client_order_id === 'lev-11')!.u).toMatchObject({ message_type: 'rejected', reject_reason: 'LEVERAGE_EXCEEDED', status: 'REJECTED' });
    const before = Number((await summary(rig as unknown as Rig, b.user_id)).reserved);
    const ok = await trade(cb, sol({ side: 'buy', price: '140', quantity: '1', client_order_id: 'lev-2', leverage: 2 }));
    expect(ok.code, ok.message).toBe(0);
    const after = Number((await summary(rig as unknown as Rig, b.user_id)).reserved);
    expect(after - before).toBeCloseTo(70.028, 6); // 140 / 2 + the 0.02% taker fee
  });
});
