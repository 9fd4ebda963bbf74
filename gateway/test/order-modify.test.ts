// PATCH /orders/{orderId} (reduce keeps priority, replace loses it and may trade) and
// POST /orders/mass-quote (Prime/Apex, up to 20 cancel-replace legs on one symbol, in leg order).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { call, bearer, summary, type Account, type Rig } from './harness';
import { until } from './fakes';
import { startOrderRig, account, post, getOrder, settled, spaced, type OrderRig } from './order-rig';

const UNI = (side: string, quantity: number, price: number, over: Record<string, unknown> = {}) =>
  ({ symbol: 'UNI-USDC-PERP', side, type: 'limit', quantity, price, time_in_force: 'GTC', ...over });

describe('modify', () => {
  let rig: OrderRig;
  let a: Account;
  let b: Account;
  let c: Account;
  beforeAll(async () => {
    rig = await startOrderRig();
    // leverage 2: the positions these tests build away from the mark (8.000) stay far below max leverage
    [a, b, c] = await Promise.all([account(rig, 'Apex', '1000000', { leverage: 2 }), account(rig, 'Apex', '1000000', { leverage: 2 }), account(rig, 'Apex', '1000000', { leverage: 2 })]);
  });
  afterAll(async () => {
    await rig?.close();
  });
  const patch = async (acct: Account, id: string, body: unknown) => {
    await spaced();
    return call(rig.gw, 'PATCH', `/api/v1/orders/${id}`, body, bearer(acct));
  };

  it('a quantity decrease keeps time priority (mode reduce, secret delta)', async () => {
    const A = (await post(rig, a, UNI('sell', 20, 8))).body.data.order_id as string;
    const B = (await post(rig, b, UNI('sell', 20, 8))).body.data.order_id as string;
    const r = await patch(a, A, { quantity: 15 });
    expect(r.status, r.raw).toBe(200);
    expect(r.body.data).toMatchObject({ order_id: A, quantity: 15, remaining_quantity: 15, status: 'NEW' });
    const op = rig.committee.applied[rig.committee.applied.length - 1]!;
    expect(op).toMatchObject({ kind: 'modify', pub: { order_id: A, mode: 'reduce', price_change: false }, values: [-50n, 0n] });
    await post(rig, c, UNI('buy', 15, 8, { time_in_force: 'IOC' }));
    await settled(rig);
    expect((await getOrder(rig, a, A)).status).toBe('FILLED'); // still first in line
    expect((await getOrder(rig, b, B)).status).toBe('NEW');
    await call(rig.gw, 'DELETE', `/api/v1/orders/${B}`, undefined, bearer(b));
  });

  it('a quantity increase loses priority (mode replace); reservations follow the new size', async () => {
    const A = (await post(rig, a, UNI('sell', 20, 8.5))).body.data.order_id as string;
    const B = (await post(rig, b, UNI('sell', 20, 8.5))).body.data.order_id as string;
    await settled(rig);
    const before = BigInt(Math.round(Number((await summary(rig as unknown as Rig, a.user_id)).reserved) * 1e6));
    const r = await patch(a, A, { quantity: 25 });
    expect(r.body.data).toMatchObject({ quantity: 25, remaining_quantity: 25, status: 'NEW' });
    expect(rig.committee.applied[rig.committee.applied.length - 1]!.pub).toMatchObject({ mode: 'replace', price_change: false });
    const after = BigInt(Math.round(Number((await summary(rig as unknown as Rig, a.user_id)).reserved) * 1e6));
    expect(after - before).toBe(21_250_000n + 8_500n); // 5 × 8.5 / 2 margin + 2 bps taker fee on 42.5
    await post(rig, c, UNI('buy', 20, 8.5, { time_in_force: 'IOC' }));
    await settled(rig);
    expect((await getOrder(rig, b, B)).status).toBe('FILLED'); // B is now ahead
    expect((await getOrder(rig, a, A)).status).toBe('NEW');
  });

  it('a price change re-enters as a taker and can trade at once', async () => {
    const bid = (await post(rig, c, UNI('buy', 15, 8.2))).body.data.order_id as string;
    const A = (await post(rig, a, UNI('sell', 20, 9))).body.data.order_id as string;
    await settled(rig);
    const r = await patch(a, A, { price: 8.2 });
    expect(r.status, r.raw).toBe(200);
    expect(r.body.data).toMatchObject({ price: 8.2, status: 'PARTIALLY_FILLED', filled_quantity: 15, remaining_quantity: 5, average_fill_price: 8.2 });
    expect(rig.committee.applied[rig.committee.applied.length - 1]).toMatchObject({ pub: { mode: 'replace', price_change: true }, values: [0n, 8200n] });
    expect((await getOrder(rig, c, bid)).status).toBe('FILLED');
  });

  it('refuses what it cannot do, with trade codes', async () => {
    const A = (await post(rig, a, UNI('sell', 20, 9.5))).body.data.order_id as string;
    const peg = (await post(rig, a, { symbol: 'UNI-USDC-PERP', side: 'sell', type: 'peg', peg_reference: 'ask', quantity: 20, time_in_force: 'GTC' })).body.data.order_id as string;
    await settled(rig);
    const cases: [string, Account, unknown, number, number, RegExp][] = [
      [A, a, {}, 400, 1400, /nothing to modify/],
      [A, a, { quantity: 20 }, 400, 1400, /nothing to modify/],
      [A, a, { side: 'buy' }, 400, 1400, /unknown field 'side'/],
      [A, a, { time_in_force: 'IOC' }, 400, 1405, /time_in_force cannot be modified/],
      [A, a, { expiry_time: '1' }, 400, 1405, /expiry_time cannot be modified/],
      [A, a, { quantity: 0 }, 400, 1403, /greater than 0/],
      [A, a, { price: 9.5001 }, 400, 1402, /tick_size/],
      [A, a, { quantity: 5 }, 400, 1404, /below the minimum/],
      [A, a, { quantity: 1_000_000 }, 400, 1403, /above max_qty/],
      [peg, a, { price: 9 }, 400, 1405, /price of a peg order cannot be modified/],
      [A, b, { quantity: 15 }, 404, 1420, /no order/],
    ];
    for (const [id, who, body, http, code, msg] of cases) {
      const r = await patch(who, id, body);
      expect([r.status, r.body.code], JSON.stringify(body)).toEqual([http, code]);
      expect(r.body.message).toMatch(msg);
    }
    // more size than free collateral covers
    const poor = await account(rig, 'Apex', '1000', { leverage: 2 });
    const P = (await post(rig, poor, UNI('sell', 20, 9.5))).body.data.order_id as string;
    const m = await patch(poor, P, { quantity: 300 });
    expect([m.status, m.body.code]).toEqual([400, 1410]);
    expect(m.body.message).toMatch(/more margin/);
    // a filled or cancelled order cannot be modified
    await spaced();
    await call(rig.gw, 'DELETE', `/api/v1/orders/${A}`, undefined, bearer(a));
    const dead = await patch(a, A, { quantity: 15 });
    expect([dead.status, dead.body.code]).toEqual([409, 1421]);
    // the peg's quantity can change
    expect((await patch(a, peg, { quantity: 25 })).body.data).toMatchObject({ quantity: 25, price: 8.001 }); // ask = mark + 1 tick
  });

  it('one modify at a time per order (409 ORDER_BUSY); a modify racing a fill that consumes the order reports it', async () => {
    const A = (await post(rig, a, { ...UNI('sell', 20, 8.2), symbol: 'APT-USDC-PERP' })).body.data.order_id as string;
    await settled(rig);
    rig.seq.hold = true;
    await spaced();
    const first = call(rig.gw, 'PATCH', `/api/v1/orders/${A}`, { quantity: 18 }, bearer(a));
    await until(() => rig.seq.heldCount === 1, 5_000, 'the first modify to reach the sequencer');
    const second = await patch(a, A, { quantity: 17 });
    expect([second.status, second.body.code]).toEqual([409, 1422]);
    rig.seq.release();
    expect((await first).body.data).toMatchObject({ quantity: 18 });
    // a taker sequenced before the modify fills 18 of 18: the reduce to 17 finds the order gone
    rig.seq.hold = true;
    const taker = post(rig, c, UNI('buy', 18, 8.2, { time_in_force: 'IOC', symbol: 'APT-USDC-PERP' }));
    await until(() => rig.seq.heldCount === 1, 5_000, 'the taker to reach the sequencer');
    const late = call(rig.gw, 'PATCH', `/api/v1/orders/${A}`, { quantity: 17 }, bearer(a));
    await until(() => rig.seq.heldCount === 2, 5_000, 'the modify to reach the sequencer');
    rig.seq.release();
    await taker;
    const l = await late;
    expect([l.status, l.body.code]).toEqual([409, 1421]);
    expect(await getOrder(rig, a, A)).toMatchObject({ status: 'FILLED', quantity: 18, filled_quantity: 18 });
  });
});

describe('mass quote', () => {
  let rig: OrderRig;
  let mm: Account;
  let taker: Account;
  beforeAll(async () => {
    rig = await startOrderRig();
    [mm, taker] = await Promise.all([account(rig, 'Prime', '200000'), account(rig, 'Apex')]);
  });
  afterAll(async () => {
    await rig?.close();
  });
  const SUI = (side: string, quantity: number, price: number, client_order_id?: string) =>
    ({ symbol: 'SUI-USDC-PERP', side, type: 'limit', quantity, price, time_in_force: 'GTC', ...(client_order_id ? { client_order_id } : {}) });
  const mq = async (acct: Account, body: unknown) => {
    await spaced();
    return call(rig.gw, 'POST', '/api/v1/orders/mass-quote', body, bearer(acct));
  };

  it('quotes both sides, then cancel-replaces them in one batch, sequenced leg by leg', async () => {
    const q1 = await mq(mm, { legs: [{ place: SUI('buy', 100, 2.99, 'bid-1') }, { place: SUI('sell', 100, 3.01, 'ask-1') }] });
    expect(q1.status, q1.raw).toBe(200);
    expect(q1.body.data.symbol).toBe('SUI-USDC-PERP');
    expect(q1.body.data.legs).toEqual([
      { place: { code: 0, order_id: expect.any(String), client_order_id: 'bid-1', status: 'NEW' } },
      { place: { code: 0, order_id: expect.any(String), client_order_id: 'ask-1', status: 'NEW' } },
    ]);
    const askId = q1.body.data.legs[1].place.order_id as string;
    await settled(rig);
    const n = rig.seq.journal.length;
    const q2 = await mq(mm, { legs: [
      { cancel_client_order_id: 'bid-1', place: SUI('buy', 100, 2.995, 'bid-2') },
      { cancel_order_id: askId, place: SUI('sell', 100, 3.005, 'ask-2') },
    ] });
    expect(q2.status, q2.raw).toBe(200);
    expect(q2.body.data.legs[0]).toMatchObject({ cancel: { code: 0, status: 'CANCELLED', cancel_reason: 'USER_REQUESTED' }, place: { code: 0, client_order_id: 'bid-2', status: 'NEW' } });
    expect(q2.body.data.legs[1]).toMatchObject({ cancel: { code: 0, order_id: askId, status: 'CANCELLED' }, place: { code: 0, client_order_id: 'ask-2' } });
    expect(rig.seq.journal.slice(n).map((j) => j.op.kind)).toEqual(['cancel', 'place', 'cancel', 'place']);
    const got = await call(rig.gw, 'GET', '/api/v1/orders?client_order_id=bid-1', undefined, bearer(mm));
    expect(got.body.data).toMatchObject({ status: 'CANCELLED', cancel_reason: 'USER_REQUESTED' });
    // the quotes trade like any order
    await post(rig, taker, SUI('sell', 40, 2.99, undefined));
    await settled(rig);
    const bid2 = await call(rig.gw, 'GET', '/api/v1/orders?client_order_id=bid-2', undefined, bearer(mm));
    expect(bid2.body.data).toMatchObject({ status: 'PARTIALLY_FILLED', filled_quantity: 40, average_fill_price: 2.995 });
  });

  it('reports each leg: unknown cancel, duplicate client id in the batch, a failed risk check, a replayed client id', async () => {
    const n = rig.seq.journal.length;
    const r = await mq(mm, { legs: [
      { cancel_order_id: '12345' },
      { place: SUI('buy', 100, 2.9, 'dup') },
      { place: SUI('buy', 100, 2.9, 'dup') },
      { place: SUI('buy', 1_900_000, 2.9, 'huge') },
      { place: SUI('sell', 100, 3.1, 'ask-2') },
    ] });
    expect(r.status, r.raw).toBe(200);
    const legs = r.body.data.legs;
    expect(legs[0].cancel).toMatchObject({ code: 1420, error: 'ORDER_NOT_FOUND' });
    expect(legs[1].place).toMatchObject({ code: 0, client_order_id: 'dup', status: 'NEW' });
    expect(legs[2].place).toMatchObject({ code: 1414, error: 'DUPLICATE_CLIENT_ORDER_ID' });
    expect(legs[3].place).toMatchObject({ code: 1410, error: 'MARGIN_INSUFFICIENT' });
    expect(legs[4].place).toMatchObject({ code: 0, replay: true, client_order_id: 'ask-2', status: 'NEW' });
    expect(rig.seq.journal.slice(n).map((j) => j.op.kind)).toEqual(['place']);
  });

  it('a place leg without client_order_id answers it null (every answer carrying an order has the key: issue 26 item 10)', async () => {
    const r = await mq(mm, { legs: [{ place: SUI('buy', 100, 2.8) }] });
    expect(r.status, r.raw).toBe(200);
    expect(r.body.data.legs).toEqual([{ place: { code: 0, order_id: expect.any(String), client_order_id: null, status: 'NEW' } }]);
    await settled(rig);
  });

  it('refuses malformed batches whole, and tiers below Prime', async () => {
    const leg = { place: SUI('buy', 100, 2.9) };
    const cases: [unknown, number, number, RegExp][] = [
      [{ legs: [] }, 400, 1400, /1 to 20/],
      [{ legs: Array.from({ length: 21 }, () => leg) }, 400, 1400, /1 to 20/],
      [{ legs: [leg], extra: 1 }, 400, 1400, /unknown field 'extra'/],
      [{ legs: [{}] }, 400, 1400, /needs a cancel, a place, or both/],
      [{ legs: [{ cancel_order_id: '1', cancel_client_order_id: 'x' }] }, 400, 1400, /not both/],
      [{ legs: [leg, { place: { ...SUI('buy', 1, 150), symbol: 'SOL-USDC-PERP' } }] }, 400, 1400, /one symbol/],
      [{ legs: [{ place: SUI('buy', 100, 2.90001) }] }, 400, 1402, /legs\[0\]\.place: price 2.90001/],
    ];
    const n = rig.seq.journal.length;
    for (const [body, http, code, msg] of cases) {
      const r = await mq(mm, body);
      expect([r.status, r.body.code], JSON.stringify(body).slice(0, 80)).toEqual([http, code]);
      expect(r.body.message).toMatch(msg);
    }
    expect(rig.seq.journal.length).toBe(n);
    const core = await account(rig, 'Advanced', '100000');
    const r = await mq(core, { legs: [leg] });
    expect([r.status, r.body.error]).toEqual([403, 'tier_not_eligible']);
  });
});
