// The launcher's data folder for other committee sizes (`npm start -- --nodes N --threshold T`):
// generated configs, and the clear errors for what a cluster could not run with. No process starts.
import { describe, it, expect } from 'vitest';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCluster } from '../src/cluster';
import { describeLinks, linkEmulationOf, parseFlags, LINK_FLAGS } from '../src/flags';
import { layout, readJson, type NodeConfig } from '@tenebra/config';

const folder = (): string => mkdtempSync(join(tmpdir(), 'tenebra-config-'));
const ports = { gateway: 31080, gatewayInternal: 31200, sequencer: 31100, nodeBase: 31001 };

describe('ensureCluster with a committee size', () => {
  it('writes n node configs with n and t everywhere, and resumes the folder with its own size', async () => {
    const dir = folder();
    try {
      const c = await ensureCluster({ dataDir: dir, env: 'test', n: 7, t: 3, ports });
      expect(c.nodes.map((nd) => [nd.index, nd.n, nd.t, nd.port])).toEqual(Array.from({ length: 7 }, (_, i) => [i + 1, 7, 3, 31001 + i]));
      expect([c.gateway.n, c.gateway.t, c.gateway.nodes.length, c.sequencer.n]).toEqual([7, 3, 7, 7]);
      for (const nd of c.nodes) expect(nd.peers.map((p) => p.index)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      const again = await ensureCluster({ dataDir: dir, env: 'test' });
      expect(again.gateway.nodes).toEqual(c.gateway.nodes);
      expect(again.nodes.map((nd) => nd.peers)).toEqual(c.nodes.map((nd) => nd.peers));
      await expect(ensureCluster({ dataDir: dir, env: 'test', n: 5, t: 2 })).rejects.toThrow(/holds a committee of n=7, t=3, not n=5, t=2/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses, before writing anything, a size whose comparisons do not fit the field, or node ports on another process', async () => {
    const dir = folder();
    try {
      // C(64, 31) PRSS subsets: the comparison's mask would need 139 bits of a 127-bit field
      await expect(ensureCluster({ dataDir: join(dir, 'a'), env: 'test', n: 64, t: 31, ports })).rejects.toThrow(/comparison does not fit/);
      // C(35, 17) fits book comparisons (32 bits) but not the 48-bit liquidity sums of FOK, aon and min_fill_size
      await expect(ensureCluster({ dataDir: join(dir, 'd'), env: 'test', n: 35, t: 17, ports })).rejects.toThrow(/comparison does not fit.*L=48/);
      await expect(ensureCluster({ dataDir: join(dir, 'b'), env: 'test', n: 5, t: 3, ports })).rejects.toThrow(/t < n\/2/);
      await expect(ensureCluster({ dataDir: join(dir, 'c'), env: 'test', n: 7, t: 3, ports: { ...ports, sequencer: 31005 } })).rejects.toThrow(/31001-31007 include port 31005/);
      for (const d of ['a', 'b', 'c', 'd']) expect(existsSync(join(dir, d))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('emulated WAN links between the nodes (npm start -- --link-latency-ms ...)', () => {
  it('are written into every node config for this run, changed or removed by the next start of the folder', async () => {
    const dir = folder();
    try {
      const links = { latencyMs: 20, jitterMs: 5, bandwidthMbps: 100 };
      const c = await ensureCluster({ dataDir: dir, env: 'test', ports, linkEmulation: links });
      const onDisk = (): (NodeConfig['linkEmulation'])[] => c.nodes.map((nd) => readJson<NodeConfig>(layout(dir).nodeConfig(nd.index)).linkEmulation);
      expect(onDisk()).toEqual(Array(5).fill(links));
      await ensureCluster({ dataDir: dir, env: 'test', linkEmulation: { latencyMs: 50 } });
      expect(onDisk()).toEqual(Array(5).fill({ latencyMs: 50 }));
      const plain = await ensureCluster({ dataDir: dir, env: 'test' });
      expect(plain.nodes.every((nd) => nd.linkEmulation === undefined)).toBe(true);
      expect(onDisk()).toEqual(Array(5).fill(undefined));
      await expect(ensureCluster({ dataDir: join(dir, 'x'), env: 'test', ports, linkEmulation: { latencyMs: 5, jitterMs: 9 } })).rejects.toThrow(/may not exceed latencyMs/);
      expect(existsSync(join(dir, 'x'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are read from the launcher flags, with clear errors', () => {
    const of = (...argv: string[]) => linkEmulationOf(parseFlags(argv, LINK_FLAGS));
    expect(of()).toBeUndefined();
    expect(of('--link-latency-ms', '30', '--link-jitter-ms', '2.5')).toEqual({ latencyMs: 30, jitterMs: 2.5 });
    expect(of('--link-bandwidth-mbps', '50')).toEqual({ bandwidthMbps: 50 });
    expect(() => of('--link-latency-ms', 'fast')).toThrow(/--link-latency-ms must be a non-negative number, got 'fast'/);
    expect(() => of('--link-jitter-ms', '3')).toThrow(/--link-jitter-ms needs --link-latency-ms/);
    expect(describeLinks(of('--link-latency-ms', '30', '--link-jitter-ms', '2'))).toBe('committee links emulated: 30 ms one way, ± 2 ms jitter, unlimited bandwidth');
    expect(describeLinks(undefined)).toBe('committee links: loopback (no emulation)');
  });
});
