// The reserve of preprocessed material, consumed FIFO: Beaver triples and random 4-bit "nibbles".
// A nibble is a random value v in [0,16) shared in unary form: 15 sharings of [v > j] (j = 0..14)
// plus a sharing of v itself (NIBBLE_WIDTH = 16 field elements). [v == j] = [v > j-1] - [v > j]. Items are appended only by committed
// preprocessing batches; cursors count items ever consumed and only grow. Consumed items stay until
// trim() so the state at the start of the running job can still be handed to a recovering party.

/** Field elements per stored nibble: [v > j] for j = 0..14, then v. */
export const NIBBLE_WIDTH = 16;
/** Offset of v within a stored nibble. */
export const NIBBLE_VALUE = 15;

/** Triples for some operation: c[i] = a[i] * b[i] (as sharings). */
export interface Triples {
  a: bigint[];
  b: bigint[];
  c: bigint[];
}

interface TripleChunk extends Triples {
  start: number; // absolute index of a[0]
}
interface NibbleChunk {
  start: number; // absolute index of the first nibble
  e: bigint[]; // NIBBLE_WIDTH per nibble
}

/** A FIFO reserve with absolute cursors. */
export class Reserve {
  private triples: TripleChunk[] = [];
  private nibbles: NibbleChunk[] = [];
  /** Absolute index of the next triple to hand out (= triples ever consumed). */
  tripleCursor = 0;
  /** Absolute index of the next nibble to hand out. */
  nibbleCursor = 0;
  private tripleEnd = 0;
  private nibbleEnd = 0;

  /** Triples available from the cursor. */
  get triplesAvailable(): number {
    return this.tripleEnd - this.tripleCursor;
  }
  /** Nibbles available from the cursor. */
  get nibblesAvailable(): number {
    return this.nibbleEnd - this.nibbleCursor;
  }
  /** Absolute end indices (= items ever appended). */
  get ends(): { triples: number; nibbles: number } {
    return { triples: this.tripleEnd, nibbles: this.nibbleEnd };
  }

  /** Appends a committed batch. */
  append(t: Triples, nibbles: bigint[]): void {
    if (t.a.length !== t.b.length || t.a.length !== t.c.length) throw new Error('reserve: ragged triples');
    if (nibbles.length % NIBBLE_WIDTH !== 0) throw new Error('reserve: ragged nibbles');
    if (t.a.length > 0) {
      this.triples.push({ start: this.tripleEnd, a: t.a, b: t.b, c: t.c });
      this.tripleEnd += t.a.length;
    }
    if (nibbles.length > 0) {
      this.nibbles.push({ start: this.nibbleEnd, e: nibbles });
      this.nibbleEnd += nibbles.length / NIBBLE_WIDTH;
    }
  }

  /** Takes k triples from the cursor; throws if fewer are available (callers check first). */
  takeTriples(k: number): Triples {
    if (k > this.triplesAvailable) throw new Error(`reserve: ${k} triples requested, ${this.triplesAvailable} available`);
    const out = this.triplesRange(this.tripleCursor, k);
    this.tripleCursor += k;
    return out;
  }

  /** Takes k nibbles (NIBBLE_WIDTH elements each) from the cursor; throws if fewer are available. */
  takeNibbles(k: number): bigint[] {
    if (k > this.nibblesAvailable) throw new Error(`reserve: ${k} nibbles requested, ${this.nibblesAvailable} available`);
    const out = this.nibblesRange(this.nibbleCursor, k);
    this.nibbleCursor += k;
    return out;
  }

  /** Triples [from, from+k) by absolute index (must not be trimmed). */
  triplesRange(from: number, k: number): Triples {
    const a: bigint[][] = [];
    const b: bigint[][] = [];
    const c: bigint[][] = [];
    let need = k;
    let pos = from;
    for (const ch of this.triples) {
      if (need === 0) break;
      const end = ch.start + ch.a.length;
      if (pos >= end) continue;
      if (pos < ch.start) throw new Error('reserve: triples already trimmed');
      const i0 = pos - ch.start;
      const take = Math.min(need, end - pos);
      a.push(ch.a.slice(i0, i0 + take));
      b.push(ch.b.slice(i0, i0 + take));
      c.push(ch.c.slice(i0, i0 + take));
      need -= take;
      pos += take;
    }
    if (need > 0) throw new Error('reserve: triples range beyond end');
    const join = (xs: bigint[][]): bigint[] => (xs.length === 1 ? xs[0]! : ([] as bigint[]).concat(...xs));
    return { a: join(a), b: join(b), c: join(c) };
  }

  /** Nibbles [from, from+k) by absolute index, flattened. */
  nibblesRange(from: number, k: number): bigint[] {
    const parts: bigint[][] = [];
    let need = k;
    let pos = from;
    for (const ch of this.nibbles) {
      if (need === 0) break;
      const end = ch.start + ch.e.length / NIBBLE_WIDTH;
      if (pos >= end) continue;
      if (pos < ch.start) throw new Error('reserve: nibbles already trimmed');
      const take = Math.min(need, end - pos);
      const i0 = (pos - ch.start) * NIBBLE_WIDTH;
      parts.push(ch.e.slice(i0, i0 + take * NIBBLE_WIDTH));
      need -= take;
      pos += take;
    }
    if (need > 0) throw new Error('reserve: nibbles range beyond end');
    return parts.length === 1 ? parts[0]! : ([] as bigint[]).concat(...parts);
  }

  /** Drops chunks entirely before the given absolute cursors (consumed by completed jobs). */
  trim(tripleCursor: number, nibbleCursor: number): void {
    this.triples = this.triples.filter((ch) => ch.start + ch.a.length > tripleCursor);
    this.nibbles = this.nibbles.filter((ch) => ch.start + ch.e.length / NIBBLE_WIDTH > nibbleCursor);
  }

  /** Replaces the whole content: items from absolute positions (cursor) on. Used by state import and recovery. */
  reset(tripleCursor: number, t: Triples, nibbleCursor: number, nibbles: bigint[]): void {
    this.triples = [];
    this.nibbles = [];
    this.tripleCursor = tripleCursor;
    this.nibbleCursor = nibbleCursor;
    this.tripleEnd = tripleCursor;
    this.nibbleEnd = nibbleCursor;
    this.append(t, nibbles);
  }
}
