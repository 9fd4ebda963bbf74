// From node results to committed state: hands frames to the collector, decides seqs in order from
// the cursor, applies each run of decided seqs in one transaction, then wakes waiters and emits events.
import type { ResultFrame } from '@tenebra/wire';
import { OP_TRACE, traceOp } from '@tenebra/config';
import type { Logger } from 'pino';
import type { GatewayClock } from '../clock';
import type { GatewayEvents } from '../events';
import type { Clearing, CancelResult, Decision } from './clearing';
import type { ResultCollector } from './collector';

/** Most seqs applied in one transaction. */
const MAX_BATCH = 512;
/** Results further ahead of the cursor than this are refused (the node is told to resume later). */
export const MAX_AHEAD = 100_000n;

/** Promises for outcomes a request handler waits on (a cancel's result), keyed by order id. */
export class OutcomeWaiters {
  private readonly waiting = new Map<string, ((r: CancelResult) => void)[]>();

  /** Resolves with the next cancel result for orderId. */
  wait(orderId: string): Promise<CancelResult> {
    return new Promise((resolve) => {
      const list = this.waiting.get(orderId) ?? [];
      list.push(resolve);
      this.waiting.set(orderId, list);
    });
  }

  /** Resolves every waiter of orderId. */
  settle(orderId: string, r: CancelResult): void {
    const list = this.waiting.get(orderId);
    if (!list) return;
    this.waiting.delete(orderId);
    for (const f of list) f(r);
  }

  /** Forgets a waiter that gave up (timeout). */
  abandon(orderId: string): void {
    this.waiting.delete(orderId);
  }
}

export class ResultPipeline {
  private readonly connected = new Set<number>();
  private readonly nodeListeners = new Set<() => void>();
  private scheduled = false;
  /** a batch is being committed */
  private committing = false;
  /** decisions of a batch whose commit failed, to commit again before anything else */
  private retry: Decision[] | null = null;
  private graceTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private cursorCache: bigint;
  /** the last seq decided whose batch is not applied yet (committing, or kept for a retry); below the cursor otherwise */
  private decidedLast = -1n;
  /** results for decided seqs that came before their batch was applied: checked once its events are out */
  private readonly late: ResultFrame[] = [];

  constructor(
    private readonly collector: ResultCollector,
    private readonly clearing: Clearing,
    private readonly waiters: OutcomeWaiters,
    private readonly events: GatewayEvents,
    private readonly clock: GatewayClock,
    private readonly log: Logger,
  ) {
    this.cursorCache = clearing.cursor();
  }

  /** The next seq to apply. */
  get cursor(): bigint {
    return this.cursorCache;
  }

  nodeUp(node: number): void {
    this.connected.add(node);
    this.nodesChanged();
  }

  nodeDown(node: number): void {
    this.connected.delete(node);
    this.schedule(); // a seq may have been waiting only for this node
    this.nodesChanged();
  }

  /** Calls fn after a committee node's results link comes up or goes down (system_health); returns the unsubscribe. */
  onNodesChanged(fn: () => void): () => void {
    this.nodeListeners.add(fn);
    return () => this.nodeListeners.delete(fn);
  }

  private nodesChanged(): void {
    for (const fn of this.nodeListeners) {
      try {
        fn();
      } catch (e) {
        this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'node change listener failed');
      }
    }
  }

  /** Connected node indices. */
  get nodes(): ReadonlySet<number> {
    return this.connected;
  }

  /** Accepts a result frame; false if it is too far ahead of the cursor to hold. */
  onResult(frame: ResultFrame): boolean {
    const seq = BigInt(frame.seq);
    if (seq >= this.cursorCache + MAX_AHEAD) return false;
    if (OP_TRACE) traceOp(this.log, 'gw-result', { seq: frame.seq, node: frame.node });
    if (seq >= this.cursorCache && seq <= this.decidedLast) {
      // Decided, its batch not applied yet: the t+2-th and later results of a fill come while its
      // clearing commits. Opening and checking them waits until the batch's events are out, so it
      // does not delay them (ADR 0045), and it then checks them against the decision; before,
      // such a result went into a fresh slot that the commit dropped unchecked.
      this.collector.seen(frame);
      this.late.push(frame);
      return true;
    }
    this.collector.add(frame, this.cursorCache, this.clock.nowMs());
    this.schedule();
    return true;
  }

  /** Checks the results that came for decided seqs while their batch was committing (onResult), now below the cursor. */
  private checkLate(): void {
    for (const frame of this.late.splice(0)) {
      this.collector.add(frame, this.cursorCache, this.clock.nowMs());
    }
  }

  /** Runs advance() once after the current I/O callbacks, so a burst of frames makes one transaction. */
  schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      try {
        this.advance();
      } catch (e) {
        // A failed transaction leaves the cursor where it was; the next frame or timer retries.
        this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'applying results failed');
      }
    });
  }

  /**
   * Decides every seq that can be decided now, in order from the cursor, and commits them as one
   * batch; one commit is in flight at a time, and the next batch starts when it has landed.
   */
  advance(): void {
    if (this.stopped || this.committing) return;
    let batch = this.retry;
    this.retry = null;
    let retryInMs: number | null = null;
    if (!batch) {
      batch = [];
      let seq = this.cursorCache;
      while (batch.length < MAX_BATCH) {
        const d = this.collector.decide(seq, this.connected, this.clock.nowMs());
        if (d === null) break;
        if ('retryInMs' in d) {
          retryInMs = d.retryInMs;
          break;
        }
        if (OP_TRACE) traceOp(this.log, 'gw-decided', { seq: seq.toString() });
        batch.push(d);
        seq++;
      }
    }
    if (retryInMs !== null) this.armGrace(retryInMs);
    if (batch.length === 0) return;
    const decided = batch;
    this.committing = true;
    this.decidedLast = decided[decided.length - 1]!.seq;
    const onYield = OP_TRACE ? () => traceOp(this.log, 'gw-clear-yield', { first: decided[0]!.seq.toString() }) : undefined;
    this.clearing.applyBatch(decided, onYield).then(
      (fx) => {
        if (OP_TRACE) traceOp(this.log, 'gw-cleared', { first: decided[0]!.seq.toString(), last: decided[decided.length - 1]!.seq.toString() });
        this.committing = false;
        this.cursorCache = decided[decided.length - 1]!.seq + 1n;
        this.decidedLast = this.cursorCache - 1n; // nothing decided waits to be applied
        this.collector.dropBelow(this.cursorCache);
        for (const [orderId, r] of fx.cancels) this.waiters.settle(orderId, r);
        for (const ev of fx.orderEvents) this.events.emit('order', ev);
        for (const ev of fx.positionEvents) this.events.emit('position', ev);
        if (OP_TRACE) traceOp(this.log, 'gw-pushed', { first: decided[0]!.seq.toString(), last: decided[decided.length - 1]!.seq.toString() });
        if (this.late.length > 0) {
          // after this turn's socket writes (the pushes) are handed to the kernel
          setImmediate(() => {
            try {
              this.checkLate();
            } catch (e) {
              this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'checking late results failed');
            }
          });
        }
        this.schedule();
      },
      (e: unknown) => {
        // Nothing of the batch was written; keep the decisions and try again shortly.
        this.committing = false;
        this.retry = decided;
        this.log.error({ err: e instanceof Error ? e.stack : String(e), first: decided[0]!.seq.toString() }, 'applying results failed; retrying');
        this.armGrace(100);
      },
    );
  }

  private armGrace(ms: number): void {
    if (this.graceTimer) return;
    this.graceTimer = setTimeout(() => {
      this.graceTimer = null;
      this.schedule();
    }, Math.max(1, Math.ceil(ms)));
  }

  stop(): void {
    this.stopped = true;
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.graceTimer = null;
  }
}
