// Price-time-priority matching, written once against Arith<S>. Control flow depends only on public
// fields and on values passed through reveal(); every reveal label is listed in leaks.ts and in the
// README's leak table. Operations on one book must run strictly one after another (Exchange does it).
import { priceLeOf, type Arith, type BookWidths } from './backend';
import type { Book, RestingOrder } from './book';
import type { MakerBits, TakerView } from './liquidity';
import { coversTarget, crossTest, selfTest } from './liquidity';
import { LEAK } from './leaks';
import type { LevelWeights, SearchStart } from './rank';
import { DEFAULT_SEARCH_ARITY, checkArity, defaultStart, narrow, stepPivots } from './rank';
import type {
  CancelOp,
  CancelOutcome,
  Execution,
  ModifyOp,
  ModifyOutcome,
  OpResult,
  OrderType,
  PlaceOp,
  PlaceOutcome,
  Reject,
  Side,
  TimeInForce,
} from './types';
import { BookInvariantError } from './types';
import { checkModify, checkPlace } from './validate';

export interface MatchOptions {
  /**
   * Issue a maker's cross, self-trade and both exhaustion comparisons in one batch before revealing
   * any (one comparison latency per maker instead of two; three wasted comparisons when the order
   * does not cross). Reveals, and so the transcript, are identical either way. Default false.
   */
  speculate?: boolean;
  /**
   * Speculate (as `speculate` does) for every maker after the first one a taker crossed: its
   * self-trade mask and exhaustion test are issued with its cross test, not after it opens. The
   * order has already crossed the better maker before it, so the next one usually sits at the same
   * price and crosses too (92% on bench:orders' stream): the exhaustion test is rarely wasted, and a
   * further maker's fill takes 2 rounds after its cross bit instead of 4. Not when the book marks the
   * maker before as strictly better than this one (a known level end, ADR 0032). Reveals identical.
   * Default false. (ADR 0046)
   */
  speculateFurther?: boolean;
  /**
   * Bet on a cross when the order meets a head the previous placement on the book just rested
   * (the opposite head's seq is the book's last placement seq): a new best price, which the next
   * order on the other side crosses three times in four on bench:orders' stream (against 0.37 for any
   * order). The first maker's self-trade mask and exhaustion test are issued with its cross test (as
   * `speculate` does), and the rank step is not prefetched (it would be wasted on a cross). Decided
   * from public values only (both seqs are in the book's snapshot). Reveals identical. Default false.
   * (ADR 0046)
   */
  crossBet?: boolean;
  /**
   * Arity k of the search that ranks a resting remainder: each step compares against k − 1 pivots
   * in one batch and opens their bits together, ⌈log_k(n + 1)⌉ steps for n orders on the side. 2 is
   * binary search. Same information either way (the rank). Default DEFAULT_SEARCH_ARITY.
   */
  searchArity?: number;
  /** Pivot plan of the search's first step (see SearchStart). Default 'head' for k > 2, else 'even'. */
  searchStart?: SearchStart;
  /**
   * Arity of the search's first step (the one prefetchRank issues with the first cross test, wasted
   * when the order crosses), when it should differ from searchArity. Default searchArity.
   */
  searchFirstArity?: number;
  /** Public weights of the 'levels' plan (rank.ts, LevelWeights). Default DEFAULT_LEVEL_WEIGHTS. */
  levelWeights?: LevelWeights;
  /**
   * Issue the first search step's comparisons of a GTC/GTT order (which may rest) in the batch of its
   * first cross comparison, and open them only if the order rests: one comparison latency less per
   * resting order on a non-empty side; up to k − 1 wasted comparisons when the order fills instead.
   * Reveals identical. Default false.
   */
  prefetchRank?: boolean;
  /**
   * With prefetchRank: open the prefetched step's bits in the round that opens the first cross bit,
   * not one round after it (one round less per order that rests without crossing). Nothing new: when
   * that cross bit is 1 the order's price reaches the opposite best, which is strictly better than
   * every order on its own side (the book is never crossed), so every such bit is 0, known already
   * (checked: a 1 throws). Every node must use the same setting (it changes the transcript: those
   * zero bits are recorded). Default true. (ADR 0036)
   */
  fuseRankOpen?: boolean;
  /**
   * Issue the next maker's cross comparison in the batch of the current maker's exhaustion tests
   * (the next head is the current second order whatever the outcome): one comparison latency less
   * per further maker; one wasted comparison when the taker is exhausted. Ignored with speculate
   * unless pipelineWithSpeculate. Reveals identical. Default false.
   */
  pipelineCross?: boolean;
  /**
   * With speculate and pipelineCross: issue the next maker's cross test once the current maker's
   * cross bit opens 1 (ADR 0036). On the bench:orders stream 0.16 rounds less per op for 5.9 more
   * random bits (scripts/bench/matching-rounds.ts). Reveals identical. Default false.
   */
  pipelineWithSpeculate?: boolean;
  /**
   * While an order that did not cross searches its rank further, compute the next queued placement's
   * first cross test (and, when it is on the other side, its prefetched rank step) ahead: this op
   * changes neither the head it will meet nor that side. The next op uses them when the book still
   * holds the same orders there, else recomputes (and settles them unopened). Reveals identical.
   * Only ops queued together (one job) are looked ahead at. Default true. (ADR 0036)
   */
  lookahead?: boolean;
  /**
   * With lookahead: once this op's first cross bit opens 1, compute the next queued placement's first
   * cross test ahead when that placement is on the other side, i.e. meets the head of THIS op's own
   * side: an order that crossed changes its own side only by resting there (a remainder left after
   * every crossing maker), so that head is almost always still there when the next op starts (it
   * checks, else recomputes). The comparison runs during this op's self-trade and exhaustion rounds;
   * the next op opens its cross bit in its first round. Reveals identical. Default true. (ADR 0046)
   */
  lookaheadAfterCross?: boolean;
  /**
   * The book's public value bounds (Exchange resolves them per symbol from ExchangeOptions.bookWidths):
   * price comparisons at priceBits and the exhaustion test at qtyBits instead of the backend's bound.
   * Absent: every comparison at the backend's bound. Same results and reveals either way.
   */
  widths?: BookWidths;
}

/**
 * Comparisons computed ahead for the next queued placement of a book (MatchOptions.lookahead), keyed
 * by that op's id and seq: its first cross test against `maker`, and its prefetched rank step over
 * `pivots` of its own side (the orders there at the time: `at`).
 */
export interface AheadWork<S> {
  orderId: string;
  seq: bigint;
  maker: RestingOrder<S>;
  cross: Promise<S>;
  prefetch: { pivots: number[]; at: RestingOrder<S>[]; length: number; bits: Promise<S>[] } | null;
}

/** What an op may look ahead at: the next queued op of its book (with its backend and options), and where to leave work for it. */
export interface Lookahead<S> {
  next(): { op: PlaceOp<S>; arith: Arith<S>; opts: MatchOptions } | undefined;
  slot: { work: AheadWork<S> | null };
}

function aheadPromises<S>(w: AheadWork<S>): Promise<S>[] {
  return [w.cross, ...(w.prefetch?.bits ?? [])];
}

/** An incoming order (a placement, or the new order of a replace). */
interface Taker<S> extends TakerView<S> {
  orderId: string;
  seq: bigint;
  type: OrderType;
  tif: TimeInForce;
  qty: S;
  expiresAtNs: bigint | null;
  aon: boolean;
  minFill: S | null;
}

const opposite = (side: Side): Side => (side === 'buy' ? 'sell' : 'buy');

function emptyExecution(): Execution {
  return { fills: [], selfTradeCancelled: [], takerFilled: false, rested: false, cancelReason: null };
}

/**
 * Matches an incoming order against the opposite side and then rests or cancels its remainder.
 * Appends [qty, price] per fill to `outputs`.
 */
async function runTaker<S>(
  arith: Arith<S>,
  book: Book<S>,
  t: Taker<S>,
  outputs: S[],
  opts: MatchOptions,
  ahead?: Lookahead<S>,
  early?: AheadWork<S> | null,
  prevSeq?: bigint,
): Promise<Execution> {
  const ex = emptyExecution();
  const scope = book.symbol;
  const w = opts.widths;
  const reveal = (b: S, label: string): Promise<bigint> => arith.reveal(b, label, scope);

  if (t.tif === 'GTT' && t.expiresAtNs !== null && t.expiresAtNs <= book.clockNs) {
    ex.cancelReason = 'GTT_EXPIRED'; // already due at its sequenced time: never trades
    return ex;
  }

  // FOK / aon: reveal only whether crossing, non-self liquidity covers the whole order.
  let bits: MakerBits<S> | undefined;
  const allOrNone = t.tif === 'FOK' || t.aon;
  if (allOrNone && t.minFill !== null) throw new BookInvariantError(`${scope}: ${t.orderId} combines all-or-none with min_fill (refused by checkPlace)`);
  if (allOrNone) {
    const makers = book.side(opposite(t.side));
    let covered = false;
    if (makers.length > 0) {
      const r = await coversTarget(arith, makers, t, t.qty, undefined, w);
      covered = (await reveal(r.covers, LEAK.fokLiquidity)) === 1n;
      bits = r.bits;
    }
    if (!covered) {
      ex.cancelReason = t.tif === 'FOK' ? 'FOK_NOT_FILLED' : 'IOC_REMAINDER';
      return ex;
    }
  }

  // The remainder of a GTC/GTT order may rest: its own side does not change while it matches, so the
  // first search step can be computed now, in the batch of the first cross comparison (prefetchRank).
  const restSide = book.side(t.side);
  const mayRest = (t.tif === 'GTC' || t.tif === 'GTT') && t.type !== 'market' && t.price !== null;
  const k = opts.searchArity ?? DEFAULT_SEARCH_ARITY;
  checkArity(k);
  const start = opts.searchStart ?? defaultStart(k);
  const k0 = opts.searchFirstArity ?? k;
  checkArity(k0);
  const arityOf = (step: number): number => (step === 0 ? k0 : k);
  const priceLe = priceLeOf(arith, w);
  const afterTest = (i: number): Promise<S> => goesAfter(priceLe, t.side, t.price as S, restSide[i] as RestingOrder<S>);
  // the known ends of price levels on the resting side ('levels' places pivots by them)
  const beatsNext = (i: number): boolean => book.beatsNext(restSide[i] as RestingOrder<S>);
  // the opposite side's head: the first maker this order meets
  const firstMaker = book.side(opposite(t.side))[0];
  // crossBet: that head is the order the previous placement rested (a new best price)
  const bet = opts.crossBet === true && !allOrNone && t.price !== null && prevSeq !== undefined && firstMaker !== undefined && firstMaker.seq === prevSeq;
  let firstStep: { pivots: number[]; bits: Promise<S>[] } | null = null;
  if (opts.prefetchRank && mayRest && restSide.length > 0 && !bet) {
    const pivots = firstStepPivots(book, restSide, opts);
    // computed ahead by the op before (lookahead) over the same orders at the same pivots: reuse it
    const pre = early?.prefetch;
    const same = pre !== null && pre !== undefined && pre.length === restSide.length && pre.pivots.length === pivots.length &&
      pivots.every((p, j) => pre.pivots[j] === p && pre.at[j] === restSide[p]);
    const bits = same ? pre.bits : pivots.map(afterTest);
    for (const b of bits) b.catch(() => undefined); // unused when the order does not rest
    firstStep = { pivots, bits };
  }
  // A first cross test computed ahead, against the order still at the head: reuse it.
  const earlyCross = early && !allOrNone && t.price !== null && firstMaker !== undefined && early.maker === firstMaker ? early.cross : null;
  // A cross bit computed ahead without the prefetched step (that side changed, or it was not looked
  // ahead at) is ready now while the step is not: open it alone at once rather than wait for the step
  // (fused, the step's bits would set the round). If the order rests the step is opened next, as
  // the search's first step; if it crosses, its zeros are opened once this maker's tests are issued
  // and before its self-trade bit (openLateZeros), off the fill's critical path: the same values in
  // the same order as fused, so the transcript does not depend on how ops were queued (job sizes).
  const crossAlone = earlyCross !== null && firstStep !== null && firstStep.bits !== early?.prefetch?.bits;
  let lateZeros = false;
  // The prefetched step's bits, once opened with the first cross bit (fuseRankOpen).
  let firstOpened: bigint[] | null = null;
  const fuse = opts.fuseRankOpen ?? true;
  /**
   * Opens a cross bit. The first one of the op opens the prefetched rank step in the same round
   * (fuseRankOpen): with cross = 1 those bits are all 0 (the book is never crossed), so nothing new.
   */
  const openCross = async (crossS: S): Promise<bigint> => {
    if (crossAlone && fuse && !crossed && firstOpened === null) {
      const c = await reveal(crossS, LEAK.cross);
      lateZeros = c === 1n;
      return c;
    }
    if (!fuse || firstStep === null || crossed || firstOpened !== null) return reveal(crossS, LEAK.cross);
    const step = firstStep;
    const secret = await Promise.all(step.bits);
    const [c, ...rank] = await Promise.all([reveal(crossS, LEAK.cross), ...secret.map((b) => reveal(b, LEAK.insertRank))]);
    if (c === 1n && rank.some((b) => b !== 0n)) throw new BookInvariantError(`${scope}: an order that crosses ranks behind a resting order of its own side (crossed book)`);
    firstOpened = rank;
    return c as bigint;
  };
  /** The zeros a fused opening would have opened beside a cross bit of 1 (crossAlone), opened now. */
  const openLateZeros = async (): Promise<void> => {
    if (!lateZeros || firstStep === null) return;
    lateZeros = false;
    const secret = await Promise.all(firstStep.bits);
    const rank = await Promise.all(secret.map((b) => reveal(b, LEAK.insertRank)));
    if (rank.some((b) => b !== 0n)) throw new BookInvariantError(`${scope}: an order that crosses ranks behind a resting order of its own side (crossed book)`);
    firstOpened = rank;
  };

  let remaining = t.qty;
  const side = opposite(t.side);
  const pipe: { next: { maker: RestingOrder<S>; bit: Promise<S> } | null } = { next: null };
  // Comparisons issued ahead and not needed (a prefetched rank step, a pipelined cross) are never
  // opened, but the op must not end before they do: the engine fails a job that returns with
  // operations in flight (they usually finish together with what was awaited; widths can differ).
  const settleAhead = async (): Promise<void> => {
    await Promise.allSettled([...(firstOpened === null ? firstStep?.bits ?? [] : []), ...(pipe.next ? [pipe.next.bit] : [])]);
  };
  // min_fill_size is a minimum per execution (spec): a crossing maker holding less is skipped (it
  // keeps its place), and once the remainder is below it no execution can reach it. `skipped` counts
  // the makers passed over at the head of the side; without min_fill it stays 0.
  const qtyLe = (a: S, b: S): Promise<S> => (w ? arith.leU(a, b, w.qtyBits) : arith.le(a, b));
  let skipped = 0;
  // Whether a cross bit was opened as 1: the order's price reached the opposite side's best.
  let crossed = false;
  // whether the last maker this order crossed was known strictly better than the one behind it
  let prevBeats = false;
  // Once crossed, this op leaves its own side alone unless it rests there: the next placement on the
  // other side meets that side's head, so its cross test can start now (lookaheadAfterCross).
  const lookCrossed = (): void => {
    if ((opts.lookahead ?? true) && (opts.lookaheadAfterCross ?? true) && ahead) lookAhead(arith, book, { crossed: t.side }, ahead);
  };
  for (let i = 0; ; i += 1) {
    const maker = book.side(side)[skipped];
    if (maker === undefined) break;
    // Each iteration stops, skips or removes the head, so maker i is the i-th maker of `bits`
    // (bits exist only for all-or-none orders, which never skip).
    const pre = pipe.next !== null && pipe.next.maker === maker ? pipe.next.bit : null;
    pipe.next = null;
    const crossP = t.price === null ? null : (bits?.cross[i] ?? pre ?? (i === 0 ? earlyCross : null) ?? crossTest(arith, t, maker, w));
    // Self-trade: the liquidity pass's secret bit (opened as is), else a zero mask of the owners'
    // difference, opened by revealZero: the same bit with no random bits (no equality comparison).
    const selfP = (): { bit: S } | { mask: Promise<S> } | null => {
      if (bits) return bits.self[i] === null || bits.self[i] === undefined ? null : { bit: bits.self[i] as S };
      if (t.owner === null || maker.owner === null) return null;
      return { mask: arith.zeroMask(t.owner, maker.owner) };
    };
    // Exhaustion: ONE strict comparison [maker.qty < remaining] and a zero mask of the same difference;
    // revealOrder opens both and records [maker.qty <= remaining], [remaining <= maker.qty] as before.
    // Whatever this maker's outcome, the next head (if the loop goes on) is today's second order:
    // pipelineCross computes its cross test now, beside this maker's exhaustion tests (with
    // speculate, once this maker's cross bit is 1: not for an order that stops here).
    const pipeNext = (): void => {
      const second = book.side(side)[skipped + 1];
      if (opts.pipelineCross && (!opts.speculate || opts.pipelineWithSpeculate === true) && !bits && second !== undefined && t.price !== null) {
        const bit = crossTest(arith, t, second, w) as Promise<S>;
        bit.catch(() => undefined); // unused when the taker is exhausted here
        pipe.next = { maker: second, bit };
      }
    };
    const exhaust = (): [Promise<S>, Promise<S>] => {
      const less = w ? arith.ltU(maker.qty, remaining, w.qtyBits) : arith.lt(maker.qty, remaining);
      return [less, arith.zeroMask(maker.qty, remaining)];
    };

    let crossS: S | null;
    let selfQ: { bit: S } | { mask: Promise<S> } | null;
    let lessP: Promise<S>;
    let zeroP: Promise<S>;
    // speculateFurther: a maker after one this order crossed, unless the book marks it strictly worse
    // than that one (a level end: it crosses less often; on 20 shallow books ungated speculation
    // wasted 2.1 bits per op for 0.04 rounds)
    if (opts.speculate || (opts.speculateFurther === true && crossed && !prevBeats) || (bet && i === 0)) {
      selfQ = selfP();
      [lessP, zeroP] = exhaust();
      const ahead = [lessP, zeroP, ...(selfQ !== null && 'mask' in selfQ ? [selfQ.mask] : [])];
      for (const q of ahead) q.catch(() => undefined); // unused when the order does not cross
      crossS = await crossP;
      if (crossS !== null && (await openCross(crossS)) === 0n) {
        // never opened, but settled: no operation may outlive the op (the engine fails such a job)
        await Promise.allSettled(ahead);
        break;
      }
      crossed = true;
      lookCrossed();
      pipeNext();
      await openLateZeros();
    } else {
      crossS = await crossP;
      if (crossS !== null && (await openCross(crossS)) === 0n) break;
      crossed = true;
      lookCrossed();
      selfQ = selfP();
      [lessP, zeroP] = exhaust();
      pipeNext();
      await openLateZeros();
    }
    prevBeats = book.beatsNext(maker);
    // Per-execution minimum, maker side: [min_fill <= maker.qty], issued with the exhaustion tests.
    const enoughP = t.minFill !== null ? qtyLe(t.minFill, maker.qty) : null;
    enoughP?.catch(() => undefined); // unopened after a self-trade
    // The self-trade bit may be opened only now (after cross = 1) and before the exhaustion pair.
    const selfOpen = selfQ === null ? null : 'bit' in selfQ ? reveal(selfQ.bit, LEAK.selfTrade) : selfQ.mask.then((m) => arith.revealZero(m, LEAK.selfTrade, scope));
    if (selfOpen !== null) {
      // a self-trade leaves the exhaustion tests unopened
      lessP.catch(() => undefined);
      zeroP.catch(() => undefined);
    }
    if (selfOpen !== null && (await selfOpen) === 1n) {
      // the exhaustion tests (3 rounds) outlast the zero test (2): settle them unopened, or the op
      // could end, and its job return, with them still in flight
      await Promise.allSettled([lessP, zeroP, ...(enoughP ? [enoughP] : [])]);
      book.remove(maker.orderId); // self-trade prevention: cancel the resting order, keep matching
      ex.selfTradeCancelled.push(maker.orderId);
      continue;
    }

    // Opened before the exhaustion pair: a maker below the minimum is passed over, the pair unopened.
    if (enoughP !== null) {
      if ((await reveal(await enoughP, LEAK.minFillMaker)) === 0n) {
        lessP.catch(() => undefined);
        zeroP.catch(() => undefined);
        await Promise.allSettled([lessP, zeroP]);
        skipped += 1;
        continue;
      }
    }

    // Both bits from one opening round; the fill quantity then follows by public selection.
    const [less, zero] = await Promise.all([lessP, zeroP]);
    const [mDone, tDone] = await arith.revealOrder(less, zero, LEAK.makerExhausted, LEAK.takerExhausted, scope);
    if (mDone === 0n && tDone === 0n) throw new BookInvariantError(`${scope}: neither maker nor taker exhausted`);
    const fillQty = mDone === 1n ? maker.qty : remaining;
    outputs.push(fillQty, maker.price);
    ex.fills.push(maker.orderId);
    if (mDone === 1n) {
      remaining = arith.sub(remaining, maker.qty);
      book.remove(maker.orderId);
    } else {
      maker.qty = arith.sub(maker.qty, remaining);
    }
    if (tDone === 1n) {
      ex.takerFilled = true;
      await settleAhead();
      return ex;
    }
    // Per-execution minimum, taker side: a remainder below it cannot execute again.
    if (t.minFill !== null && (await reveal(await qtyLe(t.minFill, remaining), LEAK.minFillRemainder)) === 0n) break;
  }

  if (allOrNone) throw new BookInvariantError(`${scope}: ${t.orderId} covered by liquidity but not filled`);
  if (t.tif === 'IOC' || t.tif === 'FOK') {
    ex.cancelReason = 'IOC_REMAINDER';
    await settleAhead();
    return ex;
  }
  // GTC / GTT remainder rests at the rank found by k-ary search (equal price → behind): per step,
  // k − 1 comparisons in one batch, their bits opened together (insert-rank), monotone.
  if (!mayRest || t.price === null || t.type === 'market') throw new BookInvariantError(`${scope}: a market order cannot rest`);
  const price = t.price;
  let lo = 0;
  // A remainder that crossed goes to the head of its side, with no search: an order rests only once
  // it no longer crosses the opposite best (or that side is empty), so every bid is below every ask,
  // and this order's price reached an ask (a buy; a bid for a sell): it is strictly better than
  // every order on its own side. The opened cross bit already tells the nodes this rank (0), so
  // nothing is opened for it; it saves the search's comparisons and rounds (its random bits too).
  let hi = crossed ? 0 : restSide.length;
  if (hi === 0 && firstStep !== null) await settleAhead(); // a prefetched step, now unneeded, must not outlive the op
  let step = 0;
  if (firstOpened !== null && firstStep !== null && lo < hi) {
    // opened with the cross bit that stopped matching (fuseRankOpen): narrow by it now
    [lo, hi] = narrow(lo, hi, firstStep.pivots, firstOpened, scope);
    firstStep = null;
    step = 1;
  }
  // Once the search goes on behind the head of this side (lo >= 1), this op changes neither side's
  // head nor the opposite side: the next placement's first comparisons can start (lookahead).
  const look = (): void => {
    if ((opts.lookahead ?? true) && ahead && !crossed && lo >= 1 && lo < hi) lookAhead(arith, book, { resting: t.side }, ahead);
  };
  look();
  for (; lo < hi; step += 1) {
    const pivots = firstStep?.pivots ?? stepPivots(lo, hi, restSide.length, arityOf(step), step, start, beatsNext, opts.levelWeights);
    const tests = firstStep?.bits ?? pivots.map(afterTest);
    firstStep = null;
    const secret = await Promise.all(tests);
    const opened = await Promise.all(secret.map((b) => reveal(b, LEAK.insertRank)));
    [lo, hi] = narrow(lo, hi, pivots, opened, scope);
    look(); // once per op: lookAhead leaves at most one piece of work
  }
  book.insertAt(
    {
      orderId: t.orderId,
      seq: t.seq,
      side: t.side,
      type: t.type,
      tif: t.tif,
      expiresAtNs: t.expiresAtNs,
      price,
      qty: remaining,
      owner: t.owner,
    },
    lo,
    // ahead of some order only with after(lo) = 0 opened (or a crossed remainder at the head): strictly better than it
    true,
  );
  ex.rested = true;
  return ex;
}

/** [an order at `price` on `side` goes behind `other`]: other's price is at least as good as its own. */
function goesAfter<S>(priceLe: (a: S, b: S) => Promise<S>, side: Side, price: S, other: RestingOrder<S>): Promise<S> {
  return side === 'buy' ? priceLe(price, other.price) : priceLe(other.price, price);
}

/** The pivots of the first rank-search step over one side of the book (the prefetched step). */
function firstStepPivots<S>(book: Book<S>, sideOrders: readonly RestingOrder<S>[], opts: MatchOptions): number[] {
  const k = opts.searchArity ?? DEFAULT_SEARCH_ARITY;
  const k0 = opts.searchFirstArity ?? k;
  const start = opts.searchStart ?? defaultStart(k);
  return stepPivots(0, sideOrders.length, sideOrders.length, k0, 0, start, (i) => book.beatsNext(sideOrders[i] as RestingOrder<S>), opts.levelWeights);
}

/**
 * Leaves the next queued placement's first cross test (and its prefetched rank step when its own side
 * is the one this op does not touch) in ahead.slot. Called
 *  - `resting`: while this op, which did not cross, still searches its rank behind the head of its
 *    side: neither head changes, nor the other side;
 *  - `crossed`: once this op's cross bit opened 1 (ADR 0046): it matches the other side, and changes
 *    its own side `crossed` only if a remainder rests there (at its head). Only a placement on the
 *    other side, which meets the head of side `crossed`, is looked ahead at, and with no prefetched
 *    step (its own side is the one being matched).
 * Only plain priced placements of the same job (same backend), on a book without GTT orders (an
 * expiry could change the head), are looked ahead at. The next op uses the work only if the same
 * orders are still where it was computed for, else recomputes; used or not, it is settled.
 */
function lookAhead<S>(current: Arith<S>, book: Book<S>, mode: { resting: Side } | { crossed: Side }, ahead: Lookahead<S>): void {
  if (ahead.slot.work !== null || book.gttCount > 0) return;
  const n = ahead.next();
  // only for an op of the same job: its comparisons must consume this job's preprocessing
  if (!n || n.arith !== current) return;
  const { op, arith, opts } = n;
  // the next op takes (and settles) the work only if it looks ahead itself
  if (opts.lookahead === false) return;
  if (op.price === null || op.type === 'market' || op.tif === 'FOK' || op.tif === 'GTT' || op.aon === true || op.minFill != null) return;
  if (checkPlace(op) !== null || book.has(op.orderId) || (op.tif === 'GTC' && book.size + 1 >= book.maxDepth)) return;
  // a placement on this op's side would meet the side being matched, whose head this op may remove
  // (tried: on the issue-3 limit stream 0.03-0.06 rounds per op less for 0.5-0.6 random bits more)
  if ('crossed' in mode && op.side === mode.crossed) return;
  const maker = book.side(opposite(op.side))[0];
  if (maker === undefined) return;
  const taker: TakerView<S> = { side: op.side, price: op.price, owner: op.owner ?? null };
  const cross = crossTest(arith, taker, maker, opts.widths) as Promise<S>;
  cross.catch(() => undefined);
  let prefetch: AheadWork<S>['prefetch'] = null;
  const own = book.side(op.side);
  // its own side is the one this op does not rest on: unchanged until it runs
  if ('resting' in mode && op.side !== mode.resting && op.tif === 'GTC' && opts.prefetchRank && own.length > 0) {
    const pivots = firstStepPivots(book, own, opts);
    const priceLe = priceLeOf(arith, opts.widths);
    const price = op.price;
    const bits = pivots.map((i) => {
      const b = goesAfter(priceLe, op.side, price, own[i] as RestingOrder<S>);
      b.catch(() => undefined);
      return b;
    });
    prefetch = { pivots, at: pivots.map((i) => own[i] as RestingOrder<S>), length: own.length, bits };
  }
  ahead.slot.work = { orderId: op.orderId, seq: op.seq, maker, cross, prefetch };
}

function rejectOf(reason: Reject['reason'], code: string, detail: string): Reject {
  return { reason, code, detail };
}

/** Applies a placement to its book. */
export async function place<S>(arith: Arith<S>, book: Book<S>, op: PlaceOp<S>, opts: MatchOptions = {}, ahead?: Lookahead<S>): Promise<OpResult<S>> {
  // work the op before left for this one (lookahead): used or not, settled before this op ends
  const w = ahead?.slot.work ?? null;
  const early = w !== null && w.orderId === op.orderId && w.seq === op.seq ? w : null;
  if (ahead && w !== null) ahead.slot.work = null;
  try {
    return await placeWith(arith, book, op, opts, ahead, early);
  } finally {
    if (w !== null) await Promise.allSettled(aheadPromises(w));
  }
}

async function placeWith<S>(arith: Arith<S>, book: Book<S>, op: PlaceOp<S>, opts: MatchOptions, ahead: Lookahead<S> | undefined, early: AheadWork<S> | null): Promise<OpResult<S>> {
  const expired = op.nowNs !== undefined ? book.expire(op.nowNs) : [];
  const outcome: PlaceOutcome = { kind: 'place', symbol: book.symbol, orderId: op.orderId, expired, reject: null, ...emptyExecution() };
  const outputs: S[] = [];
  const prevSeq = book.lastSeq;
  book.noteSeq(op.seq);
  const unsupported = checkPlace(op);
  if (unsupported) {
    outcome.reject = rejectOf('UNSUPPORTED_ORDER', unsupported.code, unsupported.message);
    return { outcome, outputs };
  }
  if (book.has(op.orderId)) {
    outcome.reject = rejectOf('DUPLICATE_ORDER_ID', 'DUPLICATE_ORDER_ID', `order ${op.orderId} already rests`);
    return { outcome, outputs };
  }
  if ((op.tif === 'GTC' || op.tif === 'GTT') && book.size >= book.maxDepth) {
    outcome.reject = rejectOf('BOOK_DEPTH_EXCEEDED', 'BOOK_DEPTH_EXCEEDED', `${book.symbol} holds ${book.size} orders (cap ${book.maxDepth})`);
    return { outcome, outputs };
  }
  const ex = await runTaker(
    arith,
    book,
    {
      orderId: op.orderId,
      seq: op.seq,
      side: op.side,
      type: op.type,
      tif: op.tif,
      price: op.price,
      qty: op.qty,
      owner: op.owner ?? null,
      expiresAtNs: op.expiresAtNs ?? null,
      aon: op.aon === true,
      minFill: op.minFill ?? null,
    },
    outputs,
    opts,
    ahead,
    early,
    prevSeq,
  );
  Object.assign(outcome, ex);
  return { outcome, outputs };
}

/** Cancels a resting order by id (public lookup); found=false when it is not live. */
export function cancel<S>(book: Book<S>, op: CancelOp): OpResult<S> {
  const expired = op.nowNs !== undefined ? book.expire(op.nowNs) : [];
  const found = book.remove(op.orderId) !== undefined;
  const outcome: CancelOutcome = { kind: 'cancel', symbol: book.symbol, orderId: op.orderId, found, expired };
  return { outcome, outputs: [] };
}

/**
 * Modifies a resting order. reduce: remaining += min(qtyDelta, 0), priority kept. replace: the old
 * order leaves and a new one (same id, this op's seq, new price if given, remaining + qtyDelta)
 * enters as a taker and may match. Either way, if the new remaining would be <= 0 the order leaves
 * the book (reveal 'modify-exhausted').
 */
export async function modify<S>(arith: Arith<S>, book: Book<S>, op: ModifyOp<S>, opts: MatchOptions = {}): Promise<OpResult<S>> {
  const expired = op.nowNs !== undefined ? book.expire(op.nowNs) : [];
  const outcome: ModifyOutcome = {
    kind: 'modify',
    symbol: book.symbol,
    orderId: op.orderId,
    mode: op.mode,
    found: false,
    exhausted: false,
    execution: null,
    expired,
    reject: null,
  };
  const outputs: S[] = [];
  book.noteSeq(op.seq);
  const unsupported = checkModify(op);
  if (unsupported) {
    outcome.reject = rejectOf('UNSUPPORTED_ORDER', unsupported.code, unsupported.message);
    return { outcome, outputs };
  }
  const o = book.get(op.orderId);
  if (!o) return { outcome, outputs };
  outcome.found = true;

  // reduce clamps the delta to <= 0 on shares, so a reduce can never add quantity at old priority.
  const delta = op.mode === 'reduce' ? await arith.min(op.qtyDelta, arith.constant(0n)) : op.qtyDelta;
  // new remaining <= 0  ⇔  remaining <= −delta (both sides stay within ±2^48).
  const gone = await arith.le(o.qty, arith.sub(arith.constant(0n), delta));
  if ((await arith.reveal(gone, LEAK.modifyExhausted, book.symbol)) === 1n) {
    book.remove(o.orderId);
    outcome.exhausted = true;
    return { outcome, outputs };
  }
  const newQty = arith.add(o.qty, delta);
  if (op.mode === 'reduce') {
    o.qty = newQty;
    return { outcome, outputs };
  }
  book.remove(o.orderId);
  outcome.execution = await runTaker(
    arith,
    book,
    {
      orderId: o.orderId,
      seq: op.seq,
      side: o.side,
      type: o.type,
      tif: o.tif,
      price: op.price ?? o.price,
      qty: newQty,
      owner: o.owner,
      expiresAtNs: o.expiresAtNs,
      aon: false,
      minFill: null,
    },
    outputs,
    opts,
  );
  return { outcome, outputs };
}
