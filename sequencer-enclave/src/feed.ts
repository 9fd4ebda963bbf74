// Fan-out to one committee node connection: every durable op from the requested seq on, in order,
// each with only that node's sealed entry. The subscriber tracks the next seq to send; whatever it
// has not sent yet is read from memory (recent ops) or from the journal, so a slow or reconnecting
// node is never skipped: while its socket buffer is above the high-water mark we stop sending and
// resume from `next` once it drains.
import type WebSocket from 'ws';
import type { SequencedFrame } from '@tenebra/wire';
import { encodeFrame } from '@tenebra/wire';
import { OP_TRACE, traceNow } from '@tenebra/config';
import { LIMITS } from './limits';
import { isJobEnd, type OpRecord } from './record';
import type { Sequencer } from './sequencer';

/** The frame node `node` receives for op record r. */
export function frameFor(r: OpRecord, node: number): SequencedFrame {
  const sealed = isJobEnd(r) ? '' : r.op.sealed[node - 1];
  if (sealed === undefined) throw new Error(`internal: op ${r.seq} has no sealed entry for node ${node}`);
  return {
    t: 'op', seq: r.seq.toString(), ts_ns: r.tsNs.toString(), kind: r.op.kind, symbol: r.op.symbol, pub: r.op.pub,
    sealed, batch_end: r.batchEnd,
  };
}

/** Streams ops to one node connection. */
export class FeedSubscriber {
  private next: bigint;
  private waitingDrain = false;
  /** Times this subscriber stopped at the high-water mark and waited for the socket to drain. */
  drainWaits = 0;
  private stopped = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly seq: Sequencer,
    private readonly ws: WebSocket,
    readonly node: number,
    fromSeq: bigint,
  ) {
    this.next = fromSeq;
    this.unsubscribe = seq.onDurable(() => this.pump());
  }

  /** Next seq this subscriber will send. */
  get nextSeq(): bigint {
    return this.next;
  }

  /** Sends as much as the socket's buffer allows; called on start, on new ops and on drain. */
  pump(): void {
    if (this.stopped || this.waitingDrain) return;
    const ws = this.ws;
    while (this.next <= this.seq.lastSeq) {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount >= LIMITS.feedHighWaterBytes) {
        // Slow consumer: stop here; the journal keeps everything. A ping queued behind the data
        // is written only once everything before it was flushed; its callback resumes from `next`.
        this.waitingDrain = true;
        this.drainWaits++;
        ws.ping(undefined, undefined, () => {
          this.waitingDrain = false;
          this.pump();
        });
        return;
      }
      const batch = this.seq.opsFrom(this.next, LIMITS.replayBatch);
      if (batch.length === 0) return;
      // One write syscall for the whole batch instead of one per frame (ws has no public cork).
      const socket = (ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
      socket?.cork();
      try {
        const sentAt = OP_TRACE ? traceNow() : 0;
        for (const r of batch) {
          if (OP_TRACE && this.node === 1) this.seq.trace('seq-fanout', r.seq, sentAt);
          if (r.seq !== this.next) throw new Error(`internal: feed would send seq ${r.seq}, expected ${this.next}`);
          ws.send(encodeFrame(frameFor(r, this.node)));
          this.next++;
          if (ws.bufferedAmount >= LIMITS.feedHighWaterBytes) break;
        }
      } finally {
        socket?.uncork();
      }
    }
  }

  /** Stops sending (the connection closed). */
  stop(): void {
    this.stopped = true;
    this.unsubscribe();
  }
}
