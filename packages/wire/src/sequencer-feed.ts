// Committee-node side of the sequencer link: the journaled ops, in sequence order, without gaps.
// The feed tracks the next seq it expects; after any reconnect it asks again from there, so ops are
// never skipped, repeated or reordered. onOp is awaited before the next op is delivered; while the
// local buffer is full the socket is paused, which pushes back on the sequencer (it then serves this
// node from its journal instead of from memory).
import { AttestedSocket, stderrLogger, type AttestedOptions, type WireLogger } from './attested-socket';
import { decodeSequencerToNode } from './codec';
import type { SequencedFrame, SequencerToNode } from './messages';

export interface SequencerFeedOptions extends AttestedOptions {
  /** This node's index (1-based): the sequencer sends only sealed[node-1]. */
  node: number;
  /** This node's Ed25519 link key (seed): proves to the sequencer that this is node `node`. */
  authKey: Uint8Array;
  /** First seq wanted (inclusive), usually last applied + 1. */
  fromSeq: bigint;
  /** Called once per op, strictly in seq order; awaited before the next call. */
  onOp: (frame: SequencedFrame) => void | Promise<void>;
  /**
   * Called if onOp throws or rejects. The feed then stops delivering (it never skips an op) and
   * closes; the node should restart from its persisted state. Default: log the error.
   */
  onError?: (err: Error, frame: SequencedFrame) => void;
  /** Frames buffered before the socket is paused (default 1,024; dropped and re-fetched past 4x). */
  highWater?: number;
}

/** Reconnecting, attested, gap-free feed of sequenced ops for one committee node. */
export class SequencerFeed {
  private sock: AttestedSocket<SequencerToNode> | null = null;
  private opts: SequencerFeedOptions | null = null;
  private log: WireLogger = stderrLogger('sequencer-feed');
  private readonly queue: SequencedFrame[] = [];
  /** Seq of the next op to hand to onOp. */
  private deliverNext = 1n;
  /** Seq of the next op to accept from the socket (deliverNext + buffered + in progress). */
  private recvNext = 1n;
  private draining: Promise<void> | null = null;
  private paused = false;
  private stopped = false;
  private highWater = 1024;
  /** Highest seq this node reported as taken into a job (re-sent on every new connection). */
  private taken: bigint | null = null;

  /** Connects, attests, asks for ops from opts.fromSeq, and starts delivering them to opts.onOp. */
  async connect(opts: SequencerFeedOptions): Promise<void> {
    if (this.sock) throw new Error('SequencerFeed: connect() called twice');
    if (opts.fromSeq < 1n) throw new RangeError('fromSeq must be at least 1');
    this.opts = opts;
    if (opts.log) this.log = opts.log;
    this.highWater = opts.highWater ?? 1024;
    this.deliverNext = opts.fromSeq;
    this.recvNext = opts.fromSeq;
    this.sock = new AttestedSocket<SequencerToNode>(opts, `sequencer-feed[node ${opts.node}]`, {
      decode: (d) => decodeSequencerToNode(d as Buffer),
      onReady: () => this.onReady(),
      onFrame: (f) => this.onFrame(f),
      onDown: () => {},
    }, { identity: { role: 'node', id: opts.node, privateKey: opts.authKey }, purpose: 'feed' });
    await this.sock.start();
  }

  /** The seq the next onOp call will receive. */
  get nextSeq(): bigint {
    return this.deliverNext;
  }

  /**
   * Tells the sequencer that every op up to `seq` is in a job this node has started: it closes the
   * next job once the committee has taken the last one (so jobs grow while the committee is busy).
   * Call it whenever a job starts, and once at start with the last applied seq. A report that
   * cannot be sent now goes out when the connection is back.
   */
  reportTaken(seq: bigint): void {
    if (this.taken !== null && seq <= this.taken) return;
    this.taken = seq;
    if (this.sock?.ready) this.sock.send({ t: 'progress', taken: seq.toString() });
  }

  /** True while an attested connection is up. */
  get connected(): boolean {
    return this.sock?.ready ?? false;
  }

  /** Stops the feed: no more onOp calls after the one in progress (awaited); every timer cleared. */
  async close(): Promise<void> {
    this.stopped = true;
    this.queue.length = 0;
    await this.sock?.close();
    await this.draining;
  }

  private onReady(): void {
    // A new socket starts unpaused; pause it at once if the buffer is still full.
    this.paused = this.queue.length >= this.highWater;
    if (this.paused) this.sock!.pause();
    this.sock!.send({ t: 'feed', node: this.opts!.node, from_seq: this.recvNext.toString() });
    if (this.taken !== null) this.sock!.send({ t: 'progress', taken: this.taken.toString() });
  }

  private onFrame(f: SequencerToNode): void {
    if (f.t === 'nack') {
      this.log.error({ code: f.code, message: f.message }, 'sequencer refused the feed request');
      this.sock!.reconnect(`feed refused: ${f.code}`);
      return;
    }
    if (f.t !== 'op') throw new Error(`unexpected '${f.t}' frame after the handshake`);
    const seq = BigInt(f.seq);
    if (seq < this.recvNext) return; // already have it (harmless duplicate)
    if (seq !== this.recvNext) {
      // Never deliver out of order: drop the connection and ask again from the first missing seq.
      throw new Error(`feed out of order: expected seq ${this.recvNext}, got ${seq}`);
    }
    this.recvNext = seq + 1n;
    this.queue.push(f);
    if (this.queue.length > 4 * this.highWater) {
      // The peer ignored our pause; forget the tail and re-fetch it later from the journal.
      this.queue.length = this.highWater;
      this.recvNext = BigInt(this.queue[this.queue.length - 1]!.seq) + 1n;
      this.sock!.reconnect('feed buffer overflow');
    } else if (this.queue.length >= this.highWater && !this.paused) {
      this.paused = true;
      this.sock!.pause();
    }
    if (!this.draining) this.draining = this.drain();
  }

  /** Delivers queued ops one by one; never rejects. */
  private async drain(): Promise<void> {
    const opts = this.opts!;
    await Promise.resolve(); // so `this.draining` is assigned before the finally below can run
    try {
      while (!this.stopped) {
        const f = this.queue.shift();
        if (!f) break;
        const seq = BigInt(f.seq);
        if (seq !== this.deliverNext) throw new Error(`internal: delivering seq ${seq}, expected ${this.deliverNext}`);
        try {
          await opts.onOp(f);
        } catch (e) {
          const err = e instanceof Error ? e : new Error(String(e));
          this.log.error({ seq: f.seq, err: err.message }, 'onOp failed; the feed stops here');
          this.stopped = true;
          (opts.onError ?? (() => {}))(err, f);
          void this.sock?.close(); // close() never rejects
          break;
        }
        this.deliverNext = seq + 1n;
        if (this.paused && this.queue.length <= this.highWater / 2) {
          this.paused = false;
          this.sock?.resume();
        }
      }
    } catch (e) {
      this.log.error({ err: (e as Error).message }, 'feed delivery stopped');
      this.stopped = true;
    } finally {
      this.draining = null;
    }
  }
}
