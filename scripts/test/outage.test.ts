// An outage longer than the preprocessing reserve, on real processes (docs/decisions/0016-outage-capacity.md):
// with a small reserve, two nodes are killed; trading goes on while the reserve lasts and system_health
// says production stopped and how many more orders it covers; once it runs out, new orders get the
// clear degraded error (503 / 1505 RESERVE_EXHAUSTED, nothing submitted) and health says
// reserve_exhausted; the two nodes restart, production resumes by itself, the waiting orders are
// matched, trading resumes, and every acknowledged order ends exactly as the plaintext reference says.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { nodeStatus, waitFor, waitForQuietPreprocessing, waitForReserve, type TestCluster } from './harness';
import { startFlowCluster, type OrderFlow } from './order-flow';

const NODES = [1, 2, 3, 4, 5];
/** A reserve of a few dozen placements on a shallow book (the default is 40,000 bits). */
const RESERVE = { bits: 6_000, lex4: 500, prod4: 60, triples: 30 };

interface Health {
  status: string;
  reasons: string[];
  message: string;
  live_nodes: number;
  preprocessing?: string;
  reserve_orders?: string;
}

describe('outage capacity: trading on the reserve, a clear refusal past it, resumption', () => {
  let tc: TestCluster;
  let orders: OrderFlow;

  beforeAll(async () => {
    // supervised as `npm start` runs them: a node that finds itself stale ends and recovers in its next life
    ({ tc, orders } = await startFlowCluster(Number(process.env.CHAOS_SEED ?? 16), 2, { reserve: RESERVE, supervise: true }));
  }, 150_000 + Number(process.env.TENEBRA_TEST_READY_MS ?? 0));
  afterAll(async () => {
    await tc?.cleanup();
  });

  const health = async (): Promise<Health> => {
    const r = await fetch(`${tc.baseUrl}/system/health`);
    expect(r.status).toBe(200);
    return ((await r.json()) as { data: Health }).data;
  };

  it('two nodes down past the reserve: clear refusal, no acknowledged order lost, trading resumes when they return', async () => {
    await waitForReserve(tc.dataDir, NODES, { ...RESERVE }, 60_000);
    await orders.run(6); // the nodes measure the cost per op from these
    await orders.verifyAll();
    await waitForReserve(tc.dataDir, NODES, { ...RESERVE }, 60_000);
    await waitForQuietPreprocessing(tc.dataDir, NODES);
    expect((await health()).status).toBe('ok');

    for (const k of [4, 5]) await tc.cluster.kill('committee', k);
    const stopped = await waitFor(async () => {
      const h = await health();
      return h.preprocessing === 'stopped' && h.reserve_orders !== undefined ? h : null;
    }, 15_000, 'system_health to say production stopped, with the orders the reserve covers');
    expect(stopped.status).toBe('degraded');
    expect(stopped.reasons).toEqual(['nodes_missing', 'preprocessing_stopped']);
    const estimate = Number(stopped.reserve_orders);

    // Trade until the committee says it cannot match; every 200 is an acknowledged order.
    const before = orders.acked.length;
    let refused: { status: number; body: { code?: unknown; message?: string } } | null = null;
    for (let i = 0; i < 400 && !refused; i++) {
      const r = await orders.placeRandom();
      if (r.status !== 200) refused = r;
    }
    const acked = orders.acked.length - before;
    console.log(`outage: system_health estimated ${estimate}+ orders (floored to 10); ${acked} acknowledged before the refusal`);
    expect(refused, 'no refusal within 400 placements').not.toBeNull();
    expect(refused!.status).toBe(503);
    expect(refused!.body.code).toBe(1505);
    expect(refused!.body.message).toMatch(/^RESERVE_EXHAUSTED: degraded mode: the committee ran out of preprocessing/);
    expect(acked).toBeGreaterThan(0);
    const down = await health();
    expect(down).toMatchObject({ status: 'down', preprocessing: 'exhausted' });
    expect(down.reasons).toContain('reserve_exhausted');
    expect(nodeStatus(tc.dataDir, 1)).toBeDefined();

    // The two return: share recovery, then production, then the waiting batch runs by itself.
    for (const k of [4, 5]) tc.cluster.spawnProc('committee', k);
    await tc.cluster.waitReady(120_000);
    await waitFor(async () => (await health()).status === 'ok', 60_000, 'system_health to return to ok');
    await orders.run(8);
    await orders.verifyAll(90_000);
  }, 300_000);
});
