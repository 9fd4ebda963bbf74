// Metrics ports in the launcher's data folder (docs/decisions/0012-metrics.md): planned with the
// others, checked for clashes, added to a folder made before metrics existed. No process starts.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PORTS, checkPortClash, layout, plannedPorts, readJson, writeJson, type GatewayConfig, type NodeConfig, type SequencerConfig } from '@tenebra/config';
import { expectedMeasurement } from '@tenebra/sequencer-enclave';
import { ensureCluster } from '../src/cluster';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function fresh(): string {
  const d = mkdtempSync(join(tmpdir(), 'tenebra-metrics-ports-'));
  dirs.push(d);
  return d;
}
const ports = { gateway: 31080, gatewayInternal: 31200, sequencer: 31100, nodeBase: 31001, metricsBase: 31300 };

describe('metrics ports', () => {
  it('the default plans give every process its own, clashing with nothing up to 64 nodes', () => {
    for (const env of ['production', 'test'] as const) {
      expect(() => checkPortClash(plannedPorts(DEFAULT_PORTS[env], 64))).not.toThrow();
      expect(plannedPorts(DEFAULT_PORTS[env], 5).filter((p) => p.name.endsWith('metrics')).map((p) => p.port))
        .toEqual(Array.from({ length: 7 }, (_, k) => DEFAULT_PORTS[env].metricsBase! + k));
    }
  });

  it('a new folder writes them into each config, where the measurement ignores them', async () => {
    const dir = fresh();
    const c = await ensureCluster({ dataDir: dir, env: 'test', ports });
    expect(c.gateway.metricsPort).toBe(31300);
    expect(c.sequencer.metricsPort).toBe(31301);
    expect(c.nodes.map((nd) => nd.metricsPort)).toEqual([31302, 31303, 31304, 31305, 31306]);
    expect(expectedMeasurement({ ...c.sequencer, metricsPort: 1 })).toBe(expectedMeasurement(c.sequencer));
  });

  it('a clash is refused before anything is written', async () => {
    const dir = fresh();
    await expect(ensureCluster({ dataDir: join(dir, 'a'), env: 'test', ports: { ...ports, metricsBase: 31003 } }))
      .rejects.toThrow(/port 31003 is planned twice: for the node 3 and for the gateway metrics/);
    await expect(ensureCluster({ dataDir: join(dir, 'b'), env: 'test', ports: { ...ports, metricsBase: 31199 } }))
      .rejects.toThrow(/port 31200 is planned twice: for the gateway internal and for the sequencer metrics/);
    expect(existsSync(join(dir, 'a')) || existsSync(join(dir, 'b'))).toBe(false);
  });

  it('a folder made before metrics gets them at its next start, and keeps them after', async () => {
    const dir = fresh();
    const L = layout(dir);
    const { metricsBase: _m, ...without } = ports;
    await ensureCluster({ dataDir: dir, env: 'test', ports: without });
    const seqBefore = readJson<SequencerConfig>(L.sequencerConfig);
    expect(seqBefore.metricsPort).toBeUndefined();
    const resumed = await ensureCluster({ dataDir: dir, env: 'test', ports });
    expect(readJson<GatewayConfig>(L.gatewayConfig).metricsPort).toBe(31300);
    expect(readJson<SequencerConfig>(L.sequencerConfig).metricsPort).toBe(31301);
    expect(resumed.nodes.map((nd) => readJson<NodeConfig>(L.nodeConfig(nd.index)).metricsPort)).toEqual([31302, 31303, 31304, 31305, 31306]);
    expect(readJson<GatewayConfig>(L.gatewayConfig).expectedMeasurement).toBe(expectedMeasurement(seqBefore));
    // a port set by hand stays; a later plan does not move it
    const nd1 = readJson<NodeConfig>(L.nodeConfig(1));
    writeJson(L.nodeConfig(1), { ...nd1, metricsPort: 31400 });
    await ensureCluster({ dataDir: dir, env: 'test', ports: { ...ports, metricsBase: 31500 } });
    expect(readJson<NodeConfig>(L.nodeConfig(1)).metricsPort).toBe(31400);
    expect(readJson<GatewayConfig>(L.gatewayConfig).metricsPort).toBe(31300);
  });

  it('a resumed folder whose ports would clash with the added ones is refused', async () => {
    const dir = fresh();
    const { metricsBase: _m, ...without } = ports;
    await ensureCluster({ dataDir: dir, env: 'test', ports: without });
    await expect(ensureCluster({ dataDir: dir, env: 'test', ports: { ...ports, metricsBase: 31078 } }))
      .rejects.toThrow(/port 31080 is planned twice: for the gateway and for the node 1 metrics/);
  });
});
