// The reserve of preprocessed material, consumed FIFO per kind by absolute cursors:
//  - triples: Beaver triples, stored [a, b, c] (c = a*b), TRIPLE_WIDTH = 3 elements each;
//  - lex4:    LEX4 closure items (closure.ts): masks of a 4-block group's eq and lt indicators and
//             the products of their subsets, combining the blocks in one round (less-than's tree);
//  - prod4:   PROD4 closure items: masks of 4 factors and their subset products (equality's tree);
//  - nibbles: a random value v in [0,16) in unary form: [v > j] for j = 0..14, then v
//             (NIBBLE_WIDTH = 16); [v == j] = [v > j-1] - [v > j].
// Items are appended only by committed preprocessing batches; cursors count items ever consumed and
// only grow. Consumed items stay until trim() so the state at the start of the running job can still
// be handed to a recovering party. Items are kept as bytes (16 per element, big-endian), not as
// BigInts: a reserve of millions of elements would otherwise make every major GC mark millions of
// objects. They become BigInts when taken (nibbles: only the few elements a comparison reads).

import { LEX4, PROD4 } from './closure';
import { ELEMENT_BYTES, readElement, writeElement } from './field';

export const KINDS = ['triples', 'lex4', 'prod4', 'nibbles'] as const;
export type Kind = (typeof KINDS)[number];
/** Field elements per item of each kind. */
export const WIDTH: Readonly<Record<Kind, number>> = { triples: 3, lex4: LEX4.width, prod4: PROD4.width, nibbles: 16 };
export const TRIPLE_WIDTH = 3;
export const NIBBLE_WIDTH = 16;
/** Offset of v within a stored nibble. */
export const NIBBLE_VALUE = 15;

/** A count per kind. */
export type Counts = Record<Kind, number>;
/** Flat items per kind (WIDTH elements per item). */
export type Items = Record<Kind, bigint[]>;
/** Items as BigInts or encoded (16 bytes per element, as stored), per kind. */
export type ItemVectors = Record<Kind, bigint[] | Uint8Array>;

/** Zero counts. */
export function zeroCounts(): Counts {
  return { triples: 0, lex4: 0, prod4: 0, nibbles: 0 };
}

/** Items per kind of flat (BigInt or encoded) item vectors. */
export function countsOf(items: ItemVectors): Counts {
  const out = zeroCounts();
  for (const k of KINDS) {
    const v = items[k];
    out[k] = (v instanceof Uint8Array ? v.length / ELEMENT_BYTES : v.length) / WIDTH[k];
  }
  return out;
}

/** Empty items. */
export function emptyItems(): Items {
  return { triples: [], lex4: [], prod4: [], nibbles: [] };
}

interface Chunk {
  start: number; // absolute index of the first item
  bytes: Uint8Array;
}

function emptyChunks(): Record<Kind, Chunk[]> {
  return { triples: [], lex4: [], prod4: [], nibbles: [] };
}

/** Encodes field elements, 16 bytes each. */
export function toBytes(v: readonly bigint[]): Uint8Array {
  const out = new Uint8Array(v.length * ELEMENT_BYTES);
  const view = new DataView(out.buffer);
  for (let i = 0; i < v.length; i++) writeElement(view, i * ELEMENT_BYTES, v[i]!);
  return out;
}

/** Decodes 16-byte elements. */
export function fromBytes(b: Uint8Array): bigint[] {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const m = b.length / ELEMENT_BYTES;
  const out = new Array<bigint>(m);
  for (let i = 0; i < m; i++) out[i] = readElement(view, i * ELEMENT_BYTES);
  return out;
}

/** Element i of a 16-byte-per-element vector. */
export function elementAt(view: DataView, i: number): bigint {
  return readElement(view, i * ELEMENT_BYTES);
}

/** A FIFO reserve with absolute cursors per kind. */
export class Reserve {
  private chunks: Record<Kind, Chunk[]> = emptyChunks();
  /** Absolute index of the next item to hand out (= items ever consumed), per kind. */
  readonly cursor: Counts = zeroCounts();
  /** Items ever appended, per kind. */
  readonly end: Counts = zeroCounts();

  /**
   * Bumped by reset(): chunks of different generations may cover the same positions with other
   * bytes (a recovery re-chunks the reserve), so persisted chunk keys carry it.
   */
  generation = 0;

  /** Items available from the cursor. */
  available(kind: Kind): number {
    return this.end[kind] - this.cursor[kind];
  }

  /** Appends a committed batch. */
  append(items: ItemVectors): void {
    for (const kind of KINDS) {
      const v = items[kind];
      const elements = v instanceof Uint8Array ? v.length / ELEMENT_BYTES : v.length;
      if (!Number.isInteger(elements) || elements % WIDTH[kind] !== 0) throw new Error(`reserve: ragged ${kind}`);
      if (elements === 0) continue;
      this.chunks[kind].push({ start: this.end[kind], bytes: v instanceof Uint8Array ? v : toBytes(v) });
      this.end[kind] += elements / WIDTH[kind];
    }
  }

  /** Takes k items of a kind from the cursor (flat); throws if fewer are available (callers check first). */
  take(kind: Kind, k: number): bigint[] {
    return fromBytes(this.takeBytes(kind, k));
  }

  /** Takes k items as bytes (16 per element; a view when within one chunk). */
  takeBytes(kind: Kind, k: number): Uint8Array {
    if (k > this.available(kind)) throw new Error(`reserve: ${k} ${kind} requested, ${this.available(kind)} available`);
    const out = this.rangeBytes(kind, this.cursor[kind], k);
    this.cursor[kind] += k;
    return out;
  }

  /** Items [from, from+k) of a kind by absolute index, flat (must not be trimmed). */
  range(kind: Kind, from: number, k: number): bigint[] {
    return fromBytes(this.rangeBytes(kind, from, k));
  }

  /** Items [from, from+k) as bytes. */
  rangeBytes(kind: Kind, from: number, k: number): Uint8Array {
    const w = WIDTH[kind] * ELEMENT_BYTES;
    const parts: Uint8Array[] = [];
    let need = k;
    let pos = from;
    for (const ch of this.chunks[kind]) {
      if (need === 0) break;
      const end = ch.start + ch.bytes.length / w;
      if (pos >= end) continue;
      if (pos < ch.start) throw new Error(`reserve: ${kind} already trimmed`);
      const take = Math.min(need, end - pos);
      const i0 = (pos - ch.start) * w;
      parts.push(ch.bytes.subarray(i0, i0 + take * w));
      need -= take;
      pos += take;
    }
    if (need > 0) throw new Error(`reserve: ${kind} range beyond end`);
    if (parts.length === 1) return parts[0]!;
    const out = new Uint8Array(k * w);
    let off = 0;
    for (const p of parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  }

  /** Everything from the given absolute positions to the end, per kind. */
  from(cursor: Counts): Items {
    const out = emptyItems();
    for (const kind of KINDS) out[kind] = this.range(kind, cursor[kind], this.end[kind] - cursor[kind]);
    return out;
  }

  /** Everything from the given absolute positions to the end, per kind, as bytes. */
  fromBytes(cursor: Counts): Record<Kind, Uint8Array> {
    const out = {} as Record<Kind, Uint8Array>;
    for (const kind of KINDS) out[kind] = this.rangeBytes(kind, cursor[kind], this.end[kind] - cursor[kind]);
    return out;
  }

  /**
   * Drops chunks entirely before the given cursors (consumed by completed jobs). Chunks lie in
   * ascending, adjacent ranges (append adds at the end, dropFrom keeps a prefix), so those before a
   * cursor are a prefix: found from the front, and nothing is copied when there are none (the
   * common case: this runs after every job).
   */
  trim(cursor: Counts): void {
    for (const kind of KINDS) {
      const w = WIDTH[kind] * ELEMENT_BYTES;
      const chunks = this.chunks[kind];
      let k = 0;
      while (k < chunks.length && chunks[k]!.start + chunks[k]!.bytes.length / w <= cursor[kind]) k++;
      if (k > 0) this.chunks[kind] = chunks.slice(k);
    }
  }

  /**
   * The chunks that hold items [cursor, end) per kind, whole (a chunk may start before the cursor).
   * Chunks are never modified once appended, so a caller may persist each one once.
   */
  chunksFrom(cursor: Counts): { kind: Kind; start: number; count: number; bytes: Uint8Array }[] {
    const out: { kind: Kind; start: number; count: number; bytes: Uint8Array }[] = [];
    for (const kind of KINDS) {
      const w = WIDTH[kind] * ELEMENT_BYTES;
      for (const ch of this.chunks[kind]) {
        const count = ch.bytes.length / w;
        if (ch.start + count <= cursor[kind]) continue;
        out.push({ kind, start: ch.start, count, bytes: ch.bytes });
      }
    }
    return out;
  }

  /**
   * Drops every item from absolute positions `start` on (a voided batch, the last one appended:
   * decision 0009, "Voiding an unconsumed batch"); the cursor never passes the new end. The
   * generation moves on: the next batch appended at these positions has other bytes, so persisted
   * chunk keys must differ.
   */
  dropFrom(start: Counts): void {
    this.generation++;
    for (const kind of KINDS) {
      if (start[kind] >= this.end[kind]) continue;
      const w = WIDTH[kind] * ELEMENT_BYTES;
      const kept: Chunk[] = [];
      for (const ch of this.chunks[kind]) {
        if (ch.start >= start[kind]) continue;
        const count = ch.bytes.length / w;
        kept.push(ch.start + count <= start[kind] ? ch : { start: ch.start, bytes: ch.bytes.subarray(0, (start[kind] - ch.start) * w) });
      }
      this.chunks[kind] = kept;
      this.end[kind] = start[kind];
      this.cursor[kind] = Math.min(this.cursor[kind], start[kind]);
    }
  }

  /** Moves the cursor of every kind to `to` (never back): the items before it are burned. */
  burnTo(to: Counts): void {
    for (const kind of KINDS) this.cursor[kind] = Math.min(this.end[kind], Math.max(this.cursor[kind], to[kind]));
  }

  /** Replaces the whole content: items from absolute positions `cursor` on. Used by state import and recovery. */
  reset(cursor: Counts, items: Items): void {
    this.generation++;
    this.chunks = emptyChunks();
    for (const kind of KINDS) {
      this.cursor[kind] = cursor[kind];
      this.end[kind] = cursor[kind];
    }
    this.append(items);
  }
}
