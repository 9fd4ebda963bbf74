// The complete list of what matching opens to the committee nodes, and recorders for the transcript.
// Every label here has a row in README.md ("Leak labels") and in docs/leakage.md.
import type { LeakLabel, LeakRecord } from './backend';

/** Every reveal label the algorithm uses. Adding a reveal means adding a label here and a doc row. */
export const LEAK = {
  /** [incoming order's limit price crosses the best opposite order's price] */
  cross: 'cross',
  /** [taker and the crossing maker have the same owner] (self-trade prevention) */
  selfTrade: 'self-trade',
  /** [maker.qty <= taker remaining]: the maker is fully consumed by this fill */
  makerExhausted: 'maker-exhausted',
  /** [taker remaining <= maker.qty]: the taker is fully consumed by this fill */
  takerExhausted: 'taker-exhausted',
  /** one comparison of the binary search that finds a resting order's rank on its side */
  insertRank: 'insert-rank',
  /** [crossing, non-self liquidity on the opposite side >= the order's quantity] (FOK, aon) */
  fokLiquidity: 'fok-liquidity',
  /** [min_fill_size <= maker.qty]: a crossing, non-self maker can give the taker an execution of its minimum (else skipped) */
  minFillMaker: 'min-fill-maker',
  /** [min_fill_size <= taker remaining] after a fill that did not exhaust the taker (else the remainder is cancelled) */
  minFillRemainder: 'min-fill-remainder',
  /** [a modify leaves no remaining quantity] (the order had been filled down to the reduction) */
  modifyExhausted: 'modify-exhausted',
} as const satisfies Record<string, LeakLabel>;

export const ALL_LEAK_LABELS: readonly LeakLabel[] = Object.values(LEAK);

/** Receives every reveal of a backend. */
export interface LeakRecorder {
  record(rec: LeakRecord): void;
}

/** Raised when a bounded transcript is full: silently dropping records would break comparisons. */
export class TranscriptFullError extends Error {
  constructor(readonly limit: number) {
    super(`leak transcript full (${limit} records); drain() it or raise the limit`);
    this.name = 'TranscriptFullError';
  }
}

/** Keeps every record in order, up to `limit` (then throws TranscriptFullError). */
export class TranscriptRecorder implements LeakRecorder {
  private recs: LeakRecord[] = [];
  constructor(readonly limit = 5_000_000) {}
  record(rec: LeakRecord): void {
    if (this.recs.length >= this.limit) throw new TranscriptFullError(this.limit);
    this.recs.push(rec);
  }
  /** All records so far, in reveal order. */
  get records(): readonly LeakRecord[] {
    return this.recs;
  }
  /** Records of one scope (book), in reveal order. */
  scoped(scope: string): LeakRecord[] {
    return this.recs.filter((r) => r.scope === scope);
  }
  /** Returns the records and empties the transcript. */
  drain(): LeakRecord[] {
    const out = this.recs;
    this.recs = [];
    return out;
  }
}

/** Counts reveals per label (and how many were 1): constant memory, for long-running nodes. */
export class CountingRecorder implements LeakRecorder {
  readonly counts = new Map<LeakLabel, { total: number; ones: number }>();
  record(rec: LeakRecord): void {
    const c = this.counts.get(rec.label) ?? { total: 0, ones: 0 };
    c.total += 1;
    if (rec.value === 1n) c.ones += 1;
    this.counts.set(rec.label, c);
  }
}
