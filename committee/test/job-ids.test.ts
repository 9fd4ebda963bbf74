// Committee job ids (`batch:<first>-<last>:<attempt>`): the sequence number they cover and their order.
import { describe, expect, it } from 'vitest';
import { jobPrecedes, lastSeqOfJob } from '../src/node';

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
});
