// One subscription's push stream (spec: Events, channels and push frames): snapshot frames, the last
// with snapshot_complete true, then updates; updates that arrive during the snapshot are buffered
// and applied after it; seq rises by exactly 1 per frame from seq_start, and a larger jump is a gap
// that the caller recovers by unsubscribe + subscribe. Pure state machine: no I/O, no timers.

export type ChannelPhase = 'subscribing' | 'snapshot' | 'live' | 'unsubscribing' | 'idle';

export interface PushMeta {
  channel: string;
  /** the push's seq; 0 for an event recovered after a reconnect (it came from REST, not the channel) */
  seq: number;
  /** set on an order change the client missed while disconnected, found by the reconciliation */
  recovered?: true;
}

export type ChannelAction<T> =
  | { kind: 'snapshot'; items: T[] }
  | { kind: 'update'; item: T; meta: PushMeta }
  | { kind: 'gap'; expected: number; received: number }
  | { kind: 'overflow'; limit: number }
  | { kind: 'dropped'; seq: number; reason: string };

export class ChannelTracker<T> {
  phase: ChannelPhase = 'idle';
  /** seq the next frame must carry. */
  expectedSeq = 1;
  #started = false;
  #snapshot: T[] = [];
  #buffered: Array<{ item: T; meta: PushMeta }> = [];

  constructor(
    readonly channel: string,
    /** Bound on snapshot items plus buffered updates; beyond it the stream is resynchronised. */
    readonly maxBuffered = 10_000,
  ) {}

  /** A subscribe request was sent: a fresh seq series from seqStart begins. */
  beginSubscribe(seqStart = 1): void {
    this.phase = 'subscribing';
    this.expectedSeq = seqStart;
    this.#started = false;
    this.#snapshot = [];
    this.#buffered = [];
  }

  /** The subscribe response arrived with its seq_start (ignored if frames of the series already came). */
  subscribed(seqStart: number): void {
    if (!this.#started && Number.isInteger(seqStart) && seqStart >= 0) this.expectedSeq = seqStart;
    if (this.phase === 'subscribing') this.phase = 'snapshot';
  }

  /** An unsubscribe was sent: frames until the next subscribe belong to the old series and are dropped. */
  beginUnsubscribe(): void {
    this.phase = 'unsubscribing';
    this.#snapshot = [];
    this.#buffered = [];
  }

  /** Not subscribed at all (after a disconnect or an explicit unsubscribe). */
  reset(): void {
    this.phase = 'idle';
    this.#snapshot = [];
    this.#buffered = [];
  }

  /**
   * One push frame. `item` is the decoded payload, or undefined for a frame that only counts
   * (an empty snapshot, a system message). Returns what the caller must do, in order.
   */
  onFrame(frame: { type: string; seq: number; snapshot_complete?: boolean }, item: T | undefined): ChannelAction<T>[] {
    if (this.phase === 'idle' || this.phase === 'unsubscribing') return [{ kind: 'dropped', seq: frame.seq, reason: `channel is ${this.phase}` }];
    if (!Number.isInteger(frame.seq)) return [{ kind: 'dropped', seq: frame.seq, reason: 'seq is not an integer' }];
    if (frame.seq < this.expectedSeq) return [{ kind: 'dropped', seq: frame.seq, reason: `duplicate seq (expected ${this.expectedSeq})` }];
    if (frame.seq > this.expectedSeq) return [{ kind: 'gap', expected: this.expectedSeq, received: frame.seq }];
    this.expectedSeq++;
    this.#started = true;
    if (this.phase === 'subscribing') this.phase = 'snapshot';
    const meta = { channel: this.channel, seq: frame.seq };

    if (this.phase === 'live') {
      if (frame.type === 'snapshot') return [{ kind: 'dropped', seq: frame.seq, reason: 'snapshot frame after snapshot_complete' }];
      return item === undefined ? [] : [{ kind: 'update', item, meta }];
    }
    // phase 'snapshot'
    if (this.#snapshot.length + this.#buffered.length >= this.maxBuffered) return [{ kind: 'overflow', limit: this.maxBuffered }];
    if (frame.type === 'snapshot') {
      if (item !== undefined) this.#snapshot.push(item);
      if (frame.snapshot_complete !== true) return [];
      this.phase = 'live';
      const out: ChannelAction<T>[] = [{ kind: 'snapshot', items: this.#snapshot }];
      for (const b of this.#buffered) out.push({ kind: 'update', item: b.item, meta: b.meta });
      this.#snapshot = [];
      this.#buffered = [];
      return out;
    }
    if (item !== undefined) this.#buffered.push({ item, meta });
    return [];
  }
}
