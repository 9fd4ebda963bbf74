// Orders end to end through REST, the fake sequencer and the fake committee: validation (nothing
// enters the book), margin, the sealed shares, fills and balances, cancels, idempotency, faulty nodes.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startRig, call, newAccount, bearer, summary, type Rig, type Account } from './harness';
import { until } from './fakes';

const O = (over: Record<string, unknown> = {}) => ({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.5, price: 3000, time_in_force: 'GTC', ...over });

async function place(rig: Rig, a: Account, body: Record<string, unknown>) {
  await new Promise((r) => setTimeout(r, 2)); // the spec's spacing: one placement per ms per symbol and account
  return call(rig.gw, 'POST', '/api/v1/orders', body, bearer(a));
}

async function order(rig: Rig, a: Account, id: string): Promise<Record<string, any>> {
  const r = await call(rig.gw, 'GET', `/api/v1/orders/${id}`, undefined, bearer(a));
  expect(r.status, r.raw).toBe(200);
  return r.body.data;
}

async function settled(rig: Rig): Promise<void> {
  await until(() => rig.gw.resultsCursor === BigInt(rig.seq.journal.length + 1), 10_000, 'every journaled op to be applied');
}

describe('orders', () => {
  let rig: Rig;
  let a: Account;
  let b: Account;
  beforeAll(async () => {
    rig = await startRig();
    [a, b] = await Promise.all([newAccount(rig), newAccount(rig)]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('rejects invalid orders with a clear trade code and submits nothing', async () => {
    const cases: [Record<string, unknown>, number, string, RegExp][] = [
      [O({ symbol: undefined }), 1400, 'INVALID_ORDER', /'symbol' is required/],
      [O({ symbol: 'FOO-USDC-PERP' }), 1401, 'UNKNOWN_SYMBOL', /unknown symbol 'FOO-USDC-PERP'/],
      [O({ side: 'long' }), 1400, 'INVALID_ORDER', /'side' must be one of buy, sell/],
      [O({ type: 'market' }), 1405, 'UNSUPPORTED_ORDER', /MARKET_TIF: market orders never rest/],
      [O({ type: 'peg', price: undefined }), 1400, 'INVALID_ORDER', /'peg_reference' is required/],
      [O({ type: 'peg', peg_reference: 'mid' }), 1400, 'INVALID_ORDER', /'price' must be omitted for peg orders/],
      [O({ peg_reference: 'mid' }), 1400, 'INVALID_ORDER', /'peg_reference' applies only to type 'peg'/],
      [O({ time_in_force: 'GTT' }), 1400, 'INVALID_ORDER', /'expiry_time' .* is required/],
      [O({ time_in_force: 'GTT', expiry_time: 1 }), 1400, 'INVALID_ORDER', /'expiry_time' 1 is not in the future/],
      [O({ time_in_force: 'GTT', expiry_time: 'soon' }), 1400, 'INVALID_ORDER', /non-negative integer number of nanoseconds/],
      [O({ expiry_time: '1' }), 1400, 'INVALID_ORDER', /'expiry_time' applies only to time_in_force 'GTT'/],
      [O({ time_in_force: 'DAY' }), 1400, 'INVALID_ORDER', /time_in_force/],
      [O({ aon: true }), 1405, 'UNSUPPORTED_ORDER', /AON_TIF: aon is supported only with IOC or FOK/],
      [O({ aon: 'yes', time_in_force: 'IOC' }), 1400, 'INVALID_ORDER', /'aon' must be a boolean/],
      [O({ min_fill_size: 0.1 }), 1405, 'UNSUPPORTED_ORDER', /MIN_FILL_TIF/],
      [O({ min_fill_size: 0.1, time_in_force: 'FOK' }), 1405, 'UNSUPPORTED_ORDER', /MIN_FILL_AON/],
      [O({ min_fill_size: 0.6, time_in_force: 'IOC' }), 1403, 'INVALID_QUANTITY', /'min_fill_size' must not exceed quantity/],
      [O({ min_fill_size: 0.0001, time_in_force: 'IOC' }), 1403, 'INVALID_QUANTITY', /min_fill_size 0.0001 is not a multiple of step_size/],
      [O({ leverage: 11 }), 1406, 'LEVERAGE_EXCEEDED', /requested leverage 11x is above the maximum of 10x/],
      [O({ leverage: 2.5 }), 1400, 'INVALID_ORDER', /'leverage' must be a whole number from 1 to 10/],
      [O({ lev: 5 }), 1400, 'INVALID_ORDER', /unknown field 'lev'/],
      [O({ client_order_id: 'x'.repeat(65) }), 1400, 'INVALID_ORDER', /1 to 64 characters/],
      [O({ price: undefined }), 1402, 'INVALID_PRICE', /'price' is required/],
      [O({ price: 3000.005 }), 1402, 'INVALID_PRICE', /price 3000.005 is not a multiple of tick_size 0.01/],
      [O({ price: 0 }), 1402, 'INVALID_PRICE', /greater than 0/],
      [O({ price: -1 }), 1402, 'INVALID_PRICE', /non-negative decimal/],
      [O({ price: '3e3' }), 1402, 'INVALID_PRICE', /decimal/],
      [O({ price: 1e30 }), 1402, 'INVALID_PRICE', /outside the acceptable range/],
      [O({ price: '42949672.96' }), 1402, 'INVALID_PRICE', /outside the acceptable range/], // 2^32 ticks of 0.01: above the committee's 32-bit comparisons
      [O({ price: '10485.76' }), 1402, 'INVALID_PRICE', /outside the acceptable range for ETH-USDC-PERP \(at most 10485.75\)/], // 2^20 ticks: ETH's price ceiling (docs/decisions/0014)
      [O({ quantity: 0.0005 }), 1403, 'INVALID_QUANTITY', /not a multiple of step_size 0.001/],
      [O({ quantity: 0.1 + 0.2 }), 1403, 'INVALID_QUANTITY', /0.30000000000000004 is not a multiple/],
      [O({ quantity: 0 }), 1403, 'INVALID_QUANTITY', /greater than 0/],
      [O({ quantity: 5001 }), 1403, 'INVALID_QUANTITY', /above max_qty 5000/],
      [O({ quantity: true }), 1403, 'INVALID_QUANTITY', /decimal/],
      [O({ quantity: 0.001, price: 30 }), 1404, 'MIN_NOTIONAL', /below the minimum 100 USDC/],
      [O({ quantity: 500 }), 1410, 'MARGIN_INSUFFICIENT', /exceed free collateral of 100000 USDC/],
    ];
    const journal = rig.seq.journal.length;
    for (const [body, code, error, msg] of cases) {
      const r = await place(rig, a, body);
      expect(r.status, JSON.stringify(body)).toBe(code === 1410 || code >= 1400 ? 400 : 400);
      expect(r.body.code, JSON.stringify(body)).toBe(code);
      expect(r.body.error).toBe(error);
      expect(r.body.message).toMatch(msg);
    }
    const arr = await call(rig.gw, 'POST', '/api/v1/orders', [O()], bearer(a));
    expect(arr.body.code).toBe(1400);
    expect(rig.seq.journal.length).toBe(journal);
    const s = await summary(rig, a.user_id);
    expect(s.reserved).toBe('0');
    expect(s.open_orders).toBe(0);
  });

  it('splits price and size into shares sealed per node; the op carries no owner', async () => {
    const r = await place(rig, a, O({ side: 'sell', quantity: '2', price: '3000.00', client_order_id: 'maker-1' }));
    expect(r.status, r.raw).toBe(200);
    expect(r.body.data).toEqual({ order_id: expect.stringMatching(/^[1-9]\d*$/), client_order_id: 'maker-1', status: 'NEW' });
    const j = rig.seq.journal[rig.seq.journal.length - 1]!;
    expect(j.op.kind).toBe('place');
    expect(j.op.pub).toEqual({ order_id: r.body.data.order_id, side: 'sell', type: 'limit', time_in_force: 'GTC' });
    expect(j.op.sealed).toHaveLength(5);
    expect(new Set(j.op.sealed).size).toBe(5);
    const text = JSON.stringify({ ...j.op, pub: { ...j.op.pub, order_id: '' } }); // a random order id may contain any digits
    for (const secret of [a.user_id, a.api_key, a.user_id.slice(2), '300000', '2000']) expect(text).not.toContain(secret);
    await settled(rig);
    expect(rig.committee.inputs.get(r.body.data.order_id)).toEqual({ price: 300000n, qty: 2000n }); // ticks of 0.01, steps of 0.001
  });

  it('applies fills from the committee: statuses, averages, reservations, fees, positions, balances', async () => {
    const makerId = rig.seq.journal[rig.seq.journal.length - 1]!.op.pub.order_id as string;
    expect((await summary(rig, a.user_id)).reserved).toBe('601.2'); // 600 margin + 1.2 worst-case fee

    const t1 = await place(rig, b, O({ side: 'buy', quantity: 0.5, price: 3001 }));
    expect(t1.body.data.status).toBe('NEW');
    await settled(rig);
    const buy = await order(rig, b, t1.body.data.order_id);
    expect(buy).toMatchObject({ status: 'FILLED', quantity: 0.5, filled_quantity: 0.5, remaining_quantity: 0, average_fill_price: 3000, last_fill_qty: 0.5, last_fill_price: 3000, price: 3001, cancel_reason: null });
    const maker = await order(rig, a, makerId);
    expect(maker).toMatchObject({ status: 'PARTIALLY_FILLED', filled_quantity: 0.5, remaining_quantity: 1.5, client_order_id: 'maker-1' });
    expect(BigInt(/"out_time_ns":(\d+)/.exec((await call(rig.gw, 'GET', `/api/v1/orders/${makerId}`, undefined, bearer(a))).raw)![1]!)).toBeGreaterThan(0n);

    // IOC: takes the rest of the maker, remainder cancelled
    const t2 = await place(rig, b, O({ side: 'buy', quantity: 2, price: 3000, time_in_force: 'IOC' }));
    await settled(rig);
    expect(await order(rig, b, t2.body.data.order_id)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'IOC_REMAINDER', filled_quantity: 1.5, remaining_quantity: 0.5, average_fill_price: 3000 });
    expect(await order(rig, a, makerId)).toMatchObject({ status: 'FILLED', remaining_quantity: 0 });

    // b: taker fees 0.3 + 0.9 at 2 bps, margin 600 at 10x; a: maker rebates 0.15 + 0.45 at -1 bp and
    // the Apex instant taker bonus, 20% of b's fees: 0.06 + 0.18.
    let sa = await summary(rig, a.user_id);
    let sb = await summary(rig, b.user_id);
    expect([sb.balance, sb.reserved, sb.open_orders]).toEqual(['99398.8', '0', 0]);
    expect([sa.balance, sa.reserved, sa.open_orders]).toEqual(['99400.84', '0', 0]);
    expect(sb.positions[0]).toMatchObject({ symbol: 'ETH-USDC-PERP', size_steps: '2000', margin: '600000000' });
    expect(sa.positions[0]).toMatchObject({ size_steps: '-2000', margin: '600000000' });

    // b sells 1 at 2900 (rests), a buys 1 at 2950: a closes half its short at a 100 USDC profit.
    const m2 = await place(rig, b, O({ side: 'sell', quantity: 1, price: 2900 }));
    const t3 = await place(rig, a, O({ side: 'buy', quantity: 1, price: 2950 }));
    await settled(rig);
    expect((await order(rig, a, t3.body.data.order_id)).average_fill_price).toBe(2900);
    expect((await order(rig, b, m2.body.data.order_id)).status).toBe('FILLED');
    sa = await summary(rig, a.user_id);
    sb = await summary(rig, b.user_id);
    expect(sa.balance).toBe('99800.26'); // - 0.58 fee + 300 margin back + 100 profit
    expect(sb.balance).toBe('99599.206'); // + 0.29 rebate + 0.116 instant bonus + 300 margin back - 100 loss
    expect(sa.positions[0]).toMatchObject({ size_steps: '-1000', margin: '300000000', realized_pnl: '100000000' });
    expect(sb.positions[0]).toMatchObject({ size_steps: '1000', margin: '300000000', realized_pnl: '-100000000' });
    // money is conserved: balances + position margins + venue fees (1.78 − 0.89 rebates − 0.356 bonuses) = deposits
    const total = [sa, sb].reduce((s, x) => s + BigInt(Math.round(Number(x.balance) * 1e6)) + BigInt(x.positions[0].margin), 0n);
    expect(total + 534_000n).toBe(200_000_000_000n);
  });

  it('reports an exact volume-weighted average over fills at different prices', async () => {
    const [c, d] = await Promise.all([newAccount(rig), newAccount(rig)]);
    // priced at SOL's mark (150): sells far below it are refused by the fill-loss check
    await place(rig, c, { symbol: 'SOL-USDC-PERP', side: 'sell', type: 'limit', quantity: 1, price: 150, time_in_force: 'GTC' });
    await place(rig, c, { symbol: 'SOL-USDC-PERP', side: 'sell', type: 'limit', quantity: 2, price: 150.01, time_in_force: 'GTC' });
    const t = await place(rig, d, { symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: 3, price: 151, time_in_force: 'GTC' });
    // every answer carrying an order carries client_order_id: null when none was sent (issue 26 item 10)
    expect(t.body.data).toEqual({ order_id: expect.stringMatching(/^[1-9]\d*$/), client_order_id: null, status: 'NEW' });
    await settled(rig);
    const r = await call(rig.gw, 'GET', `/api/v1/orders/${t.body.data.order_id}`, undefined, bearer(d));
    expect(r.raw).toContain('"average_fill_price":150.006667'); // (150 + 2 × 150.01) / 3
    expect(r.body.data).toMatchObject({ status: 'FILLED', last_fill_qty: 2, last_fill_price: 150.01 });
  });

  it('reserves margin for resting orders and rejects with MARGIN_INSUFFICIENT (1410) beyond free collateral', async () => {
    const core = await newAccount(rig, 'Core', '100');
    const o1 = await place(rig, core, O({ quantity: 0.1, price: 3000 }));
    expect(o1.status, o1.raw).toBe(200);
    const o2 = await place(rig, core, O({ quantity: 0.2, price: 3000 }));
    expect(o2.status).toBe(200);
    expect((await summary(rig, core.user_id)).reserved).toBe('90.45'); // 30 + 60 margin, 0.15 + 0.3 fees at 5 bps
    const o3 = await place(rig, core, O({ quantity: 0.1, price: 3000 }));
    expect(o3.status).toBe(400);
    expect(o3.body.code).toBe(1410);
    expect(o3.body.message).toBe('MARGIN_INSUFFICIENT: initial margin and fees of 30.15 USDC exceed free collateral of 9.55 USDC (leverage 10x)');
    const del = await call(rig.gw, 'DELETE', `/api/v1/orders/${o2.body.data.order_id}`, undefined, bearer(core));
    expect(del.status, del.raw).toBe(200);
    expect(del.body.data).toMatchObject({ status: 'CANCELLED', cancel_reason: 'USER_REQUESTED' });
    expect((await place(rig, core, O({ quantity: 0.1, price: 3000 }))).status).toBe(200);
    expect((await summary(rig, core.user_id)).reserved).toBe('60.3');
  });

  it("caps leverage at the instrument's max_leverage", async () => {
    const acct = await newAccount(rig, 'Core', '100', { leverage: 50 });
    const r = await place(rig, acct, { symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.001, price: 60000, time_in_force: 'GTC' });
    expect(r.status, r.raw).toBe(200);
    expect((await summary(rig, acct.user_id)).reserved).toBe('6.03'); // 60 / 10 (not / 50) + 0.03 fee
  });

  it('cancels: own live orders only; a finished order or one the committee no longer holds is ORDER_NOT_LIVE', async () => {
    const r = await place(rig, a, O({ symbol: 'BTC-USDC-PERP', side: 'buy', quantity: 0.01, price: 50000 }));
    const id = r.body.data.order_id as string;
    expect((await call(rig.gw, 'DELETE', `/api/v1/orders/${id}`, undefined, bearer(b))).body.code).toBe(1420);
    expect((await call(rig.gw, 'GET', `/api/v1/orders/${id}`, undefined, bearer(b))).status).toBe(404);
    expect((await call(rig.gw, 'GET', '/api/v1/orders/12x', undefined, bearer(a))).body.error).toBe('invalid_request');
    expect((await call(rig.gw, 'GET', '/api/v1/orders/99', undefined, bearer(a))).body.code).toBe(1420);
    const del = await call(rig.gw, 'DELETE', `/api/v1/orders/${id}`, undefined, bearer(a));
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ order_id: id, status: 'CANCELLED', cancel_reason: 'USER_REQUESTED', remaining_quantity: 0.01 });
    const again = await call(rig.gw, 'DELETE', `/api/v1/orders/${id}`, undefined, bearer(a));
    expect([again.status, again.body.code]).toEqual([409, 1421]);
    const cancels = rig.seq.journal.filter((j) => j.op.kind === 'cancel');
    expect(cancels[cancels.length - 1]!.op).toMatchObject({ kind: 'cancel', symbol: 'BTC-USDC-PERP', pub: { order_id: id } });

    const r2 = await place(rig, a, O({ symbol: 'BTC-USDC-PERP', side: 'buy', quantity: 0.01, price: 50000 }));
    await settled(rig);
    rig.committee.forget(r2.body.data.order_id);
    const lost = await call(rig.gw, 'DELETE', `/api/v1/orders/${r2.body.data.order_id}`, undefined, bearer(a));
    expect([lost.status, lost.body.code]).toEqual([409, 1421]);
    expect(lost.body.message).toMatch(/no longer live/);
  });

  it('cancels the orders an outcome lists as expired or removed by self-trade prevention', async () => {
    const reservedBefore = (await summary(rig, a.user_id)).reserved;
    // near AVAX's mark (30): a buy far above it would book a loss its margin cannot carry
    const m1 = await place(rig, a, O({ symbol: 'AVAX-USDC-PERP', side: 'sell', quantity: 10, price: 30.1 }));
    const m2 = await place(rig, a, O({ symbol: 'AVAX-USDC-PERP', side: 'sell', quantity: 10, price: 30.2 }));
    await settled(rig);
    const [id1, id2] = [m1.body.data.order_id as string, m2.body.data.order_id as string];
    rig.committee.forget(id1);
    rig.committee.forget(id2);
    rig.committee.amendNext = (pub) => ({ ...pub, self_trade_cancelled: [id1], expired: [id2] });
    const t = await place(rig, a, O({ symbol: 'AVAX-USDC-PERP', side: 'buy', quantity: 10, price: 30.2 }));
    await settled(rig);
    expect(await order(rig, a, id1)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'SELF_TRADE_PREVENTION' });
    expect(await order(rig, a, id2)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'GTT_EXPIRED' });
    expect(await order(rig, a, t.body.data.order_id)).toMatchObject({ status: 'NEW', filled_quantity: 0 });
    await call(rig.gw, 'DELETE', `/api/v1/orders/${t.body.data.order_id}`, undefined, bearer(a));
    expect((await summary(rig, a.user_id)).reserved).toBe(reservedBefore);
  });

  it('is idempotent on client_order_id: the second request creates nothing and returns the order', async () => {
    const body = O({ symbol: 'XRP-USDC-PERP', quantity: 200, price: 0.6, client_order_id: 'idem-1' }); // at the mark (a buy at 2 would lose 70% at once)
    const first = await place(rig, b, body);
    const n = rig.seq.journal.length;
    const second = await place(rig, b, body);
    expect(second.status).toBe(200);
    expect(second.body.data.order_id).toBe(first.body.data.order_id);
    expect(rig.seq.journal.length).toBe(n);
    // another account may use the same client id
    const other = await place(rig, a, body);
    expect(other.body.data.order_id).not.toBe(first.body.data.order_id);
    // found and cancelled by client id
    const got = await call(rig.gw, 'GET', '/api/v1/orders?client_order_id=idem-1', undefined, bearer(b));
    expect(got.body.data).toMatchObject({ order_id: first.body.data.order_id, client_order_id: 'idem-1', symbol: 'XRP-USDC-PERP' });
    expect((await call(rig.gw, 'GET', '/api/v1/orders?client_order_id=nope', undefined, bearer(b))).body.code).toBe(1420);
    expect((await call(rig.gw, 'GET', '/api/v1/orders', undefined, bearer(b))).body.error).toBe('invalid_request');
    const del = await call(rig.gw, 'DELETE', '/api/v1/orders?client_order_id=idem-1', undefined, bearer(b));
    expect(del.body.data).toMatchObject({ order_id: first.body.data.order_id, status: 'CANCELLED' });
    // a replay after the cancel returns the order's current state, still creating nothing
    expect((await place(rig, b, body)).body.data).toMatchObject({ order_id: first.body.data.order_id, status: 'CANCELLED' });
  });

  it('answers a placement only once the sequencer has journaled it', async () => {
    const slow = await newAccount(rig);
    rig.seq.hold = true;
    const p = place(rig, slow, O({ symbol: 'LINK-USDC-PERP', quantity: 10, price: 15 })); // at the mark
    const early = await Promise.race([p, new Promise<null>((res) => setTimeout(() => res(null), 300))]);
    expect(early).toBeNull(); // no answer while the journal has not acknowledged
    rig.seq.release();
    expect((await p).status).toBe(200);
  });

  it('rejects and releases the reservation when the sequencer refuses the op', async () => {
    const acct = await newAccount(rig);
    rig.seq.nackNext = (op) => op.kind === 'place';
    const r = await place(rig, acct, O({ quantity: 1, price: 3000 }));
    expect([r.status, r.body.code, r.body.error]).toEqual([503, 1501, 'SEQUENCER_REJECTED']);
    const s = await summary(rig, acct.user_id);
    expect([s.reserved, s.open_orders]).toEqual(['0', 0]);
  });
});

describe('degraded sequencer', () => {
  it('202 with code 1502 after the ack timeout; the order is journaled later', async () => {
    const rig = await startRig({ ackTimeoutMs: 150 });
    try {
      const acct = await newAccount(rig);
      rig.seq.hold = true;
      const r = await place(rig, acct, O({ quantity: 1, price: 3000 }));
      expect(r.status, r.raw).toBe(202);
      expect(r.body.code).toBe(1502);
      expect(r.body.message).toMatch(/^QUEUED: .*do not resubmit/);
      expect(r.body.data).toEqual({ order_id: expect.any(String), client_order_id: null }); // none sent: the key, null
      const id = r.body.data.order_id as string;
      rig.seq.release();
      await settled(rig);
      expect((await order(rig, acct, id)).status).toBe('NEW');
    } finally {
      await rig.close();
    }
  });
});

describe('results from faulty or missing nodes', () => {
  async function crossing(rig: Rig): Promise<Record<string, any>> {
    const [m, t] = await Promise.all([newAccount(rig), newAccount(rig)]);
    // near the mark (3000 ± the walk): a buy 10% above it would book a loss its margin cannot carry (fill-loss check)
    await place(rig, m, O({ side: 'sell', quantity: 1.234, price: 3010.5 }));
    const r = await place(rig, t, O({ side: 'buy', quantity: 2, price: 3030, time_in_force: 'IOC' }));
    await settled(rig);
    return order(rig, t, r.body.data.order_id);
  }
  const expected = { status: 'CANCELLED', filled_quantity: 1.234, remaining_quantity: 0.766, average_fill_price: 3010.5, cancel_reason: 'IOC_REMAINDER' };

  it('corrects a wrong share from the first node when all five report, and names it', async () => {
    const rig = await startRig();
    try {
      rig.committee.node(1).fault = 'wrong-share';
      expect(await crossing(rig)).toMatchObject(expected);
      const lines = rig.logged('inconsistent output share from node 1');
      expect(lines.length).toBeGreaterThan(0);
      expect(lines[0]).toMatchObject({ role: 'gateway', node: 1, level: 50 });
      expect(rig.logged('inconsistent output share from node 2')).toHaveLength(0);
    } finally {
      await rig.close();
    }
  });

  it('outvotes a node reporting another outcome, and one whose shares cannot be opened', async () => {
    const rig = await startRig();
    try {
      rig.committee.node(3).fault = 'wrong-outcome';
      rig.committee.node(5).fault = 'garbage-seal';
      expect(await crossing(rig)).toMatchObject(expected);
      expect(rig.logged('node 3 reported a different outcome').length).toBeGreaterThan(0);
      expect(rig.logged('node 5 sent output shares the gateway cannot open').length).toBeGreaterThan(0);
    } finally {
      await rig.close();
    }
  });

  it('goes on with t+1 = 3 nodes and checks late shares when the others return', async () => {
    const rig = await startRig({ connectNodes: [2, 3, 5] });
    try {
      rig.committee.node(4).fault = 'wrong-share';
      expect(await crossing(rig)).toMatchObject(expected);
      rig.committee.node(1).resendAll = true;
      rig.committee.node(4).resendAll = true;
      await rig.committee.connect(rig.gw.urls.internalUrl, [1, 4]);
      await until(() => rig.logged('inconsistent output share from node 4 (arrived after the decision)').length > 0, 5_000, 'the late check');
      expect(rig.logged('from node 1')).toHaveLength(0);
    } finally {
      await rig.close();
    }
  });

  it('waits when fewer than t+1 nodes report, and applies once a third arrives', async () => {
    const rig = await startRig({ connectNodes: [1, 2] });
    try {
      const [m, t] = await Promise.all([newAccount(rig), newAccount(rig)]);
      await place(rig, m, O({ side: 'sell', quantity: 1, price: 3000 }));
      const r = await place(rig, t, O({ side: 'buy', quantity: 1, price: 3000 }));
      await new Promise((res) => setTimeout(res, 100));
      expect(rig.gw.resultsCursor).toBe(1n);
      expect((await order(rig, t, r.body.data.order_id)).status).toBe('NEW');
      await rig.committee.connect(rig.gw.urls.internalUrl, [4]);
      await settled(rig);
      expect((await order(rig, t, r.body.data.order_id)).status).toBe('FILLED');
    } finally {
      await rig.close();
    }
  });
});

describe('exactly once across a gateway restart', () => {
  it('keeps every applied outcome once when nodes resend everything after a restart', async () => {
    const rig = await startRig();
    try {
      const [m, t] = await Promise.all([newAccount(rig), newAccount(rig)]);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        await place(rig, m, O({ side: 'sell', quantity: 0.1, price: 3000 + i }));
        ids.push((await place(rig, t, O({ side: 'buy', quantity: 0.1, price: 3000 + i }))).body.data.order_id);
      }
      await settled(rig);
      const before = [await summary(rig, m.user_id), await summary(rig, t.user_id)];
      const cursor = rig.gw.resultsCursor;
      for (const nd of rig.committee.nodes) nd.resendAll = true;
      await rig.restart();
      expect(rig.gw.resultsCursor).toBe(cursor);
      await new Promise((res) => setTimeout(res, 100)); // let the resent results arrive
      expect([await summary(rig, m.user_id), await summary(rig, t.user_id)]).toEqual(before);
      expect(before[1]!.positions[0].size_steps).toBe('500');
      // and trading goes on
      const login = await call(rig.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: t.api_key, client_secret: t.api_secret, passphrase: t.passphrase });
      const t2 = { ...t, token: login.body.access_token as string };
      expect((await order(rig, t2, ids[4]!)).status).toBe('FILLED');
      await place(rig, m, O({ side: 'sell', quantity: 0.1, price: 3000 }));
      await place(rig, t2, O({ side: 'buy', quantity: 0.1, price: 3000 }));
      await settled(rig);
      expect((await summary(rig, t.user_id)).positions[0].size_steps).toBe('600');
    } finally {
      await rig.close();
    }
  });
});
