// Turns sequenced frames into matching operations on shares and runs a batch of them as one MPC job.
// The books live in the engine's transactional store (so share recovery covers them); an in-memory
// Exchange caches them between jobs and is rebuilt from the store after a failed job or a recovery.
import type { Logger } from 'pino';
import type { JobContext, Sec } from '@tenebra/mpc';
import { decodeFieldVector, encodeFieldVector } from '@tenebra/mpc';
import {
  Exchange, MpcBackend, saveBook, loadBook, storedBookSymbols, CountingRecorder,
  type ExpireOp, type Op, type OpResult, type Outcome, type PlaceOp,
} from '@tenebra/matching';
import { COMPARISON_BITS, INSTRUMENTS, MAX_BOOK_UNITS } from '@tenebra/config';
import { PairBox, type KeyPair } from '@tenebra/seal';
import { opAad, resultAad, PLACE_VECTOR, MODIFY_VECTOR, type SequencedFrame, type ResultFrame } from '@tenebra/wire';

/** A sequenced operation as this node sees it: public fields plus its own shares of the secrets. */
export interface IncomingOp {
  seq: bigint;
  tsNs: bigint;
  kind: string;
  symbol: string;
  pub: Record<string, unknown>;
  /** this node's shares of the op's secret vector */
  shares: bigint[];
  /** last op of the sequencer's batch (group commit) */
  batchEnd: boolean;
}

export interface ApplierOptions {
  index: number;
  n: number;
  sealKey: KeyPair;
  gatewayPublicKey: Uint8Array;
  log: Logger;
}

const CURSOR = 'committee/cursor';
const SYMBOLS = INSTRUMENTS.map((i) => i.symbol);
/**
 * Matching latency options of every committee node, whatever the job's size (docs: packages/matching
 * README, "Latency options"). Jobs of 16+ ops used to match with binary search and nothing
 * speculative (fewer comparisons); measured under a backlog (bench:orders, 2026-11-24) those jobs
 * took 48 ms per op against 26 with these options, and the rate rose from 31-32/s to 36/s without it.
 */
export const COMMITTEE_MATCH_OPTIONS = { searchArity: 4, prefetchRank: true, pipelineCross: true } as const;
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
    const orderId = String(frame.pub.order_id ?? '');
    let shares: bigint[];
    try {
      shares = decodeFieldVector(this.gatewayBox.open(Buffer.from(frame.sealed, 'base64'), opAad(frame.kind, orderId, frame.symbol)));
    } catch (e) {
      throw new Error(`seq ${frame.seq}: cannot unseal this node's share (${(e as Error).message}): not a pair box from the gateway (journals from before pair boxes, 2026-11-23, cannot be replayed); refusing to continue`);
    }
    return {
      seq: BigInt(frame.seq), tsNs: BigInt(frame.ts_ns), kind: frame.kind, symbol: frame.symbol,
      pub: frame.pub, shares, batchEnd: frame.batch_end === true,
    };
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
      // apply() chains operations per symbol in call order; different symbols share MPC rounds.
      const match = batch.length <= SPECULATE_MAX_OPS ? { speculate: true } : undefined;
      const pending = batch.map((op) => this.toMatchOp(ctx, op)).map((m) =>
        m.op ? ex.apply(m.op, arith, match) : Promise.resolve<OpResult<Sec>>({ outcome: m.reject!, outputs: [] }));
      const results = await Promise.all(pending);
      for (const symbol of ex.takeDirty()) {
        const book = ex.book(symbol);
        if (book) saveBook(ctx, book);
      }
      ctx.savePublic(CURSOR, JSON.stringify(lastSeq.toString()));
      this.exchange = ex;
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
    const ex = new Exchange<Sec>(arith, { symbols: SYMBOLS, ...COMMITTEE_MATCH_OPTIONS });
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

  private resultFrame(ctx: JobContext, op: IncomingOp, r: OpResult<Sec>): ResultFrame {
    const seq = op.seq.toString();
    const sealed = r.outputs.length === 0 ? '' : Buffer.from(this.gatewayBox.seal(
      encodeFieldVector(ctx.sharesOf(ctx.concat(r.outputs))),
      resultAad(seq, this.o.index),
    )).toString('base64');
    return { t: 'result', node: this.o.index, seq, pub: toWireOutcome(r.outcome), sealed };
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
        // comparison inputs stay below 2^COMPARISON_BITS, the width the committee's parties run at
        if (ticks === null || ticks <= 0n || ticks > MAX_BOOK_UNITS) return bad(`place: peg orders need peg_price_ticks, a positive integer below 2^${COMPARISON_BITS}`);
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
