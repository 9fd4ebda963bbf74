import { describe, expect, it } from 'vitest';
import { JobBoundaries } from '../src/job-boundaries';

describe('job boundaries', () => {
  it("'intake' closes every group and ignores the committee's progress", () => {
    const j = new JobBoundaries(0n, 'intake');
    expect(j.policy).toBe('intake');
    j.closed(3n);
    expect(j.canClose()).toBe(true); // nothing reported taken, still closes
    expect(j.report(2n)).toBe(true); // progress is still tracked (stats)
    expect(j.canClose()).toBe(true);
  });

  it("'progress' closes the open job only once the committee has taken every job closed before it", () => {
    const j = new JobBoundaries(0n);
    expect(j.policy).toBe('progress'); // the default (DEFAULT_JOB_BOUNDARIES)
    expect(j.canClose()).toBe(true); // idle, nothing closed: the first op ends its own job
    j.closed(1n);
    expect(j.canClose()).toBe(false); // job 1 not taken: later ops gather
    expect(j.report(1n)).toBe(true);
    expect(j.canClose()).toBe(true);
    j.closed(5n);
    j.closed(4n); // an older seq never moves the boundary back
    expect(j.lastBoundary).toBe(5n);
    expect(j.report(3n)).toBe(true); // a node cut 256 ops inside job 2-5: not yet the whole job
    expect(j.canClose()).toBe(false);
    expect(j.report(3n)).toBe(false); // repeated or stale reports change nothing
    expect(j.report(2n)).toBe(false);
    expect(j.report(5n)).toBe(true);
    expect(j.canClose()).toBe(true);
  });

  it("'progress' after a restart: the journal's last boundary, nothing taken until a node reports", () => {
    const j = new JobBoundaries(7n, 'progress');
    expect(j.committeeTaken).toBe(0n);
    expect(j.canClose()).toBe(false); // ops arriving before the first report gather
    j.report(7n); // a feed re-sends its last report on reconnect
    expect(j.canClose()).toBe(true);
  });
});
