// What the committee's preprocessing reserve covers, as the nodes report it on their results links:
// GET /system/health and the metrics show it; once t+1 connected nodes say their job ran out,
// placements are refused up front (503 / 1505 RESERVE_EXHAUSTED, nothing submitted) while cancels
// still go through; it all lifts by itself when the nodes say production resumed
// (docs/decisions/0016-outage-capacity.md).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { parseExposition, sumOf } from '@tenebra/metrics';
import { call, bearer } from './harness';
import { until } from './fakes';
import { account, post, settled, startOrderRig, type OrderRig } from './order-rig';
import { assessHealth } from '../src/ws/health';
import { CapacityBoard } from '../src/results/capacity';

const order = { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.1, price: 2900, time_in_force: 'GTC' };
const health = async (rig: OrderRig) => (await call(rig.gw, 'GET', '/api/v1/system/health')).body.data;

describe('outage capacity at the gateway', () => {
  let rig: OrderRig;
  beforeAll(async () => {
    rig = await startOrderRig();
  });
  afterAll(async () => {
    await rig?.close();
  });
  const report = (nodes: number[], c: { production: 'running' | 'idle' | 'stopped'; exhausted: boolean; orders_left: string }) => {
    for (const i of nodes) rig.committee.nodes[i - 1]!.reportCapacity(c);
  };

  it('health says ok without reports, then what the reserve covers once production stopped', async () => {
    const h0 = await call(rig.gw, 'GET', '/api/v1/system/health');
    expect(h0.status).toBe(200);
    expect(h0.body.data).toMatchObject({ status: 'ok', reasons: [], live_nodes: 5 });
    expect(h0.body.data.preprocessing).toBeUndefined();
    report([1, 2, 3, 4, 5], { production: 'idle', exhausted: false, orders_left: '500' });
    await until(async () => (await health(rig)).preprocessing === 'idle', 5_000, 'idle reported');
    report([3], { production: 'stopped', exhausted: false, orders_left: '57' });
    const h = await until(async () => {
      const x = await health(rig);
      return x.preprocessing === 'stopped' ? x : null;
    }, 5_000, 'stopped reported');
    expect(h).toMatchObject({ status: 'degraded', reasons: ['preprocessing_stopped'], reserve_orders: '50' }); // the least, floored to 10
    expect(h.message).toMatch(/reserve covers about 50 more orders/);
    const a = await account(rig);
    const r = await post(rig, a, order);
    expect(r.status, r.raw).toBe(200); // still trading on the reserve
  });

  it('refuses placements while t+1 nodes report their job ran out, takes cancels, and resumes by itself', async () => {
    const a = await account(rig);
    const resting = await post(rig, a, { ...order, price: 2800 });
    expect(resting.status).toBe(200);
    await settled(rig);
    report([1, 2], { production: 'stopped', exhausted: true, orders_left: '0' });
    await new Promise((r) => setTimeout(r, 100));
    expect((await post(rig, a, order)).status).toBe(200); // t nodes only: not the committee's state
    report([1, 2, 3, 4, 5], { production: 'stopped', exhausted: true, orders_left: '0' });
    const h = await until(async () => {
      const x = await health(rig);
      return x.preprocessing === 'exhausted' ? x : null;
    }, 5_000, 'exhausted reported');
    expect(h).toMatchObject({ status: 'down', reasons: ['reserve_exhausted'], reserve_orders: '0' });
    const journaled = rig.seq.journal.length;
    const refused = await post(rig, a, order);
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: 1505, error: 'RESERVE_EXHAUSTED' });
    expect(refused.body.message).toMatch(/^RESERVE_EXHAUSTED: degraded mode: the committee ran out of preprocessing/);
    expect(refused.headers['retry-after']).toBe('5');
    expect(rig.seq.journal.length).toBe(journaled); // nothing was submitted
    const cancel = await call(rig.gw, 'DELETE', `/api/v1/orders/${resting.body.data.order_id}`, undefined, bearer(a));
    expect([200, 202]).toContain(cancel.status); // cancels still reach the sequencer
    expect(rig.seq.journal.length).toBe(journaled + 1);

    const m = parseExposition(await rig.gw.metrics.metrics());
    expect(sumOf(m, 'tenebra_gateway_preprocessing', { state: 'exhausted' })).toBe(1);
    expect(sumOf(m, 'tenebra_gateway_reserve_orders_left')).toBe(0);
    expect(sumOf(m, 'tenebra_gateway_orders_refused_total', { code: '1505' })).toBe(1);

    report([1, 2, 3, 4, 5], { production: 'running', exhausted: false, orders_left: '3' });
    await until(async () => (await health(rig)).preprocessing === 'running', 5_000, 'running reported');
    expect((await post(rig, a, order)).status).toBe(200);
  });

  it('counts only connected nodes, and t+1 of them for exhaustion', () => {
    const b = new CapacityBoard(2);
    for (const node of [1, 2, 3]) b.report({ t: 'capacity', node, production: 'stopped', exhausted: true, orders_left: String(node * 10) });
    expect(b.read(new Set([1, 2, 3, 4, 5]))).toEqual({ preprocessing: 'exhausted', ordersLeft: 10n });
    expect(b.read(new Set([2, 3, 4]))).toEqual({ preprocessing: 'stopped', ordersLeft: 20n }); // node 1's link is down: 2 of t+1
    expect(b.read(new Set([4, 5]))).toEqual({ preprocessing: undefined, ordersLeft: null });
  });

  it('a stall whose cause is the exhausted reserve is not reported twice', () => {
    const h = assessHealth({
      n: 5, t: 2, liveNodes: 3, sequencerUp: true, backlog: 40n, stalledMs: 60_000, journalWaitMs: null,
      capacity: { preprocessing: 'exhausted', ordersLeft: 7n },
    }, { stallMs: 5_000, journalSlowMs: 1_000 }, 1n);
    expect(h.reasons).toEqual(['nodes_missing', 'reserve_exhausted']);
    expect(h.reserve_orders).toBe('0');
  });
});
