// Seeded, realistic order streams for tests and benchmarks: prices clustered around a drifting mid
// with tick noise (many equal prices, some aggressive orders that cross several levels), mixed sides,
// partial fills, cancels of recent (usually live) orders, IOC; with features 'all' also market,
// FOK, GTT, peg, aon, min_fill_size, modify, expire, self-trades and unsupported combinations.
// Values are plain bigint ticks/steps below 2^48; map them to secrets with mapOp().
import type { Op, PlaceOp } from './types';

/** Small deterministic PRNG (sfc32; integer-only). */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  constructor(seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 15; i += 1) this.next32();
  }
  /** Uniform 32-bit unsigned integer. */
  next32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }
  /** Uniform integer in [0, n), n <= 2^32. */
  below(n: number): number {
    if (n <= 0) throw new RangeError('below(n) needs n > 0');
    return this.next32() % n;
  }
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + this.below(hi - lo + 1);
  }
  /** True with probability num/den. */
  chance(num: number, den: number): boolean {
    return this.below(den) < num;
  }
  /** A uniformly chosen element of a non-empty list. */
  pick<T>(xs: readonly T[]): T {
    const x = xs[this.below(xs.length)];
    if (x === undefined) throw new RangeError('pick from an empty list');
    return x;
  }
}

export type StreamKind =
  | 'limit-gtc'
  | 'limit-ioc'
  | 'cancel'
  | 'market'
  | 'market-cap'
  | 'fok'
  | 'gtt'
  | 'peg'
  | 'aon-ioc'
  | 'min-fill-ioc'
  | 'modify-reduce'
  | 'modify-replace'
  | 'expire'
  | 'unsupported';

/** Issue-3 mix: limit GTC/IOC and cancels. */
export const LIMIT_MIX: Readonly<Partial<Record<StreamKind, number>>> = { 'limit-gtc': 55, 'limit-ioc': 15, cancel: 30 };

/** Every kind. */
export const FULL_MIX: Readonly<Partial<Record<StreamKind, number>>> = {
  'limit-gtc': 40,
  'limit-ioc': 8,
  cancel: 14,
  market: 3,
  'market-cap': 3,
  fok: 5,
  gtt: 8,
  peg: 3,
  'aon-ioc': 2,
  'min-fill-ioc': 3,
  'modify-reduce': 5,
  'modify-replace': 4,
  expire: 1,
  unsupported: 1,
};

export interface StreamOptions {
  seed: number;
  /** Number of operations. */
  orders: number;
  /** Symbol names, or a count (symbols S0-USDC-PERP ...). Default one symbol. */
  symbols?: readonly string[] | number;
  /** Owners are 1..accounts (default 20). */
  accounts?: number;
  /** Attach owners (enables self-trade prevention). Default: true for features 'all', false for 'limit'. */
  owners?: boolean;
  /** 'limit' = issue-3 operations only (default); 'all' = every kind. */
  features?: 'limit' | 'all';
  /** Overrides the mix weights (integers). */
  mix?: Partial<Record<StreamKind, number>>;
  midTicks?: bigint;
  /** Price noise: passive offsets up to this many ticks, aggressive ones up to a third of it. */
  spreadTicks?: number;
  maxQty?: number;
  startNs?: bigint;
  stepNs?: bigint;
}

/** Generates a deterministic stream of operations from a seed (sequence numbers from 1, times increasing). */
export function generateStream(o: StreamOptions): Op<bigint>[] {
  const rng = new Rng(o.seed);
  const symbols = typeof o.symbols === 'number' ? Array.from({ length: o.symbols }, (_, i) => `S${i}-USDC-PERP`) : (o.symbols ?? ['BTC-USDC-PERP']);
  const features = o.features ?? 'limit';
  const owners = o.owners ?? features === 'all';
  const accounts = o.accounts ?? 20;
  const spread = o.spreadTicks ?? 30;
  const maxQty = o.maxQty ?? 500;
  const stepNs = o.stepNs ?? 1_000_000n;
  const mix = Object.entries(o.mix ?? (features === 'all' ? FULL_MIX : LIMIT_MIX)).filter(([, w]) => (w ?? 0) > 0) as [StreamKind, number][];
  const totalW = mix.reduce((s, [, w]) => s + w, 0);
  if (totalW === 0) throw new RangeError('empty mix');
  const mids = new Map(symbols.map((s) => [s, o.midTicks ?? 100_000n]));
  const placed = new Map<string, string[]>(symbols.map((s) => [s, []])); // resting-capable ids per symbol
  const ops: Op<bigint>[] = [];
  let now = o.startNs ?? 1_700_000_000_000_000_000n;

  const kind = (): StreamKind => {
    let r = rng.below(totalW);
    for (const [k, w] of mix) {
      if (r < w) return k;
      r -= w;
    }
    return mix[0]![0];
  };
  const qty = (): bigint => {
    const r = rng.below(1000);
    return 1n + BigInt(Math.floor((maxQty * r * r) / 1_000_000)); // skewed to small sizes
  };
  const price = (mid: bigint, side: 'buy' | 'sell', aggressive = false): bigint => {
    const off = aggressive ? -rng.int(0, Math.max(1, Math.floor(spread / 3))) : rng.int(-Math.floor(spread / 3), spread);
    const p = side === 'buy' ? mid - BigInt(off) : mid + BigInt(off);
    return p < 1n ? 1n : p;
  };
  const recent = (sym: string): string | null => {
    const ids = placed.get(sym) ?? [];
    if (ids.length === 0) return null;
    return ids[ids.length - 1 - rng.below(Math.min(ids.length, 60))] ?? null;
  };

  for (let seq = 1n; ops.length < o.orders; seq += 1n) {
    now += stepNs * BigInt(rng.int(1, 3));
    const symbol = rng.pick(symbols);
    let mid = mids.get(symbol) ?? 100_000n;
    if (rng.chance(1, 10)) mid += BigInt(rng.int(-3, 3));
    if (mid < 100n) mid = 100n;
    mids.set(symbol, mid);
    const side = rng.chance(1, 2) ? 'buy' : 'sell';
    const orderId = `o${seq}`;
    const owner = owners ? BigInt(rng.int(1, accounts)) : null;
    const base: PlaceOp<bigint> = { kind: 'place', symbol, orderId, seq, nowNs: now, side, type: 'limit', tif: 'GTC', price: price(mid, side), qty: qty(), owner };
    const k = kind();
    switch (k) {
      case 'limit-gtc':
        ops.push(base);
        placed.get(symbol)!.push(orderId);
        break;
      case 'limit-ioc':
        ops.push({ ...base, tif: 'IOC', price: price(mid, side, rng.chance(1, 2)) });
        break;
      case 'market':
        ops.push({ ...base, type: 'market', tif: rng.chance(1, 4) ? 'FOK' : 'IOC', price: null });
        break;
      case 'market-cap':
        ops.push({ ...base, type: 'market', tif: 'IOC', price: price(mid, side, true) });
        break;
      case 'fok':
        ops.push({ ...base, tif: 'FOK', price: price(mid, side, true) });
        break;
      case 'gtt':
        ops.push({ ...base, tif: 'GTT', expiresAtNs: now + stepNs * BigInt(rng.int(-1, 60)) });
        placed.get(symbol)!.push(orderId);
        break;
      case 'peg':
        // The committee driver prices a peg from the public oracle reference: here, the mid.
        ops.push({ ...base, type: 'peg', tif: rng.chance(1, 5) ? 'IOC' : 'GTC', price: mid });
        placed.get(symbol)!.push(orderId);
        break;
      case 'aon-ioc':
        ops.push({ ...base, tif: 'IOC', aon: true, price: price(mid, side, true) });
        break;
      case 'min-fill-ioc': {
        const q = base.qty;
        ops.push({ ...base, tif: rng.chance(1, 5) ? 'FOK' : 'IOC', price: price(mid, side, true), minFill: 1n + BigInt(rng.below(Number(q))) });
        break;
      }
      case 'unsupported':
        ops.push(rng.chance(1, 2) ? { ...base, type: 'market', tif: 'GTC', price: null } : { ...base, aon: true });
        break;
      case 'cancel': {
        const id = rng.chance(1, 50) ? `unknown-${seq}` : recent(symbol);
        if (id === null) ops.push(base);
        else ops.push({ kind: 'cancel', symbol, orderId: id, seq, nowNs: now });
        break;
      }
      case 'modify-reduce': {
        const id = recent(symbol);
        if (id === null) ops.push(base);
        else ops.push({ kind: 'modify', symbol, orderId: id, seq, nowNs: now, mode: 'reduce', qtyDelta: -BigInt(rng.int(1, Math.max(1, maxQty / 4))) });
        break;
      }
      case 'modify-replace': {
        const id = recent(symbol);
        const d = BigInt(rng.int(-Math.floor(maxQty / 4), Math.floor(maxQty / 2)));
        if (id === null) ops.push(base);
        else ops.push({ kind: 'modify', symbol, orderId: id, seq, nowNs: now, mode: 'replace', qtyDelta: d, price: rng.chance(3, 4) ? price(mid, rng.chance(1, 2) ? 'buy' : 'sell') : null });
        break;
      }
      case 'expire':
        ops.push({ kind: 'expire', nowNs: now, seq });
        break;
    }
  }
  return ops;
}

/** Maps every secret field of an operation (bigint → S), keeping public fields. */
export function mapOp<A, B>(op: Op<A>, f: (v: A) => B): Op<B> {
  switch (op.kind) {
    case 'place':
      return {
        ...op,
        price: op.price === null ? null : f(op.price),
        qty: f(op.qty),
        owner: op.owner == null ? null : f(op.owner),
        minFill: op.minFill == null ? null : f(op.minFill),
      };
    case 'modify':
      return { ...op, qtyDelta: f(op.qtyDelta), price: op.price == null ? null : f(op.price) };
    case 'cancel':
    case 'expire':
      return op;
  }
}
