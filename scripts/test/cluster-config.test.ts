// The launcher's data folder for other committee sizes (`npm start -- --nodes N --threshold T`):
// generated configs, and the clear errors for what a cluster could not run with. No process starts.
import { describe, it, expect } from 'vitest';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCluster } from '../src/cluster';
import { describeLinks, linkEmulationOf, parseFlags, LINK_FLAGS } from '../src/flags';
import { DEFAULT_JOB_BOUNDARIES, layout, readJson, writeJson, type GatewayConfig, type NodeConfig, type SequencerConfig } from '@tenebra/config';
import { DEFAULT_KAPPA } from '@tenebra/mpc';
import { startOptions } from '../src/start-options';

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
      // at kappa = 64, C(35, 17) (nu = 33) no longer fits even the 32-bit book comparisons
      await expect(ensureCluster({ dataDir: join(dir, 'e'), env: 'test', n: 35, t: 17, ports })).rejects.toThrow(/comparison does not fit.*L=32, kappa=64/);
      // C(11, 5) = 462 (nu = 9) fits book comparisons (32 bits) but not the 48-bit liquidity sums of FOK, aon and min_fill_size
      await expect(ensureCluster({ dataDir: join(dir, 'd'), env: 'test', n: 11, t: 5, ports })).rejects.toThrow(/comparison does not fit: K \+ kappa \+ nu \+ 1 = 127 bits > 126 \(L=48, kappa=64, n=11, t=5\)/);
      await expect(ensureCluster({ dataDir: join(dir, 'b'), env: 'test', n: 5, t: 3, ports })).rejects.toThrow(/t < n\/2/);
      await expect(ensureCluster({ dataDir: join(dir, 'c'), env: 'test', n: 7, t: 3, ports: { ...ports, sequencer: 31005 } })).rejects.toThrow(/31001-31007 include port 31005/);
      for (const d of ['a', 'b', 'c', 'd', 'e']) expect(existsSync(join(dir, d))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the comparisons\' statistical security (kappa) of a new folder', () => {
  it('is the engine default, 64, in every node config, and every committee size the README names fits at it', async () => {
    const dir = folder();
    try {
      expect(DEFAULT_KAPPA).toBe(64);
      for (const [n, t] of [[3, 1], [5, 2], [7, 3], [7, 2]] as const) {
        const c = await ensureCluster({ dataDir: join(dir, `${n}-${t}`), env: 'test', n, t, ports });
        expect(c.nodes.map((nd) => nd.kappa)).toEqual(Array(n).fill(64));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the committee console flags (npm start -- --console-port P | --no-console)', () => {
  it('default to 8090 (production) and 9090 (test), take a port or none, and refuse a bad one', () => {
    const port = (argv: string[]) => {
      const o = startOptions(argv);
      return o.help ? 'help' : o.consolePort;
    };
    expect(port([])).toBe(8090);
    expect(port(['--env', 'test'])).toBe(9090);
    expect(port(['--console-port', '0'])).toBe(0);
    expect(port(['--console-port', '8123'])).toBe(8123);
    expect(port(['--no-console'])).toBeNull();
    expect(() => startOptions(['--console-port', 'x'])).toThrow(/--console-port must be a port number/);
    expect(() => startOptions(['--console-port', '70000'])).toThrow(/--console-port must be a port number/);
  });
});

describe('the share fan-out (npm start -- --share-fanout all|spare|minimal)', () => {
  it('is written into every node config of a new folder, changed or removed on a resumed one, and a bad value is refused', async () => {
    const dir = folder();
    try {
      const o = startOptions(['--share-fanout', 'minimal', '--data', join(dir, 'f')]);
      expect(o.help === false && o.options.shareFanout).toBe('minimal');
      expect(() => startOptions(['--share-fanout', 'some'])).toThrow(/--share-fanout must be one of all, spare, minimal, got 'some'/);
      const made = await ensureCluster({ dataDir: join(dir, 'f'), env: 'test', ports, shareFanout: 'minimal' });
      expect(made.nodes.map((nd) => nd.shareFanout)).toEqual(Array(5).fill('minimal'));
      const spare = await ensureCluster({ dataDir: join(dir, 'f'), env: 'test', ports, shareFanout: 'spare' });
      expect(spare.nodes.map((nd) => nd.shareFanout)).toEqual(Array(5).fill('spare'));
      // absent: back to 'all', which the configs say by leaving the field out
      const all = await ensureCluster({ dataDir: join(dir, 'f'), env: 'test', ports });
      expect(all.nodes.every((nd) => nd.shareFanout === undefined)).toBe(true);
      const fresh = await ensureCluster({ dataDir: join(dir, 'g'), env: 'test', ports, shareFanout: 'all' });
      expect(fresh.nodes.every((nd) => nd.shareFanout === undefined)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('job boundaries (npm start -- --job-boundaries intake|progress, ADR 0008)', () => {
  it("default to 'progress', which the sequencer config says by leaving the field out; 'intake' is written, and removed by a start without the flag", async () => {
    const dir = folder();
    try {
      expect(DEFAULT_JOB_BOUNDARIES).toBe('progress');
      const o = startOptions(['--job-boundaries', 'intake', '--data', join(dir, 'f')]);
      expect(o.help === false && o.options.jobBoundaries).toBe('intake');
      expect(() => startOptions(['--job-boundaries', 'some'])).toThrow(/--job-boundaries must be one of intake, progress, got 'some'/);
      const fresh = await ensureCluster({ dataDir: join(dir, 'g'), env: 'test', ports });
      expect(fresh.sequencer.jobBoundaries).toBeUndefined();
      const intake = await ensureCluster({ dataDir: join(dir, 'f'), env: 'test', ports, jobBoundaries: 'intake' });
      expect(intake.sequencer.jobBoundaries).toBe('intake');
      expect(readJson<SequencerConfig>(layout(join(dir, 'f')).sequencerConfig).jobBoundaries).toBe('intake');
      const back = await ensureCluster({ dataDir: join(dir, 'f'), env: 'test', ports });
      expect(back.sequencer.jobBoundaries).toBeUndefined();
      const named = await ensureCluster({ dataDir: join(dir, 'f'), env: 'test', ports, jobBoundaries: 'progress' });
      expect(named.sequencer.jobBoundaries).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('dealer preprocessing (npm start -- --dealer): not private', () => {
  it('is refused with --env production, by the flags and by ensureCluster, before anything is written', async () => {
    const dir = folder();
    try {
      const refused = /dealer preprocessing is refused with --env production: it is not private/;
      expect(() => startOptions(['--dealer', '--data', join(dir, 'p')])).toThrow(refused);
      expect(() => startOptions(['--dealer', '--env', 'production', '--data', join(dir, 'p')])).toThrow(refused);
      const ok = startOptions(['--dealer', '--env', 'test', '--data', join(dir, 't')]);
      expect(ok.help === false && ok.options.preprocessing).toBe('dealer');
      const plain = startOptions(['--data', join(dir, 'c')]);
      expect(plain.help === false && plain.options.preprocessing).toBeUndefined();
      expect(startOptions(['--dealer', '--help']).help).toBe(true);
      await expect(ensureCluster({ dataDir: join(dir, 'p'), env: 'production', preprocessing: 'dealer', ports })).rejects.toThrow(refused);
      expect(existsSync(join(dir, 'p'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('labels the sequencer and gateway configs of a test folder (their logs carry the label), and only those', async () => {
    const dir = folder();
    try {
      const c = await ensureCluster({ dataDir: join(dir, 'd'), env: 'test', preprocessing: 'dealer', ports });
      expect(c.nodes.every((nd) => nd.preprocessing.mode === 'dealer')).toBe(true);
      expect([c.sequencer.committeePreprocessing, c.gateway.committeePreprocessing]).toEqual(['dealer', 'dealer']);
      const L = layout(join(dir, 'd'));
      // a dealer folder made before the labels gets them at its next start
      const seq = readJson<SequencerConfig>(L.sequencerConfig);
      delete seq.committeePreprocessing;
      writeJson(L.sequencerConfig, seq);
      const gw = readJson<GatewayConfig>(L.gatewayConfig);
      delete gw.committeePreprocessing;
      writeJson(L.gatewayConfig, gw);
      await ensureCluster({ dataDir: join(dir, 'd'), env: 'test' });
      expect(readJson<SequencerConfig>(L.sequencerConfig).committeePreprocessing).toBe('dealer');
      expect(readJson<GatewayConfig>(L.gatewayConfig).committeePreprocessing).toBe('dealer');
      const plain = await ensureCluster({ dataDir: join(dir, 'c'), env: 'test', ports });
      expect(plain.nodes.every((nd) => nd.preprocessing.mode === 'committee')).toBe(true);
      expect([plain.sequencer.committeePreprocessing, plain.gateway.committeePreprocessing]).toEqual([undefined, undefined]);
      // --dealer cannot turn a committee folder into a dealer one
      await expect(ensureCluster({ dataDir: join(dir, 'c'), env: 'test', preprocessing: 'dealer' })).rejects.toThrow(/--dealer applies to new data folders only/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a production folder whose nodes say dealer (hand-edited, or older) is refused at resume', async () => {
    const dir = folder();
    try {
      const c = await ensureCluster({ dataDir: dir, env: 'production', ports });
      for (const nd of c.nodes) writeJson(layout(dir).nodeConfig(nd.index), { ...nd, preprocessing: { ...nd.preprocessing, mode: 'dealer' } });
      await expect(ensureCluster({ dataDir: dir, env: 'production' })).rejects.toThrow(/dealer preprocessing is refused with --env production/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the share-recovery fallback bounds (NodeConfig.recoveryFallback)', () => {
  it('are written into every node config of a new folder; absent, the configs name none (the defaults apply)', async () => {
    const dir = folder();
    try {
      const c = await ensureCluster({ dataDir: dir, env: 'test', ports, recoveryFallback: { unreachableMs: 20_000 } });
      expect(c.nodes.map((nd) => readJson<NodeConfig>(layout(dir).nodeConfig(nd.index)).recoveryFallback)).toEqual(Array(5).fill({ unreachableMs: 20_000 }));
      const other = folder();
      try {
        expect((await ensureCluster({ dataDir: other, env: 'test', ports })).nodes.every((nd) => !('recoveryFallback' in nd))).toBe(true);
      } finally {
        rmSync(other, { recursive: true, force: true });
      }
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
    expect(describeLinks(of('--link-latency-ms', '30', '--link-jitter-ms', '2'))).toBe('committee links, emulated: 30 ms one way, ± 2 ms jitter, unlimited bandwidth');
    expect(describeLinks(undefined)).toBe('committee links: loopback (no emulation)');
    expect(describeLinks(undefined, 'tcp')).toBe('committee links over tcp: loopback (no emulation)');
    expect(describeLinks(of('--link-latency-ms', '10'), 'unix')).toBe('committee links over unix, emulated: 10 ms one way, unlimited bandwidth');
  });
});
