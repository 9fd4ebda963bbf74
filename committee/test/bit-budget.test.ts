// The committee's modelled random-bit reserve (ADR 0014): a pure function of stored public state and
// sequenced time, so every node decides the same matching plan.
import { describe, expect, it } from 'vitest';
import { BIT_BUDGET, LEAN_MATCH_OPTIONS, budgetAt, matchOptionsOf, planOf } from '../src/apply';

describe('modelled random-bit reserve', () => {
  it('starts full, refills per second of sequenced time up to the cap, never refills backwards', () => {
    expect(budgetAt(undefined, 123n)).toBe(BIT_BUDGET.capBits);
    const at = { bits: 1_000, tsNs: '5000000000' };
    expect(budgetAt(at, 5_000_000_000n)).toBe(1_000);
    expect(budgetAt(at, 5_500_000_000n)).toBe(1_000 + BIT_BUDGET.bitsPerSecond / 2);
    expect(budgetAt(at, 4_000_000_000n)).toBe(1_000); // an earlier time adds nothing
    expect(budgetAt(at, 5_000_000_000n + 3_600n * 1_000_000_000n)).toBe(BIT_BUDGET.capBits);
    expect(budgetAt({ bits: -30_000, tsNs: '0' }, 1_000_000_000n)).toBe(-30_000 + BIT_BUDGET.bitsPerSecond);
  });

  it('plans: lean below the threshold whatever the size; else one-op jobs speculate', () => {
    expect(planOf(1, BIT_BUDGET.leanBelowBits)).toBe('speculate');
    expect(planOf(2, BIT_BUDGET.leanBelowBits)).toBe('latency');
    expect(planOf(1, BIT_BUDGET.leanBelowBits - 1)).toBe('lean');
    expect(planOf(40, -5)).toBe('lean');
    expect(matchOptionsOf('lean')).toBe(LEAN_MATCH_OPTIONS);
    expect(matchOptionsOf('speculate')).toEqual({ speculate: true });
    expect(matchOptionsOf('latency')).toEqual({});
  });
});
