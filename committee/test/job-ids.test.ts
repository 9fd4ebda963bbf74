// Committee job ids (`batch:<first>-<last>:<attempt>`): the sequence number they cover and their order.
import { describe, expect, it } from 'vitest';
import { firstAttempt, jobPrecedes, lastSeqOfJob, rollbackJobId } from '../src/batch-attempts';

describe('committee job ids', () => {
  it('give the last sequence number of their batch', () => {
    expect(lastSeqOfJob('batch:5-9:0')).toBe(9n);
    expect(lastSeqOfJob(undefined)).toBe(0n);
    expect(lastSeqOfJob('other')).toBe(0n);
  });

  it('order jobs as every node runs them: batches by sequence, then a batch\'s attempts', () => {
    expect(jobPrecedes('batch:1-4:0', 'batch:5-9:0')).toBe(true);
    expect(jobPrecedes('batch:5-9:0', 'batch:1-4:0')).toBe(false);
    expect(jobPrecedes('batch:5-9:0', 'batch:5-9:1')).toBe(true);
    expect(jobPrecedes('batch:5-9:1', 'batch:5-9:0')).toBe(false);
    expect(jobPrecedes('batch:5-9:0', 'batch:5-9:0')).toBe(false);
    // numerically, not as text; beyond 2^53
    expect(jobPrecedes('batch:9-9:0', 'batch:10-10:0')).toBe(true);
    expect(jobPrecedes('batch:9007199254740993-9007199254740993:0', 'batch:9007199254740992-9007199254740992:0')).toBe(false);
    // ids of another form are never said to come first
    expect(jobPrecedes('bench-1', 'batch:5-9:0')).toBe(false);
    expect(jobPrecedes('batch:1-4:0', 'recovery')).toBe(false);
  });

  it('after an attempt that ran out of preprocessing, the rollback marker says the state is as of the seq before the batch, and which attempt comes next', () => {
    const marker = rollbackJobId(21n, 23n, 2);
    expect(marker).toBe('rollback:21-23:2');
    expect(lastSeqOfJob(marker)).toBe(20n); // not 23: the failed attempt applied nothing
    expect(firstAttempt(21n, 23n, marker)).toBe(3);
    expect(firstAttempt(21n, 23n, 'batch:18-20:0')).toBe(0);
    expect(firstAttempt(24n, 24n, marker)).toBe(0); // another batch
    expect(firstAttempt(21n, 23n, undefined)).toBe(0);
    // every node's order: attempt, its marker, the next attempt, the next batch
    const order = ['batch:21-23:0', 'rollback:21-23:0', 'batch:21-23:1', 'rollback:21-23:1', 'batch:21-23:2', 'batch:24-24:0'];
    for (let i = 0; i < order.length; i++) {
      for (let j = 0; j < order.length; j++) expect(jobPrecedes(order[i]!, order[j]!), `${order[i]} before ${order[j]}`).toBe(i < j);
    }
  });
});
