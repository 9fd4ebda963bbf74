// Many books, one per symbol. Operations on one symbol run strictly in the order apply() is called
// (a promise chain per book); different symbols run concurrently, so an MPC runtime batches their
// rounds together. A book whose operation failed part-way is poisoned: later operations on it fail
// with the original error rather than run on a half-updated book.
import type { Arith, BookWidths } from './backend';
import type { BookSnapshotPub } from './book';
import { Book, DEFAULT_MAX_DEPTH } from './book';
import type { AheadWork, Lookahead, MatchOptions } from './match';
import { cancel, modify, place } from './match';
import type { Arith as ArithT } from './backend';
import type { PlaceOp } from './types';
import type { ExpireOp, ExpireOutcome, Op, OpResult } from './types';

export interface ExchangeOptions extends MatchOptions {
  /** When given, only these symbols have books; others are rejected (UNKNOWN_SYMBOL). */
  symbols?: readonly string[];
  /** Per-book depth cap (default 100,000, the spec's per-symbol cap). */
  maxDepth?: number;
  /** Bound on operations queued behind one book (default 100,000); apply() throws beyond it. */
  maxPendingPerSymbol?: number;
  /** Bound on books created on demand when no symbol list is given (default 1,000). */
  maxSymbols?: number;
  /** Public value bounds per symbol (MatchOptions.widths): narrower, cheaper comparisons. */
  bookWidths?: (symbol: string) => BookWidths | undefined;
}

/** Raised by apply() when a book's queue is full (the caller outran matching). */
export class QueueFullError extends Error {
  constructor(readonly symbol: string, readonly limit: number) {
    super(`${symbol}: ${limit} operations already queued`);
    this.name = 'QueueFullError';
  }
}

/** Raised for operations on a book whose earlier operation failed part-way. */
export class BookPoisonedError extends Error {
  constructor(readonly symbol: string, override readonly cause: unknown) {
    super(`${symbol}: book unusable after an earlier failure: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'BookPoisonedError';
  }
}

/** A queued op as the op before it may look ahead at (MatchOptions.lookahead); null for the others. */
type Queued = { op: PlaceOp<unknown>; arith: ArithT<unknown>; opts: MatchOptions } | null;

interface Lane {
  tail: Promise<unknown>;
  pending: number;
  poisoned: unknown;
  /** the ops queued and not yet started, in order */
  queued: Queued[];
  /** comparisons the running op computed for the next one */
  slot: { work: AheadWork<unknown> | null };
}

/** JSON-able public part of an exchange snapshot; secrets are the books' secrets concatenated in this order. */
export interface ExchangeSnapshotPub {
  v: 1;
  books: { pub: BookSnapshotPub; secrets: number }[];
}

export class Exchange<S> {
  private readonly books = new Map<string, Book<S>>();
  private readonly lanes = new Map<string, Lane>();
  private readonly dirty = new Set<string>();
  private readonly allowed: ReadonlySet<string> | null;
  private readonly maxPending: number;
  private readonly maxDepth: number;

  constructor(readonly arith: Arith<S>, private readonly opts: ExchangeOptions = {}) {
    this.allowed = opts.symbols ? new Set(opts.symbols) : null;
    this.maxPending = opts.maxPendingPerSymbol ?? 100_000;
    this.maxDepth = opts.maxDepth ?? DEFAULT_MAX_DEPTH;
    for (const s of opts.symbols ?? []) this.books.set(s, new Book<S>(s, { maxDepth: this.maxDepth }));
  }

  /** The book of a symbol (created on first use when no symbol list was given, up to maxSymbols); undefined if unknown. */
  book(symbol: string): Book<S> | undefined {
    let b = this.books.get(symbol);
    if (!b && this.allowed === null && this.books.size < (this.opts.maxSymbols ?? 1_000)) {
      b = new Book<S>(symbol, { maxDepth: this.maxDepth });
      this.books.set(symbol, b);
    }
    return b;
  }

  /** Symbols that have a book, in creation order. */
  symbols(): string[] {
    return [...this.books.keys()];
  }

  /**
   * Applies one operation after every earlier operation on the same symbol. `arith` overrides the
   * exchange's backend for this operation (e.g. the MpcBackend of the current MPC job); `match`
   * overrides matching options for it (all parties must pass the same: they change the reveals'
   * count, never the results).
   */
  apply(op: Op<S>, arith: Arith<S> = this.arith, match?: MatchOptions): Promise<OpResult<S>> {
    let opts: MatchOptions = match ? { ...this.opts, ...match } : this.opts;
    if (op.kind === 'expire') return this.expire(op);
    const widths = this.opts.bookWidths?.(op.symbol);
    if (widths && !opts.widths) opts = { ...opts, widths };
    const book = this.book(op.symbol);
    if (!book) return Promise.resolve(unknownSymbol(op));
    const queued = op.kind === 'place' ? ({ op, arith, opts } as unknown as Queued) : null;
    return this.enqueue(op.symbol, (lane) => {
      this.dirty.add(op.symbol);
      switch (op.kind) {
        case 'place':
          return place(arith, book, op, opts, (opts.lookahead ?? true) ? this.lookahead(lane) : undefined);
        case 'cancel':
          return Promise.resolve(cancel(book, op));
        case 'modify':
          return modify(arith, book, op, opts);
      }
    }, queued);
  }

  /** The next queued op of a lane, for the running one to compute ahead for (same backend only: same job). */
  private lookahead(lane: Lane): Lookahead<S> {
    return {
      next: () => (lane.queued[0] ?? undefined) as ReturnType<Lookahead<S>['next']>,
      slot: lane.slot as Lookahead<S>['slot'],
    };
  }

  private async expire(op: ExpireOp): Promise<OpResult<S>> {
    const symbols = op.symbol !== undefined ? [op.symbol] : this.symbols();
    const per = await Promise.all(
      symbols.map((s) => {
        const book = this.book(s);
        if (!book) return Promise.resolve([] as { symbol: string; orderId: string }[]);
        return this.enqueue(s, async () => {
          const clock = book.clockNs;
          const ids = book.expire(op.nowNs);
          // the advanced clock is book state too (a later GTT placement is checked against it): a
          // book reloaded from the store must have it, even when nothing expired
          if (ids.length > 0 || book.clockNs !== clock) this.dirty.add(s);
          return ids.map((orderId) => ({ symbol: s, orderId }));
        });
      }),
    );
    const outcome: ExpireOutcome = { kind: 'expire', nowNs: op.nowNs, expired: per.flat() };
    return { outcome, outputs: [] };
  }

  private enqueue<T>(symbol: string, run: (lane: Lane) => Promise<T>, queued: Queued = null): Promise<T> {
    let lane = this.lanes.get(symbol);
    if (!lane) {
      lane = { tail: Promise.resolve(), pending: 0, poisoned: undefined, queued: [], slot: { work: null } };
      this.lanes.set(symbol, lane);
    }
    if (lane.pending >= this.maxPending) return Promise.reject(new QueueFullError(symbol, this.maxPending));
    const l = lane;
    l.pending += 1;
    l.queued.push(queued);
    const result = l.tail.then(async () => {
      l.queued.shift(); // this op's own entry: the next one is now the head
      try {
        if (l.poisoned !== undefined) throw new BookPoisonedError(symbol, l.poisoned);
        return await run(l);
      } catch (e) {
        if (l.poisoned === undefined) l.poisoned = e;
        throw e;
      } finally {
        l.pending -= 1;
      }
    });
    // The chain only orders work; each caller observes its own result's failure.
    l.tail = result.catch(() => undefined);
    return result;
  }

  /** Symbols whose books operations touched since the last call (to persist only those), sorted. */
  takeDirty(): string[] {
    const out = [...this.dirty].sort();
    this.dirty.clear();
    return out;
  }

  /** Installs a book (e.g. loaded from the MPC store), replacing any book of that symbol; its queue must be idle. */
  restoreBook(book: Book<S>): void {
    const lane = this.lanes.get(book.symbol);
    if (lane && lane.pending > 0) throw new Error(`${book.symbol}: cannot replace a book with queued operations`);
    if (this.allowed !== null && !this.allowed.has(book.symbol)) throw new Error(`${book.symbol} not in the symbol list`);
    this.books.set(book.symbol, book);
    this.lanes.delete(book.symbol); // a fresh lane also clears a poisoned state
  }

  /** Waits until every queued operation has finished. */
  async idle(): Promise<void> {
    await Promise.all([...this.lanes.values()].map((l) => l.tail));
  }

  /** Snapshot of every book (call when idle): public structure and secrets in a deterministic order. */
  toSnapshot(): { pub: ExchangeSnapshotPub; secrets: S[] } {
    const books: ExchangeSnapshotPub['books'] = [];
    const secrets: S[] = [];
    for (const b of this.books.values()) {
      const snap = b.toSnapshot();
      books.push({ pub: snap.pub, secrets: snap.secrets.length });
      secrets.push(...snap.secrets);
    }
    return { pub: { v: 1, books }, secrets };
  }

  /** Rebuilds an exchange from toSnapshot()'s output. */
  static fromSnapshot<S>(arith: Arith<S>, pub: ExchangeSnapshotPub, secrets: readonly S[], opts: ExchangeOptions = {}): Exchange<S> {
    const ex = new Exchange<S>(arith, opts);
    let k = 0;
    for (const b of pub.books) {
      const book = Book.fromSnapshot<S>(b.pub, secrets.slice(k, k + b.secrets));
      k += b.secrets;
      if (ex.allowed !== null && !ex.allowed.has(book.symbol)) throw new Error(`snapshot book ${book.symbol} not in the symbol list`);
      ex.books.set(book.symbol, book);
    }
    if (k !== secrets.length) throw new Error(`exchange snapshot has ${secrets.length - k} extra secrets`);
    return ex;
  }
}

function unknownSymbol<S>(op: Exclude<Op<S>, ExpireOp>): OpResult<S> {
  const reject = { reason: 'UNKNOWN_SYMBOL' as const, code: 'UNKNOWN_SYMBOL', detail: `no book for ${op.symbol}` };
  switch (op.kind) {
    case 'place':
      return {
        outcome: { kind: 'place', symbol: op.symbol, orderId: op.orderId, expired: [], reject, fills: [], selfTradeCancelled: [], takerFilled: false, rested: false, cancelReason: null },
        outputs: [],
      };
    case 'cancel':
      return { outcome: { kind: 'cancel', symbol: op.symbol, orderId: op.orderId, found: false, expired: [] }, outputs: [] };
    case 'modify':
      return {
        outcome: { kind: 'modify', symbol: op.symbol, orderId: op.orderId, mode: op.mode, found: false, exhausted: false, execution: null, expired: [], reject },
        outputs: [],
      };
  }
}
