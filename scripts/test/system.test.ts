// System test: the real processes start with the launcher, trade through REST, and stop cleanly.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scrape, sumOf, type Sample } from '@tenebra/metrics';
import { ROOT } from '../src/cluster';
import { startTestCluster, createAccount, Trader, waitFor, type TestCluster } from './harness';

describe('local cluster of real processes', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    // the other cluster files start their nodes from one bundle for the run (node-bundle-setup.ts);
    // this one starts them as `npm start` does, under tsx
    delete process.env.TENEBRA_NODE_BUNDLE;
    tc = await startTestCluster();
  }, 120_000);
  afterAll(async () => {
    await tc?.cleanup();
  });

  it('writes cluster.json listing every process', () => {
    const file = JSON.parse(readFileSync(join(tc.dataDir, 'cluster.json'), 'utf8')) as {
      processes: { role: string; index: number; pid: number | null; ports: Record<string, number>; peerId: string | null }[];
      gateway: { baseUrl: string };
    };
    expect(file.processes.filter((p) => p.role === 'committee')).toHaveLength(5);
    expect(file.processes.filter((p) => p.role === 'sequencer')).toHaveLength(1);
    expect(file.processes.filter((p) => p.role === 'gateway')).toHaveLength(1);
    for (const p of file.processes) expect(p.pid).toBeGreaterThan(0);
    for (const p of file.processes.filter((q) => q.role === 'committee')) expect(p.peerId).toMatch(/^12D3Koo/);
    expect(file.gateway.baseUrl).toBe(tc.baseUrl);
    // as `npm start` runs them: each node under tsx from its sources
    for (const p of file.processes.filter((q) => q.role === 'committee')) {
      expect(readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0')).toEqual(expect.arrayContaining(['--import', 'tsx', join(ROOT, 'committee', 'src', 'main.ts')]));
    }
  });

  it('matches a crossing pair of limit orders on shares and reports the fills', async () => {
    const [a, b] = await Promise.all([createAccount(tc.dataDir), createAccount(tc.dataDir)]);
    const buyer = new Trader(tc.baseUrl, a!);
    const seller = new Trader(tc.baseUrl, b!);
    await Promise.all([buyer.login(), seller.login()]);

    const sell = await seller.place({ symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: 2, price: 3000, time_in_force: 'GTC' });
    expect(sell.status).toBe(200);
    expect(sell.body.data?.status).toBe('NEW');
    const buy = await buyer.place({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.5, price: 3001, time_in_force: 'GTC' });
    expect(buy.status).toBe(200);

    const filled = await waitFor(async () => {
      const o = await buyer.order(buy.body.data!.order_id);
      return o.status === 'FILLED' ? o : null;
    }, 30_000, 'the buy order to fill');
    expect(filled.filled_quantity).toBe(0.5);
    expect(filled.average_fill_price).toBe(3000); // at the resting order's price
    const maker = await waitFor(async () => {
      const o = await seller.order(sell.body.data!.order_id);
      return o.status === 'PARTIALLY_FILLED' ? o : null;
    }, 30_000, 'the sell order to be partially filled');
    expect(maker.remaining_quantity).toBe(1.5);

    const cancel = await seller.call('DELETE', `/orders/${sell.body.data!.order_id}`);
    expect(cancel.status).toBe(200);
    const cancelled = await waitFor(async () => {
      const o = await seller.order(sell.body.data!.order_id);
      return o.status === 'CANCELLED' ? o : null;
    }, 30_000, 'the cancel');
    expect(cancelled.cancel_reason).toBe('USER_REQUESTED');
  });

  it('serves Prometheus metrics from every process that moved with the trading', async () => {
    const file = JSON.parse(readFileSync(join(tc.dataDir, 'cluster.json'), 'utf8')) as { processes: { role: string; index: number; ports: Record<string, number> }[] };
    const urlOf = (p: { ports: Record<string, number> }) => `http://127.0.0.1:${p.ports.metrics}/metrics`;
    const labelled = (m: Sample[], p: { role: string; index: number }) => m.every((x) => x.labels.role === p.role && x.labels.index === String(p.index));
    const gw = file.processes.find((p) => p.role === 'gateway')!;
    const gwm = await scrape(urlOf(gw));
    expect(labelled(gwm, gw)).toBe(true);
    const acks = sumOf(gwm, 'tenebra_gateway_orders_acknowledged_total');
    expect(acks).toBeGreaterThanOrEqual(2);
    expect(sumOf(gwm, 'tenebra_gateway_order_ack_seconds_count')).toBe(acks);
    expect(sumOf(gwm, 'tenebra_gateway_fills_total')).toBeGreaterThanOrEqual(2);
    expect(sumOf(gwm, 'tenebra_gateway_system_health', { status: 'ok' })).toBe(1);
    expect(sumOf(gwm, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    const seq = file.processes.find((p) => p.role === 'sequencer')!;
    const sm = await scrape(urlOf(seq));
    expect(labelled(sm, seq)).toBe(true);
    expect(sumOf(sm, 'tenebra_sequencer_ops_journaled_total')).toBeGreaterThanOrEqual(acks + 1); // the cancel too
    expect(sumOf(sm, 'tenebra_sequencer_subscribers')).toBe(5);
    expect(sumOf(sm, 'tenebra_sequencer_submitters')).toBe(1);
    for (const nd of file.processes.filter((p) => p.role === 'committee')) {
      // every node runs every job; one may finish its part of the last a moment after the others
      const nm = await waitFor(async () => {
        const m = await scrape(urlOf(nd));
        return sumOf(m, 'tenebra_node_ops_applied_total') >= acks + 1 ? m : null;
      }, 15_000, `node ${nd.index} to apply the trading's ops`);
      expect(labelled(nm, nd)).toBe(true);
      expect(sumOf(nm, 'tenebra_node_jobs_total')).toBeGreaterThan(0);
      expect(sumOf(nm, 'tenebra_node_rounds_total')).toBeGreaterThan(0);
      expect(sumOf(nm, 'tenebra_node_peer_sent_bytes_total')).toBeGreaterThan(0);
      expect(sumOf(nm, 'tenebra_node_quorum')).toBe(1);
      expect(sumOf(nm, 'tenebra_node_peers_up')).toBe(4);
    }
  });

  let resting = '';
  let traders: Trader[] = [];
  it('stops every process cleanly', async () => {
    // leave a resting order in the book, to find it again after the restart
    const [a, b] = await Promise.all([createAccount(tc.dataDir), createAccount(tc.dataDir)]);
    traders = [new Trader(tc.baseUrl, a!), new Trader(tc.baseUrl, b!)];
    await Promise.all(traders.map((t) => t.login()));
    const r = await traders[0]!.place({ symbol: 'BTC-USDC-PERP', side: 'sell', type: 'limit', quantity: 0.01, price: 65000, time_in_force: 'GTC' });
    expect(r.status).toBe(200);
    resting = r.body.data!.order_id;
    await waitFor(async () => (await traders[0]!.order(resting)).status === 'NEW', 10_000, 'the resting order');
    await new Promise((res) => setTimeout(res, 500)); // let the committee apply it before stopping
    await tc.cluster.stop(15_000);
    const codes = await Promise.all(tc.cluster.processes().map((p) => tc.cluster.exitOf(p.role, p.index)));
    expect(codes.every((c) => c === 0)).toBe(true);
  });

  it('a second start on the same folder resumes the cluster with its book', async () => {
    const again = await startTestCluster({ dataDir: tc.dataDir }); // configs (and ports) come from the folder
    tc = again;
    await Promise.all(traders.map((t) => t.login()));
    expect((await traders[0]!.order(resting)).status).toBe('NEW');
    const buy = await traders[1]!.place({ symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.01, price: 65010, time_in_force: 'IOC' });
    expect(buy.status).toBe(200);
    const filled = await waitFor(async () => {
      const o = await traders[1]!.order(buy.body.data!.order_id);
      return o.status === 'FILLED' ? o : null;
    }, 30_000, 'a fill against the order that rested before the restart');
    expect(filled.average_fill_price).toBe(65000);
  }, 120_000);
});
