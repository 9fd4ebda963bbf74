// Per-kind figures of a campaign and the seed-to-kind rule (campaign.ts, the npm test sample).
import type { JobBoundaryPolicy } from '@tenebra/config';
import type { FaultKind } from './sim-run';

export interface KindSummary {
  runs: number;
  failures: number;
  failing: { seed: number; policy: JobBoundaryPolicy }[];
  /** virtual ms from the last fault healing to every node caught up, per passing run */
  recoverMs: number[];
  replays: number;
  replayMismatches: number;
}

/** The fault kind seed S runs: the kinds in turn, so a one-kind replay of S runs the same schedule. */
export function kindOf(seed: number, faults: readonly FaultKind[]): FaultKind {
  return faults[seed % faults.length]!;
}

/** Upper bounds (virtual ms) of the time-to-recover histogram's buckets; the last one is open. */
export const RECOVER_BUCKETS = [1, 10, 100, 1_000, 5_000, 20_000, 60_000] as const;

/** "0-1: 12, 1-10: 3, ..., >60000: 0" over the given times. */
export function histogram(ms: readonly number[]): string {
  const counts = new Array<number>(RECOVER_BUCKETS.length + 1).fill(0);
  for (const v of ms) {
    const k = RECOVER_BUCKETS.findIndex((b) => v < b);
    counts[k < 0 ? RECOVER_BUCKETS.length : k]!++;
  }
  const labels = RECOVER_BUCKETS.map((b, k) => `${k === 0 ? 0 : RECOVER_BUCKETS[k - 1]}-${b}`);
  labels.push(`>=${RECOVER_BUCKETS[RECOVER_BUCKETS.length - 1]}`);
  return labels.map((l, k) => `${l}: ${counts[k]}`).join(', ');
}
