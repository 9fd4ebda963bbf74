// Where the committee's MPC jobs end. The committee runs one job at a time, and a job's cost is
// mostly per round, not per op: a job of one op took about 70 ms under load against 24-26 ms per op
// in jobs of 8 or more, so a backlog is matched far faster in a few large jobs than in many small
// ones. The sequencer is the one place that sees every op in order, so it decides: the open job
// (ops journaled after the last boundary) is closed as soon as the committee has taken every job
// closed before it, which the nodes report (ProgressFrame). While the committee is busy, arriving
// ops gather into the next job; when it is idle, every intake group is closed at once, so an idle
// committee adds no wait. One closed job waits at most, so the committee never idles for a report's
// round trip. The boundary is journaled (batch_end on an op, or a job-end record), so every node
// cuts jobs at the same seqs, also on replay. docs/decisions/0008-job-boundaries.md.
// That is the 'progress' policy, the default since 2026-12-03; the option 'intake' closes every
// intake group (a job is the ops of one event-loop turn) and ignores the reports.

// 'intake': every intake group ends a job (the committee's progress is not consulted);
// 'progress': the open job closes when the committee has taken every job closed before it.
import { DEFAULT_JOB_BOUNDARIES, type JobBoundaryPolicy } from '@tenebra/config';
export type { JobBoundaryPolicy };

/** The sequencer's view of job boundaries and of the committee's progress. */
export class JobBoundaries {
  private lastEnd: bigint;
  private taken = 0n;

  /** lastEnd: seq of the last journaled record that ends a job (0 if none). */
  constructor(lastEnd: bigint, readonly policy: JobBoundaryPolicy = DEFAULT_JOB_BOUNDARIES) {
    this.lastEnd = lastEnd;
  }

  /** Seq of the last record that ends a job (assigned; it may not be durable yet). */
  get lastBoundary(): bigint {
    return this.lastEnd;
  }

  /** Highest seq any node reported taken into a job since this process started. */
  get committeeTaken(): bigint {
    return this.taken;
  }

  /** True when a job closed now would not queue behind another closed job the committee has not taken. */
  canClose(): boolean {
    return this.policy === 'intake' || this.taken >= this.lastEnd;
  }

  /** The record at seq ends a job. */
  closed(seq: bigint): void {
    if (seq > this.lastEnd) this.lastEnd = seq;
  }

  /**
   * A node reports every op up to `taken` in a started job. The fastest node counts: the others
   * follow it through the same jobs, and a node catching up after a restart must not hold the
   * boundaries back. Returns true if the committee's progress moved.
   */
  report(taken: bigint): boolean {
    if (taken <= this.taken) return false;
    this.taken = taken;
    return true;
  }
}
