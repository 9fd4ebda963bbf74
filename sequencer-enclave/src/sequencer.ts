// The sequencing core, without sockets: validate a submit, give it the next gapless seq and a
// strictly increasing timestamp, journal it, and report the ack only once it is durable.
// Ops arriving in one event-loop turn form an intake group (at most LIMITS.maxGroup); the group is
// appended together (one journal transaction: group commit). Where the committee's jobs end is
// decided from its progress (job-boundaries.ts): a group's last op is marked batch_end when the
// committee has taken every closed job, else the ops wait for a later boundary, which a job-end
// record carries if no op arrives when the committee gets there.
import type { Logger } from 'pino';
import { DEFAULT_JOB_BOUNDARIES, OP_TRACE, traceOp } from '@tenebra/config';
import { openJournal, type Journal } from '@tenebra/journal';
import type { AckFrame, NackFrame, SealedOp } from '@tenebra/wire';
import { NsClock } from './clock';
import { DedupeWindow, type PendingEntry } from './dedupe';
import { KNOWN_KINDS, LIMITS, NACK } from './limits';
import { JobBoundaries, type JobBoundaryPolicy } from './job-boundaries';
import type { GroupCommitObserver } from './metrics';
import { decodeRecord, decodeRecordUnchecked, encodeRecord, isJobEnd, jobEndRecord, opDigest, type OpRecord } from './record';

/** Outcome of a submit, ready to send. */
export type SubmitOutcome = AckFrame | NackFrame;

interface Intake {
  rid: string;
  op: SealedOp;
  digest: string;
  entry: PendingEntry;
}

/** Orders, journals and remembers sealed ops. */
export class Sequencer {
  private readonly intake: Intake[] = [];
  private flushScheduled: NodeJS.Immediate | null = null;
  private readonly recent = new Map<bigint, OpRecord>();
  private readonly listeners = new Set<() => void>();
  private failed: Error | null = null;
  private closed = false;
  private accepted = 0;
  /** job-end records journaled (boundaries no op carried) */
  private jobEndRecords = 0;

  private constructor(
    readonly journal: Journal,
    readonly n: number,
    private readonly clock: NsClock,
    private readonly dedupe: DedupeWindow,
    private readonly jobs: JobBoundaries,
    private readonly log: Logger,
    private readonly observer: GroupCommitObserver | undefined,
  ) {}

  /** Opens the journal in dir and rebuilds the clock and the dedupe window from its tail; observer hears of every group commit. */
  static open(dir: string, n: number, log: Logger, observer?: GroupCommitObserver, policy: JobBoundaryPolicy = DEFAULT_JOB_BOUNDARIES): Sequencer {
    const journal = openJournal(dir);
    const dedupe = new DedupeWindow(LIMITS.dedupeWindow);
    const last = journal.lastSeq;
    const from = last > BigInt(LIMITS.dedupeWindow) ? last - BigInt(LIMITS.dedupeWindow) + 1n : 1n;
    let lastTs = 0n;
    let count = 0;
    // the scan covers the window; a boundary before it only makes the first job after start larger
    let lastEnd = from - 1n;
    const t0 = performance.now();
    for (let seq = from; seq <= last; ) {
      const batch = journal.readBatch(seq, LIMITS.replayBatch);
      if (batch.length === 0) throw new Error(`journal ends at ${seq - 1n}, expected ${last}`);
      for (const e of batch) {
        const r = decodeRecordUnchecked(e.record, e.seq);
        if (r.tsNs <= lastTs) throw new Error(`journal timestamps not increasing at seq ${r.seq}`);
        lastTs = r.tsNs;
        if (r.batchEnd) lastEnd = r.seq;
        if (isJobEnd(r)) continue;
        dedupe.setDone(r.rid, r.seq, r.tsNs, r.digest);
        count++;
      }
      seq = batch[batch.length - 1]!.seq + 1n;
    }
    log.info(
      { lastSeq: last.toString(), lastJobEnd: lastEnd.toString(), dedupeRebuilt: count, ms: Math.round(performance.now() - t0) },
      'journal opened; dedupe window and clock rebuilt',
    );
    return new Sequencer(journal, n, new NsClock(lastTs), dedupe, new JobBoundaries(lastEnd, policy), log, observer);
  }

  /** Highest durable seq. */
  /** A stage of op `seq` for the latency trace (op-trace.ts; the feed logs through the sequencer's logger). */
  trace(stage: string, seq: bigint, at: number): void {
    traceOp(this.log, stage, { seq: seq.toString() }, at);
  }

  get lastSeq(): bigint {
    return this.journal.lastSeq;
  }

  /** Ops accepted since start (not counting dedupe hits). */
  get acceptedCount(): number {
    return this.accepted;
  }

  /** Job boundaries: the last one, the committee's reported progress, job-end records since start. */
  get jobStats(): { lastJobEnd: bigint; committeeTaken: bigint; jobEndRecords: number } {
    return { lastJobEnd: this.jobs.lastBoundary, committeeTaken: this.jobs.committeeTaken, jobEndRecords: this.jobEndRecords };
  }

  /**
   * A node has taken every op up to `taken` into a started job. If that lets the open job close and
   * no intake group is about to close it, a job-end record does.
   */
  reportTaken(taken: bigint): void {
    // Under 'intake' every group is closed, so nothing is open here, except a tail a 'progress' run
    // left open before a restart with 'intake': closed here rather than by the next op.
    if (!this.jobs.report(taken)) return;
    if (this.failed || this.closed || this.flushScheduled || !this.jobs.canClose()) return;
    const seq = this.journal.nextSeq;
    if (seq - 1n <= this.jobs.lastBoundary) return; // nothing open
    this.jobs.closed(seq);
    this.jobEndRecords++;
    this.append(jobEndRecord(seq, this.clock.next()), null);
  }

  /** Registers fn to run (coalesced) whenever new ops became durable; returns an unsubscribe. */
  onDurable(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The op at seq (durable only), from memory when recent, else from the journal. */
  opAt(seq: bigint): OpRecord | undefined {
    const hit = this.recent.get(seq);
    if (hit) return hit;
    const bytes = this.journal.get(seq);
    return bytes ? decodeRecord(bytes, seq) : undefined;
  }

  /** Up to max durable ops from seq on (memory first, journal for older ones). */
  opsFrom(seq: bigint, max: number): OpRecord[] {
    const out: OpRecord[] = [];
    const last = this.journal.lastSeq;
    while (seq <= last && out.length < max) {
      const hit = this.recent.get(seq);
      if (hit) {
        out.push(hit);
        seq++;
        continue;
      }
      const batch = this.journal.readBatch(seq, Math.min(max - out.length, LIMITS.replayBatch));
      if (batch.length === 0) break;
      for (const e of batch) out.push(this.recent.get(e.seq) ?? decodeRecord(e.record, e.seq));
      seq = batch[batch.length - 1]!.seq + 1n;
    }
    return out;
  }

  /**
   * Checks a submitted op against policy and sequences it. Resolves with the ack once the op is
   * durable, at once with a nack if refused, or with the original ack for a known rid.
   */
  submit(rid: string, op: SealedOp): Promise<SubmitOutcome> {
    const nack = (code: string, message: string): Promise<SubmitOutcome> => Promise.resolve({ t: 'nack', rid, code, message });
    if (this.closed) return nack(NACK.BUSY, 'sequencer is shutting down');
    if (this.failed) return nack(NACK.JOURNAL_FAILED, `journal failed: ${this.failed.message}`);
    if (!KNOWN_KINDS.has(op.kind)) return nack(NACK.UNKNOWN_KIND, `unknown op kind '${op.kind}' (known: ${[...KNOWN_KINDS].join(', ')})`);
    if (op.sealed.length !== this.n) {
      return nack(NACK.WRONG_SHARE_COUNT, `op has ${op.sealed.length} sealed entries; the committee has ${this.n} nodes`);
    }
    for (let i = 0; i < op.sealed.length; i++) {
      if (op.sealed[i]!.length > LIMITS.maxSealedB64) {
        return nack(NACK.SEALED_TOO_LARGE, `sealed[${i}] is ${op.sealed[i]!.length} base64 chars; limit ${LIMITS.maxSealedB64}`);
      }
    }
    const digest = opDigest(op);
    const known = this.dedupe.get(rid);
    if (known) {
      if (known.digest !== digest) return nack(NACK.RID_CONFLICT, `rid ${rid} was already used for a different op`);
      if (known.state === 'done') return Promise.resolve(ack(rid, known.seq, known.tsNs));
      return new Promise((resolve) => {
        known.waiters.push((seq, ts) => resolve(ack(rid, seq, ts)));
        known.failers.push((e) => resolve({ t: 'nack', rid, code: NACK.JOURNAL_FAILED, message: e.message }));
      });
    }
    if (this.intake.length + this.journal.inFlight >= LIMITS.maxInFlight) {
      return nack(NACK.BUSY, `${LIMITS.maxInFlight} ops already await the journal; retry with the same rid`);
    }
    return new Promise((resolve) => {
      const entry: PendingEntry = {
        state: 'pending',
        digest,
        waiters: [(seq, ts) => resolve(ack(rid, seq, ts))],
        failers: [(e) => resolve({ t: 'nack', rid, code: NACK.JOURNAL_FAILED, message: e.message })],
      };
      this.dedupe.setPending(rid, entry);
      this.intake.push({ rid, op, digest, entry });
      this.accepted++;
      if (OP_TRACE) traceOp(this.log, 'seq-intake', { rid });
      this.flushScheduled ??= setImmediate(() => this.flush());
    });
  }

  /** Appends one intake group; schedules the next if more are waiting. */
  private flush(): void {
    this.flushScheduled = null;
    if (this.failed) return;
    const group = this.intake.splice(0, LIMITS.maxGroup);
    const t0 = performance.now();
    let left = group.length;
    const done = (): void => {
      if (--left === 0) this.observer?.groupCommitted(group.length, (performance.now() - t0) / 1000);
    };
    const close = this.jobs.canClose();
    group.forEach((item, i) => {
      const seq = this.journal.nextSeq;
      const batchEnd = close && i === group.length - 1;
      if (batchEnd) this.jobs.closed(seq);
      this.append({ seq, tsNs: this.clock.next(), rid: item.rid, digest: item.digest, batchEnd, op: item.op }, item, done);
    });
    if (this.intake.length > 0) this.flushScheduled = setImmediate(() => this.flush());
  }

  /** Journals rec (an op from intake, or a job-end record with no intake item). */
  private append(rec: OpRecord, item: Intake | null, done?: () => void): void {
    const seq = rec.seq;
    // The record carries its seq, so assignment must match the journal's.
    void this.journal.append(encodeRecord(rec)).then(
      (got) => {
        if (got !== seq) throw new Error(`journal gave seq ${got}, expected ${seq}`);
        this.onDurableRecord(rec, item?.entry ?? null);
        done?.();
      },
    ).catch((e: unknown) => this.onJournalFailure(e, item));
  }

  private notifyScheduled: NodeJS.Immediate | null = null;

  private onDurableRecord(rec: OpRecord, entry: PendingEntry | null): void {
    if (OP_TRACE && entry) traceOp(this.log, 'seq-durable', { rid: rec.rid, seq: rec.seq.toString() });
    this.recent.set(rec.seq, rec);
    if (this.recent.size > LIMITS.recentOps) {
      const oldest = this.recent.keys().next();
      if (!oldest.done) this.recent.delete(oldest.value);
    }
    if (entry) {
      this.dedupe.setDone(rec.rid, rec.seq, rec.tsNs, rec.digest);
      for (const w of entry.waiters) w(rec.seq, rec.tsNs);
    }
    this.notifyScheduled ??= setImmediate(() => {
      this.notifyScheduled = null;
      for (const fn of this.listeners) fn();
    });
  }

  private onJournalFailure(e: unknown, item: Intake | null): void {
    const err = e instanceof Error ? e : new Error(String(e));
    if (!this.failed) {
      this.failed = err;
      this.log.fatal({ err: err.message }, 'journal write failed: refusing all further ops');
    }
    if (item) {
      this.dedupe.dropPending(item.rid);
      for (const f of item.entry.failers) f(err);
    }
    // Anything still in intake can never be journaled in order now.
    for (const rest of this.intake.splice(0)) {
      this.dedupe.dropPending(rest.rid);
      for (const f of rest.entry.failers) f(err);
    }
  }

  /** The first journal failure, if any (the process should exit and be restarted). */
  get failure(): Error | null {
    return this.failed;
  }

  /** Stops taking ops, lets queued ones reach the journal, and closes it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.intake.length > 0 || this.flushScheduled) {
      await new Promise((r) => setImmediate(r));
    }
    if (this.notifyScheduled) clearImmediate(this.notifyScheduled);
    this.notifyScheduled = null;
    await this.journal.close();
  }
}

function ack(rid: string, seq: bigint, tsNs: bigint): AckFrame {
  return { t: 'ack', rid, seq: seq.toString(), ts_ns: tsNs.toString() };
}
