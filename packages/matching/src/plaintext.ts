// The reference backend: S = bigint in the clear. It enforces the same preconditions as the MPC
// engine (comparison inputs are signed integers below 2^L, selectors are bits) so a range bug shows
// up in plaintext runs too, not only on shares.
import { SUM_EXTRA_BITS, recordOrder, type Arith, type LeakLabel } from './backend';
import type { LeakRecorder } from './leaks';
import { TranscriptRecorder } from './leaks';

/** Bit length bound of comparison inputs; matches the MPC engine's default L. */
export const DEFAULT_COMPARE_BITS = 48;

/** Raised when a value violates a backend precondition (a bug in the algorithm or its input). */
export class ArithRangeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArithRangeError';
  }
}

export interface PlaintextBackendOptions {
  /** Comparison inputs must satisfy |x| < 2^compareBits (default 48). */
  compareBits?: number;
  /** Where reveals go; default a TranscriptRecorder. */
  recorder?: LeakRecorder;
}

/** Arith<bigint> that computes in the clear and records every reveal. */
export class PlaintextBackend implements Arith<bigint> {
  readonly kind = 'plaintext' as const;
  readonly recorder: LeakRecorder;
  private readonly bound: bigint;
  private readonly wideBound: bigint;

  constructor(opts: PlaintextBackendOptions = {}) {
    const bits = opts.compareBits ?? DEFAULT_COMPARE_BITS;
    this.bound = 1n << BigInt(bits);
    this.wideBound = 1n << BigInt(bits + SUM_EXTRA_BITS);
    this.recorder = opts.recorder ?? new TranscriptRecorder();
  }

  private inRange(...xs: bigint[]): void {
    for (const x of xs) {
      if (x >= this.bound || x <= -this.bound) throw new ArithRangeError(`comparison input ${x} outside ±2^L`);
    }
  }

  constant(v: bigint): bigint {
    return v;
  }
  add(a: bigint, b: bigint): bigint {
    return a + b;
  }
  sub(a: bigint, b: bigint): bigint {
    return a - b;
  }
  async lt(a: bigint, b: bigint): Promise<bigint> {
    this.inRange(a, b);
    return a < b ? 1n : 0n;
  }
  async le(a: bigint, b: bigint): Promise<bigint> {
    this.inRange(a, b);
    return a <= b ? 1n : 0n;
  }
  async leWide(a: bigint, b: bigint): Promise<bigint> {
    for (const x of [a, b]) {
      if (x >= this.wideBound || x <= -this.wideBound) throw new ArithRangeError(`wide comparison input ${x} outside ±2^(L+${SUM_EXTRA_BITS})`);
    }
    return a <= b ? 1n : 0n;
  }
  async eq(a: bigint, b: bigint): Promise<bigint> {
    this.inRange(a, b);
    return a === b ? 1n : 0n;
  }
  /** Inputs of ltU/leU: integers in [0, 2^bits), else ArithRangeError (on shares they would give a wrong bit). */
  private inWidth(bits: number, ...xs: bigint[]): void {
    if (!Number.isInteger(bits) || bits < 2) throw new ArithRangeError(`width of ${bits} bits is not an integer >= 2`);
    const top = 1n << BigInt(bits);
    for (const x of xs) {
      if (x < 0n || x >= top) throw new ArithRangeError(`comparison input ${x} outside [0, 2^${bits})`);
    }
  }
  async ltU(a: bigint, b: bigint, bits: number): Promise<bigint> {
    this.inWidth(bits, a, b);
    return a < b ? 1n : 0n;
  }
  async leU(a: bigint, b: bigint, bits: number): Promise<bigint> {
    this.inWidth(bits, a, b);
    return a <= b ? 1n : 0n;
  }
  /** leD: |a - b| < 2^bits, else ArithRangeError (on shares a pair further apart gives a wrong bit). */
  async leD(a: bigint, b: bigint, bits: number): Promise<bigint> {
    if (!Number.isInteger(bits) || bits < 2) throw new ArithRangeError(`width of ${bits} bits is not an integer >= 2`);
    this.inRange(a, b);
    const d = a - b;
    if (d >= 1n << BigInt(bits) || -d >= 1n << BigInt(bits)) throw new ArithRangeError(`compared values ${a} and ${b} differ by 2^${bits} or more (outside the book's price window)`);
    return a <= b ? 1n : 0n;
  }
  async zeroMask(a: bigint, b: bigint): Promise<bigint> {
    return a - b; // zero iff equal; only its zero-ness is ever recorded
  }
  async min(a: bigint, b: bigint): Promise<bigint> {
    this.inRange(a, b);
    return a < b ? a : b;
  }
  async mul(a: bigint, b: bigint): Promise<bigint> {
    return a * b;
  }
  async select(c: bigint, x: bigint, y: bigint): Promise<bigint> {
    if (c !== 0n && c !== 1n) throw new ArithRangeError(`select condition ${c} is not a bit`);
    return c === 1n ? x : y;
  }
  async reveal(b: bigint, label: LeakLabel, scope?: string): Promise<bigint> {
    if (b < 0n || b > 0xffff_ffffn) throw new ArithRangeError(`reveal '${label}' of ${b}: not a bit or small count`);
    this.recorder.record(scope === undefined ? { label, value: b } : { label, value: b, scope });
    return b;
  }
  async revealZero(z: bigint, label: LeakLabel, scope?: string): Promise<bigint> {
    const v = z === 0n ? 1n : 0n;
    this.recorder.record(scope === undefined ? { label, value: v } : { label, value: v, scope });
    return v;
  }
  async revealOrder(lt: bigint, z: bigint, leLabel: LeakLabel, geLabel: LeakLabel, scope?: string): Promise<[bigint, bigint]> {
    return recordOrder(this.recorder, lt, z === 0n, leLabel, geLabel, scope, ArithRangeError);
  }
}
