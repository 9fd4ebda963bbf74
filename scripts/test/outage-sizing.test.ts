// Sizing the preprocessing reserve for an outage (`npm start -- --outage-minutes M --outage-rate R`):
// the targets written into every node config (new and resumed folders, a 7-node committee with
// t = 2 too), what the launcher prints of them, and the clear errors. No process starts.
import { describe, it, expect } from 'vitest';
import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCluster } from '../src/cluster';
import { parseFlags } from '../src/flags';
import { describeReserve, itemBytes, measuredBitsPerSecond, OUTAGE_FLAGS, outageSizingOf, reserveDiskBound } from '../src/outage';
import { layout, ordersCovered, readJson, reserveTargetsFor, reserveTargetsOf, type NodeConfig } from '@tenebra/config';

const folder = (): string => mkdtempSync(join(tmpdir(), 'tenebra-outage-'));
const ports = { gateway: 32080, gatewayInternal: 32200, sequencer: 32100, nodeBase: 32001 };
const sizing = (argv: string[]) => outageSizingOf(parseFlags(argv, OUTAGE_FLAGS));

describe('outage sizing', () => {
  it('turns minutes at a rate into targets that cover that many orders', () => {
    const t = reserveTargetsFor({ minutes: 10, ratePerSecond: 2 });
    expect(t).toEqual({ bits: 1_200 * 360, lex4: 1_200 * 30, prod4: 1_200 * 4, triples: 1_200 });
    expect(ordersCovered(t)).toBe(1_200);
    expect(ordersCovered(reserveTargetsFor({ minutes: 0.01, ratePerSecond: 0.1 }))).toBe(1); // at least one order's worth
  });

  it('reads the flags, both or neither, and refuses bad values', () => {
    expect(sizing([])).toBeUndefined();
    expect(sizing(['--outage-minutes', '30', '--outage-rate', '0.5'])).toEqual({ minutes: 30, ratePerSecond: 0.5 });
    expect(() => sizing(['--outage-minutes', '30'])).toThrow(/go together/);
    expect(() => sizing(['--outage-minutes', '0', '--outage-rate', '1'])).toThrow(/--outage-minutes must be a positive number/);
    expect(() => sizing(['--outage-minutes', '5', '--outage-rate', 'fast'])).toThrow(/--outage-rate must be a positive number/);
  });

  it('writes the targets into a new 7-node, t = 2 folder and into a resumed one; without flags a folder keeps its own', async () => {
    const dir = folder();
    try {
      const want = reserveTargetsFor({ minutes: 5, ratePerSecond: 1 });
      const c = await ensureCluster({ dataDir: dir, env: 'test', n: 7, t: 2, ports, reserve: want });
      expect(c.nodes.map((nd) => [nd.n, nd.t])).toEqual(Array.from({ length: 7 }, () => [7, 2]));
      for (const nd of c.nodes) expect(reserveTargetsOf(readJson<NodeConfig>(layout(dir).nodeConfig(nd.index)).preprocessing)).toEqual(want);
      const bigger = reserveTargetsFor({ minutes: 60, ratePerSecond: 1 });
      await ensureCluster({ dataDir: dir, env: 'test', reserve: bigger });
      for (let i = 1; i <= 7; i++) expect(reserveTargetsOf(readJson<NodeConfig>(layout(dir).nodeConfig(i)).preprocessing)).toEqual(bigger);
      await ensureCluster({ dataDir: dir, env: 'test' });
      expect(reserveTargetsOf(readJson<NodeConfig>(layout(dir).nodeConfig(3)).preprocessing)).toEqual(bigger);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints the reserve, the orders it covers, its disk bound and the time to fill at the rate measured in the last run', async () => {
    const dir = folder();
    try {
      const c = await ensureCluster({ dataDir: dir, env: 'test', ports });
      const node = c.nodes[0]!;
      expect(itemBytes()).toMatchObject({ bits: 64, triples: 48 }); // a nibble is 16 elements of 16 bytes, 4 bits
      const bound = reserveDiskBound(reserveTargetsOf(node.preprocessing), 512);
      expect(bound.items.bits).toBe(40_000 + 2 * 512 * 4);
      expect(bound.bytes).toBeGreaterThan(bound.items.bits * 64);
      expect(measuredBitsPerSecond(dir)).toBeNull();
      const lines = describeReserve(node, undefined, null);
      expect(lines[0]).toBe('preprocessing reserve per node: 40,000 bits, 3,400 lex4, 1,000 prod4, 2,000 triples');
      expect(lines[1]).toMatch(/covers about 111 orders with nodes down/);
      expect(lines[2]).toMatch(/on disk at most \d+\.\d MiB per node/);
      expect(lines[3]).toMatch(/not measured on this folder yet/);
      mkdirSync(join(dir, 'logs'), { recursive: true });
      writeFileSync(join(dir, 'logs', 'node-1.log'), `${JSON.stringify({ msg: 'status', made: { bits: 80_000, productionMs: 20_000 } })}\n{"msg":"batch applied"}\n`);
      expect(measuredBitsPerSecond(dir)).toBe(4_000);
      expect(describeReserve(node, { minutes: 1, ratePerSecond: 1 }, 4_000)[3]).toMatch(/about 10 s at the 4,000 random bits\/s node 1 made/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
