// The split state's encoding (state.ts): long public values in chunks of their own (version 7),
// cached while unchanged; older versions still load. Pure: no party, no network.
import { describe, expect, it } from 'vitest';
import { PUB_CHUNK_CHARS, decodeSnapshot, encodeSplit, prepLogOf, type PartySnapshot, type PubChunkCache } from '../src/state';

type Core = Omit<PartySnapshot, 'items'>;

const long = (tag: string): string => JSON.stringify({ tag, levels: Array.from({ length: 60 }, (_, i) => [i, `order-${tag}-${i}`]) });

function core(pub: [string, string][], store: [string, bigint[]][] = [['book/x', [1n, 2n, 3n]]]): Core {
  return {
    n: 5, t: 2, L: 48, kappa: 40, mode: 'production', keys: [['1,2,3', 'ab'.repeat(32)]],
    store, pub: [...pub].sort(([a], [b]) => (a < b ? -1 : 1)),
    cursor: { triples: 0, lex4: 0, prod4: 0, nibbles: 0 },
    finished: ['j1', 'j2'], prep: { resolved: 3, committed: 2 },
  };
}

/** A core's header (the JSON meta), as written. */
function metaOf(bytes: Uint8Array): Record<string, unknown> {
  const len = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  return JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + len))) as Record<string, unknown>;
}

/** A core with the meta replaced (the body: none, every vector is in chunks). */
function withMeta(meta: Record<string, unknown>): Uint8Array {
  const m = new TextEncoder().encode(JSON.stringify(meta));
  const out = new Uint8Array(4 + m.length);
  new DataView(out.buffer).setUint32(0, m.length);
  out.set(m, 4);
  return out;
}

describe('split state, version 7: long public values in chunks', () => {
  it('round trip: short values inline, long ones in chunks, decoded in name order', () => {
    const pub: [string, string][] = [['matching/book/B', long('b')], ['cursor', '"17"'], ['matching/book/A', long('a')], ['budget', '{"bits":5}']];
    const s = core(pub);
    const split = encodeSplit(s, [], new Map());
    const meta = metaOf(split.core);
    expect(meta.v).toBe(7);
    expect(meta.pub).toEqual([['budget', '{"bits":5}'], ['cursor', '"17"']]);
    expect((meta.pubChunks as [string, string][]).map(([n]) => n)).toEqual(['matching/book/A', 'matching/book/B']);
    // the core carries none of the long values' text
    expect(new TextDecoder().decode(split.core)).not.toContain('order-a-1');
    expect(split.core.length).toBeLessThan(long('a').length);
    const back = decodeSnapshot(split.core, (k) => split.chunks.get(k));
    expect(back.pub).toEqual(s.pub);
    expect(back.store).toEqual(s.store);
    expect(back.keys).toEqual(s.keys);
    expect(back.finished).toEqual(s.finished);
    expect(prepLogOf(split.core)).toEqual({ resolved: 3, committed: 2 });
  });

  it('the threshold: a value one character short stays inline, one at it goes to a chunk', () => {
    const short = 'x'.repeat(PUB_CHUNK_CHARS - 1);
    const at = 'y'.repeat(PUB_CHUNK_CHARS);
    const split = encodeSplit(core([['a', short], ['b', at]]), [], new Map());
    const meta = metaOf(split.core);
    expect(meta.pub).toEqual([['a', short]]);
    expect((meta.pubChunks as [string, string][]).map(([n]) => n)).toEqual(['b']);
  });

  it('an unchanged value keeps its chunk (same key, same bytes, not encoded again); a changed one gets a new key', () => {
    const cache: PubChunkCache = new Map();
    const a1 = long('a');
    const first = encodeSplit(core([['A', a1], ['B', long('b')]]), [], cache);
    const keyOf = (split: typeof first, name: string): string => (metaOf(split.core).pubChunks as [string, string][]).find(([n]) => n === name)![1];
    // equal text in a new string (a job that saved its book unchanged): the same chunk
    const second = encodeSplit(core([['A', `${a1}`.slice(0)], ['B', long('b2')]]), [], cache);
    expect(keyOf(second, 'A')).toBe(keyOf(first, 'A'));
    expect(second.chunks.get(keyOf(second, 'A'))).toBe(first.chunks.get(keyOf(first, 'A')));
    expect(keyOf(second, 'B')).not.toBe(keyOf(first, 'B'));
    // the old chunk of B is no longer listed: the store drops it (NodeStore.writeState)
    expect(second.chunks.has(keyOf(first, 'B'))).toBe(false);
    expect(new TextDecoder().decode(second.chunks.get(keyOf(second, 'B'))!)).toBe(long('b2'));
    // a name gone from the store leaves the cache
    encodeSplit(core([['B', long('b2')]]), [], cache);
    expect([...cache.keys()]).toEqual(['B']);
  });

  it('without a cache every long value gets a new chunk (correct, only dearer)', () => {
    const s = core([['A', long('a')]]);
    const k1 = [...encodeSplit(s, []).chunks.keys()].filter((k) => k.startsWith('pub/'));
    const k2 = [...encodeSplit(s, []).chunks.keys()].filter((k) => k.startsWith('pub/'));
    expect(k1).toHaveLength(1);
    expect(k2[0]).not.toBe(k1[0]);
  });

  it('a missing or unreadable public chunk is refused by name', () => {
    const split = encodeSplit(core([['A', long('a')]]), [], new Map());
    expect(() => decodeSnapshot(split.core)).toThrow(/chunk/);
    expect(() => decodeSnapshot(split.core, (k) => (k.startsWith('pub/') ? undefined : split.chunks.get(k)))).toThrow(/public chunk .* \(A\) is missing/);
    expect(() => decodeSnapshot(split.core, (k) => (k.startsWith('pub/') ? new Uint8Array([0xff, 0xfe]) : split.chunks.get(k)))).toThrow();
  });

  it('a version 6 core (every public value inline) still loads', () => {
    const s = core([['A', long('a')], ['cursor', '"3"']]);
    const split = encodeSplit(s, [], new Map());
    const meta = metaOf(split.core);
    const { pubChunks: _, ...rest } = meta;
    const v6 = withMeta({ ...rest, v: 6, pub: s.pub });
    const back = decodeSnapshot(v6, (k) => split.chunks.get(k));
    expect(back.pub).toEqual(s.pub);
    expect(back.store).toEqual(s.store);
    expect(prepLogOf(v6)).toEqual({ resolved: 3, committed: 2 });
  });

  it('an unknown version is refused', () => {
    const split = encodeSplit(core([]), [], new Map());
    expect(() => decodeSnapshot(withMeta({ ...metaOf(split.core), v: 8 }), (k) => split.chunks.get(k))).toThrow(/unknown version 8/);
    expect(prepLogOf(withMeta({ ...metaOf(split.core), v: 8 }))).toBeUndefined();
  });
});

describe('split state: the chunk list written once per reference (ADR 0048)', () => {
  const KINDS4 = ['triples', 'lex4', 'prod4', 'nibbles'] as const;
  const refs = (n: number) => Array.from({ length: n }, (_, i) => ({
    key: `gabcd.0/${KINDS4[i % 4]!}/${i * 100}+100`, kind: KINDS4[i % 4]!, start: i * 100, count: 100, bytes: new Uint8Array(16 * (i + 1)).fill(i),
  }));
  const fixed: Core = {
    n: 5, t: 2, L: 48, kappa: 64, mode: 'production', keys: [['1,2', 'aa'], ['1,3', 'bb']], store: [],
    pub: [['budget', '{"bits":"12"}'], ['feed', '"7"']],
    cursor: { triples: 5, lex4: 6, prod4: 0, nibbles: 9 }, finished: ['batch:1-1:0', 'batch:2-2:0'],
    prep: { resolved: 3, committed: 3, running: 4, last: { id: 3, c: 1, start: { triples: 0, lex4: 0, prod4: 0, nibbles: 0 }, count: { triples: 1, lex4: 2, prod4: 0, nibbles: 3 } } },
  };
  const sha = async (b: Uint8Array) => (await import('node:crypto')).createHash('sha256').update(b).digest('hex');

  it('writes the same bytes as the encoder before it (JSON.stringify of the whole meta; digests from main 48c9b32)', async () => {
    expect(await sha(encodeSplit(fixed, refs(7)).core)).toBe('51e7a038844227989b11c31858cb8a6ef7dd76f4a3368cfd331d62af2700bcf1');
    expect(await sha(encodeSplit(fixed, []).core)).toBe('8ab44a90e59fd523b1303757456a7bebc47610199924c7f8aac62e69b8b52f56');
  });

  it('the meta is JSON.stringify of itself, and the same reference objects give the same bytes as fresh ones', () => {
    const kept = refs(40);
    const first = encodeSplit(fixed, kept).core;
    const again = encodeSplit(fixed, kept).core; // the cached texts
    const fresh = encodeSplit(fixed, refs(40)).core;
    expect(Buffer.from(again).equals(Buffer.from(first))).toBe(true);
    expect(Buffer.from(fresh).equals(Buffer.from(first))).toBe(true);
    const len = new DataView(first.buffer, first.byteOffset).getUint32(0);
    const text = new TextDecoder().decode(first.subarray(4, 4 + len));
    expect(JSON.stringify(JSON.parse(text))).toBe(text);
    expect(metaOf(first).chunks).toEqual(kept.map(({ key, kind, start, count }) => ({ key, kind, start, count })));
    // a shorter list (chunks consumed) from the same objects
    expect(metaOf(encodeSplit(fixed, kept.slice(3)).core).chunks).toHaveLength(37);
  });
});
