// Small builders for hand-written scenarios on the plaintext backend.
import { Exchange } from '../src/exchange';
import type { ExchangeOptions } from '../src/exchange';
import { TranscriptRecorder } from '../src/leaks';
import { PlaintextBackend } from '../src/plaintext';
import type { Op, OpResult, PlaceOp, Side } from '../src/types';
import { bookRows, plainResult } from './harness';
import type { PlainResult } from './reference';

export const SYM = 'BTC-USDC-PERP';

/** A plaintext exchange with a transcript and an auto-incrementing sequence number. */
export class Scenario {
  readonly transcript = new TranscriptRecorder();
  readonly arith = new PlaintextBackend({ recorder: this.transcript });
  readonly ex: Exchange<bigint>;
  seq = 0n;
  constructor(opts: ExchangeOptions = {}) {
    this.ex = new Exchange(this.arith, opts);
  }
  async raw(op: Op<bigint>): Promise<OpResult<bigint>> {
    return this.ex.apply(op);
  }
  async op(op: Op<bigint>): Promise<PlainResult> {
    return plainResult(await this.ex.apply(op), (v) => v);
  }
  /** Places a limit GTC order unless overridden; id defaults to o<seq>. */
  place(side: Side, price: bigint | null, qty: bigint, extra: Partial<PlaceOp<bigint>> = {}): Promise<PlainResult> {
    this.seq += 1n;
    return this.op({ kind: 'place', symbol: SYM, orderId: `o${this.seq}`, seq: this.seq, side, type: 'limit', tif: 'GTC', price, qty, ...extra });
  }
  cancel(orderId: string): Promise<PlainResult> {
    this.seq += 1n;
    return this.op({ kind: 'cancel', symbol: SYM, orderId, seq: this.seq });
  }
  rows(): string[] {
    return bookRows(this.ex.book(SYM), (v) => v).map((r) => r.replace(/ seq=\d+/, ''));
  }
  /** Labels and values revealed since the last call. */
  leaks(): string[] {
    return this.transcript.drain().map((r) => `${r.label}=${r.value}`);
  }
}
