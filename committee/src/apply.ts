// Turns sequenced frames into matching operations on shares and runs a batch of them as one MPC job.
// The books live in the engine's transactional store (so share recovery covers them); an in-memory
// Exchange caches them between jobs and is rebuilt from the store after a failed job or a recovery.
import type { Logger } from 'pino';
import type { JobContext, Sec } from '@tenebra/mpc';
import { decodeFieldVector, encodeFieldVector } from '@tenebra/mpc';
import {
  Exchange, MpcBackend, saveBook, loadBook, storedBookSymbols, CountingRecorder,
  type BookWidths, type ExpireOp, type MatchOptions, type Op, type OpResult, type Outcome, type PlaceOp,
} from '@tenebra/matching';
import { INSTRUMENTS, MAX_BOOK_UNITS, bookWidthsOf, instrumentBySymbol, maxPriceTicks } from '@tenebra/config';
import { PairBox, type KeyPair } from '@tenebra/seal';
import { opAad, resultAad, JOB_END_KIND, PLACE_VECTOR, MODIFY_VECTOR, type SequencedFrame, type ResultFrame } from '@tenebra/wire';

/** A sequenced operation as this node sees it: public fields plus its own shares of the secrets. */
export interface IncomingOp {
  seq: bigint;
  tsNs: bigint;
  kind: string;
  symbol: string;
  pub: Record<string, unknown>;
  /** this node's shares of the op's secret vector */
  shares: bigint[];
  /** last op of an MPC job, as the sequencer journaled it */
  batchEnd: boolean;
}

/** The ops of a batch that are orders, cancels and the like: the sequencer's job-end records are not. */
export function realOps(batch: readonly IncomingOp[]): number {
  return batch.reduce((n, op) => (op.kind === JOB_END_KIND ? n : n + 1), 0);
}

export interface ApplierOptions {
  index: number;
  n: number;
  sealKey: KeyPair;
  gatewayPublicKey: Uint8Array;
  log: Logger;
  /** The modelled reserve's parameters (default BIT_BUDGET); every node must use the same. */
  budget?: BitBudget;
}

const CURSOR = 'committee/cursor';
const SYMBOLS = INSTRUMENTS.map((i) => i.symbol);
/**
 * Matching latency options of every committee node while the (modelled) reserve affords them (docs:
 * packages/matching README, "Latency options"). Jobs of 16+ ops used to match with binary search and
 * nothing speculative (fewer comparisons); measured under a backlog (bench:orders, 2026-11-24) those
 * jobs took 48 ms per op against 26 with these options, and the rate rose from 31-32/s to 36/s
 * without it. Until ADR 0032 (k = 4, the first step probing the head and the tail, 'ends') they spent
 * 110 random bits per order of the bench:orders stream at 8.7 rounds (scripts/bench/matching-rounds.ts;
 * ETH's price window, docs/decisions/0024-price-window.md); 'head' took 126, and 312 before ADR 0014.
 */
// Since ADR 0032 the search places its pivots by the book's known price-level ends ('levels'): a
// ternary search (k = 3). Since ADR 0036 the prefetched first step opens with the first cross bit,
// so it costs no round of its own: it is ternary too (two pivots), and the next maker's cross test is
// not pipelined during a fill (with the wider first step the pipeline would cost 5.8 bits per order
// for 0.33 rounds, sequentially). On the bench:orders stream (jobs of 16,
// matching-rounds.ts) 78.2 random bits per order at 6.50 rounds, against 76.6 at 7.21 with a
// one-pivot first step and the pipeline; on the cluster, two alternated pairs: 79 and 75 bits
// against 78 and 75, 6.56 and 6.35 rounds against 7.64 and 7.26, busiest node 4.0 ms per order against
// 4.6 and 4.3 (docs/benchmarks.md, "2026-12-03, 15:45-15:57 UTC (lead)"). Since ADR 0046 a maker
// after the first one crossed is speculated on (its exhaustion test issued with its cross test; not
// behind a known level end), the next placement on the other side starts its cross test once an
// order crosses, and an order that meets the best price the placement before it just set bets on a
// cross (speculates its first maker, prefetches no rank step): 72.7 bits at 5.88 rounds on the same
// stream (78.3 at 6.13 without the bet).
export const COMMITTEE_MATCH_OPTIONS = { searchArity: 3, searchFirstArity: 3, searchStart: 'levels', prefetchRank: true, pipelineCross: false, speculateFurther: true, lookaheadAfterCross: true, crossBet: true } as const satisfies MatchOptions;
/**
 * Options when random bits are scarce: nothing speculative (no prefetched rank step, no pipelined
 * cross), a binary search by the book's known price-level ends ('levels', ADR 0032): 58 random bits
 * per order of the bench:orders stream at 10.5 rounds in ETH's price window ('ends', probing head
 * and tail, then galloping from the head: 83 at 13.3; binary search from the middle: 126 at 24.8 at
 * the ceiling's width).
 */
export const LEAN_MATCH_OPTIONS = { searchArity: 2, searchFirstArity: 2, searchStart: 'levels', prefetchRank: false, pipelineCross: false, speculate: false, speculateFurther: false, crossBet: false } as const satisfies MatchOptions;
/**
 * The committee's model of its random-bit reserve (docs/decisions/0014-random-bits-per-order.md). The
 * real reserve differs from node to node for a moment (a batch commit reaches them at different
 * times), and the options decide the order preprocessing is consumed in, so they must be decided
 * from values identical everywhere: a bucket capped at `capBits`, drained by the bits each job
 * actually consumed (JobContext.consumed), refilled for the time that passed as the nodes can tell
 * it alike: `bitsPerSecond` of SEQUENCED time between jobs (the ops' ts_ns: idle time) plus
 * `bitsPerRound` for each round a job ran (its processing time: under a backlog, sequenced time is
 * compressed while the rounds go on, and production with them). Kept in the job's public store
 * (transactional, handed back by share recovery). Below `leanBelowBits` a job matches with
 * LEAN_MATCH_OPTIONS. So one book under a backlog, bound by its sequential rounds (8.4 per order,
 * about 200 bits of credit against 77 spent), keeps the latency options, while many books sharing rounds
 * (bound by bits) go lean. It does not see an outage (production stops with a party down): the
 * model keeps refilling; the real reserve still bounds what is spent.
 */
export interface BitBudget { capBits: number; bitsPerSecond: number; bitsPerRound: number; leanBelowBits: number }
export const BIT_BUDGET: Readonly<BitBudget> = {
  /** the default preprocessing target (targetBits, scripts/src/cluster.ts) */
  capBits: 40_000,
  /** about half of what five nodes make alone on a 2-core host (26,500-30,900 bits/s): matching shares the cores */
  bitsPerSecond: 12_000,
  /** 12,000 bits/s at about 2 ms a round (a warm round over loopback libp2p under load) */
  bitsPerRound: 24,
  leanBelowBits: 10_000,
};
/** What a job's matching options were chosen as: one-op speculation, the latency options, or lean. */
export type MatchPlan = 'speculate' | 'latency' | 'lean';
/** The options of a plan (every node passes the same to every op of the job). */
export function matchOptionsOf(plan: MatchPlan): MatchOptions {
  return plan === 'lean' ? LEAN_MATCH_OPTIONS : plan === 'speculate' ? { speculate: true } : {};
}
/** The modelled reserve as stored: bits (may go below 0 after an expensive job) and the sequenced time it was taken at. */
interface BudgetState { bits: number; tsNs: string }
const BUDGET = 'committee/bit-budget';

/** The modelled reserve at sequenced time nowNs, refilled from the stored state (full when none). */
export function budgetAt(stored: BudgetState | undefined, nowNs: bigint, b: BitBudget = BIT_BUDGET): number {
  if (!stored) return b.capBits;
  const dt = nowNs - BigInt(stored.tsNs);
  const refill = dt > 0n ? (dt * BigInt(b.bitsPerSecond)) / 1_000_000_000n : 0n;
  return Math.min(b.capBits, stored.bits + Number(refill > BigInt(b.capBits) ? BigInt(b.capBits) : refill));
}

/** The plan of a job of `ops` ops with `bits` in the modelled reserve. */
export function planOf(ops: number, bits: number, b: BitBudget = BIT_BUDGET): MatchPlan {
  if (bits < b.leanBelowBits) return 'lean';
  return ops <= SPECULATE_MAX_OPS ? 'speculate' : 'latency';
}

/** Every book's public bounds: prices below the instrument's ceiling, quantities below 2^bitlength(max_qty). */
export function committeeBookWidths(symbol: string): BookWidths | undefined {
  const inst = instrumentBySymbol(symbol);
  return inst ? bookWidthsOf(inst) : undefined;
}
/**
 * A job of this many ops or fewer (the committee is keeping up: a backlog makes jobs larger) also
 * speculates: a maker's cross, self-trade and exhaustion comparisons in one batch, so a crossing
 * order's first fill takes 6 rounds instead of 9, at 3 comparisons computed and never opened each
 * time a resting order meets the opposite side without crossing. Decided from the job's size alone,
 * which is the same at every node (the options decide the order preprocessing is consumed in).
 * Crossing pairs on an idle `npm start` cluster, alternating 25 with and 25 without (2026-11-24):
 * one-op job p50 21 and 26 ms against 33 and 40, order-to-fill p50 48 and 45 ms against 58 and 70.
 */
export const SPECULATE_MAX_OPS = 1;
export class BatchApplier {
  private exchange: Exchange<Sec> | null = null;
  /** reveals (leaks to nodes) counted by label, for the metrics log */
  readonly reveals = new CountingRecorder();
  /** The plan of the last job that completed here, and the modelled reserve it started with (tests, logs). */
  lastPlan: { plan: MatchPlan; bits: number } | null = null;
  /** shares from the gateway and results to it travel in pair boxes (keys agreed once; @tenebra/seal) */
  private readonly gatewayBox: PairBox;

  constructor(private readonly o: ApplierOptions) {
    this.gatewayBox = new PairBox(o.sealKey.privateKey, o.gatewayPublicKey);
  }

  /**
   * Unseals this node's share vector of a sequenced op. A frame we cannot open is fatal: we could not
   * follow the protocol and would make the job diverge, so we stop loudly instead. Only a pair box
   * opens (only the gateway and this node can make one); an anonymous box, which anyone with our
   * public key can make (the sequencer too), is refused like any other forgery.
   */
  decode(frame: SequencedFrame): IncomingOp {
    const seq = BigInt(frame.seq);
    const tsNs = BigInt(frame.ts_ns);
    // the sequencer's own job-end record: no share, nothing to match
    if (frame.kind === JOB_END_KIND) return { seq, tsNs, kind: frame.kind, symbol: '', pub: {}, shares: [], batchEnd: true };
    const orderId = String(frame.pub.order_id ?? '');
    let shares: bigint[];
    try {
      shares = decodeFieldVector(this.gatewayBox.open(Buffer.from(frame.sealed, 'base64'), opAad(frame.kind, orderId, frame.symbol)));
    } catch (e) {
      throw new Error(`seq ${frame.seq}: cannot unseal this node's share (${(e as Error).message}): not a pair box from the gateway (journals from before pair boxes, 2026-11-23, cannot be replayed); refusing to continue`);
    }
    return { seq, tsNs, kind: frame.kind, symbol: frame.symbol, pub: frame.pub, shares, batchEnd: frame.batch_end === true };
  }

  /** Forgets the cached books (after a failed job or a share recovery); the next job reloads them. */
  invalidate(): void {
    this.exchange = null;
  }

  /** Applies a batch inside one job; returns one ResultFrame per op, in sequence order. */
  async apply(ctx: JobContext, batch: readonly IncomingOp[], lastSeq: bigint): Promise<ResultFrame[]> {
    const arith = new MpcBackend(ctx, { recorder: this.reveals });
    try {
      const ex = this.exchange ?? this.load(ctx, arith);
      // The plan: from the job's size and the modelled reserve, both identical at every node.
      const nowNs = batch.reduce((m, op) => (op.tsNs > m ? op.tsNs : m), 0n);
      const stored = ctx.loadPublic(BUDGET);
      const budget = this.o.budget ?? BIT_BUDGET;
      const bits = budgetAt(stored === undefined ? undefined : (JSON.parse(stored) as BudgetState), nowNs, budget);
      // a sequencer job-end record is no op: a one-op job it closes still speculates
      const plan = planOf(realOps(batch), bits, budget);
      const match = matchOptionsOf(plan);
      // apply() chains operations per symbol in call order; different symbols share MPC rounds.
      const pending = batch.map((op) => {
        if (op.kind === JOB_END_KIND) return Promise.resolve(null);
        const m = this.toMatchOp(ctx, op);
        return m.op ? ex.apply(m.op, arith, match) : Promise.resolve<OpResult<Sec>>({ outcome: m.reject!, outputs: [] });
      });
      const results = await Promise.all(pending);
      for (const symbol of ex.takeDirty()) {
        const book = ex.book(symbol);
        if (book) saveBook(ctx, book);
      }
      const used = ctx.consumed();
      const left = Math.min(budget.capBits, Math.max(-budget.capBits, bits - 4 * used.nibbles + budget.bitsPerRound * used.rounds));
      ctx.savePublic(BUDGET, JSON.stringify({ bits: left, tsNs: nowNs.toString() } satisfies BudgetState));
      ctx.savePublic(CURSOR, JSON.stringify(lastSeq.toString()));
      this.exchange = ex;
      this.lastPlan = { plan, bits };
      return results.map((r, i) => this.resultFrame(ctx, batch[i]!, r));
    } catch (e) {
      this.exchange = null;
      throw e;
    }
  }

  /** The last applied seq recorded in the engine's store (what share recovery hands back). */
  static storedCursor(ctx: JobContext): bigint | undefined {
    const v = ctx.loadPublic(CURSOR);
    return v === undefined ? undefined : BigInt(JSON.parse(v) as string);
  }

  private load(ctx: JobContext, arith: MpcBackend): Exchange<Sec> {
    // Latency options (same reveals; every node must use the same, preprocessing is consumed in issue order):
    // 4-ary rank search + prefetch + pipelined cross cut rounds/op about half for ~35% more comparisons;
    // `speculate` only in one-op jobs (SPECULATE_MAX_OPS): under a backlog it buys little for 3 wasted
    // comparisons per resting order (scripts/bench/matching-rounds.ts), while preprocessing is a bound.
    const ex = new Exchange<Sec>(arith, { symbols: SYMBOLS, bookWidths: committeeBookWidths, ...COMMITTEE_MATCH_OPTIONS });
    for (const symbol of storedBookSymbols(ctx)) {
      const book = loadBook(ctx, symbol);
      if (book) ex.restoreBook(book);
    }
    return ex;
  }

  private toMatchOp(ctx: JobContext, op: IncomingOp): { op?: Op<Sec>; reject?: Outcome } {
    const all = op.shares.length === 0 ? null : ctx.fromShares(op.shares);
    const values = all === null ? [] : op.shares.map((_, i) => ctx.slice(all, i, i + 1));
    const decoded = decodeOp<Sec>({ ...op, values }, (v) => ctx.constant([v]));
    if ('error' in decoded) {
      this.o.log.error({ seq: op.seq.toString(), kind: op.kind, detail: decoded.error }, 'operation rejected by the committee');
      return { reject: decoded.reject };
    }
    return { op: decoded };
  }

  private resultFrame(ctx: JobContext, op: IncomingOp, r: OpResult<Sec> | null): ResultFrame {
    const seq = op.seq.toString();
    // every seq gets a result, so the gateway's cursor passes a job-end record too
    if (r === null) return { t: 'result', node: this.o.index, seq, pub: { kind: JOB_END_KIND }, sealed: '', job: ctx.jobId };
    const sealed = r.outputs.length === 0 ? '' : Buffer.from(this.gatewayBox.seal(
      encodeFieldVector(ctx.sharesOf(ctx.concat(r.outputs))),
      resultAad(seq, this.o.index),
    )).toString('base64');
    return { t: 'result', node: this.o.index, seq, pub: toWireOutcome(r.outcome), sealed, job: ctx.jobId };
  }
}

/** A sequenced op's public part with its secret vector already lifted to S (shares, or plain values in tests). */
export interface OpInput<S> {
  seq: bigint;
  tsNs: bigint;
  kind: string;
  symbol: string;
  pub: Record<string, unknown>;
  values: S[];
}

/**
 * Maps a sequenced op to a matching operation, following the layout of @tenebra/wire (PLACE_VECTOR,
 * MODIFY_VECTOR, PlacePub, ModifyPub, ExpirePub; docs/orders.md). Every party decodes identically,
 * so a malformed op becomes the same reject outcome everywhere (and touches no book).
 */
export function decodeOp<S>(o: OpInput<S>, constant: (v: bigint) => S): Op<S> | { error: string; reject: Outcome } {
  const orderId = typeof o.pub.order_id === 'string' ? o.pub.order_id : '';
  const p = o.pub;
  const bad = (detail: string): { error: string; reject: Outcome } => ({ error: detail, reject: rejectOutcome(o.kind, o.symbol, orderId, detail) });
  switch (o.kind) {
    case 'place': {
      if (o.values.length !== PLACE_VECTOR.length) return bad(`place: expected ${PLACE_VECTOR.length} secret values, got ${o.values.length}`);
      const side = p.side;
      const type = p.type;
      const tif = p.time_in_force;
      if (side !== 'buy' && side !== 'sell') return bad(`place: bad side ${JSON.stringify(side)}`);
      if (type !== 'limit' && type !== 'market' && type !== 'peg') return bad(`place: bad type ${JSON.stringify(type)}`);
      if (tif !== 'GTC' && tif !== 'GTT' && tif !== 'IOC' && tif !== 'FOK') return bad(`place: bad time_in_force ${JSON.stringify(tif)}`);
      let price: S | null;
      if (type === 'peg') {
        const ticks = publicInt(p.peg_price_ticks);
        // prices stay below the instrument's ceiling, the width its price comparisons run at
        const inst = instrumentBySymbol(o.symbol);
        const ceiling = inst ? maxPriceTicks(inst) : MAX_BOOK_UNITS;
        if (ticks === null || ticks <= 0n || ticks > ceiling) return bad(`place: peg orders need peg_price_ticks, a positive integer at most ${ceiling} (the instrument's price ceiling)`);
        price = constant(ticks);
      } else if (type === 'market') {
        price = p.market_cap === true ? o.values[0]! : null;
      } else {
        price = o.values[0]!;
      }
      let expiresAtNs: bigint | null = null;
      if (p.expires_at_ns !== undefined && p.expires_at_ns !== null) {
        expiresAtNs = publicInt(p.expires_at_ns);
        if (expiresAtNs === null) return bad('place: expires_at_ns must be a decimal integer string');
      }
      const op: PlaceOp<S> = {
        kind: 'place', symbol: o.symbol, orderId, seq: o.seq, nowNs: o.tsNs, side, type, tif, price, qty: o.values[1]!,
        owner: p.owner === false ? null : o.values[2]!,
        minFill: p.min_fill === true ? o.values[3]! : null,
        aon: p.aon === true,
      };
      if (expiresAtNs !== null) op.expiresAtNs = expiresAtNs;
      return op;
    }
    case 'cancel':
      if (o.values.length !== 0) return bad(`cancel: expected no secret values, got ${o.values.length}`);
      return { kind: 'cancel', symbol: o.symbol, orderId, seq: o.seq, nowNs: o.tsNs };
    case 'modify': {
      if (o.values.length !== MODIFY_VECTOR.length) return bad(`modify: expected ${MODIFY_VECTOR.length} secret values, got ${o.values.length}`);
      if (p.mode !== 'reduce' && p.mode !== 'replace') return bad(`modify: bad mode ${JSON.stringify(p.mode)}`);
      return {
        kind: 'modify', symbol: o.symbol, orderId, seq: o.seq, nowNs: o.tsNs, mode: p.mode,
        qtyDelta: o.values[0]!, price: p.price_change === true ? o.values[1]! : null,
      };
    }
    case 'expire': {
      if (o.values.length !== 0) return bad(`expire: expected no secret values, got ${o.values.length}`);
      const op: ExpireOp = { kind: 'expire', nowNs: o.tsNs, seq: o.seq };
      if (o.symbol !== '') op.symbol = o.symbol;
      return op;
    }
    default:
      return bad(`unknown operation kind '${o.kind}'`);
  }
}

/** A decimal integer string (or a safe integer number) as a bigint, else null. */
function publicInt(v: unknown): bigint | null {
  if (typeof v === 'string' && /^-?\d{1,30}$/.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  return null;
}

/** The outcome every party reports for an op it could not decode: nothing in any book changes. */
function rejectOutcome(kind: string, symbol: string, orderId: string, detail: string): Outcome {
  const reject = { reason: 'UNSUPPORTED_ORDER' as const, code: 'BAD_OPERATION', detail };
  switch (kind) {
    case 'cancel':
      return { kind: 'cancel', symbol, orderId, found: false, expired: [] };
    case 'modify':
      return { kind: 'modify', symbol, orderId, mode: 'reduce', found: false, exhausted: false, execution: null, expired: [], reject };
    case 'expire':
      return { kind: 'expire', nowNs: 0n, expired: [] };
    default:
      return {
        kind: 'place', symbol, orderId, fills: [], selfTradeCancelled: [], takerFilled: false, rested: false,
        cancelReason: null, expired: [], reject,
      };
  }
}

/** The wire shape the gateway clears (snake_case: @tenebra/wire PlaceOutcome, CancelOutcome, ModifyOutcome, ExpireOutcome). */
export function toWireOutcome(o: Outcome): Record<string, unknown> {
  switch (o.kind) {
    case 'place':
      return {
        kind: 'place', order_id: o.orderId, fills: o.fills, rested: o.rested, cancel_reason: o.cancelReason,
        reject_reason: o.reject ? o.reject.reason : null, reject_code: o.reject?.code ?? null, reject_detail: o.reject?.detail ?? null,
        self_trade_cancelled: o.selfTradeCancelled, expired: o.expired,
      };
    case 'cancel':
      return { kind: 'cancel', order_id: o.orderId, found: o.found, expired: o.expired };
    case 'modify':
      return {
        kind: 'modify', order_id: o.orderId, mode: o.mode, found: o.found, exhausted: o.exhausted,
        fills: o.execution?.fills ?? [], rested: o.execution?.rested ?? null, cancel_reason: o.execution?.cancelReason ?? null,
        self_trade_cancelled: o.execution?.selfTradeCancelled ?? [],
        reject_reason: o.reject ? o.reject.reason : null, reject_code: o.reject?.code ?? null, expired: o.expired,
      };
    case 'expire':
      return { kind: 'expire', now_ns: o.nowNs.toString(), expired: o.expired.map((e) => e.orderId) };
  }
}
