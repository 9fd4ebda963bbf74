// The node's store keeps exactly the chunks the last written state lists: a public value's chunk
// (state version 7) is written once, stays while the value is unchanged, and is removed with the
// write that replaces it, like the reserve's and the store vectors' chunks.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeSnapshot, encodeSplit, type PubChunkCache } from '../../packages/mpc/src/state';
import { NodeStore } from '../src/node-store';

const book = (v: number): string => JSON.stringify({ v, levels: Array.from({ length: 50 }, (_, i) => [i, `o${i}`]) });

function state(pub: [string, string][], cache: PubChunkCache) {
  return encodeSplit({
    n: 5, t: 2, L: 48, kappa: 40, mode: 'production', keys: [], store: [], pub,
    cursor: { triples: 0, lex4: 0, prod4: 0, nibbles: 0 }, finished: [], prep: { resolved: 0, committed: 0 },
  }, [], cache);
}

describe('NodeStore and public-value chunks', () => {
  it('writes a changed value\'s new chunk, removes the old one, and keeps an unchanged one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tenebra-store-chunks-'));
    const cache: PubChunkCache = new Map();
    let store = new NodeStore(dir);
    try {
      const s1 = state([['a', book(1)], ['b', book(1)], ['c', '"short"']], cache);
      await store.commitSnapshot(1n, s1);
      const s2 = state([['a', book(1)], ['b', book(2)], ['c', '"short2"']], cache);
      await store.commitSnapshot(2n, s2);
      const k1 = [...s1.chunks.keys()];
      const k2 = [...s2.chunks.keys()];
      expect(k1).toHaveLength(2);
      const kept = k1.filter((k) => k2.includes(k));
      const gone = k1.filter((k) => !k2.includes(k));
      expect(kept).toHaveLength(1);
      expect(gone).toHaveLength(1);
      for (const k of gone) expect(store.chunk(k)).toBeUndefined();
      for (const k of k2) expect(store.chunk(k)).toBeDefined();
      // a reopened store (a restart) reads the state back from its core and chunks
      await store.close();
      store = new NodeStore(dir);
      const back = decodeSnapshot(store.partyState()!, (k) => store.chunk(k));
      expect(back.pub).toEqual([['a', book(1)], ['b', book(2)], ['c', '"short2"']]);
      // a name gone from the state: its chunk goes too
      const s3 = state([['c', '"short3"']], cache);
      await store.commitSnapshot(3n, s3);
      for (const k of k2) expect(store.chunk(k)).toBeUndefined();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the highest stored result seq (0 when none), across a restart and a prune', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tenebra-store-results-'));
    let store = new NodeStore(dir);
    try {
      expect(store.lastResultSeq()).toBe(0n);
      const r = (seq: number) => ({ t: 'result' as const, node: 1, seq: String(seq), pub: { kind: 'cancel' as const }, sealed: '', job: `batch:${seq}-${seq}:0` });
      await store.commitJob([r(9), r(10)], 10n, state([], new Map()));
      await store.commitJob([], 11n, state([], new Map())); // a job-end record: no result
      await store.commitJob([r(12)], 12n, state([], new Map()));
      expect(store.lastResultSeq()).toBe(12n);
      await store.close();
      store = new NodeStore(dir);
      expect(store.lastResultSeq()).toBe(12n); // 12 > 9 and 10 numerically, as keys too
      await store.prune(11n);
      expect(store.lastResultSeq()).toBe(12n);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
