// Issue 4 on real processes: every order kind the gateway accepts, matched on shares by the five
// committee nodes over libp2p: market, FOK, aon, min_fill_size, peg, GTT expiry, self-trade
// prevention, modify (reduce and replace) and a mass quote. Short: one cluster, one flow.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestCluster, createAccount, Trader, waitFor, type TestCluster } from './harness';

const SOL = 'SOL-USDC-PERP'; // reference price 150.00 in the gateway's simulated oracle

describe('every order kind on the MPC committee (real processes)', () => {
  let tc: TestCluster;
  let mm: Trader;
  let t: Trader;
  beforeAll(async () => {
    tc = await startTestCluster();
    const [a, b] = await Promise.all([createAccount(tc.dataDir, 'Prime', '1000000'), createAccount(tc.dataDir, 'Apex', '1000000')]);
    mm = new Trader(tc.baseUrl, a);
    t = new Trader(tc.baseUrl, b);
    await Promise.all([mm.login(), t.login()]);
  }, 120_000);
  afterAll(async () => {
    await tc?.cleanup();
  });

  const final = (tr: Trader, id: string, what: string) => waitFor(async () => {
    const o = await tr.order(id);
    return o.status !== 'NEW' || what === 'NEW' ? o : null;
  }, 30_000, what);
  const pause = () => new Promise((r) => setTimeout(r, 3)); // one action per ms per symbol and account

  it('quotes by mass quote, then market, FOK, aon, min_fill, peg, self-trade, modify and GTT trade on shares', async () => {
    const q = await mm.call<{ legs: { place: { code: number; order_id: string } }[] }>('POST', '/orders/mass-quote', { legs: [
      { place: { symbol: SOL, side: 'sell', type: 'limit', quantity: 2, price: 150.1, time_in_force: 'GTC', client_order_id: 'ask-1' } },
      { place: { symbol: SOL, side: 'sell', type: 'limit', quantity: 2, price: 150.2, time_in_force: 'GTC', client_order_id: 'ask-2' } },
      { place: { symbol: SOL, side: 'buy', type: 'limit', quantity: 2, price: 149.8, time_in_force: 'GTC', client_order_id: 'bid-1' } },
    ] });
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    const [ask1, ask2, bid1] = q.body.data!.legs.map((l) => l.place.order_id);
    expect(q.body.data!.legs.every((l) => l.place.code === 0)).toBe(true);

    // FOK for more than the book holds at its limit: rejected whole (INSUFFICIENT_LIQUIDITY)
    const fok = await t.place({ symbol: SOL, side: 'buy', type: 'limit', quantity: 5, price: 150.2, time_in_force: 'FOK' });
    await pause();
    // aon IOC for exactly what is there: fills whole
    const aon = await t.place({ symbol: SOL, side: 'buy', type: 'limit', quantity: 2, price: 150.1, time_in_force: 'IOC', aon: true });
    await pause();
    // market without cap with a minimum fill: takes the rest of the asks, remainder cancelled
    const mkt = await t.place({ symbol: SOL, side: 'buy', type: 'market', quantity: 3, time_in_force: 'IOC', min_fill_size: 1 });
    expect([fok.status, aon.status, mkt.status]).toEqual([200, 200, 200]);
    expect(await final(t, fok.body.data!.order_id, 'FOK')).toMatchObject({ status: 'REJECTED', reject_reason: 'INSUFFICIENT_LIQUIDITY', cancel_reason: null, filled_quantity: 0 });
    expect(await final(t, aon.body.data!.order_id, 'aon')).toMatchObject({ status: 'FILLED', average_fill_price: 150.1 });
    expect(await final(t, mkt.body.data!.order_id, 'market')).toMatchObject({ status: 'CANCELLED', cancel_reason: 'IOC_REMAINDER', filled_quantity: 2, average_fill_price: 150.2, price: null });
    expect((await mm.order(ask1!)).status).toBe('FILLED');
    expect((await mm.order(ask2!)).status).toBe('FILLED');

    // modify: reduce keeps priority, a price change re-enters and trades
    const red = await mm.call('PATCH', `/orders/${bid1}`, { quantity: 1.5 });
    expect(red.status, JSON.stringify(red.body)).toBe(200);
    expect(red.body.data).toMatchObject({ quantity: 1.5, status: 'NEW' });
    const sell = await t.place({ symbol: SOL, side: 'sell', type: 'limit', quantity: 1, price: 149.5, time_in_force: 'GTC' });
    await waitFor(async () => (await t.order(sell.body.data!.order_id)).status === 'NEW' || null, 30_000, 'the sell to rest');
    const rep = await mm.call('PATCH', `/orders/${bid1}`, { price: 149.5 });
    expect(rep.status, JSON.stringify(rep.body)).toBe(200);
    expect(rep.body.data).toMatchObject({ price: 149.5, status: 'PARTIALLY_FILLED', filled_quantity: 1, remaining_quantity: 0.5 });
    expect((await t.order(sell.body.data!.order_id)).status).toBe('FILLED');

    // peg at the reference bid (a public price), hit by a limit sell
    const peg = await mm.place({ symbol: SOL, side: 'buy', type: 'peg', peg_reference: 'bid', quantity: 1, time_in_force: 'GTC' });
    expect(peg.status, JSON.stringify(peg.body)).toBe(200);
    const pegOrder = await waitFor(async () => { const o = await mm.order(peg.body.data!.order_id); return o.status === 'NEW' ? o : null; }, 30_000, 'the peg to rest');
    expect(Number(pegOrder.price)).toBeGreaterThan(148);
    const hit = await t.place({ symbol: SOL, side: 'sell', type: 'limit', quantity: 1, price: 147, time_in_force: 'IOC' }); // inside SOL's band (mark ± 2.5%)
    const hitDone = await final(t, hit.body.data!.order_id, 'the hit on the peg');
    expect(hitDone).toMatchObject({ filled_quantity: 1 });

    // self-trade: the maker's own crossing order cancels its resting bid instead of trading
    await pause();
    const self = await mm.place({ symbol: SOL, side: 'sell', type: 'limit', quantity: 1, price: 149.5, time_in_force: 'IOC' });
    expect(await final(mm, self.body.data!.order_id, 'the self-trading sell')).toMatchObject({ status: 'CANCELLED', filled_quantity: 0 });
    expect(await mm.order(bid1!)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'SELF_TRADE_PREVENTION' });

    // GTT: expires on a quiet book
    const expiry = (BigInt(Date.now()) * 1_000_000n + 1_500_000_000n).toString();
    const gtt = await t.place({ symbol: SOL, side: 'buy', type: 'limit', quantity: 1, price: 147, time_in_force: 'GTT', expiry_time: expiry }); // inside the band, below every ask
    expect(gtt.status, JSON.stringify(gtt.body)).toBe(200);
    const gone = await waitFor(async () => { const o = await t.order(gtt.body.data!.order_id); return o.status === 'CANCELLED' ? o : null; }, 30_000, 'the GTT order to expire');
    expect(gone.cancel_reason).toBe('GTT_EXPIRED');
  }, 180_000);
});
