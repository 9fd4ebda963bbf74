// Binary persistence of a party at a job boundary: u32 metaLength | meta (JSON, no field values) |
// field elements (16 bytes each) in the order the meta lists them. Used by exportState() and by
// share recovery (which sends the same layout, masked).

import { ELEMENT_BYTES, readElement, writeElement } from './field';
import type { Triples } from './reserve';
import { NIBBLE_WIDTH } from './reserve';

/** Everything a party persists. */
export interface PartySnapshot {
  n: number;
  t: number;
  L: number;
  kappa: number;
  mode: string;
  /** Hex PRSS keys by subset name. */
  keys: [string, string][];
  /** Secret store, sorted by name. */
  store: [string, bigint[]][];
  /** Public store, sorted by name. */
  pub: [string, string][];
  tripleCursor: number;
  nibbleCursor: number;
  triples: Triples;
  nibbles: bigint[];
  /** Ids of recently finished jobs, oldest first (the last is the most recent). */
  finished: string[];
  prep: { resolved: number; committed: number; staged?: { id: number; triples: Triples; nibbles: bigint[] }; running?: number };
}

interface Meta {
  v: 1;
  n: number;
  t: number;
  L: number;
  kappa: number;
  mode: string;
  keys: [string, string][];
  store: [string, number][];
  pub: [string, string][];
  tripleCursor: number;
  nibbleCursor: number;
  triples: number;
  nibbles: number;
  finished: string[];
  prep: { resolved: number; committed: number; staged?: { id: number; triples: number; nibbles: number }; running?: number };
}

/** Serialises a snapshot. */
export function encodeSnapshot(s: PartySnapshot): Uint8Array {
  const meta: Meta = {
    v: 1, n: s.n, t: s.t, L: s.L, kappa: s.kappa, mode: s.mode, keys: s.keys,
    store: s.store.map(([k, v]) => [k, v.length]),
    pub: s.pub,
    tripleCursor: s.tripleCursor, nibbleCursor: s.nibbleCursor,
    triples: s.triples.a.length, nibbles: s.nibbles.length / NIBBLE_WIDTH,
    finished: s.finished,
    prep: {
      resolved: s.prep.resolved, committed: s.prep.committed,
      ...(s.prep.staged ? { staged: { id: s.prep.staged.id, triples: s.prep.staged.triples.a.length, nibbles: s.prep.staged.nibbles.length / NIBBLE_WIDTH } } : {}),
      ...(s.prep.running !== undefined ? { running: s.prep.running } : {}),
    },
  };
  const vectors: (readonly bigint[])[] = [...s.store.map(([, v]) => v), s.triples.a, s.triples.b, s.triples.c, s.nibbles];
  if (s.prep.staged) vectors.push(s.prep.staged.triples.a, s.prep.staged.triples.b, s.prep.staged.triples.c, s.prep.staged.nibbles);
  const metaBytes = new TextEncoder().encode(JSON.stringify(meta));
  let count = 0;
  for (const v of vectors) count += v.length;
  const out = new Uint8Array(4 + metaBytes.length + count * ELEMENT_BYTES);
  const view = new DataView(out.buffer);
  view.setUint32(0, metaBytes.length);
  out.set(metaBytes, 4);
  let off = 4 + metaBytes.length;
  for (const v of vectors) for (const x of v) { writeElement(view, off, x); off += ELEMENT_BYTES; }
  return out;
}

/** Parses exportState() output; throws on anything malformed. */
export function decodeSnapshot(bytes: Uint8Array): PartySnapshot {
  if (bytes.length < 4) throw new Error('state: too short');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const metaLen = view.getUint32(0);
  if (4 + metaLen > bytes.length) throw new Error('state: bad meta length');
  const meta = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + metaLen))) as Meta;
  if (meta.v !== 1) throw new Error(`state: unknown version ${String(meta.v)}`);
  let off = 4 + metaLen;
  const take = (k: number): bigint[] => {
    if (off + k * ELEMENT_BYTES > bytes.length) throw new Error('state: truncated');
    const out = new Array<bigint>(k);
    for (let i = 0; i < k; i++) { out[i] = readElement(view, off); off += ELEMENT_BYTES; }
    return out;
  };
  const store = meta.store.map(([k, len]) => [k, take(len)] as [string, bigint[]]);
  const triples = { a: take(meta.triples), b: take(meta.triples), c: take(meta.triples) };
  const nibbles = take(meta.nibbles * NIBBLE_WIDTH);
  let staged: PartySnapshot['prep']['staged'];
  if (meta.prep.staged) {
    const k = meta.prep.staged.triples;
    staged = { id: meta.prep.staged.id, triples: { a: take(k), b: take(k), c: take(k) }, nibbles: take(meta.prep.staged.nibbles * NIBBLE_WIDTH) };
  }
  if (off !== bytes.length) throw new Error('state: trailing bytes');
  return {
    n: meta.n, t: meta.t, L: meta.L, kappa: meta.kappa, mode: meta.mode, keys: meta.keys, store, pub: meta.pub,
    tripleCursor: meta.tripleCursor, nibbleCursor: meta.nibbleCursor, triples, nibbles, finished: meta.finished,
    prep: { resolved: meta.prep.resolved, committed: meta.prep.committed, ...(staged ? { staged } : {}), ...(meta.prep.running !== undefined ? { running: meta.prep.running } : {}) },
  };
}
