// Gateway side of the sequencer link: submit sealed ops, get the journaled (seq, ts_ns) back.
// Every op carries a request id (rid). Un-acked ops are kept and re-sent with the SAME rid after a
// reconnect; the sequencer dedupes by rid, so an op whose ack was lost is never sequenced twice and
// the retry returns the original ack.
import { randomUUID } from 'node:crypto';
import { AttestedSocket, stderrLogger, type AttestedOptions, type WireLogger } from './attested-socket';
import { decodeSequencerToGateway, validateSealedOp } from './codec';
import { deferred } from './deferred';
import type { SealedOp, SequencerToGateway, SubmitFrame } from './messages';

export interface SequencerClientOptions extends AttestedOptions {
  /** The gateway's Ed25519 link key (seed): proves to the sequencer that this is the gateway. */
  authKey: Uint8Array;
  /** Most submitted-but-unacknowledged ops held at once (default 10,000). */
  maxPending?: number;
}

/** What an ack tells the gateway: the op is durable in the journal at this position and time. */
export interface SubmitResult {
  seq: bigint;
  tsNs: bigint;
  rid: string;
}

/** The sequencer refused the op (it will never be sequenced under this rid as sent). */
export class SequencerNackError extends Error {
  override name = 'SequencerNackError';
  constructor(
    readonly code: string,
    message: string,
    readonly rid: string,
  ) {
    super(`sequencer refused ${rid}: ${code}: ${message}`);
  }
}

/** The client's pending queue is full: back off and retry (nothing was sent). */
export class SequencerBusyError extends Error {
  override name = 'SequencerBusyError';
}

/** The client was closed; the op may or may not have been sequenced (retry with the same rid to learn which). */
export class SequencerClosedError extends Error {
  override name = 'SequencerClosedError';
}

interface Pending {
  frame: SubmitFrame;
  resolve: (r: SubmitResult) => void;
  reject: (e: Error) => void;
}

/** Reconnecting, attested client used by the gateway to submit sealed ops. */
export class SequencerClient {
  private sock: AttestedSocket<SequencerToGateway> | null = null;
  private readonly pending = new Map<string, Pending>();
  private maxPending = 10_000;
  private closed = false;
  private log: WireLogger = stderrLogger('sequencer-client');

  /** Connects, attests the enclave and proves our link key (see AttestedSocket.start for how it fails). */
  async connect(opts: SequencerClientOptions): Promise<void> {
    if (this.sock) throw new Error('SequencerClient: connect() called twice');
    this.maxPending = opts.maxPending ?? 10_000;
    if (opts.log) this.log = opts.log;
    this.sock = new AttestedSocket<SequencerToGateway>(opts, 'sequencer-client', {
      decode: (d) => decodeSequencerToGateway(d as Buffer),
      onReady: () => this.resendAll(),
      onFrame: (f) => this.onFrame(f),
      onDown: () => {},
    }, { identity: { role: 'gateway', id: 0, privateKey: opts.authKey }, purpose: 'submit' });
    try {
      await this.sock.start();
    } catch (e) {
      this.closed = true;
      throw e;
    }
  }

  /** True while an attested connection is up. */
  get connected(): boolean {
    return this.sock?.ready ?? false;
  }

  /** Ops submitted and not yet acked or nacked. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Submits op; resolves once the sequencer has journaled it (ack), rejects with SequencerNackError
   * if refused, SequencerBusyError if too many are pending, SequencerClosedError on close().
   * Pass your own rid to make a retry after a gateway restart idempotent.
   */
  submit(op: SealedOp, opts: { rid?: string } = {}): Promise<SubmitResult> {
    if (this.closed || !this.sock || this.sock.isClosed) {
      return Promise.reject(new SequencerClosedError('SequencerClient is not connected'));
    }
    const rid = opts.rid ?? randomUUID();
    if (this.pending.has(rid)) return Promise.reject(new Error(`rid ${rid} is already pending`));
    if (this.pending.size >= this.maxPending) {
      return Promise.reject(new SequencerBusyError(`${this.pending.size} ops already await the sequencer's ack`));
    }
    try {
      validateSealedOp(op, 'op', rid);
    } catch (e) {
      return Promise.reject(e as Error);
    }
    const frame: SubmitFrame = { t: 'submit', rid, op };
    const { promise, resolve, reject } = deferred<SubmitResult>();
    this.pending.set(rid, { frame, resolve, reject });
    this.sock.send(frame); // if not ready, resendAll() sends it on the next attested connection
    return promise;
  }

  /** Closes the link; every pending submit rejects with SequencerClosedError. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.sock?.close();
    const err = new SequencerClosedError('SequencerClient closed before the ack arrived');
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  private resendAll(): void {
    // Map order is submit order, so the sequencer sees this gateway's ops in their original order.
    for (const p of this.pending.values()) this.sock!.send(p.frame);
  }

  private onFrame(f: SequencerToGateway): void {
    if (f.t === 'ack') {
      const p = this.pending.get(f.rid);
      if (!p) return; // a duplicate ack for an op re-sent after a reconnect
      this.pending.delete(f.rid);
      p.resolve({ seq: BigInt(f.seq), tsNs: BigInt(f.ts_ns), rid: f.rid });
      return;
    }
    if (f.t === 'nack') {
      const p = this.pending.get(f.rid);
      if (!p) {
        this.log.warn({ rid: f.rid, code: f.code, message: f.message }, 'sequencer nack for no pending op');
        return;
      }
      this.pending.delete(f.rid);
      p.reject(new SequencerNackError(f.code, f.message, f.rid));
      return;
    }
    throw new Error(`unexpected '${f.t}' frame after the handshake`);
  }
}
