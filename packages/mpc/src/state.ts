// Binary persistence of a party at a job boundary: u32 metaLength | meta (JSON, no field values) |
// field elements (16 bytes each) in the order the meta lists them. Used by exportState().
// Version 3 (exportStateParts()) leaves the preprocessing reserve out of the bytes: the meta lists
// the reserve's chunks by key, and the caller persists each chunk once (they never change), so a
// job boundary writes the books and cursors, not megabytes of triples.
// Versions 4 and 5 are 2 and 3 with the closure kinds (lex4, prod4) in place of pair triples: a
// state written before them is refused with a clear error (its reserve has no closure items).
// Version 6 (exportStateParts() since 2026-12-02) also keeps each store vector (the books' shares)
// in a chunk of its own, written once while the vector stays in the store; 4 and 5 still load.
// Version 7 (exportStateParts() since 2026-12-04) also keeps each long public value (a book's
// structure as JSON, PUB_CHUNK_CHARS characters or more) in a chunk of its own, written once while
// the value stays the same; shorter values stay in the meta. 4, 5 and 6 still load.

import { randomUUID } from 'node:crypto';
import { ELEMENT_BYTES, decodeFieldVector, encodeFieldVector, readElement, writeElement } from './field';
import { KINDS, WIDTH, countsOf, emptyItems, fromBytes, type Counts, type ItemVectors, type Items, type Kind } from './reserve';
import type { BatchVote, VoidVote } from './preprocessing';

const textEncoder = new TextEncoder();

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
  prep: { resolved: number; committed: number; staged?: { id: number; items: ItemVectors }; running?: number; vote?: BatchVote; abstain?: number; voidVote?: VoidVote; last?: { id: number; c: number; start: Counts; count: Counts } };
}

/** A reserve chunk a split state refers to: `count` items of `kind` from absolute index `start`, stored under `key`. */
export interface ChunkRef {
  key: string;
  kind: Kind;
  start: number;
  count: number;
}

/** A party state for incremental persistence: a small `core`, and the reserve's chunks by key. */
export interface SplitState {
  core: Uint8Array;
  chunks: Map<string, Uint8Array>;
}

interface Meta {
  v: 4 | 5 | 6 | 7;
  /** v5, v6: the reserve items from `cursor` on live in these chunks, not in the body */
  chunks?: ChunkRef[];
  /** v6: the chunk key of each store vector (parallel to `store`); the body holds none of them */
  storeChunks?: string[];
  /** v7: [name, chunk key] of each public value kept in a chunk (UTF-8 bytes); `pub` holds the others */
  pubChunks?: [string, string][];
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
  prep: { resolved: number; committed: number; staged?: { id: number; items: Counts }; running?: number; vote?: BatchVote; abstain?: number; voidVote?: VoidVote; last?: { id: number; c: number; start: Counts; count: Counts } };
}


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
  return encode(s, undefined);
}

/**
 * Serialises a snapshot whose reserve stays in chunks: `core` holds everything else and the chunk
 * list; `chunks` maps each key to its bytes. The same key always names the same bytes. `pubCache`
 * (one per party, kept across calls) lets a long public value that did not change keep its chunk:
 * without one every long value gets a new chunk at every call.
 */
export function encodeSplit(s: Omit<PartySnapshot, 'items'>, chunks: readonly (ChunkRef & { bytes: Uint8Array })[], pubCache: PubChunkCache = new Map()): SplitState {
  const stored = s.store.map(([, v]) => storeChunkOf(v));
  const out = new Map<string, Uint8Array>();
  // the chunk list's JSON, each reference's text made once per reference object (a caller that
  // passes the same objects while its chunks stay, as exportStateParts does, makes each once)
  let refsJson = '[';
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i]!;
    out.set(c.key, c.bytes);
    refsJson += (i === 0 ? '' : ',') + refJsonOf(c);
  }
  refsJson += ']';
  for (const c of stored) out.set(c.key, c.bytes);
  const inline: [string, string][] = [];
  const pubChunks: [string, string][] = [];
  const seen = new Set<string>();
  for (const [name, value] of s.pub) {
    if (value.length < PUB_CHUNK_CHARS) {
      inline.push([name, value]);
      continue;
    }
    const c = pubChunkOf(pubCache, name, value);
    seen.add(name);
    pubChunks.push([name, c.key]);
    out.set(c.key, c.bytes);
  }
  // a name gone from the store (or now short) leaves the cache: it stays the size of the store
  for (const name of pubCache.keys()) if (!seen.has(name)) pubCache.delete(name);
  const core = encode({ ...s, store: [], pub: inline, items: emptyItems() }, refsJson, { names: s.store.map(([k, v]) => [k, v.length]), keys: stored.map((c) => c.key), pub: pubChunks });
  return { core, chunks: out };
}

/** The JSON of a chunk reference as JSON.stringify writes { key, kind, start, count }, by reference object. */
const refJson = new WeakMap<ChunkRef, string>();

function refJsonOf(c: ChunkRef): string {
  let j = refJson.get(c);
  if (j === undefined) {
    j = JSON.stringify({ key: c.key, kind: c.kind, start: c.start, count: c.count });
    refJson.set(c, j);
  }
  return j;
}

/**
 * Public values of at least this many characters are kept in chunks by encodeSplit. A book's
 * structure (levels, order ids, owners' handles as JSON) grows with the book and is rewritten only
 * by a job that touched that book; the short ones (the bit budget, the feed cursor) change every
 * job and cost less inline than as a chunk put and a chunk removal.
 */
export const PUB_CHUNK_CHARS = 256;

/** Per party: the chunk of each long public value by name, while the value stays the same. */
export type PubChunkCache = Map<string, { value: string; key: string; bytes: Uint8Array }>;

/**
 * A public value's chunk. Strings cannot key a WeakMap, so the cache is by name and compares the
 * value: a job that saved its book unchanged (same JSON) keeps the chunk, and a changed value gets a
 * new random key (never the old key with other bytes, even across restarts), so the store writes it
 * and drops the old one like any chunk no longer listed.
 */
function pubChunkOf(cache: PubChunkCache, name: string, value: string): { key: string; bytes: Uint8Array } {
  const c = cache.get(name);
  if (c !== undefined && c.value === value) return c;
  const fresh = { value, key: `pub/${randomUUID()}`, bytes: new TextEncoder().encode(value) };
  cache.set(name, fresh);
  return fresh;
}

/**
 * Store vectors as chunks, by vector. A job boundary lists every book, but a job touches few of
 * them, and a store vector is never changed in place (a job's save replaces it). So each vector is
 * encoded once, under a key of its own (random: a key never names other bytes, even across
 * restarts), and persisted once like a reserve chunk: a boundary writes the books its job changed,
 * not every book's shares again (BigInt to bytes, 16 per element, then megabytes through the store
 * on deep books).
 */
const storeChunks = new WeakMap<readonly bigint[], { key: string; bytes: Uint8Array }>();

function storeChunkOf(v: readonly bigint[]): { key: string; bytes: Uint8Array } {
  let c = storeChunks.get(v);
  if (c === undefined) {
    c = { key: `store/${randomUUID()}`, bytes: encodeFieldVector(v) };
    storeChunks.set(v, c);
  }
  return c;
}

/**
 * `chunks`: the chunk references, or (a split state, v7) their JSON text already made: the meta's
 * text is then that of JSON.stringify on the same meta, the list spliced in (encodeSplit).
 */
function encode(s: PartySnapshot, chunks: ChunkRef[] | string | undefined, inChunks?: { names: [string, number][]; keys: string[]; pub: [string, string][] }): Uint8Array {
  const listed = typeof chunks === 'string' ? undefined : chunks;
  const meta: Omit<Meta, 'v'> = {
    ...(listed ? { chunks: listed } : {}), n: s.n, t: s.t, L: s.L, kappa: s.kappa, mode: s.mode, keys: s.keys,
    store: inChunks ? inChunks.names : s.store.map(([k, v]) => [k, v.length]),
    ...(inChunks ? { storeChunks: inChunks.keys, pubChunks: inChunks.pub } : {}),
    pub: s.pub,
    cursor: s.cursor,
    items: countsOf(s.items),
    finished: s.finished,
    prep: {
      resolved: s.prep.resolved, committed: s.prep.committed,
      ...(s.prep.staged ? { staged: { id: s.prep.staged.id, items: countsOf(s.prep.staged.items) } } : {}),
      ...(s.prep.running !== undefined ? { running: s.prep.running } : {}),
      ...(s.prep.vote ? { vote: s.prep.vote } : {}),
      ...(s.prep.abstain !== undefined ? { abstain: s.prep.abstain } : {}),
      ...(s.prep.voidVote ? { voidVote: s.prep.voidVote } : {}),
      ...(s.prep.last ? { last: s.prep.last } : {}),
    },
  };
  const vectors: (readonly bigint[] | Uint8Array)[] = [...s.store.map(([, v]) => v), ...KINDS.map((k) => s.items[k])];
  if (s.prep.staged) for (const k of KINDS) vectors.push(s.prep.staged.items[k]);
  const version = inChunks ? 7 : chunks ? 5 : 4;
  // JSON.stringify({ v, chunks?, ...meta }) written in parts: `v` first, then the list, then the rest
  // (meta always has n, so its text is never '{}')
  const rest = JSON.stringify(meta);
  const metaText = typeof chunks === 'string' ? `{"v":${version},"chunks":${chunks},${rest.slice(1)}` : `{"v":${version},${rest.slice(1)}`;
  const metaBytes = textEncoder.encode(metaText);
  let count = 0;
  for (const v of vectors) count += v instanceof Uint8Array ? v.length / ELEMENT_BYTES : v.length;
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

const KNOWN_VERSIONS: readonly number[] = [4, 5, 6, 7];

/** The preprocessing part of a state's header (PrepSnapshot without the staged batch's items). */
export type PrepLog = Meta['prep'];

/**
 * The preprocessing log (resolved and committed counts, the batch in flight and this party's votes
 * on it) of exportState() / exportStateParts().core output, read from its header alone: what a party
 * restarted with its keys only may still trust of its own last durable state (PartyOptions.priorVotes).
 * Undefined if the bytes are not a readable state.
 */
export function prepLogOf(bytes: Uint8Array): PrepLog | undefined {
  if (bytes.length < 4) return undefined;
  const metaLen = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  if (4 + metaLen > bytes.length) return undefined;
  try {
    const meta = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + metaLen))) as Partial<Meta>;
    const prep = meta.prep;
    if (!KNOWN_VERSIONS.includes(meta.v as number) || !prep || !Number.isSafeInteger(prep.resolved) || !Number.isSafeInteger(prep.committed)) return undefined;
    return prep;
  } catch {
    return undefined;
  }
}

/**
 * Parses exportState() output, or exportStateParts()'s core with `chunk` giving each listed chunk's
 * bytes; throws on anything malformed or missing.
 */
export function decodeSnapshot(bytes: Uint8Array, chunk?: (key: string) => Uint8Array | undefined): PartySnapshot {
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
  if ((meta.v as number) === 2 || (meta.v as number) === 3) {
    throw new Error('state: written by an engine with pair triples (format 2/3); this engine needs closure items (format 4/5): start from a fresh data folder');
  }
  if (!KNOWN_VERSIONS.includes(meta.v)) throw new Error(`state: unknown version ${String(meta.v)}`);
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
  const store = meta.v >= 6 ? chunkStore(meta.store, meta.storeChunks ?? [], chunk) : meta.store.map(([k, len]) => [k, take(len)] as [string, bigint[]]);
  const items: PartySnapshot['items'] = meta.v !== 4 ? chunkItems(meta.chunks ?? [], meta.cursor, chunk) : takeItems(meta.items);
  const staged = meta.prep.staged ? { id: meta.prep.staged.id, items: takeItems(meta.prep.staged.items) } : undefined;
  if (off !== bytes.length) throw new Error('state: trailing bytes');
  const pub = meta.v >= 7 ? chunkPub(meta.pub, meta.pubChunks ?? [], chunk) : meta.pub;
  return {
    n: meta.n, t: meta.t, L: meta.L, kappa: meta.kappa, mode: meta.mode, keys: meta.keys, store, pub,
    cursor: meta.cursor, items, finished: meta.finished,
    prep: {
      resolved: meta.prep.resolved, committed: meta.prep.committed, ...(staged ? { staged } : {}),
      ...(meta.prep.running !== undefined ? { running: meta.prep.running } : {}),
      ...(meta.prep.vote ? { vote: meta.prep.vote } : {}),
      ...(meta.prep.abstain !== undefined ? { abstain: meta.prep.abstain } : {}),
      ...(meta.prep.voidVote ? { voidVote: meta.prep.voidVote } : {}),
      ...(meta.prep.last ? { last: meta.prep.last } : {}),
    },
  };
}

/** The public store of a v7 state: the inline values and those in chunks, sorted by name like snapshotCore's. */
function chunkPub(inline: readonly [string, string][], keys: readonly [string, string][], chunk: ((key: string) => Uint8Array | undefined) | undefined): [string, string][] {
  if (!chunk) throw new Error('state: this state keeps public values in chunks; pass the chunk store');
  const out = inline.slice();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (const [name, key] of keys) {
    const b = chunk(key);
    if (!b) throw new Error(`state: public chunk ${key} (${name}) is missing`);
    out.push([name, decoder.decode(b)]);
  }
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The store vectors of a v6/v7 state, each from its chunk. */
function chunkStore(names: readonly [string, number][], keys: readonly string[], chunk: ((key: string) => Uint8Array | undefined) | undefined): [string, bigint[]][] {
  if (!chunk) throw new Error('state: this state keeps its store in chunks; pass the chunk store');
  if (keys.length !== names.length) throw new Error(`state: ${names.length} store vectors but ${keys.length} chunk keys`);
  return names.map(([name, len], i) => {
    const b = chunk(keys[i]!);
    if (!b) throw new Error(`state: store chunk ${keys[i]} (${name}) is missing`);
    if (b.length !== len * ELEMENT_BYTES) throw new Error(`state: store chunk ${keys[i]} (${name}) has ${b.length} bytes, expected ${len * ELEMENT_BYTES}`);
    return [name, decodeFieldVector(b)];
  });
}

/** The reserve items from `cursor` on, assembled from the chunks a v5/v6 state lists. */
function chunkItems(refs: readonly ChunkRef[], cursor: Counts, chunk: ((key: string) => Uint8Array | undefined) | undefined): Record<Kind, Uint8Array> {
  if (!chunk) throw new Error('state: this state keeps its reserve in chunks; pass the chunk store');
  const out = {} as Record<Kind, Uint8Array>;
  for (const kind of KINDS) {
    const w = WIDTH[kind] * ELEMENT_BYTES;
    const mine = refs.filter((r) => r.kind === kind).sort((a, b) => a.start - b.start);
    const end = mine.length === 0 ? cursor[kind] : mine[mine.length - 1]!.start + mine[mine.length - 1]!.count;
    const bytes = new Uint8Array(Math.max(0, end - cursor[kind]) * w);
    let pos = cursor[kind];
    for (const r of mine) {
      if (r.start > pos) throw new Error(`state: reserve chunks leave a gap in ${kind} at ${pos}`);
      const b = chunk(r.key);
      if (!b) throw new Error(`state: reserve chunk ${r.key} is missing`);
      if (b.length !== r.count * w) throw new Error(`state: reserve chunk ${r.key} has ${b.length} bytes, expected ${r.count * w}`);
      const from = pos - r.start;
      if (from >= r.count) continue;
      bytes.set(b.subarray(from * w), (pos - cursor[kind]) * w);
      pos = r.start + r.count;
    }
    out[kind] = bytes;
  }
  return out;
}
