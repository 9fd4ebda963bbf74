// rid -> outcome for the most recent ops, so a retried submit gets its original ack and is never
// sequenced twice. Bounded: the oldest completed rids are forgotten first.

/** A rid whose op is durable. */
export interface DoneEntry {
  state: 'done';
  seq: bigint;
  tsNs: bigint;
  digest: string;
}

/** A rid accepted and waiting for the journal; more submitters may wait on the same outcome. */
export interface PendingEntry {
  state: 'pending';
  digest: string;
  waiters: ((seq: bigint, tsNs: bigint) => void)[];
  failers: ((err: Error) => void)[];
}

export type DedupeEntry = DoneEntry | PendingEntry;

/** Bounded map of recent rids. */
export class DedupeWindow {
  private readonly map = new Map<string, DedupeEntry>();

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.map.size;
  }

  get(rid: string): DedupeEntry | undefined {
    return this.map.get(rid);
  }

  /** Records a rid as pending (it must be new). */
  setPending(rid: string, entry: PendingEntry): void {
    if (this.map.has(rid)) throw new Error(`internal: rid ${rid} already known`);
    this.map.set(rid, entry);
  }

  /** Records a rid as done, then evicts the oldest entries beyond the limit. */
  setDone(rid: string, seq: bigint, tsNs: bigint, digest: string): void {
    // delete + set moves the rid to the newest end (Map keeps insertion order).
    this.map.delete(rid);
    this.map.set(rid, { state: 'done', seq, tsNs, digest });
    while (this.map.size > this.limit) {
      const oldest = this.map.keys().next();
      if (oldest.done) break;
      const e = this.map.get(oldest.value);
      if (e?.state === 'pending') break; // never forget an op still in flight
      this.map.delete(oldest.value);
    }
  }

  /** Forgets a pending rid whose append failed. */
  dropPending(rid: string): void {
    if (this.map.get(rid)?.state === 'pending') this.map.delete(rid);
  }
}
