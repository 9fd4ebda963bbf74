// Committee deaths beyond the two the committee tolerates, on real processes, while orders flow
// through REST (the sequencer keeps acknowledging them; matching waits):
//  - a third death: the two live nodes report quorum lost and match nothing; one dead node returns,
//    finds too few ready helpers for share recovery, resumes from the state it persisted at its last
//    job boundary, and the three finish every acknowledged order exactly as the plaintext reference;
//    the last two return with share recovery.
//  - the whole committee killed at once: the five restart from their own job-boundary states and
//    carry on, with every acknowledged order in its reference state.
//  - two killed while three go on, then all: the three resume from their own states, the two take
//    shares from them.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { appliedBy, nodeLog, waitFor, waitForQuietPreprocessing, waitForReserve, type TestCluster } from './harness';
import { startFlowCluster, type OrderFlow } from './order-flow';
import { layout, readJson, writeJson, type NodeConfig } from '@tenebra/config';

const NODES = [1, 2, 3, 4, 5];
const UNREACHABLE_MS = 20_000;

describe('committee restarts beyond the tolerated two', () => {
  let tc: TestCluster;
  let orders: OrderFlow;

  beforeAll(async () => {
    // Supervised, as `npm start` runs them: a node that finds itself stale ends and recovers in its
    // next life. After a whole-committee restart that was common (a node in share recovery abstained
    // on the batch the others restored staged: seeds 71, 78, 122, 131, 133) until helpers decided
    // such a batch before answering (11-25); other ways to stale remain (docs/decisions/0009).
    ({ tc, orders } = await startFlowCluster(Number(process.env.CHAOS_SEED ?? 7), 3, { supervise: true }));
  }, 150_000);
  afterAll(async () => {
    await tc?.cleanup();
  });

  const logOf = (k: number): string => nodeLog(tc.dataDir, k);
  /** Sets (undefined: removes) node k's share-recovery fallback bounds for its next start. */
  const setFallback = (k: number, f: NodeConfig['recoveryFallback']): void => {
    const file = layout(tc.dataDir).nodeConfig(k);
    const cfg = readJson<NodeConfig>(file);
    if (f === undefined) delete cfg.recoveryFallback;
    else cfg.recoveryFallback = f;
    writeJson(file, cfg);
  };
  const applied = (k: number): string => appliedBy(tc.dataDir, k);

  it('a third death stalls matching; a returning node resumes from its own state and the results are the reference', async () => {
    await waitForReserve(tc.dataDir, NODES, { bits: 30_000, lex4: 3_000, prod4: 750, triples: 1_500 }, 240_000);
    await orders.run(15);
    await orders.verifyAll();
    const quorumLostBefore = logOf(1).split('quorum lost').length;
    await orders.run(12, async (i) => {
      if (i === 4) await Promise.all([3, 4, 5].map((k) => tc.cluster.kill('committee', k)));
    });
    // the two live nodes cannot match the orders acknowledged since: they say so
    await waitFor(async () => logOf(1).split('quorum lost').length > quorumLostBefore, 60_000, 'node 1 to report quorum lost');
    // Node 3 waits out the bound without t+1 helpers connected in full (a third death): 20 s here,
    // not the default 45 s (NodeConfig.recoveryFallback.unreachableMs, for this one life of node 3
    // only). The nodes that return to three live helpers keep the default: at a load average of 30
    // on two cores their links took more than 20 s to come up (CI-like run, 2026-12-02).
    setFallback(3, { unreachableMs: UNREACHABLE_MS });
    tc.cluster.spawnProc('committee', 3);
    await waitFor(async () => /fewer than 3 ready helpers.*resuming from own persisted state/.test(logOf(3)), 90_000, 'node 3 to resume from its own state');
    setFallback(3, undefined);
    expect(logOf(3)).toContain(`fewer than 3 ready helpers for ${UNREACHABLE_MS} ms`); // the configured bound, not the default
    await orders.verifyAll(120_000);
    // the other two come back with share recovery from the three live nodes
    tc.cluster.spawnProc('committee', 4);
    tc.cluster.spawnProc('committee', 5);
    await tc.cluster.waitReady(180_000);
    for (const k of [4, 5]) expect(logOf(k)).toContain('recovered shares from helpers');
    await orders.run(10);
    await orders.verifyAll();
  }, 600_000);

  it('the whole committee killed at once resumes from its persisted states', async () => {
    // Killed once every acknowledged order is matched: nodes killed within the few milliseconds
    // in which some have written a job and others not would come back a job apart, which is the
    // known limit of docs/decisions/0002 (a stall, never a wrong answer), not what this checks.
    await orders.run(6);
    await orders.verifyAll();
    await waitFor(async () => new Set(NODES.map(applied)).size === 1, 30_000, 'all five nodes to have applied the same last batch');
    await waitForQuietPreprocessing(tc.dataDir, NODES);
    const logStart = NODES.map((k) => logOf(k).length);
    await Promise.all(NODES.map((k) => tc.cluster.kill('committee', k)));
    await orders.run(6); // acknowledged by the sequencer while no node is up
    for (const k of NODES) tc.cluster.spawnProc('committee', k);
    await tc.cluster.waitReady(180_000);
    // They find each other recovering at the same boundary: t+1 or more resume from their own state
    // at once, any others take shares from those; nobody waits out the no-helpers timeout.
    const since = NODES.map((k) => logOf(k).slice(logStart[k - 1]));
    const agreed = since.filter((text) => /or more recovering nodes persisted at seq \d+.*resuming from own persisted state/.test(text));
    expect(agreed.length).toBeGreaterThanOrEqual(3);
    for (const text of since) {
      expect(text).not.toMatch(/fewer than 3 ready helpers/);
      expect(agreed.includes(text) || text.includes('recovered shares from helpers')).toBe(true);
    }
    await orders.verifyAll(120_000);
    await orders.run(10);
    await orders.verifyAll();
  }, 600_000);

  it('two die, the other three go on, then all die: the three resume, the two take shares from them', async () => {
    await waitForReserve(tc.dataDir, NODES, { bits: 20_000, lex4: 2_000, prod4: 500, triples: 1_000 }, 240_000);
    await orders.run(4);
    await orders.verifyAll();
    await Promise.all([1, 2].map((k) => tc.cluster.kill('committee', k)));
    await orders.run(6); // nodes 3-5 match these: their persisted states move past those of 1 and 2
    await orders.verifyAll();
    await waitFor(async () => new Set([3, 4, 5].map(applied)).size === 1, 30_000, 'nodes 3-5 to have applied the same last batch');
    await waitForQuietPreprocessing(tc.dataDir, [3, 4, 5]);
    const logStart = NODES.map((k) => logOf(k).length);
    await Promise.all([3, 4, 5].map((k) => tc.cluster.kill('committee', k)));
    for (const k of NODES) tc.cluster.spawnProc('committee', k);
    await tc.cluster.waitReady(180_000);
    const since = NODES.map((k) => logOf(k).slice(logStart[k - 1]));
    // the three resume from their own (newest) state, at once when they see each other recovering,
    // or after the no-helpers timeout when the first two were already up; the two behind never do
    for (const k of [3, 4, 5]) expect(since[k - 1]).toContain('resuming from own persisted state');
    for (const k of [1, 2]) {
      expect(since[k - 1]).toContain('recovered shares from helpers');
      expect(since[k - 1]).not.toContain('resuming from own persisted state');
    }
    await orders.run(8);
    await orders.verifyAll();
  }, 600_000);
});
