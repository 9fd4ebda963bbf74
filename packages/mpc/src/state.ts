// Binary persistence of a party at a job boundary: u32 metaLength | meta (JSON, no field values) |
// field elements (16 bytes each) in the order the meta lists them. Used by exportState().

import { ELEMENT_BYTES, readElement, writeElement } from './field';
import { KINDS, WIDTH, emptyItems, fromBytes, type Counts, type Items } from './reserve';

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
  /** Absolute reserve positions of the first items below. */
  cursor: Counts;
  /** Items per kind: field elements, or already encoded bytes (16 per element; exportState's fast path). */
  items: Items | Record<keyof Items, Uint8Array>;
  /** Ids of recently finished jobs, oldest first (the last is the most recent). */
  finished: string[];
  prep: { resolved: number; committed: number; staged?: { id: number; items: Items }; running?: number };
}

interface Meta {
  v: 2;
  n: number;
  t: number;
  L: number;
  kappa: number;
  mode: string;
  keys: [string, string][];
  store: [string, number][];
  pub: [string, string][];
  cursor: Counts;
  items: Counts;
  finished: string[];
  prep: { resolved: number; committed: number; staged?: { id: number; items: Counts }; running?: number };
}

const elements = (v: readonly bigint[] | Uint8Array): number => (v instanceof Uint8Array ? v.length / ELEMENT_BYTES : v.length);
const countsOf = (items: PartySnapshot['items']): Counts => ({
  triples: elements(items.triples) / WIDTH.triples,
  pairs: elements(items.pairs) / WIDTH.pairs,
  nibbles: elements(items.nibbles) / WIDTH.nibbles,
});

/** The items of a snapshot as field elements. */
export function itemsOf(items: PartySnapshot['items']): Items {
  const out = emptyItems();
  for (const k of KINDS) {
    const v = items[k];
    out[k] = v instanceof Uint8Array ? fromBytes(v) : v;
  }
  return out;
}

/** Serialises a snapshot. */
export function encodeSnapshot(s: PartySnapshot): Uint8Array {
  const meta: Meta = {
    v: 2, n: s.n, t: s.t, L: s.L, kappa: s.kappa, mode: s.mode, keys: s.keys,
    store: s.store.map(([k, v]) => [k, v.length]),
    pub: s.pub,
    cursor: s.cursor,
    items: countsOf(s.items),
    finished: s.finished,
    prep: {
      resolved: s.prep.resolved, committed: s.prep.committed,
      ...(s.prep.staged ? { staged: { id: s.prep.staged.id, items: countsOf(s.prep.staged.items) } } : {}),
      ...(s.prep.running !== undefined ? { running: s.prep.running } : {}),
    },
  };
  const vectors: (readonly bigint[] | Uint8Array)[] = [...s.store.map(([, v]) => v), ...KINDS.map((k) => s.items[k])];
  if (s.prep.staged) for (const k of KINDS) vectors.push(s.prep.staged.items[k]);
  const metaBytes = new TextEncoder().encode(JSON.stringify(meta));
  let count = 0;
  for (const v of vectors) count += elements(v);
  const out = new Uint8Array(4 + metaBytes.length + count * ELEMENT_BYTES);
  const view = new DataView(out.buffer);
  view.setUint32(0, metaBytes.length);
  out.set(metaBytes, 4);
  let off = 4 + metaBytes.length;
  for (const v of vectors) {
    if (v instanceof Uint8Array) {
      out.set(v, off);
      off += v.length;
    } else for (const x of v) { writeElement(view, off, x); off += ELEMENT_BYTES; }
  }
  return out;
}

/** Parses exportState() output; throws on anything malformed. */
export function decodeSnapshot(bytes: Uint8Array): PartySnapshot {
  if (bytes.length < 4) throw new Error('state: too short');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const metaLen = view.getUint32(0);
  if (4 + metaLen > bytes.length) throw new Error('state: bad meta length');
  let meta: Meta;
  try {
    meta = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + metaLen))) as Meta;
  } catch {
    throw new Error('state: unreadable meta');
  }
  if (meta.v !== 2) throw new Error(`state: unknown version ${String(meta.v)}`);
  let off = 4 + metaLen;
  const take = (k: number): bigint[] => {
    if (off + k * ELEMENT_BYTES > bytes.length) throw new Error('state: truncated');
    const out = new Array<bigint>(k);
    for (let i = 0; i < k; i++) { out[i] = readElement(view, off); off += ELEMENT_BYTES; }
    return out;
  };
  const takeItems = (c: Counts): Items => {
    const items = emptyItems();
    for (const k of KINDS) items[k] = take(c[k] * WIDTH[k]);
    return items;
  };
  const store = meta.store.map(([k, len]) => [k, take(len)] as [string, bigint[]]);
  const items = takeItems(meta.items);
  const staged = meta.prep.staged ? { id: meta.prep.staged.id, items: takeItems(meta.prep.staged.items) } : undefined;
  if (off !== bytes.length) throw new Error('state: trailing bytes');
  return {
    n: meta.n, t: meta.t, L: meta.L, kappa: meta.kappa, mode: meta.mode, keys: meta.keys, store, pub: meta.pub,
    cursor: meta.cursor, items, finished: meta.finished,
    prep: { resolved: meta.prep.resolved, committed: meta.prep.committed, ...(staged ? { staged } : {}), ...(meta.prep.running !== undefined ? { running: meta.prep.running } : {}) },
  };
}
