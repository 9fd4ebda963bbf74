// A real cluster whose committee links run over Unix domain sockets (`npm start -- --links unix`,
// docs/decisions/0041-unix-socket-links.md): orders match as the plaintext reference says, a node
// killed with SIGKILL leaves its socket file behind, and restarted on it recovers its shares and
// rejoins; emulated latency applies on the sockets as on TCP.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { layout, readJson, type ClusterFile, type NodeConfig } from '@tenebra/config';
import { unixSocketPathOf } from '@tenebra/transport';
import { nodeLog, waitFor, waitForReserve, type TestCluster } from './harness';
import { startFlowCluster, type OrderFlow } from './order-flow';

const NODES = [1, 2, 3, 4, 5];

describe('committee links over unix sockets', () => {
  let tc: TestCluster;
  let orders: OrderFlow;

  beforeAll(async () => {
    // supervised as `npm start` runs them (ADR 0002: a restarted node may end on purpose and recover)
    ({ tc, orders } = await startFlowCluster(Number(process.env.CHAOS_SEED ?? 41), 3, { supervise: true, links: 'unix', linkEmulation: { latencyMs: 1 } }));
  }, 150_000);
  afterAll(async () => {
    await tc?.cleanup();
  });

  it('the nodes listen and dial on their sockets, not on TCP ports', () => {
    const L = layout(tc.dataDir);
    for (const k of NODES) {
      const cfg = readJson<NodeConfig>(L.nodeConfig(k));
      const path = unixSocketPathOf(cfg.listen)!;
      expect(path).toBe(`${L.root}/sockets/node-${k}.sock`);
      expect(lstatSync(path).isSocket()).toBe(true);
      expect(cfg.peers.every((p) => unixSocketPathOf(p.addr) !== undefined)).toBe(true);
      expect(cfg.linkEmulation).toEqual({ latencyMs: 1 });
    }
    const file = JSON.parse(readFileSync(L.clusterFile, 'utf8')) as ClusterFile;
    for (const p of file.processes.filter((e) => e.role === 'committee')) expect(p.ports['libp2p']).toBeUndefined();
    expect(file.processes.find((e) => e.role === 'gateway')!.ports['http']).toBeGreaterThan(0); // the gateway stays on TCP
  });

  it('orders match as the reference says; a node killed with SIGKILL comes back on its leftover socket and recovers its shares', async () => {
    // an outage runs on the reserve, which only five live nodes fill
    await waitForReserve(tc.dataDir, NODES, { bits: 6_000, lex4: 600, prod4: 150, triples: 300 }, 240_000);
    await orders.run(15);
    await orders.verifyAll();
    const socket2 = `${layout(tc.dataDir).root}/sockets/node-2.sock`;
    await orders.run(12, async (i) => {
      if (i === 3) await tc.cluster.kill('committee', 2);
    });
    await orders.verifyAll();
    expect(existsSync(socket2) && lstatSync(socket2).isSocket()).toBe(true); // nothing unlinked it
    const recoveredBefore = nodeLog(tc.dataDir, 2).split('recovered shares from helpers').length;
    tc.cluster.spawnProc('committee', 2);
    await tc.cluster.waitReady(180_000);
    await waitFor(async () => nodeLog(tc.dataDir, 2).split('recovered shares from helpers').length > recoveredBefore, 120_000, 'node 2 to recover its shares');
    await orders.run(10);
    await orders.verifyAll();
  }, 600_000);
});
