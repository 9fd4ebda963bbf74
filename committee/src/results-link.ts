// Delivers this node's per-op results (public outcome + its output shares sealed to the gateway) to
// the gateway's internal listener, in sequence order, resuming where the gateway says it stands.
// The gateway opens each connection with a nonce; our hello signs it with this node's link key, so
// no other process can report results in our name, and carries a nonce of ours, which the gateway
// signs back in its resume: we send nothing to a process that is not the gateway.
import WebSocket from 'ws';
import type { Logger } from 'pino';
import {
  checkGatewayResultsProof, decodeGatewayToNode, encodeFrame, FrameError, LinkAuthError, resultsHello, type CapacityFrame, type GatewayToNode, type ResultFrame,
} from '@tenebra/wire';
import { newChallenge } from '@tenebra/seal';
import { OP_TRACE, traceOp } from '@tenebra/config';
import type { NodeStore } from './node-store';
import { resultText } from './result-text';

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 3_000;
/** Results in flight on the socket before we wait for it to drain. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

export class ResultsLink {
  private ws: WebSocket | null = null;
  private resumed = false;
  /** next seq the gateway should receive on the current connection */
  private nextSeq = 0n;
  private closed = false;
  private backoff = RECONNECT_MIN_MS;
  private timer: NodeJS.Timeout | null = null;
  private pumping = false;
  /** the latest capacity report, sent on every resume too */
  private capacity: CapacityFrame | null = null;

  constructor(
    private readonly url: string,
    private readonly node: number,
    /** this node's Ed25519 link key (seed) */
    private readonly linkKey: Uint8Array,
    /** the gateway's public link key: its resume must prove it */
    private readonly gatewayLinkKey: Uint8Array,
    private readonly store: NodeStore,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.connect();
  }

  /** Sends this node's capacity report now if the link is up, and again after every resume. */
  reportCapacity(frame: CapacityFrame): void {
    this.capacity = frame;
    this.sendCapacity();
  }

  private sendCapacity(): void {
    if (this.capacity && this.ws && this.resumed && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(this.capacity));
  }

  /**
   * Sends a finished job's results at once, before its boundary write (node.ts runBatch), when they
   * are the next the gateway expects and nothing waits to be pumped; otherwise they go from the
   * store after the write (notify). Safe to release early: a node that dies before the write comes
   * back at an earlier boundary and re-runs the job with identical results (the job id, the reserve
   * cursors and the shares are those of that boundary: docs/decisions/0002, 0023), which the
   * gateway checks against its decision as late results.
   */
  sendNow(results: readonly ResultFrame[]): void {
    const ws = this.ws;
    if (results.length === 0 || this.pumping || !ws || !this.resumed || ws.readyState !== WebSocket.OPEN) return;
    if (BigInt(results[0]!.seq) !== this.nextSeq || ws.bufferedAmount > MAX_BUFFERED_BYTES) return;
    for (const r of results) {
      ws.send(resultText(r));
      if (OP_TRACE) traceOp(this.log, 'result-sent', { seq: r.seq });
      this.nextSeq = BigInt(r.seq) + 1n;
    }
  }

  /**
   * Called after each job commit: sends whatever the gateway has not yet got. `storedTo`: no result
   * on disk has a higher seq. When the gateway's next seq is past it, every stored result went out on
   * this connection already (sendNow, at the job's commit), and the store is not read: in a one-op
   * job that read (an lmdb range over nothing) was about 0.13 ms of a node's CPU (ADR 0048).
   */
  notify(storedTo?: bigint): void {
    if (storedTo !== undefined && this.nextSeq > storedTo) return;
    void this.pump().catch((e: unknown) => this.log.error({ err: String(e) }, 'results pump failed'));
  }

  private connect(): void {
    if (this.closed) return;
    const ws = new WebSocket(this.url);
    this.ws = ws;
    this.resumed = false;
    const challenge = newChallenge();
    ws.on('open', () => {
      this.backoff = RECONNECT_MIN_MS;
    });
    ws.on('message', (data) => {
      let frame: GatewayToNode;
      try {
        frame = decodeGatewayToNode(data as Buffer);
      } catch (e) {
        this.log.warn({ err: e instanceof FrameError ? e.message : String(e) }, 'gateway sent a malformed frame');
        return;
      }
      if (frame.t === 'auth_challenge') {
        ws.send(encodeFrame(resultsHello(this.node, this.linkKey, frame.nonce, challenge)));
        return;
      }
      if (frame.t === 'auth_refused') {
        // The gateway closes after this; we retry with backoff (a config fix may be deployed).
        this.log.error({ code: frame.code, reason: frame.message }, 'gateway REFUSED our results link');
        return;
      }
      if (frame.t === 'resume') {
        try {
          checkGatewayResultsProof(this.gatewayLinkKey, this.node, challenge, frame);
        } catch (e) {
          const reason = e instanceof LinkAuthError ? e.message : String(e);
          this.log.error({ url: this.url, reason }, 'REFUSING the results listener: it is not the gateway');
          ws.terminate(); // reconnects with backoff
          return;
        }
        this.nextSeq = BigInt(frame.from_seq);
        this.resumed = true;
        this.log.info({ from_seq: frame.from_seq }, 'gateway link resumed');
        void this.store.prune(this.nextSeq).catch((e: unknown) => this.log.warn({ err: String(e) }, 'prune failed'));
        this.sendCapacity();
        this.notify();
      }
    });
    ws.on('error', (e) => this.log.debug({ err: e.message }, 'gateway link error'));
    ws.on('close', () => {
      this.ws = null;
      this.resumed = false;
      if (this.closed) return;
      this.timer = setTimeout(() => this.connect(), this.backoff);
      this.backoff = Math.min(this.backoff * 2, RECONNECT_MAX_MS);
    });
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.ws && this.resumed && this.ws.readyState === WebSocket.OPEN) {
        let sent = 0;
        for (const r of this.store.resultsFrom(this.nextSeq)) {
          if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return;
          this.ws.send(JSON.stringify(r satisfies ResultFrame));
          if (OP_TRACE) traceOp(this.log, 'result-sent', { seq: r.seq });
          this.nextSeq = BigInt(r.seq) + 1n;
          sent++;
          if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) break;
        }
        if (sent === 0) return;
        while (this.ws && this.ws.bufferedAmount > MAX_BUFFERED_BYTES) await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      this.pumping = false;
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.ws?.close();
  }
}
