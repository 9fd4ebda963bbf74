// Chaos on real processes: while orders flow through REST, kill -9 two committee nodes; trading
// goes on, every acknowledged order is accounted for and every fill equals the plaintext reference.
// The killed nodes restart, recover their shares and rejoin (proved by then killing two others);
// the sequencer and the gateway are killed and restarted without losing anything acknowledged.
import { describe, it, beforeAll, afterAll } from 'vitest';
import { waitForReserve, type TestCluster, type Trader } from './harness';
import { startFlowCluster, type OrderFlow } from './order-flow';

describe('chaos: kill -9 while orders flow', () => {
  let tc: TestCluster;
  let traders: Trader[] = [];
  let orders: OrderFlow;
  const seed = Number(process.env.CHAOS_SEED ?? 20261122);

  beforeAll(async () => {
    // supervised as `npm start` runs them: a restarted node that finds the others past the jobs it
    // resumed at exits on purpose and recovers its shares in its next life (ADR 0002)
    ({ tc, traders, orders } = await startFlowCluster(seed, 4, { supervise: true, ...(process.env.CHAOS_DEBUG ? { logLevel: 'debug' as const } : {}) }));
  }, 150_000);
  afterAll(async () => {
    await tc?.cleanup();
  });
  const flow = (count: number, onStep?: (i: number) => Promise<void>) => orders.run(count, onStep);
  const verifyAll = () => orders.verifyAll();
  const rand = () => orders.rand();

  it('two nodes killed mid-flow: trading continues and fills equal the reference', async () => {
    // Outages run on the preprocessing reserve, which only five live nodes can fill: start full.
    await waitForReserve(tc.dataDir, [1, 2, 3, 4, 5], { bits: 30_000, lex4: 3_000, prod4: 750, triples: 1_500 }, 240_000);
    const killed = [1 + Math.floor(rand() * 5)];
    while (killed.length < 2) {
      const k = 1 + Math.floor(rand() * 5);
      if (!killed.includes(k)) killed.push(k);
    }
    await flow(60, async (i) => {
      if (i === 20) await tc.cluster.kill('committee', killed[0]!);
      if (i === 35) await tc.cluster.kill('committee', killed[1]!);
    });
    await verifyAll();
    // restart them: they recover shares from the three live nodes and rejoin
    for (const k of killed) tc.cluster.spawnProc('committee', k);
    await tc.cluster.waitReady(60_000);
    await flow(20);
    await verifyAll();
    // The reserve is sized for an outage (DESIGN: preprocessing needs all five): let it refill first.
    await waitForReserve(tc.dataDir, [1, 2, 3, 4, 5], { bits: 30_000, lex4: 3_000, prod4: 750, triples: 1_500 }, 240_000);
    // now kill two of the nodes that never died: the recovered ones must carry the book
    const others = [1, 2, 3, 4, 5].filter((k) => !killed.includes(k)).slice(0, 2);
    for (const k of others) await tc.cluster.kill('committee', k);
    await flow(30);
    await verifyAll();
    for (const k of others) tc.cluster.spawnProc('committee', k);
    await tc.cluster.waitReady(60_000);
  }, 720_000);

  it('sequencer killed and restarted: every acknowledged order is still there', async () => {
    await flow(15);
    await tc.cluster.restart('sequencer', 0);
    await flow(15);
    await verifyAll();
  }, 240_000);

  it('gateway killed and restarted: every acknowledged order is still there in the same state', async () => {
    await flow(15);
    await verifyAll();
    await tc.cluster.restart('gateway', 0);
    await tc.cluster.waitReady(60_000);
    await Promise.all(traders.map((t) => t.login().catch(() => t.login())));
    await verifyAll();
    await flow(15);
    await verifyAll();
  }, 240_000);
});
