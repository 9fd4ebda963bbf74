// Arith<Sec> over an MPC job: each secret value is a Sec of length 1. Interactive operations go
// straight to the JobContext, whose runtime batches everything issued before its next flush into one
// round, so code that issues comparisons together (Promise.all) shares rounds, across books too.
import type { JobContext, Sec } from '@tenebra/mpc';
import { SUM_EXTRA_BITS, recordOrder, type Arith, type LeakLabel } from './backend';
import type { LeakRecorder } from './leaks';
import { TranscriptRecorder } from './leaks';
import { ArithRangeError } from './plaintext';

export interface MpcBackendOptions {
  /** Where reveals go; default a TranscriptRecorder. Pass a CountingRecorder on long-running nodes. */
  recorder?: LeakRecorder;
}

/** Adapts a JobContext to Arith<Sec> (every S is a length-1 Sec). */
export class MpcBackend implements Arith<Sec> {
  readonly kind = 'mpc' as const;
  readonly recorder: LeakRecorder;

  constructor(readonly ctx: JobContext, opts: MpcBackendOptions = {}) {
    this.recorder = opts.recorder ?? new TranscriptRecorder();
  }

  constant(v: bigint): Sec {
    return this.ctx.constant([v]);
  }
  add(a: Sec, b: Sec): Sec {
    return this.ctx.add(one(a), one(b));
  }
  sub(a: Sec, b: Sec): Sec {
    return this.ctx.sub(one(a), one(b));
  }
  lt(a: Sec, b: Sec): Promise<Sec> {
    return this.ctx.lt(one(a), one(b));
  }
  le(a: Sec, b: Sec): Promise<Sec> {
    return this.ctx.le(one(a), one(b));
  }
  leWide(a: Sec, b: Sec): Promise<Sec> {
    return this.ctx.le(one(a), one(b), this.ctx.L + SUM_EXTRA_BITS);
  }
  eq(a: Sec, b: Sec): Promise<Sec> {
    return this.ctx.eq(one(a), one(b));
  }
  /** [a < b] = ltz(a - b) at `bits`: the difference of two values in [0, 2^bits) is below 2^bits in size. */
  ltU(a: Sec, b: Sec, bits: number): Promise<Sec> {
    return this.ctx.ltz(this.ctx.sub(one(a), one(b)), bits);
  }
  async leU(a: Sec, b: Sec, bits: number): Promise<Sec> {
    const gt = await this.ctx.ltz(this.ctx.sub(one(b), one(a)), bits);
    return this.ctx.sub(this.ctx.constant([1n]), gt);
  }
  /** [a <= b] = 1 - ltz(b - a) at `bits`: the caller bounds |a - b| below 2^bits (a price window). */
  async leD(a: Sec, b: Sec, bits: number): Promise<Sec> {
    const gt = await this.ctx.ltz(this.ctx.sub(one(b), one(a)), bits);
    return this.ctx.sub(this.ctx.constant([1n]), gt);
  }
  zeroMask(a: Sec, b: Sec): Promise<Sec> {
    return this.ctx.randomMultiple(this.ctx.sub(one(a), one(b)));
  }
  min(a: Sec, b: Sec): Promise<Sec> {
    return this.ctx.min(one(a), one(b));
  }
  mul(a: Sec, b: Sec): Promise<Sec> {
    return this.ctx.mul(one(a), one(b));
  }
  select(c: Sec, x: Sec, y: Sec): Promise<Sec> {
    return this.ctx.select(one(c), one(x), one(y));
  }
  /** Opens b to every node (field value in [0, p), which must be a bit or a small count). */
  async reveal(b: Sec, label: LeakLabel, scope?: string): Promise<bigint> {
    const [v] = await this.ctx.open(one(b));
    if (v === undefined || v < 0n || v > 0xffff_ffffn) {
      throw new ArithRangeError(`reveal '${label}' opened ${String(v)}: not a bit or small count`);
    }
    this.recorder.record(scope === undefined ? { label, value: v } : { label, value: v, scope });
    return v;
  }

  /** Opens a zeroMask: the value is uniform nonzero unless the masked difference was 0; records only that bit. */
  async revealZero(z: Sec, label: LeakLabel, scope?: string): Promise<bigint> {
    const [v] = await this.ctx.open(one(z));
    if (v === undefined) throw new ArithRangeError(`reveal '${label}': nothing opened`);
    const bit = v === 0n ? 1n : 0n;
    this.recorder.record(scope === undefined ? { label, value: bit } : { label, value: bit, scope });
    return bit;
  }
  async revealOrder(lt: Sec, z: Sec, leLabel: LeakLabel, geLabel: LeakLabel, scope?: string): Promise<[bigint, bigint]> {
    const [l, v] = await this.ctx.open(this.ctx.concat([one(lt), one(z)]));
    if (l === undefined || v === undefined) throw new ArithRangeError(`reveal '${leLabel}'/'${geLabel}': nothing opened`);
    return recordOrder(this.recorder, l, v === 0n, leLabel, geLabel, scope, ArithRangeError);
  }

  /** This party's shares of xs, in order (to persist a book snapshot or seal outputs to the gateway). */
  sharesOf(xs: readonly Sec[]): bigint[] {
    if (xs.length === 0) return [];
    return this.ctx.sharesOf(this.ctx.concat(xs.map(one)));
  }
  /** Inverse of sharesOf: one length-1 Sec per share received. */
  fromShares(shares: readonly bigint[]): Sec[] {
    if (shares.length === 0) return [];
    const all = this.ctx.fromShares(shares);
    return shares.map((_, i) => this.ctx.slice(all, i, i + 1));
  }
}

function one(x: Sec): Sec {
  if (x.length !== 1) throw new ArithRangeError(`matching values are single elements; got a Sec of length ${x.length}`);
  return x;
}
