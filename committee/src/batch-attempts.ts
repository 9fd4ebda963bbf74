// A batch's jobs as every committee node runs them: the job ids (a batch's seq range and attempt,
// the rollback marker after an attempt that ran out of preprocessing), how a batch is cut from the
// pending ops, and the retry policy after an exhausted reserve. committee/src/node.ts and the
// seeded simulation's node (scripts/chaos/sim-node.ts) both run these, so the campaign tests the
// policy the real nodes follow (docs/decisions/0016-outage-capacity.md, "Retries after a commit").
import { PreprocessingExhaustedError, type Party } from '@tenebra/mpc';

/** Pause before retrying a batch whose job ran out of preprocessing. */
export const EXHAUSTED_RETRY_MS = 1_000;
/** Longest a retry waits for a batch committed after the failure once production is possible (see untilProductionPossible). */
export const COMMIT_WAIT_MS = 30_000;

const JOB_ID = /^batch:(\d+)-(\d+):(\d+)$/;
/**
 * A job of no rounds every node runs right after an attempt of batch first-last that ran out of
 * preprocessing. The engine counts a failed job as finished, and every user of the last finished
 * job (the state write before a preprocessing vote, share recovery, a restart) would take the failed
 * attempt's batch as applied; the marker says the state is as of the seq before the batch and which
 * attempt comes next (docs/decisions/0016-outage-capacity.md).
 */
const ROLLBACK_ID = /^rollback:(\d+)-(\d+):(\d+)$/;

/** The marker job after attempt `attempt` of batch first-last ran out of preprocessing. */
export function rollbackJobId(first: bigint, last: bigint, attempt: number): string {
  return `rollback:${first}-${last}:${attempt}`;
}

/** Last sequence number whose ops the state after job `jobId` has applied (0 when none). */
export function lastSeqOfJob(jobId: string | undefined): bigint {
  if (!jobId) return 0n;
  const m = JOB_ID.exec(jobId);
  if (m) return BigInt(m[2]!);
  const r = ROLLBACK_ID.exec(jobId);
  return r ? BigInt(r[1]!) - 1n : 0n;
}

/** The attempt batch first-last starts at after job `lastJob` (past the attempts that ran out). */
export function firstAttempt(first: bigint, last: bigint, lastJob: string | undefined): number {
  const r = lastJob ? ROLLBACK_ID.exec(lastJob) : null;
  return r && BigInt(r[1]!) === first && BigInt(r[2]!) === last ? Number(r[3]) + 1 : 0;
}

/** Where a job id falls in every node's order: its batch's last seq, then 2 x attempt (+1 for the marker after it). */
function jobOrder(id: string): [bigint, number] | null {
  const m = JOB_ID.exec(id);
  if (m) return [BigInt(m[2]!), 2 * Number(m[3])];
  const r = ROLLBACK_ID.exec(id);
  return r ? [BigInt(r[2]!), 2 * Number(r[3]) + 1] : null;
}

/**
 * Whether every node runs job `a` before job `b`: batches in sequence order, a batch's attempts in
 * turn (each failed attempt followed by its rollback marker). Lets the engine tell a node far behind
 * that the shares it waits for are gone.
 */
export function jobPrecedes(a: string, b: string): boolean {
  const oa = jobOrder(a);
  const ob = jobOrder(b);
  if (!oa || !ob) return false;
  return oa[0] < ob[0] || (oa[0] === ob[0] && oa[1] < ob[1]);
}

/**
 * The next batch: up to the sequencer's batch end, at most maxBatch ops (both the same at every
 * node); null while the ops queued end no batch and are fewer than maxBatch. Removed from pending.
 */
export function takeBatch<T extends { batchEnd: boolean }>(pending: T[], maxBatch: number): T[] | null {
  const end = pending.findIndex((op) => op.batchEnd);
  if (end < 0 && pending.length < maxBatch) return null;
  const count = end < 0 ? maxBatch : Math.min(end + 1, maxBatch);
  return pending.splice(0, count);
}

/** What the retry wait reads of its node. */
export interface ProductionView {
  /** 'stopped': fewer nodes alive than production needs; 'idle': the reserve is at its targets */
  production(): 'stopped' | 'running' | 'idle';
  committedBatches(): number;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** the node is stopping (or dead) */
  stopping(): boolean;
}

/**
 * Waits at least EXHAUSTED_RETRY_MS, then until production can run (every node up at n = 2t + 1,
 * productionQuorum otherwise: docs/decisions/0017). A retry before that fails again and adds two
 * jobs a second (attempt and rollback marker): a returning node, which must first recover its
 * shares as of the others' current job, then chased them, fell more than the 8 jobs they keep
 * behind and went stale again (outage test, 2026-11-27). False when the node is stopping.
 *
 * committedAfter (after a failed attempt): also wait until a preprocessing batch is committed past
 * that count. Seeing every node up is a local view that flaps while nodes return (links come up
 * before the returning nodes finish share recovery), so survivors that retried on it alone failed
 * their retries at different attempts (one gave up while another produced inline) and ended in
 * jobs of three different attempt ids, none with t+1 parties (outage test, 2026-12-01). A commit
 * is decided identically everywhere and needs every producing node ready, so the survivors all
 * retry after the same event, with a reserve that holds a fresh batch. Not waited for when
 * production is idle (no batch comes by itself: the retry produces inline), nor for more than
 * COMMIT_WAIT_MS (a node left out of the batches, n >= 2t + 2, ADR 0017, may see no commit for long).
 */
export async function untilProductionPossible(v: ProductionView, committedAfter?: number): Promise<boolean> {
  let possibleSince: number | undefined;
  for (;;) {
    await v.sleep(EXHAUSTED_RETRY_MS);
    if (v.stopping()) return false;
    const production = v.production();
    if (production === 'stopped') {
      possibleSince = undefined;
      continue;
    }
    possibleSince ??= v.now();
    if (committedAfter === undefined || production === 'idle' || v.now() - possibleSince > COMMIT_WAIT_MS ||
      v.committedBatches() > committedAfter) return true;
  }
}

/** What runBatchAttempts needs of its node. */
export interface BatchAttempts<R> {
  /** the engine: its last finished job (where a restart or a recovery resumes) and its marker jobs */
  party: Pick<Party, 'lastFinishedJob' | 'runJob' | 'status'>;
  /** runs one attempt's job under jobId; rejects with PreprocessingExhaustedError when the reserve ran out */
  attempt(jobId: string, attempt: number): Promise<R>;
  /** after a failed attempt: the node's cached books are stale (the job rolled back) */
  invalidate(): void;
  /** after an exhausted attempt and its rollback marker, before the wait */
  exhausted(jobId: string, attempt: number, e: PreprocessingExhaustedError): void;
  /** the retry wait (untilProductionPossible over the node's view) */
  waitForProduction(committedAfter: number): Promise<boolean>;
}

/**
 * Runs batch first-last until an attempt commits and returns that attempt's results; null when the
 * node stops while it waits (the batch stays unapplied, re-fed at the next start). Job ids are
 * identical at every node: every node fails an attempt identically (an exhausted reserve) and
 * retries it under the next id, after the rollback marker. After a restart or a recovery in the
 * middle of an outage, the attempts that ran out are past; the node then waits for production as
 * the others do before it retries (retried before that, its attempt ran out alone, its attempts ran
 * ahead of theirs and it waited for the next attempt's shares for good: seeded chaos seed 114,
 * docs/reliability.md; and after a batch committed past the one its recovery brought, so it joins
 * the survivors' attempt, who also retry on a commit). Any other failure rejects.
 */
export async function runBatchAttempts<R>(first: bigint, last: bigint, b: BatchAttempts<R>): Promise<R | null> {
  const resumeAt = firstAttempt(first, last, b.party.lastFinishedJob());
  if (resumeAt > 0 && !(await b.waitForProduction(b.party.status().preprocessing.committedBatches))) return null;
  for (let attempt = resumeAt; ; attempt++) {
    const jobId = `batch:${first}-${last}:${attempt}`;
    try {
      return await b.attempt(jobId, attempt);
    } catch (e) {
      b.invalidate();
      if (!(e instanceof PreprocessingExhaustedError)) throw e;
      const committedAt = b.party.status().preprocessing.committedBatches;
      // The job rolled back at every node alike; every node marks it with the same job of no rounds.
      await b.party.runJob(rollbackJobId(first, last, attempt), () => Promise.resolve());
      b.exhausted(jobId, attempt, e);
      if (!(await b.waitForProduction(committedAt))) return null;
    }
  }
}
