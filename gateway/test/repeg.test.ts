// Peg orders follow their reference (docs/orders.md): a resting peg is re-priced through the modify
// path (a `replace` on the committee) when its reference moves, at most once per order per
// minIntervalMs of the gateway clock, never while the oracle is stale, and trades at its new price.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ManualClock } from '../src/clock';
import { call, bearer, type Account } from './harness';
import { until } from './fakes';
import { startOrderRig, account, post, getOrder, settled, type OrderRig } from './order-rig';

describe('peg re-pricing', () => {
  let rig: OrderRig;
  let clock: ManualClock;
  let m: Account;
  let t: Account;
  const SYM = 'AVAX-USDC-PERP';
  const modifiesOf = (id: string) => rig.seq.journal.filter((j) => j.op.kind === 'modify' && j.op.pub.order_id === id);
  const applied = (id: string) => rig.committee.applied.filter((a) => a.kind === 'modify' && a.pub.order_id === id);
  const move = (midTicks: bigint): void => {
    rig.sim.market.set(SYM, midTicks);
    rig.sim.primary.publish();
    rig.sim.secondary.publish();
  };
  const idle = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** POST /orders with the manual clock moved past the per-symbol spacing (1 ms of the gateway clock) */
  const place = async (a: Account, body: Record<string, unknown>): Promise<string> => {
    clock.advance(2);
    const r = await post(rig, a, body);
    expect(r.status, r.raw).toBe(200);
    return r.body.data.order_id as string;
  };

  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0));
    rig = await startOrderRig({ clock, repeg: { pollMs: 20, minIntervalMs: 1_000 } });
    [m, t] = await Promise.all([account(rig, 'Apex', '1000000', { leverage: 2 }), account(rig, 'Apex', '1000000', { leverage: 2 })]);
    move(30_000n); // 30.000: ask = 30.006
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('re-prices a resting peg through a committee modify when its reference moves; a fill follows at the new price', async () => {
    const r = await post(rig, m, { symbol: SYM, side: 'sell', type: 'peg', peg_reference: 'ask', quantity: 10, time_in_force: 'GTC' });
    expect(r.status, r.raw).toBe(200);
    const id = r.body.data.order_id as string;
    await settled(rig);
    await idle(100);
    expect(modifiesOf(id)).toHaveLength(0); // at its reference: nothing to do
    expect(rig.gw.repegger.followed).toBe(1);

    move(30_500n); // ask = 30,500 + 6 = 30,506
    await until(() => applied(id).length === 1, 5_000, 'the re-peg modify');
    await settled(rig);
    expect(applied(id)[0]).toMatchObject({ pub: { order_id: id, mode: 'replace', price_change: true }, values: [0n, 30_506n] });
    expect(await getOrder(rig, m, id)).toMatchObject({ type: 'peg', price: 30.506, status: 'NEW', remaining_quantity: 10 });

    // a buy that would have crossed the old 30.006 fills at the peg's new price
    const hit = await post(rig, t, { symbol: SYM, side: 'buy', type: 'limit', quantity: 4, price: 30.6, time_in_force: 'IOC' });
    await settled(rig);
    expect(await getOrder(rig, t, hit.body.data.order_id)).toMatchObject({ status: 'FILLED', average_fill_price: 30.506 });
    expect(await getOrder(rig, m, id)).toMatchObject({ status: 'PARTIALLY_FILLED', remaining_quantity: 6, price: 30.506 });
  });

  it('is throttled per order, moves only on a price change, and does nothing while the oracle is stale', async () => {
    const id = await place(m, { symbol: SYM, side: 'buy', type: 'peg', peg_reference: 'bid', quantity: 10, time_in_force: 'GTC' });
    await settled(rig);
    clock.advance(1_000);
    move(30_200n); // bid = 30,200 − 6 = 30,194
    await until(() => applied(id).length === 1, 5_000, 'the first re-peg');
    await settled(rig);
    expect(applied(id)[0]!.values).toEqual([0n, 30_194n]);

    // within minIntervalMs of the gateway clock: no second re-price, however long we wait
    move(30_300n);
    await idle(300);
    expect(modifiesOf(id)).toHaveLength(1);
    clock.advance(1_000);
    await until(() => applied(id).length === 2, 5_000, 'the re-peg after the interval');
    await settled(rig);
    expect(applied(id)[1]!.values).toEqual([0n, 30_294n]);
    expect((await getOrder(rig, m, id)).price).toBe(30.294);

    // the reference unchanged: nothing to re-price after the interval either
    clock.advance(1_000);
    rig.sim.primary.publish();
    await idle(200);
    expect(modifiesOf(id)).toHaveLength(2);

    // stale oracle: both feeds stop and age past 3 s; a move is not followed until a feed is fresh again
    rig.sim.primary.halt();
    rig.sim.secondary.halt();
    rig.sim.market.set(SYM, 30_400n);
    clock.advance(4_000);
    await idle(300);
    expect(modifiesOf(id)).toHaveLength(2);
    rig.sim.primary.resume();
    rig.sim.secondary.resume();
    await until(() => applied(id).length === 3, 5_000, 'the re-peg once the feed is fresh');
    await settled(rig);
    expect(applied(id)[2]!.values).toEqual([0n, 30_394n]);
  });

  it('stops following a peg once it is cancelled', async () => {
    const id = await place(m, { symbol: SYM, side: 'buy', type: 'peg', peg_reference: 'mid', quantity: 10, time_in_force: 'GTC' });
    await settled(rig);
    const before = rig.gw.repegger.followed;
    clock.advance(2);
    expect((await call(rig.gw, 'DELETE', `/api/v1/orders/${id}`, undefined, bearer(m))).status).toBe(200);
    expect(rig.gw.repegger.followed).toBe(before - 1);
    clock.advance(1_000);
    move(30_800n);
    await idle(300);
    expect(modifiesOf(id)).toHaveLength(0);
  });
});
