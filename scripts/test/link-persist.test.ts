// The operator's link settings survive a node's restart within a run (ADR 0011, "Kept across a
// restart"): a node killed with kill -9 and started again by the cluster comes back with the latency
// and the cut the operator set, before it dials anyone, and says so in its log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeLog, startTestCluster, waitFor, type TestCluster } from './harness';

let tc: TestCluster;
beforeAll(async () => {
  tc = await startTestCluster();
}, 180_000);
afterAll(async () => {
  await tc?.cleanup();
});

async function links(node: number, body?: object): Promise<{ status: number; json: Record<string, unknown> }> {
  const url = tc.cluster.linkControlUrls().find((u) => u.index === node)!.url;
  const r = await fetch(url, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${tc.cluster.operatorToken}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

/** Kills the node (kill -9), lets the cluster start it again, and reads its link settings once it answers. */
async function restartAndRead(node: number): Promise<Record<string, unknown>> {
  await tc.cluster.restart('committee', node);
  // 503 until its links exist again, connection refused before it listens
  return waitFor(async () => {
    try {
      const r = await links(node);
      return r.status === 200 ? r.json : undefined;
    } catch {
      return undefined;
    }
  }, 90_000, `node ${node} to answer GET /control/links after its restart`);
}

describe('link settings across a restart', () => {
  it('a restarted node comes back with the latency and the cut the operator set in this run', async () => {
    const set = await links(3, { latency_ms: 4, jitter_ms: 1, blocked_peers: [5] });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ node: 3, latency_ms: 4, jitter_ms: 1, bandwidth_mbps: null, blocked_peers: [5] });
    const back = await restartAndRead(3);
    expect(back).toMatchObject({ node: 3, latency_ms: 4, jitter_ms: 1, bandwidth_mbps: null, blocked_peers: [5] });
    expect(nodeLog(tc.dataDir, 3)).toContain('committee links restored');
    // healing is kept too: a second restart comes back whole
    expect((await links(3, { latency_ms: 0, jitter_ms: 0, blocked_peers: [] })).status).toBe(200);
    const healed = await restartAndRead(3);
    expect(healed).toMatchObject({ latency_ms: 0, jitter_ms: 0, blocked_peers: [] });
  }, 240_000);
});
