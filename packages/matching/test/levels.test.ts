// The 'levels' rank search (ADR 0032): pivots placed by public weights (the head, the tail and the
// known ends of price levels, Book.beatsNext), the books' public marks it reads (true facts, kept
// through inserts, removals, expiries and snapshots), the same results and books as binary search,
// identical transcripts on both backends, and fewer comparisons on a book of few price levels.
import { describe, expect, it } from 'vitest';
import { Book, type RestingOrder } from '../src/book';
import { Exchange } from '../src/exchange';
import type { ExchangeOptions } from '../src/exchange';
import { PlaintextBackend } from '../src/plaintext';
import { DEFAULT_LEVEL_WEIGHTS, levelPivots, narrow, stepPivots } from '../src/rank';
import { generateStream } from '../src/stream';
import type { Op } from '../src/types';
import { bookRows, runIdeal, runPlain } from './harness';
import { SYM, Scenario } from './helpers';

/** Runs the 'levels' search on plain bits for a rank with the given marks; returns the comparisons per step. */
function simulate(n: number, rank: number, k: number, marks: readonly boolean[], k0 = k): { found: number; steps: number[][] } {
  let lo = 0;
  let hi = n;
  const steps: number[][] = [];
  for (let step = 0; lo < hi; step += 1) {
    const pivots = stepPivots(lo, hi, n, step === 0 ? k0 : k, step, 'levels', (i) => marks[i] === true);
    // at least one, at most the step's k − 1, ascending, distinct, inside [lo, hi) (plain checks: this runs ~30,000 times)
    const ok = pivots.length > 0 && pivots.length <= (step === 0 ? k0 : k) - 1 && pivots.every((p, j) => p >= lo && p < hi && (j === 0 || p > pivots[j - 1]!));
    if (!ok) expect({ lo, hi, n, k, k0, pivots }).toBe('well-formed pivots');
    steps.push(pivots);
    [lo, hi] = narrow(lo, hi, pivots, pivots.map((p) => (p < rank ? 1n : 0n)), 'T');
  }
  return { found: lo, steps };
}

/** A deterministic pseudo-random sequence. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Every order a book marks is priced strictly better than the next on its side (the marks are facts). */
function expectMarksTrue(book: Book<bigint>): number {
  let marks = 0;
  for (const side of ['buy', 'sell'] as const) {
    const s = book.side(side);
    for (let i = 0; i < s.length; i += 1) {
      if (!book.beatsNext(s[i]!)) continue;
      marks += 1;
      expect(i).toBeLessThan(s.length - 1);
      const [a, b] = [s[i]!.price, s[i + 1]!.price];
      expect(side === 'buy' ? a > b : a < b, `${book.symbol} ${side} ${s[i]!.orderId} marked but ${a} vs ${b}`).toBe(true);
    }
  }
  return marks;
}

const LEVEL_VARIANTS: ExchangeOptions[] = [
  { searchArity: 2, searchStart: 'levels' },
  { searchArity: 3, searchFirstArity: 2, searchStart: 'levels', prefetchRank: true, pipelineCross: true },
  { searchArity: 4, searchStart: 'levels', prefetchRank: true },
  { searchArity: 3, searchFirstArity: 2, searchStart: 'levels', prefetchRank: true, speculate: true },
  // the committee's plan since 2026-12-03 (committee/src/apply.ts): a two-pivot prefetched first step, no pipeline
  { searchArity: 3, searchFirstArity: 3, searchStart: 'levels', prefetchRank: true, pipelineCross: false },
];

describe("'levels' rank search", () => {
  it('pivots: the weight median (the head first: it weighs most), then the heaviest brackets; within the bracket, ascending', () => {
    const none = (): boolean => false;
    // no known boundary: head 12 against tail 4 and 9 ranks of 1/256: the first split isolates the head
    expect(levelPivots(0, 10, 10, 2, none)).toEqual([0]);
    // then the tail beside it (the heaviest bracket left is 1..10, its median next to the tail)
    expect(levelPivots(0, 10, 10, 3, none)).toEqual([0, 9]);
    // known boundaries at ranks 3 and 7 (orders 2 and 6 beat their next): they draw the pivots
    const marks = (i: number): boolean => i === 2 || i === 6;
    expect(levelPivots(0, 10, 10, 4, marks)).toEqual([0, 2, 6]);
    expect(levelPivots(1, 10, 10, 2, marks)).toEqual([6]); // between the two boundaries (next to rank 7)
    expect(levelPivots(1, 6, 10, 2, marks)).toEqual([3]); // never inside the run 4..6 of unlikely ranks
    expect(levelPivots(4, 6, 10, 2, marks)).toEqual([4]); // ... unless the bracket holds nothing else: its median
    expect(levelPivots(4, 4, 10, 4, marks)).toEqual([]);
    expect(levelPivots(4, 5, 10, 4, marks)).toEqual([4]);
    expect(DEFAULT_LEVEL_WEIGHTS.head).toBeGreaterThan(DEFAULT_LEVEL_WEIGHTS.boundary);
  });

  it('finds every rank of every depth whatever the marks, k = 2, 3, 4 and a smaller first step; the pivots depend on public values only', () => {
    const rand = lcg(7);
    for (const [k, k0] of [[2, 2], [3, 3], [3, 2], [4, 4], [4, 2]] as const) {
      for (let n = 0; n <= 40; n += 1) {
        for (let trial = 0; trial < 3; trial += 1) {
          const density = [0, 0.25, 0.9][trial]!;
          const marks = Array.from({ length: n }, (_, i) => i < n - 1 && rand() < density);
          for (let rank = 0; rank <= n; rank += 1) {
            const r = simulate(n, rank, k, marks, k0);
            expect(r.found).toBe(rank);
            // the head costs one comparison when it is the answer
            if (rank === 0 && n > 0 && k0 === 2 && density === 0) expect(r.steps.flat().length).toBe(1);
            // the same (n, marks, rank) always gives the same pivots: nothing but public values decide them
            expect(simulate(n, rank, k, marks, k0).steps).toEqual(r.steps);
          }
        }
      }
    }
  });

  it('a rank at a known boundary costs about log2 of the levels, not of the depth', () => {
    // 200 orders in 4 levels of 50 (known ends at 49, 99, 149): each boundary in at most 4 comparisons at k = 2
    const n = 200;
    const marks = Array.from({ length: n }, (_, i) => i === 49 || i === 99 || i === 149);
    for (const rank of [0, 50, 100, 150, 200]) {
      const r = simulate(n, rank, 2, marks);
      expect(r.found).toBe(rank);
      expect(r.steps.flat().length).toBeLessThanOrEqual(4);
    }
    // inside a level it still finds the rank (a price level the marks did not know of)
    expect(simulate(n, 123, 2, marks).found).toBe(123);
  });

  it('book marks: set by an insert that beats its next, dropped from the order ahead, carried across a removal, kept by snapshots', () => {
    const b = new Book<bigint>('X');
    b.noteSeq(10n);
    const o = (id: string, price: bigint): RestingOrder<bigint> => ({ orderId: id, seq: BigInt(id.slice(1)), side: 'buy', type: 'limit', tif: 'GTC', expiresAtNs: null, price, qty: 1n, owner: null });
    const a = o('o1', 100n);
    b.insertAt(a, 0, true); // alone: nothing behind it, no mark
    expect(b.beatsNext(a)).toBe(false);
    const c = o('o2', 90n);
    b.insertAt(c, 1, true); // at the tail: no mark on it; a is only known >= c
    expect([b.beatsNext(a), b.beatsNext(c)]).toEqual([false, false]);
    const d = o('o3', 95n);
    b.insertAt(d, 1, true); // between: d beats c, a >= d
    expect([b.beatsNext(a), b.beatsNext(d), b.beatsNext(c)]).toEqual([false, true, false]);
    const e = o('o4', 110n);
    b.insertAt(e, 0, true); // the new head beats a
    expect(b.beatsNext(e)).toBe(true);
    b.remove('o1'); // e > a >= d: e still beats its next
    expect(b.side('buy').map((x) => x.orderId)).toEqual(['o4', 'o3', 'o2']);
    expect(b.beatsNext(e)).toBe(true);
    b.remove('o3'); // e >= ... > c: the mark of d passes to e (e was marked already)
    expect(b.beatsNext(e)).toBe(true);
    b.remove('o2'); // e is last now: nothing behind it
    expect(b.beatsNext(e)).toBe(false);
    const f = o('o5', 100n);
    b.insertAt(f, 1, true);
    expect(b.beatsNext(e)).toBe(false); // never a stale mark over a new tail
    const g = o('o6', 99n);
    b.insertAt(g, 2, false);
    b.insertAt(o('o7', 105n), 1, true);
    const snap = b.toSnapshot();
    expect(snap.pub.orders.map((x) => x.gt === true)).toEqual([false, true, false, false]);
    const back = Book.fromSnapshot(JSON.parse(JSON.stringify(snap.pub)) as typeof snap.pub, snap.secrets);
    expect(back.toSnapshot()).toEqual(snap);
    expect(back.side('buy').map((x) => back.beatsNext(x))).toEqual([false, true, false, false]);
  });

  it('marks are facts after every op of streams with every order kind (cancels, modifies, expiries, self-trades, fills)', async () => {
    for (let seed = 300; seed < 304; seed += 1) {
      const ops = generateStream({ seed, orders: 1500, symbols: 2, accounts: 5, features: 'all', spreadTicks: seed % 2 === 0 ? 6 : 30 });
      const ex = new Exchange<bigint>(new PlaintextBackend({ compareBits: 48 }), LEVEL_VARIANTS[seed % LEVEL_VARIANTS.length]);
      let marks = 0;
      for (const op of ops) {
        await ex.apply(op);
        for (const s of ex.symbols()) marks += expectMarksTrue(ex.book(s)!);
      }
      expect(marks).toBeGreaterThan(1000);
    }
  });

  it('same results and books as binary search on many seeds; only insert-rank reveals differ', async () => {
    for (let seed = 320; seed < 326; seed += 1) {
      const ops = generateStream({ seed, orders: 1200, symbols: 2, features: seed % 3 === 0 ? 'all' : 'limit', spreadTicks: seed % 2 === 0 ? 6 : 30 });
      const base = await runPlain(ops, { searchArity: 2 });
      const others = base.transcript.records.filter((r) => r.label !== 'insert-rank');
      for (const v of LEVEL_VARIANTS) {
        const run = await runPlain(ops, v);
        expect(run.results).toEqual(base.results);
        for (const s of base.exchange.symbols()) expect(bookRows(run.exchange.book(s), run.value)).toEqual(bookRows(base.exchange.book(s), base.value));
        expect(run.transcript.records.filter((r) => r.label !== 'insert-rank')).toEqual(others);
      }
    }
  }, 240_000);

  it('plaintext and MPC backends reveal identical transcripts and snapshots (marks included)', async () => {
    const ops = generateStream({ seed: 78, orders: 800, symbols: 1, features: 'all', spreadTicks: 8 });
    for (const opts of LEVEL_VARIANTS) {
      const plain = await runPlain(ops, opts);
      const mpc = await runIdeal(ops, opts);
      expect(mpc.results).toEqual(plain.results);
      expect(mpc.transcript.records).toEqual(plain.transcript.records);
      expect(mpc.exchange.toSnapshot().pub).toEqual(plain.exchange.toSnapshot().pub);
    }
  });

  it("on a deep book of few price levels it opens far fewer insert-rank bits than 'ends'", async () => {
    // 24 owners in turn at mid ± 5 ticks, half crossing (bench:orders' sustained stream, shortened)
    const ops: Op<bigint>[] = [];
    for (let i = 0; i < 1200; i += 1) {
      const c = i % 24;
      const j = Math.floor(i / 24);
      const side = (j + c) % 2 === 0 ? 'buy' : 'sell';
      const off = BigInt(((j * 7 + c * 3) % 11) - 5);
      ops.push({ kind: 'place', symbol: 'S', orderId: `s${i + 1}`, seq: BigInt(i + 1), side, type: 'limit', tif: 'GTC', price: side === 'buy' ? 1000n + off : 1000n - off, qty: BigInt(40 + ((j * 13) % 90)), owner: BigInt(c + 1) });
    }
    const rankBits = async (opts: ExchangeOptions): Promise<number> => (await runPlain(ops, opts)).transcript.records.filter((r) => r.label === 'insert-rank').length;
    const ends = await rankBits({ searchArity: 2, searchStart: 'ends' });
    const levels = await rankBits({ searchArity: 2, searchStart: 'levels' });
    expect(levels).toBeLessThan(ends * 0.7);
  });

  it('edges: equal prices go behind their level, a new price inside a level the marks did not know, the head and the tail', async () => {
    for (const v of LEVEL_VARIANTS) {
      const s = new Scenario(v);
      await s.place('buy', 100n, 1n); // o1
      await s.place('buy', 100n, 1n); // o2: equal, behind o1 (o1 only known >= o2)
      await s.place('buy', 98n, 1n); // o3: at the tail (o2 only known >= o3: 100 > 98 is not known)
      await s.place('buy', 99n, 1n); // o4: between o2 and o3, inside the run the marks see as one level
      await s.place('buy', 100n, 1n); // o5: behind o1, o2 (a known boundary now: o4 beat o3, o2 ...)
      await s.place('buy', 101n, 1n); // o6: the head
      await s.place('buy', 97n, 1n); // o7: the tail
      await s.place('buy', 99n, 1n); // o8: behind o4
      expect(s.rows().map((r) => r.split(' ')[1])).toEqual(['o6', 'o1', 'o2', 'o5', 'o4', 'o8', 'o3', 'o7']);
      expectMarksTrue(s.ex.book(SYM)!);
    }
  });
});
