// Test helpers: run a stream through an Exchange on either backend, turn results into the plain form
// the reference produces, and track order states from results alone (as the gateway would).
import type { Sec } from '@tenebra/mpc';
import type { Arith } from '../src/backend';
import type { Book } from '../src/book';
import type { ExchangeOptions } from '../src/exchange';
import { Exchange } from '../src/exchange';
import { MpcBackend } from '../src/mpc-backend';
import { PlaintextBackend } from '../src/plaintext';
import { TranscriptRecorder } from '../src/leaks';
import { mapOp } from '../src/stream';
import type { Execution, Op, OpResult } from '../src/types';
import { IdealJobContext } from './ideal-context';
import type { OrderState, PlainResult, RefFill } from './reference';

/** Plain form of an algorithm result, given a way to read secret outputs. */
export function plainResult<S>(res: OpResult<S>, value: (s: S) => bigint): PlainResult {
  const o = res.outcome;
  const out = res.outputs.map(value);
  const fillsOf = (ex: Execution | null): RefFill[] =>
    (ex?.fills ?? []).map((maker, i) => ({ maker, qty: out[2 * i] as bigint, price: out[2 * i + 1] as bigint }));
  const base = (ex: Execution | null) => ({
    fills: fillsOf(ex),
    selfTradeCancelled: ex?.selfTradeCancelled ?? [],
    takerFilled: ex?.takerFilled ?? false,
    rested: ex?.rested ?? false,
    cancelReason: ex?.cancelReason ?? null,
  });
  switch (o.kind) {
    case 'place':
      return { kind: 'place', orderId: o.orderId, expired: o.expired, reject: o.reject?.code ?? null, found: null, exhausted: null, ...base(o) };
    case 'cancel':
      return { kind: 'cancel', orderId: o.orderId, expired: o.expired, reject: null, found: o.found, exhausted: null, ...base(null) };
    case 'modify':
      return { kind: 'modify', orderId: o.orderId, expired: o.expired, reject: o.reject?.code ?? null, found: o.found, exhausted: o.exhausted, ...base(o.execution) };
    case 'expire':
      return { kind: 'expire', orderId: null, expired: o.expired.map((e) => e.orderId), reject: null, found: null, exhausted: null, ...base(null) };
  }
}

/** Order states derived only from results and the plaintext request (what the gateway knows). */
export class OrderTracker {
  readonly states = new Map<string, OrderState>();
  private set(id: string, s: Partial<OrderState>): void {
    const cur = this.states.get(id) ?? { status: 'NEW', remaining: 0n, filled: 0n, reason: null };
    this.states.set(id, { ...cur, ...s });
  }
  private exec(id: string, qty: bigint, r: PlainResult): void {
    let filledNow = 0n;
    for (const f of r.fills) {
      const m = this.states.get(f.maker)!;
      const rem = m.remaining - f.qty;
      this.set(f.maker, { remaining: rem, filled: m.filled + f.qty, status: rem === 0n ? 'FILLED' : 'PARTIALLY_FILLED' });
      filledNow += f.qty;
    }
    for (const id2 of r.selfTradeCancelled) this.set(id2, { status: 'CANCELLED', reason: 'SELF_TRADE_PREVENTION' });
    const t = this.states.get(id)!;
    const rem = qty - filledNow;
    this.set(id, { remaining: rem, filled: t.filled + filledNow, status: rem === 0n ? 'FILLED' : t.filled + filledNow > 0n ? 'PARTIALLY_FILLED' : 'NEW' });
    if (r.cancelReason) this.set(id, { status: 'CANCELLED', reason: r.cancelReason });
  }
  apply(op: Op<bigint>, r: PlainResult): void {
    for (const id of r.expired) this.set(id, { status: 'CANCELLED', reason: 'GTT_EXPIRED' });
    switch (op.kind) {
      case 'place':
        if (r.reject === 'DUPLICATE_ORDER_ID') return;
        if (r.reject) return this.set(op.orderId, { status: 'REJECTED', reason: r.reject, remaining: 0n, filled: 0n });
        this.set(op.orderId, { status: 'NEW', remaining: op.qty, filled: 0n, reason: null });
        return this.exec(op.orderId, op.qty, r);
      case 'cancel':
        if (r.found) this.set(op.orderId, { status: 'CANCELLED', reason: 'USER_REQUESTED' });
        return;
      case 'modify': {
        if (!r.found) return;
        if (r.exhausted) return this.set(op.orderId, { status: 'CANCELLED', reason: 'USER_REQUESTED', remaining: 0n });
        const cur = this.states.get(op.orderId)!;
        const delta = op.mode === 'reduce' && op.qtyDelta > 0n ? 0n : op.qtyDelta;
        const q = cur.remaining + delta;
        this.set(op.orderId, { remaining: q });
        if (op.mode === 'replace') this.exec(op.orderId, q, r);
        return;
      }
      case 'expire':
        return;
    }
  }
}

/** Book rows in priority order, in the reference's format. */
export function bookRows<S>(book: Book<S> | undefined, value: (s: S) => bigint): string[] {
  if (!book) return [];
  return [...book.bids, ...book.asks].map((o) => `${o.side} ${o.orderId} seq=${o.seq} px=${value(o.price)} qty=${value(o.qty)}`);
}

export interface RunOutput<S> {
  exchange: Exchange<S>;
  results: PlainResult[];
  transcript: TranscriptRecorder;
  value: (s: S) => bigint;
}

/**
 * Runs ops through an Exchange. concurrent=true submits everything at once (per-symbol order kept by
 * the exchange, symbols interleave); false awaits each op.
 */
export async function runStream<S>(
  arith: Arith<S>,
  transcript: TranscriptRecorder,
  toS: (v: bigint) => S,
  value: (s: S) => bigint,
  ops: readonly Op<bigint>[],
  opts: ExchangeOptions & { concurrent?: boolean } = {},
): Promise<RunOutput<S>> {
  const exchange = new Exchange<S>(arith, opts);
  let results: OpResult<S>[];
  if (opts.concurrent) {
    results = await Promise.all(ops.map((op) => exchange.apply(mapOp(op, toS))));
  } else {
    results = [];
    for (const op of ops) results.push(await exchange.apply(mapOp(op, toS)));
  }
  return { exchange, results: results.map((r) => plainResult(r, value)), transcript, value };
}

/** The plaintext reference backend run. */
export function runPlain(ops: readonly Op<bigint>[], opts: ExchangeOptions & { concurrent?: boolean } = {}): Promise<RunOutput<bigint>> {
  const transcript = new TranscriptRecorder();
  const arith = new PlaintextBackend({ recorder: transcript });
  return runStream(arith, transcript, (v) => v, (v) => v, ops, opts);
}

/** The MPC backend run on the ideal-functionality test double. */
export async function runIdeal(
  ops: readonly Op<bigint>[],
  opts: ExchangeOptions & { concurrent?: boolean } = {},
): Promise<RunOutput<Sec> & { ctx: IdealJobContext }> {
  const transcript = new TranscriptRecorder();
  const ctx = new IdealJobContext();
  const arith = new MpcBackend(ctx, { recorder: transcript });
  const out = await runStream<Sec>(arith, transcript, (v) => ctx.fromShares([v]), IdealJobContext.value, ops, opts);
  return { ...out, ctx };
}
