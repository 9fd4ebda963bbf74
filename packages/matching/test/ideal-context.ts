// TEST DOUBLE: an "ideal functionality" JobContext. It computes on plain field values mod
// p = 2^127 − 1 (signed interpretation for comparisons), holds NO shares and gives NO privacy. It
// exists only so MpcBackend can be tested before the real engine lands. It mimics the engine's
// observable behaviour: interactive operations resolve at a deferred flush (one "round" per flush,
// results delivered in issue order) and comparison inputs must satisfy |x| < 2^L.
import { costOf, type JobContext, type Sec } from '@tenebra/mpc';

export const P = (1n << 127n) - 1n;
const HALF = P >> 1n;

const mod = (x: bigint): bigint => ((x % P) + P) % P;
const signed = (x: bigint): bigint => (x > HALF ? x - P : x);

/** A "Sec" that is just the plain values (test double only). */
export class IdealSec implements Sec {
  constructor(readonly values: readonly bigint[]) {}
  get length(): number {
    return this.values.length;
  }
}

export interface IdealStats {
  /**
   * Rounds elapsed: with unit costs (the default), flushes that carried at least one interactive
   * operation; with `costs`, rounds of the engine's latency model (see IdealJobContext).
   */
  rounds: number;
  /** Interactive operations, by kind. */
  ops: Record<string, number>;
  /** Largest number of operations in one round. */
  maxBatch: number;
  /** Random nibbles the real engine would consume (4 bits each): costOf at each comparison's width. */
  nibbles: number;
  /** Beaver triples the real engine would consume (mul, select, randomMultiple, min, max). */
  triples: number;
}

/** Rounds per operation kind of the real engine (its declared costs, L = 48): a latency model. */
export const ENGINE_ROUNDS: Readonly<Record<string, number>> = {
  mul: costOf('mul', 48).rounds, select: costOf('select', 48).rounds, open: 1, openTo: 1,
  lt: costOf('lt', 48).rounds, le: costOf('le', 48).rounds, ltz: costOf('lt', 48).rounds, eq: costOf('eq', 48).rounds,
  min: costOf('min', 48).rounds, max: costOf('max', 48).rounds, randomMultiple: costOf('randomMultiple', 48).rounds,
};

/** ENGINE_ROUNDS, except that a comparison takes the rounds of its own width (costOf), as in the engine. */
export const ENGINE_ROUNDS_BY_WIDTH: Readonly<Record<string, number>> = { ...ENGINE_ROUNDS };

/** Ideal-functionality JobContext (TEST DOUBLE: plain values, no privacy). */
export class IdealJobContext implements JobContext {
  readonly party = 1;
  readonly n = 5;
  readonly t = 2;
  readonly jobId = 'ideal-job';
  readonly stats: IdealStats = { rounds: 0, ops: {}, maxBatch: 0, nibbles: 0, triples: 0 };
  /** rho of randomMultiple: a fixed nonzero sequence (no privacy here; only zero-ness matters). */
  private rho = 3n;
  // Store: committed values plus this "job's" staged writes (null = removed), like the engine's.
  private readonly store = new Map<string, IdealSec>();
  private readonly pubStore = new Map<string, string>();
  private staged = new Map<string, IdealSec | null>();
  private stagedPub = new Map<string, string | null>();
  private queue: { kind: string; run: () => void; width?: number }[] = [];
  private inflight: { due: number; run: () => void }[] = [];
  private scheduled = false;
  private readonly bound: bigint;

  /**
   * `costs` (rounds per operation kind, e.g. ENGINE_ROUNDS) turns the round count into a latency
   * model: an operation issued in round r resolves at the end of round r + cost, and operations in
   * flight overlap, as in the engine's pipelined rounds. Default: every operation costs one round.
   */
  constructor(readonly compareBits = 48, private readonly costs?: Readonly<Record<string, number>>) {
    this.bound = 1n << BigInt(compareBits);
  }

  get L(): number {
    return this.compareBits;
  }

  /** Plain value of a length-1 IdealSec (test helper). */
  static value(x: Sec): bigint {
    const v = (x as IdealSec).values[0];
    if (v === undefined) throw new Error('empty Sec');
    return signed(v);
  }

  private vals(x: Sec): readonly bigint[] {
    if (!(x instanceof IdealSec)) throw new Error('not an IdealSec');
    return x.values;
  }
  private zip(a: Sec, b: Sec, f: (x: bigint, y: bigint) => bigint): IdealSec {
    const va = this.vals(a);
    const vb = this.vals(b);
    if (va.length !== vb.length) throw new Error(`length mismatch ${va.length} vs ${vb.length}`);
    return new IdealSec(va.map((x, i) => mod(f(x, vb[i] as bigint))));
  }
  private checked(x: bigint, bits = this.compareBits): bigint {
    const s = signed(x);
    const bound = bits === this.compareBits ? this.bound : 1n << BigInt(bits);
    if (s >= bound || s <= -bound) throw new Error(`comparison input ${s} outside ±2^${bits}`);
    return s;
  }
  private cmp(a: Sec, b: Sec, f: (x: bigint, y: bigint) => boolean, bits?: number): IdealSec {
    return this.zip(a, b, (x, y) => (f(this.checked(x, bits), this.checked(y, bits)) ? 1n : 0n));
  }

  /**
   * Rounds an operation takes: its kind's cost, or with ENGINE_ROUNDS_BY_WIDTH a comparison's rounds
   * at its own width (costOf: a 4-nibble comparison is one lex4 level, 2 rounds; 5 to 16 nibbles 3).
   */
  private roundsOf(b: { kind: string; width?: number }): number {
    if (!this.costs) return 1;
    if (this.costs === ENGINE_ROUNDS_BY_WIDTH && b.width !== undefined) {
      if (b.kind === 'lt' || b.kind === 'le') return costOf('lt', b.width).rounds;
      if (b.kind === 'ltz') return costOf('lt', b.width - 1).rounds;
    }
    return this.costs[b.kind] ?? 1;
  }

  /** Queues an interactive operation for the next flush (one round). */
  private round<T>(kind: string, compute: () => T, elements = 1, width?: number): Promise<T> {
    this.stats.ops[kind] = (this.stats.ops[kind] ?? 0) + 1;
    this.account(kind, elements, width);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        kind,
        ...(width !== undefined ? { width } : {}),
        run: () => {
          try {
            resolve(compute());
          } catch (e) {
            reject(e);
          }
        },
      });
      this.schedule();
    });
  }
  /** Adds what `elements` operations of `kind` consume in the engine (width: ltz's bound, or lt's L). */
  private account(kind: string, elements: number, width?: number): void {
    const L = this.compareBits;
    switch (kind) {
      case 'lt':
      case 'le':
        this.stats.nibbles += elements * costOf('lt', width ?? L).nibbles;
        break;
      case 'ltz': // |a| < 2^width is lt's geometry at L = width - 1
        this.stats.nibbles += elements * costOf('lt', (width ?? L + 1) - 1).nibbles;
        break;
      case 'eq':
        this.stats.nibbles += elements * costOf('eq', L).nibbles;
        break;
      case 'min':
      case 'max':
        this.stats.nibbles += elements * costOf('min', L).nibbles;
        this.stats.triples += elements;
        break;
      case 'mul':
      case 'select':
      case 'randomMultiple':
        this.stats.triples += elements;
        break;
    }
  }
  private schedule(): void {
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }
  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0 && this.inflight.length === 0) return;
    if (batch.length > 0) this.stats.maxBatch = Math.max(this.stats.maxBatch, batch.length);
    const now = this.stats.rounds;
    for (const b of batch) this.inflight.push({ due: now + this.roundsOf(b), run: b.run });
    this.stats.rounds += 1;
    // Resolve, in issue order, everything due by the end of this round; the rest stays in flight.
    const due = this.inflight.filter((x) => x.due <= this.stats.rounds);
    this.inflight = this.inflight.filter((x) => x.due > this.stats.rounds);
    for (const x of due) x.run();
    if (this.inflight.length > 0) this.schedule();
  }

  fromShares(shares: readonly bigint[]): Sec {
    return new IdealSec(shares.map(mod));
  }
  constant(values: readonly bigint[]): Sec {
    return new IdealSec(values.map(mod));
  }
  sharesOf(x: Sec): bigint[] {
    return [...this.vals(x)];
  }
  concat(parts: readonly Sec[]): Sec {
    return new IdealSec(parts.flatMap((p) => this.vals(p)));
  }
  slice(x: Sec, start: number, end?: number): Sec {
    return new IdealSec(this.vals(x).slice(start, end));
  }
  add(a: Sec, b: Sec): Sec {
    return this.zip(a, b, (x, y) => x + y);
  }
  sub(a: Sec, b: Sec): Sec {
    return this.zip(a, b, (x, y) => x - y);
  }
  neg(a: Sec): Sec {
    return new IdealSec(this.vals(a).map((x) => mod(-x)));
  }
  addPublic(a: Sec, c: readonly bigint[] | bigint): Sec {
    const va = this.vals(a);
    return new IdealSec(va.map((x, i) => mod(x + (typeof c === 'bigint' ? c : (c[i] as bigint)))));
  }
  mulPublic(a: Sec, c: readonly bigint[] | bigint): Sec {
    const va = this.vals(a);
    return new IdealSec(va.map((x, i) => mod(x * (typeof c === 'bigint' ? c : (c[i] as bigint)))));
  }
  mul(a: Sec, b: Sec): Promise<Sec> {
    return this.round('mul', () => this.zip(a, b, (x, y) => x * y), a.length);
  }
  lt(a: Sec, b: Sec, bits?: number): Promise<Sec> {
    return this.round('lt', () => this.cmp(a, b, (x, y) => x < y, bits), a.length, bits);
  }
  le(a: Sec, b: Sec, bits?: number): Promise<Sec> {
    return this.round('le', () => this.cmp(a, b, (x, y) => x <= y, bits), a.length, bits);
  }
  eq(a: Sec, b: Sec): Promise<Sec> {
    return this.round('eq', () => this.cmp(a, b, (x, y) => x === y), a.length);
  }
  min(a: Sec, b: Sec): Promise<Sec> {
    return this.round('min', () => this.zip(a, b, (x, y) => (this.checked(x) <= this.checked(y) ? x : y)), a.length);
  }
  max(a: Sec, b: Sec): Promise<Sec> {
    return this.round('max', () => this.zip(a, b, (x, y) => (this.checked(x) >= this.checked(y) ? x : y)), a.length);
  }
  consumed(): { triples: number; lex4: number; prod4: number; nibbles: number; rounds: number } {
    return { triples: this.stats.triples, lex4: 0, prod4: 0, nibbles: this.stats.nibbles, rounds: this.stats.rounds };
  }
  randomMultiple(x: Sec): Promise<Sec> {
    return this.round('randomMultiple', () => new IdealSec(this.vals(x).map((v) => {
      this.rho = (this.rho * 7n) % P; // never 0: 7 generates a subgroup of the nonzero elements
      return mod(v * this.rho);
    })), x.length);
  }
  select(c: Sec, x: Sec, y: Sec): Promise<Sec> {
    return this.round('select', () => {
      const vc = this.vals(c);
      const vx = this.vals(x);
      const vy = this.vals(y);
      return new IdealSec(
        vc.map((b, i) => {
          if (b !== 0n && b !== 1n) throw new Error(`select condition ${b} not a bit`);
          return b === 1n ? (vx[i] as bigint) : (vy[i] as bigint);
        }),
      );
    }, c.length);
  }
  ltz(a: Sec, width?: number): Promise<Sec> {
    return this.round('ltz', () => {
      const va = this.vals(a);
      const bound = width === undefined ? 2n * this.bound : 1n << BigInt(width);
      return new IdealSec(
        va.map((x) => {
          const v = signed(x);
          if (v >= bound || v <= -bound) throw new Error(`ltz input ${v} outside ±2^${width ?? `(L+1)`}`);
          return v < 0n ? 1n : 0n;
        }),
      );
    }, a.length, width);
  }
  open(x: Sec): Promise<bigint[]> {
    return this.round('open', () => [...this.vals(x)]);
  }
  openTo(recipient: number, x: Sec): Promise<bigint[] | null> {
    return this.round('openTo', () => (recipient === this.party ? [...this.vals(x)] : null));
  }

  load(name: string): Sec | undefined {
    const st = this.staged.get(name);
    if (st !== undefined) return st ?? undefined;
    return this.store.get(name);
  }
  save(name: string, x: Sec): void {
    this.staged.set(name, new IdealSec(this.vals(x)));
  }
  remove(name: string): void {
    this.staged.set(name, null);
  }
  names(): string[] {
    const all = new Set(this.store.keys());
    for (const [k, v] of this.staged) if (v === null) all.delete(k); else all.add(k);
    return [...all].sort();
  }
  loadPublic(name: string): string | undefined {
    const st = this.stagedPub.get(name);
    if (st !== undefined) return st ?? undefined;
    return this.pubStore.get(name);
  }
  savePublic(name: string, json: string): void {
    this.stagedPub.set(name, json);
  }
  removePublic(name: string): void {
    this.stagedPub.set(name, null);
  }
  publicNames(): string[] {
    const all = new Set(this.pubStore.keys());
    for (const [k, v] of this.stagedPub) if (v === null) all.delete(k); else all.add(k);
    return [...all].sort();
  }
  /** Test helper: the "job" completed; staged writes become the store. */
  commit(): void {
    for (const [k, v] of this.staged) if (v === null) this.store.delete(k); else this.store.set(k, v);
    for (const [k, v] of this.stagedPub) if (v === null) this.pubStore.delete(k); else this.pubStore.set(k, v);
    this.staged = new Map();
    this.stagedPub = new Map();
  }
  /** Test helper: the "job" failed; staged writes are dropped. */
  abort(): void {
    this.staged = new Map();
    this.stagedPub = new Map();
  }
}
