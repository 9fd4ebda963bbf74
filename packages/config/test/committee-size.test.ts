import { describe, it, expect } from 'vitest';
import { checkCommitteeSize, MAX_COMMITTEE } from '../src';

describe('checkCommitteeSize', () => {
  it('accepts committees with t < n/2 up to the sequencer limit', () => {
    for (const [n, t] of [[3, 1], [5, 2], [7, 3], [9, 4], [MAX_COMMITTEE, 31]]) expect(() => checkCommitteeSize(n!, t!)).not.toThrow();
  });

  it('refuses a threshold that multiplication cannot reduce, with the reason', () => {
    expect(() => checkCommitteeSize(4, 2)).toThrow(/t=2 must satisfy t < n\/2 \(n=4\)/);
    expect(() => checkCommitteeSize(5, 3)).toThrow(/t < n\/2/);
  });

  it('refuses sizes that are not integers, too small, or above the sequencer limit', () => {
    expect(() => checkCommitteeSize(2, 1)).toThrow(/n >= 3/);
    expect(() => checkCommitteeSize(5, 0)).toThrow(/t >= 1/);
    expect(() => checkCommitteeSize(5.5, 2)).toThrow(/integers/);
    expect(() => checkCommitteeSize(MAX_COMMITTEE + 1, 2)).toThrow(`above ${MAX_COMMITTEE}`);
  });
});
