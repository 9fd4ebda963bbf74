// Durable append-only journal with group commit, on LMDB (lmdb-js).
//
// Sequence numbers are assigned synchronously at append() (1, 2, 3, ... with no gaps) and the record
// is queued as an lmdb async put. lmdb-js batches every put queued in the same event turn (and any
// queued while the previous commit is in flight) into ONE write transaction and syncs it once: that
// is the group commit. append() resolves only once the transaction holding the record is durable.
// Transactions commit in queue order and each is atomic, so after any crash the journal holds a
// prefix 1..k of the assigned numbers: no gaps, no reordering.
import { mkdirSync } from 'node:fs';
import { open, type RootDatabase } from 'lmdb';

/** One journaled record with its sequence number. */
export interface JournalEntry {
  seq: bigint;
  record: Uint8Array;
}

export interface JournalOptions {
  /** Largest record accepted, bytes (default 1 MiB). */
  maxRecordBytes?: number;
  /** Most appends in flight (queued, not yet durable) before append() rejects (default 100,000). */
  maxInFlight?: number;
  /**
   * 'sync' (default): a commit returns after LMDB's fsync of data and meta pages.
   * 'overlapping': lmdb-js overlappingSync; we then wait for its `flushed` promise before resolving.
   */
  syncMode?: 'sync' | 'overlapping';
}

/** Thrown when the journal cannot take or keep a record; after a write failure the journal is closed for appends. */
export class JournalError extends Error {
  override name = 'JournalError';
}

/** A durable, gapless, append-only log of opaque records. */
export interface Journal {
  /** Appends record; resolves with its sequence number once the record is durable on disk. */
  append(record: Uint8Array): Promise<bigint>;
  /** The sequence number the next append() will be given. */
  readonly nextSeq: bigint;
  /** Highest durable sequence number (0n when empty). Every seq in 1..lastSeq is readable. */
  readonly lastSeq: bigint;
  /** Number of appends queued and not yet durable. */
  readonly inFlight: number;
  /** Durable record at seq, or undefined. */
  get(seq: bigint): Uint8Array | undefined;
  /** Up to max durable entries from fromSeq (inclusive), in order. */
  readBatch(fromSeq: bigint, max: number): JournalEntry[];
  /** Every durable entry from fromSeq (inclusive) to lastSeq at the time iteration reaches it. */
  read(fromSeq: bigint, batchSize?: number): AsyncIterable<JournalEntry>;
  /** Waits for in-flight appends, then closes the store. */
  close(): Promise<void>;
}

const MAX_KEY = BigInt(Number.MAX_SAFE_INTEGER);

class LmdbJournal implements Journal {
  private next: bigint;
  private durable: bigint;
  private pending = 0;
  private failure: Error | undefined;
  private closed = false;
  private readonly maxRecordBytes: number;
  private readonly maxInFlight: number;
  private readonly overlapping: boolean;

  constructor(
    private readonly db: RootDatabase<Buffer, number>,
    opts: JournalOptions,
  ) {
    this.maxRecordBytes = opts.maxRecordBytes ?? 1 << 20;
    this.maxInFlight = opts.maxInFlight ?? 100_000;
    this.overlapping = opts.syncMode === 'overlapping';
    let last = 0;
    for (const key of db.getKeys({ reverse: true, limit: 1 })) last = key;
    const count = db.getStats() as { entryCount: number };
    // Invariant: keys are exactly 1..last. Anything else means the store was damaged or foreign.
    if (count.entryCount !== last) {
      throw new JournalError(`journal is not gapless: ${count.entryCount} records but last seq ${last}`);
    }
    this.durable = BigInt(last);
    this.next = this.durable + 1n;
  }

  get nextSeq(): bigint {
    return this.next;
  }

  get lastSeq(): bigint {
    return this.durable;
  }

  get inFlight(): number {
    return this.pending;
  }

  append(record: Uint8Array): Promise<bigint> {
    if (this.closed) return Promise.reject(new JournalError('journal is closed'));
    if (this.failure) return Promise.reject(new JournalError(`journal failed earlier: ${this.failure.message}`));
    if (!(record instanceof Uint8Array)) return Promise.reject(new TypeError('record must be a Uint8Array'));
    if (record.length > this.maxRecordBytes) {
      return Promise.reject(new JournalError(`record of ${record.length} bytes exceeds the ${this.maxRecordBytes}-byte limit`));
    }
    if (this.pending >= this.maxInFlight) {
      return Promise.reject(new JournalError(`journal overloaded: ${this.pending} appends in flight`));
    }
    const seq = this.next;
    if (seq > MAX_KEY) return Promise.reject(new JournalError('journal sequence space exhausted'));
    this.next = seq + 1n;
    this.pending++;
    const value = Buffer.from(record.buffer, record.byteOffset, record.byteLength);
    const committed = this.db.put(Number(seq), value) as Promise<boolean> & { flushed?: Promise<void> };
    return this.settle(seq, committed);
  }

  private async settle(seq: bigint, committed: Promise<boolean> & { flushed?: Promise<void> }): Promise<bigint> {
    try {
      const ok = await committed;
      if (ok === false) throw new JournalError(`lmdb refused the write of seq ${seq}`);
      if (this.overlapping) await (committed.flushed ?? this.db.flushed);
    } catch (e) {
      // A lost write leaves a hole after it: refuse everything from now on rather than journal past a gap.
      this.failure ??= e instanceof Error ? e : new Error(String(e));
      this.pending--;
      throw new JournalError(`append of seq ${seq} failed: ${this.failure.message}`);
    }
    this.pending--;
    // Transactions commit in queue order and atomically, so seq durable implies 1..seq durable.
    if (seq > this.durable) this.durable = seq;
    return seq;
  }

  get(seq: bigint): Uint8Array | undefined {
    if (seq < 1n || seq > this.durable) return undefined;
    const v = this.db.get(Number(seq));
    return v === undefined ? undefined : new Uint8Array(v);
  }

  readBatch(fromSeq: bigint, max: number): JournalEntry[] {
    const start = fromSeq < 1n ? 1n : fromSeq;
    const end = this.durable;
    if (start > end || max <= 0) return [];
    const out: JournalEntry[] = [];
    let expect = start;
    for (const { key, value } of this.db.getRange({ start: Number(start), end: Number(end) + 1, limit: max })) {
      const seq = BigInt(key);
      if (seq !== expect) throw new JournalError(`journal gap: expected seq ${expect}, found ${seq}`);
      out.push({ seq, record: new Uint8Array(value) });
      expect++;
    }
    return out;
  }

  async *read(fromSeq: bigint, batchSize = 1024): AsyncIterable<JournalEntry> {
    let from = fromSeq < 1n ? 1n : fromSeq;
    for (;;) {
      const batch = this.readBatch(from, batchSize);
      if (batch.length === 0) return;
      for (const e of batch) yield e;
      from = batch[batch.length - 1]!.seq + 1n;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.flushed;
    await this.db.close();
  }
}

/** Opens (creating if needed) the journal stored in directory dir. */
export function openJournal(dir: string, opts: JournalOptions = {}): Journal {
  mkdirSync(dir, { recursive: true });
  const db = open<Buffer, number>({
    path: dir,
    encoding: 'binary',
    overlappingSync: opts.syncMode === 'overlapping',
    noSync: false,
    // Entries resolve in order and are never cached: records are read back rarely (replay).
    cache: false,
  });
  return new LmdbJournal(db, opts);
}
