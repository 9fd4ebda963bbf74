// Turns sequenced frames into matching operations on shares and runs a batch of them as one MPC job.
// The books live in the engine's transactional store (so share recovery covers them); an in-memory
// Exchange caches them between jobs and is rebuilt from the store after a failed job or a recovery.
import type { Logger } from 'pino';
import type { JobContext, Sec } from '@tenebra/mpc';
import { decodeFieldVector, encodeFieldVector } from '@tenebra/mpc';
import {
  Exchange, MpcBackend, saveBook, loadBook, storedBookSymbols, CountingRecorder,
  type Op, type OpResult, type Outcome, type Side, type OrderType, type TimeInForce,
} from '@tenebra/matching';
import { INSTRUMENTS } from '@tenebra/config';
import { seal, unseal, type KeyPair } from '@tenebra/seal';
import { opAad, resultAad, type SequencedFrame, type ResultFrame } from '@tenebra/wire';

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

export class BatchApplier {
  private exchange: Exchange<Sec> | null = null;
  /** reveals (leaks to nodes) counted by label, for the metrics log */
  readonly reveals = new CountingRecorder();

  constructor(private readonly o: ApplierOptions) {}

  /** Unseals this node's share vector of a sequenced op. A frame we cannot open is fatal: we could
   *  not follow the protocol and would make the job diverge, so we stop loudly instead. */
  decode(frame: SequencedFrame): IncomingOp {
    const orderId = String(frame.pub.order_id ?? '');
    let shares: bigint[];
    try {
      const plain = unseal(this.o.sealKey.privateKey, Buffer.from(frame.sealed, 'base64'), opAad(frame.kind, orderId, frame.symbol));
      shares = decodeFieldVector(plain);
    } catch (e) {
      throw new Error(`seq ${frame.seq}: cannot unseal this node's share (${(e as Error).message}); refusing to continue`);
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
      const pending = batch.map((op) => this.toMatchOp(ctx, op)).map((m) =>
        m.op ? ex.apply(m.op, arith) : Promise.resolve<OpResult<Sec>>({ outcome: m.reject!, outputs: [] }));
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
    const ex = new Exchange<Sec>(arith, { symbols: SYMBOLS });
    for (const symbol of storedBookSymbols(ctx)) {
      const book = loadBook(ctx, symbol);
      if (book) ex.restoreBook(book);
    }
    return ex;
  }

  private toMatchOp(ctx: JobContext, op: IncomingOp): { op?: Op<Sec>; reject?: Outcome } {
    const orderId = String(op.pub.order_id ?? '');
    if (op.kind === 'place') {
      if (op.shares.length !== 2) return { reject: this.rejected(op, orderId, `expected 2 secret values, got ${op.shares.length}`) };
      return {
        op: {
          kind: 'place', symbol: op.symbol, orderId, seq: op.seq, nowNs: op.tsNs,
          side: op.pub.side as Side, type: op.pub.type as OrderType, tif: op.pub.time_in_force as TimeInForce,
          price: ctx.fromShares([op.shares[0]!]), qty: ctx.fromShares([op.shares[1]!]),
        },
      };
    }
    if (op.kind === 'cancel') return { op: { kind: 'cancel', symbol: op.symbol, orderId, seq: op.seq, nowNs: op.tsNs } };
    return { reject: this.rejected(op, orderId, `unknown operation kind '${op.kind}'`) };
  }

  private rejected(op: IncomingOp, orderId: string, detail: string): Outcome {
    this.o.log.error({ seq: op.seq.toString(), detail }, 'operation rejected by the committee');
    return {
      kind: 'place', symbol: op.symbol, orderId, fills: [], selfTradeCancelled: [], takerFilled: false, rested: false,
      cancelReason: null, expired: [], reject: { reason: 'UNSUPPORTED_ORDER', code: 'BAD_OPERATION', detail },
    };
  }

  private resultFrame(ctx: JobContext, op: IncomingOp, r: OpResult<Sec>): ResultFrame {
    const seq = op.seq.toString();
    const sealed = r.outputs.length === 0 ? '' : Buffer.from(seal(
      this.o.gatewayPublicKey,
      encodeFieldVector(ctx.sharesOf(ctx.concat(r.outputs))),
      resultAad(seq, this.o.index),
    )).toString('base64');
    return { t: 'result', node: this.o.index, seq, pub: toWireOutcome(r.outcome), sealed };
  }
}

/** The wire shape the gateway clears (snake_case, see @tenebra/wire PlaceOutcome/CancelOutcome). */
export function toWireOutcome(o: Outcome): Record<string, unknown> {
  switch (o.kind) {
    case 'place':
      return {
        kind: 'place', order_id: o.orderId, fills: o.fills, rested: o.rested, cancel_reason: o.cancelReason,
        reject_reason: o.reject ? o.reject.reason : null, reject_detail: o.reject?.detail ?? null,
        self_trade_cancelled: o.selfTradeCancelled, expired: o.expired,
      };
    case 'cancel':
      return { kind: 'cancel', order_id: o.orderId, found: o.found, expired: o.expired };
    case 'modify':
      return {
        kind: 'modify', order_id: o.orderId, mode: o.mode, found: o.found, exhausted: o.exhausted,
        fills: o.execution?.fills ?? [], rested: o.execution?.rested ?? null, cancel_reason: o.execution?.cancelReason ?? null,
        reject_reason: o.reject ? o.reject.reason : null, expired: o.expired,
      };
    case 'expire':
      return { kind: 'expire', expired: o.expired };
  }
}
