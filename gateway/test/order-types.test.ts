// Every order type and time in force through REST, matched by the real algorithm on the values the
// committee stand-in reconstructs from the gateway's shares: market (with and without cap), FOK,
// aon, min_fill_size, GTT expiry, peg from the oracle, self-trade prevention; and the order object's
// fields after every transition.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { call, bearer, summary, type Account, type Rig } from './harness';
import { until } from './fakes';
import { startOrderRig, account, post, getOrder, settled, times, spaced, type OrderRig } from './order-rig';

describe('order types and time in force', () => {
  let rig: OrderRig;
  let m: Account;
  let t: Account;
  beforeAll(async () => {
    rig = await startOrderRig();
    [m, t] = await Promise.all([account(rig), account(rig)]);
  });
  afterAll(async () => {
    await rig?.close();
  });
  // The journal is shared by the whole file and the gateway's own timers append to it (the re-pegger
  // re-prices a resting peg of an earlier test when its reference moves), so an op is found by its
  // order's id, never as the journal's last entry: a re-peg once landed between a placement and its check.
  const placement = (orderId: string) => {
    const ops = rig.seq.journal.filter((j) => j.op.kind === 'place' && j.op.pub.order_id === orderId);
    expect(ops, `placements journaled for ${orderId}`).toHaveLength(1);
    return ops[0]!.op;
  };

  it("market without a cap sweeps the book at the makers' prices up to the implicit cap, the mark plus ETH's band; the remainder is IOC_REMAINDER", async () => {
    const s1 = await post(rig, m, { symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: 0.1, price: 3000, time_in_force: 'GTC' });
    const s2 = await post(rig, m, { symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: 0.1, price: 3001, time_in_force: 'GTC' });
    const s3 = await post(rig, m, { symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: 0.1, price: 3100, time_in_force: 'GTC' }); // above 3000 × 1.025
    const r = await post(rig, t, { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'market', quantity: 0.3, time_in_force: 'IOC' });
    expect(r.status, r.raw).toBe(200);
    // every market order carries a cap to the committee now, so the public flag is always true (docs/leakage.md)
    expect(placement(r.body.data.order_id).pub).toEqual({ order_id: r.body.data.order_id, side: 'buy', type: 'market', time_in_force: 'IOC', market_cap: true });
    await settled(rig);
    expect(await getOrder(rig, t, r.body.data.order_id)).toMatchObject({
      type: 'market', price: null, status: 'CANCELLED', cancel_reason: 'IOC_REMAINDER', filled_quantity: 0.2, remaining_quantity: 0.1,
      average_fill_price: 3000.5, last_fill_qty: 0.1, last_fill_price: 3001, reject_reason: null,
    });
    expect((await getOrder(rig, m, s1.body.data.order_id)).status).toBe('FILLED');
    expect((await getOrder(rig, m, s2.body.data.order_id)).status).toBe('FILLED');
    expect((await getOrder(rig, m, s3.body.data.order_id)).status).toBe('NEW');
    expect((await summary(rig as unknown as Rig, t.user_id)).reserved).toBe('0');
    await call(rig.gw, 'DELETE', `/api/v1/orders/${s3.body.data.order_id}`, undefined, bearer(m));
  });

  it('market with a price cap stops at the cap', async () => {
    await post(rig, m, { symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: 0.1, price: 3000, time_in_force: 'GTC' });
    const far = await post(rig, m, { symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: 0.1, price: 3005, time_in_force: 'GTC' });
    const r = await post(rig, t, { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'market', quantity: 0.2, price: 3002, time_in_force: 'IOC' });
    expect(placement(r.body.data.order_id).pub).toMatchObject({ type: 'market', market_cap: true });
    await settled(rig);
    expect(await getOrder(rig, t, r.body.data.order_id)).toMatchObject({ price: 3002, filled_quantity: 0.1, status: 'CANCELLED', cancel_reason: 'IOC_REMAINDER' });
    expect((await getOrder(rig, m, far.body.data.order_id)).status).toBe('NEW');
    await call(rig.gw, 'DELETE', `/api/v1/orders/${far.body.data.order_id}`, undefined, bearer(m));
  });

  it('FOK fills whole or not at all: unfillable is REJECTED with INSUFFICIENT_LIQUIDITY (a rejected event), reservation released', async () => {
    const events: { message_type: string; order: { order_id: string } }[] = [];
    rig.gw.events.on('order', (e) => events.push(e));
    const mk = await post(rig, m, { symbol: 'SOL-USDC-PERP', side: 'sell', type: 'limit', quantity: 1, price: 150, time_in_force: 'GTC' });
    const no = await post(rig, t, { symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: 2, price: 150, time_in_force: 'FOK' });
    await settled(rig);
    expect(await getOrder(rig, t, no.body.data.order_id)).toMatchObject({
      status: 'REJECTED', cancel_reason: null, reject_reason: 'INSUFFICIENT_LIQUIDITY', filled_quantity: 0, remaining_quantity: 2, average_fill_price: null,
    });
    expect(events.filter((e) => e.order.order_id === no.body.data.order_id).map((e) => e.message_type)).toEqual(['rejected']);
    expect(await getOrder(rig, m, mk.body.data.order_id)).toMatchObject({ status: 'NEW', filled_quantity: 0 });
    const yes = await post(rig, t, { symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: 1, price: 150, time_in_force: 'FOK' });
    await settled(rig);
    expect(await getOrder(rig, t, yes.body.data.order_id)).toMatchObject({ status: 'FILLED', filled_quantity: 1 });
    // a market FOK on an empty side
    const mf = await post(rig, t, { symbol: 'SOL-USDC-PERP', side: 'buy', type: 'market', quantity: 1, time_in_force: 'FOK' });
    await settled(rig);
    expect(await getOrder(rig, t, mf.body.data.order_id)).toMatchObject({ status: 'REJECTED', reject_reason: 'INSUFFICIENT_LIQUIDITY' });
    expect((await summary(rig as unknown as Rig, t.user_id)).reserved).toBe('0');
  });

  it('aon and min_fill_size on IOC: all or nothing, and a minimum per execution', async () => {
    const mk = await post(rig, m, { symbol: 'BNB-USDC-PERP', side: 'sell', type: 'limit', quantity: 0.5, price: 600, time_in_force: 'GTC' });
    const aon = await post(rig, t, { symbol: 'BNB-USDC-PERP', side: 'buy', type: 'limit', quantity: 1, price: 600, time_in_force: 'IOC', aon: true });
    expect(placement(aon.body.data.order_id).pub).toMatchObject({ aon: true });
    const big = await post(rig, t, { symbol: 'BNB-USDC-PERP', side: 'buy', type: 'limit', quantity: 1, price: 600, time_in_force: 'IOC', min_fill_size: 0.6 });
    expect(placement(big.body.data.order_id).pub).toMatchObject({ min_fill: true });
    expect(rig.committee.inputs.get(big.body.data.order_id)![3]).toBe(60n); // min_fill_size in steps, secret
    await settled(rig);
    expect(await getOrder(rig, t, aon.body.data.order_id)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'IOC_REMAINDER', filled_quantity: 0 });
    expect(await getOrder(rig, t, big.body.data.order_id)).toMatchObject({ status: 'CANCELLED', filled_quantity: 0 });
    const ok = await post(rig, t, { symbol: 'BNB-USDC-PERP', side: 'buy', type: 'limit', quantity: 1, price: 600, time_in_force: 'IOC', min_fill_size: 0.4 });
    await settled(rig);
    expect(await getOrder(rig, t, ok.body.data.order_id)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'IOC_REMAINDER', filled_quantity: 0.5, remaining_quantity: 0.5 });
    expect((await getOrder(rig, m, mk.body.data.order_id)).status).toBe('FILLED');
    // per execution: a 0.2 maker (below 0.3) is passed over in place, the 0.5 behind it fills
    const small = await post(rig, m, { symbol: 'BNB-USDC-PERP', side: 'sell', type: 'limit', quantity: 0.2, price: 600, time_in_force: 'GTC' });
    const large = await post(rig, m, { symbol: 'BNB-USDC-PERP', side: 'sell', type: 'limit', quantity: 0.5, price: 600, time_in_force: 'GTC' });
    const per = await post(rig, t, { symbol: 'BNB-USDC-PERP', side: 'buy', type: 'limit', quantity: 1, price: 600, time_in_force: 'IOC', min_fill_size: 0.3 });
    await settled(rig);
    expect(await getOrder(rig, t, per.body.data.order_id)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'IOC_REMAINDER', filled_quantity: 0.5 });
    expect(await getOrder(rig, m, small.body.data.order_id)).toMatchObject({ status: 'NEW', filled_quantity: 0 });
    expect((await getOrder(rig, m, large.body.data.order_id)).status).toBe('FILLED');
    await call(rig.gw, 'DELETE', `/api/v1/orders/${small.body.data.order_id}`, undefined, bearer(m));
  });

  it('GTT: a quiet book expires the order by an expire op at its time (GTT_EXPIRED), freeing its margin', async () => {
    const before = (await summary(rig as unknown as Rig, t.user_id)).reserved;
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    // 2 s of wall time: the order must still be NEW once settled (0.4 s failed at a load average
    // of 22 with two test files side by side, 2026-12-02)
    const expiresNs = nowNs + 2_000_000_000n;
    const r = await post(rig, t, { symbol: 'LINK-USDC-PERP', side: 'buy', type: 'limit', quantity: 10, price: 15, time_in_force: 'GTT', expiry_time: expiresNs.toString() });
    expect(r.status, r.raw).toBe(200);
    expect(placement(r.body.data.order_id).pub).toMatchObject({ time_in_force: 'GTT', expires_at_ns: expiresNs.toString() });
    await settled(rig);
    expect((await getOrder(rig, t, r.body.data.order_id)).status).toBe('NEW');
    expect((await summary(rig as unknown as Rig, t.user_id)).reserved).not.toBe(before);
    const done = await until(async () => {
      const o = await getOrder(rig, t, r.body.data.order_id);
      return o.status === 'CANCELLED' ? o : null;
    }, 10_000, 'the GTT order to expire');
    expect(done).toMatchObject({ cancel_reason: 'GTT_EXPIRED', remaining_quantity: 10 });
    expect(rig.seq.journal.some((j) => j.op.kind === 'expire' && j.op.symbol === 'LINK-USDC-PERP')).toBe(true);
    expect((await summary(rig as unknown as Rig, t.user_id)).reserved).toBe(before);
    // a GTT expiry given as a JSON number (nearest double) is accepted too
    const n = await post(rig, t, { symbol: 'LINK-USDC-PERP', side: 'buy', type: 'limit', quantity: 10, price: 15, time_in_force: 'GTT', expiry_time: Number(nowNs + 3_600_000_000_000n) });
    expect(n.status, n.raw).toBe(200);
    await call(rig.gw, 'DELETE', `/api/v1/orders/${n.body.data.order_id}`, undefined, bearer(t));
  });

  it('peg orders take the oracle reference (mid, bid, ask) as a public price and trade as limits', async () => {
    rig.sim.market.set('AVAX-USDC-PERP', 30_000n); // 30.000
    rig.sim.primary.publish();
    const bid = await post(rig, m, { symbol: 'AVAX-USDC-PERP', side: 'buy', type: 'peg', peg_reference: 'bid', quantity: 10, time_in_force: 'GTC' });
    expect(bid.status, bid.raw).toBe(200);
    expect(placement(bid.body.data.order_id).pub).toMatchObject({ type: 'peg', peg_price_ticks: '29994' }); // bid = mid - 2 bps, floored to the tick
    expect(rig.committee.inputs.get(bid.body.data.order_id)![0]).toBe(0n); // no secret price for a peg
    const ask = await post(rig, m, { symbol: 'AVAX-USDC-PERP', side: 'sell', type: 'peg', peg_reference: 'ask', quantity: 10, time_in_force: 'GTC' });
    expect(placement(ask.body.data.order_id).pub).toMatchObject({ peg_price_ticks: '30006' });
    const mid = await post(rig, m, { symbol: 'AVAX-USDC-PERP', side: 'sell', type: 'peg', peg_reference: 'mid', quantity: 10, time_in_force: 'IOC' });
    await settled(rig);
    expect(await getOrder(rig, m, bid.body.data.order_id)).toMatchObject({ type: 'peg', price: 29.994, status: 'NEW' });
    expect(await getOrder(rig, m, ask.body.data.order_id)).toMatchObject({ price: 30.006, status: 'NEW' });
    expect(await getOrder(rig, m, mid.body.data.order_id)).toMatchObject({ price: 30, status: 'CANCELLED', cancel_reason: 'IOC_REMAINDER' });
    // a limit sell at 29.99 crosses the pegged bid at its price
    const hit = await post(rig, t, { symbol: 'AVAX-USDC-PERP', side: 'sell', type: 'limit', quantity: 4, price: 29.99, time_in_force: 'IOC' });
    await settled(rig);
    expect(await getOrder(rig, t, hit.body.data.order_id)).toMatchObject({ status: 'FILLED', filled_quantity: 4, average_fill_price: 29.994 });
    expect(await getOrder(rig, m, bid.body.data.order_id)).toMatchObject({ status: 'PARTIALLY_FILLED', remaining_quantity: 6 });
    // the peg was priced from the moved reference (the resting pegs are re-pegged meanwhile: find the placement by id)
    rig.sim.market.set('AVAX-USDC-PERP', 31_000n);
    rig.sim.primary.publish();
    const moved = await post(rig, m, { symbol: 'AVAX-USDC-PERP', side: 'buy', type: 'peg', peg_reference: 'mid', quantity: 10, time_in_force: 'IOC' });
    expect(placement(moved.body.data.order_id).pub).toMatchObject({ peg_price_ticks: '31000' });
    // a peg below the minimum notional is refused once priced
    const small = await post(rig, m, { symbol: 'AVAX-USDC-PERP', side: 'buy', type: 'peg', peg_reference: 'mid', quantity: 1, time_in_force: 'GTC' });
    expect([small.status, small.body.code]).toEqual([400, 1404]);
    // its resting pegs leave with it: else the re-pegger keeps re-pricing them into the journal the
    // later tests read (a re-peg is a timer's op, not one of theirs)
    for (const o of [bid, ask]) await call(rig.gw, 'DELETE', `/api/v1/orders/${o.body.data.order_id}`, undefined, bearer(m));
    await settled(rig);
    await until(() => rig.gw.repegger.followed === 0, 10_000, 'no resting peg left to re-price');
  });

  it('self-trade prevention: the owner id travels as a secret; the resting order of the same account is cancelled', async () => {
    const s = await post(rig, m, { symbol: 'XRP-USDC-PERP', side: 'sell', type: 'limit', quantity: 300, price: 0.6, time_in_force: 'GTC' });
    const other = await post(rig, t, { symbol: 'XRP-USDC-PERP', side: 'sell', type: 'limit', quantity: 200, price: 0.6, time_in_force: 'GTC' });
    const b = await post(rig, m, { symbol: 'XRP-USDC-PERP', side: 'buy', type: 'limit', quantity: 250, price: 0.6, time_in_force: 'GTC' });
    const op = placement(b.body.data.order_id);
    expect(Object.keys(op.pub).sort()).toEqual(['order_id', 'side', 'time_in_force', 'type']); // no owner in the clear
    const mine = rig.committee.inputs.get(s.body.data.order_id)![2]!;
    expect(mine).toBeGreaterThan(0n);
    expect(rig.committee.inputs.get(b.body.data.order_id)![2]).toBe(mine);
    expect(rig.committee.inputs.get(other.body.data.order_id)![2]).not.toBe(mine);
    await settled(rig);
    expect(await getOrder(rig, m, s.body.data.order_id)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'SELF_TRADE_PREVENTION', filled_quantity: 0 });
    expect(await getOrder(rig, t, other.body.data.order_id)).toMatchObject({ status: 'FILLED' });
    expect(await getOrder(rig, m, b.body.data.order_id)).toMatchObject({ status: 'PARTIALLY_FILLED', filled_quantity: 200, remaining_quantity: 50 });
  });

  it('the order object after every transition: NEW, PARTIALLY_FILLED, modified, FILLED; CANCELLED; REJECTED', async () => {
    const mk = await post(rig, m, { symbol: 'DOT-USDC-PERP', side: 'sell', type: 'limit', quantity: 100, price: 6, time_in_force: 'GTC', client_order_id: 'fields-1' });
    const id = mk.body.data.order_id as string;
    await settled(rig);
    const t0 = await times(rig, m, id);
    expect(await getOrder(rig, m, id)).toEqual({
      order_id: id, client_order_id: 'fields-1', symbol: 'DOT-USDC-PERP', side: 'sell', type: 'limit', time_in_force: 'GTC', price: 6, quantity: 100,
      filled_quantity: 0, remaining_quantity: 100, average_fill_price: null, last_fill_qty: null, last_fill_price: null, status: 'NEW',
      in_time_ns: expect.any(Number), out_time_ns: expect.any(Number), cancel_reason: null, reject_reason: null,
    });
    expect(t0.outNs).toBeGreaterThanOrEqual(t0.inNs);

    await post(rig, t, { symbol: 'DOT-USDC-PERP', side: 'buy', type: 'limit', quantity: 30, price: 6, time_in_force: 'IOC' });
    await settled(rig);
    const t1 = await times(rig, m, id);
    expect(await getOrder(rig, m, id)).toMatchObject({ status: 'PARTIALLY_FILLED', filled_quantity: 30, remaining_quantity: 70, average_fill_price: 6, last_fill_qty: 30, last_fill_price: 6 });
    expect(t1.inNs).toBe(t0.inNs);
    expect(t1.outNs).toBeGreaterThan(t0.outNs);

    await spaced();
    const mod = await call(rig.gw, 'PATCH', `/api/v1/orders/${id}`, { quantity: 80 }, bearer(m));
    expect(mod.status, mod.raw).toBe(200);
    expect(mod.body.data).toMatchObject({ status: 'PARTIALLY_FILLED', quantity: 80, filled_quantity: 30, remaining_quantity: 50, last_fill_qty: 30 });
    const t2 = await times(rig, m, id);
    expect(t2.outNs).toBeGreaterThan(t1.outNs);

    await post(rig, t, { symbol: 'DOT-USDC-PERP', side: 'buy', type: 'limit', quantity: 60, price: 6.1, time_in_force: 'IOC' });
    await settled(rig);
    const t3 = await times(rig, m, id);
    expect(await getOrder(rig, m, id)).toMatchObject({ status: 'FILLED', quantity: 80, filled_quantity: 80, remaining_quantity: 0, average_fill_price: 6, last_fill_qty: 50 });
    expect(t3.outNs).toBeGreaterThan(t2.outNs);

    const c = await post(rig, m, { symbol: 'DOT-USDC-PERP', side: 'sell', type: 'limit', quantity: 20, price: 7, time_in_force: 'GTC' });
    await spaced();
    const del = await call(rig.gw, 'DELETE', `/api/v1/orders/${c.body.data.order_id}`, undefined, bearer(m));
    expect(del.body.data).toMatchObject({ status: 'CANCELLED', cancel_reason: 'USER_REQUESTED', filled_quantity: 0, remaining_quantity: 20, reject_reason: null });

    // REJECTED: the sequencer refuses the placement; the order is found by its client id
    rig.seq.nackNext = (op) => op.kind === 'place';
    const rej = await post(rig, m, { symbol: 'DOT-USDC-PERP', side: 'sell', type: 'limit', quantity: 20, price: 7, time_in_force: 'GTC', client_order_id: 'fields-rej' });
    expect([rej.status, rej.body.code]).toEqual([503, 1501]);
    const got = await call(rig.gw, 'GET', '/api/v1/orders?client_order_id=fields-rej', undefined, bearer(m));
    expect(got.body.data).toMatchObject({ status: 'REJECTED', reject_reason: 'RISK_CHECK_FAILED', filled_quantity: 0, cancel_reason: null });
  });

  it('system cancels record their reason (CANCEL_ON_DISCONNECT, LIQUIDATION, SYSTEM_CANCEL)', async () => {
    for (const reason of ['CANCEL_ON_DISCONNECT', 'LIQUIDATION', 'SYSTEM_CANCEL'] as const) {
      const r = await post(rig, m, { symbol: 'NEAR-USDC-PERP', side: 'buy', type: 'limit', quantity: 30, price: 5, time_in_force: 'GTC' });
      const acctRec = { user_id: m.user_id } as Parameters<typeof rig.gw.orders.cancel>[0];
      const a = await rig.gw.orders.cancel(acctRec, r.body.data.order_id, reason);
      expect(a.data).toMatchObject({ status: 'CANCELLED', cancel_reason: reason });
    }
  });
});
