import { describe, it, expect } from 'vitest';
import { parseExposition } from '@tenebra/metrics';
import { buckets, quantileBetween, rate } from '../src/series';

const hist = (counts: number[]) => parseExposition([0.001, 0.01, 0.1, '+Inf'].map((le, i) => `h_bucket{le="${le}"} ${counts[i]}`).join('\n'));

describe('series', () => {
  it('rates count a restarted counter from zero, not as a negative rate', () => {
    const a = parseExposition('c_total 100');
    const b = parseExposition('c_total 150');
    const reset = parseExposition('c_total 4');
    expect(rate(a, b, 2, 'c_total')).toBe(25);
    expect(rate(b, reset, 2, 'c_total')).toBe(2);
    expect(rate(undefined, b, 2, 'c_total')).toBe(0);
  });

  it('quantiles are of the observations between two readings, interpolated in their bucket', () => {
    const before = buckets(hist([10, 10, 10, 10]), 'h');
    // 10 new observations: 4 in (0.001, 0.01], 6 in (0.01, 0.1]
    const after = buckets(hist([10, 14, 20, 20]), 'h');
    expect(quantileBetween(before, after, 0.2)).toBeCloseTo(0.001 + 0.009 * (2 / 4));
    expect(quantileBetween(before, after, 0.7)).toBeCloseTo(0.01 + 0.09 * (3 / 6));
    expect(quantileBetween(before, before, 0.5)).toBeNull();
    // past the last finite bound: that bound
    expect(quantileBetween(before, buckets(hist([10, 10, 10, 12]), 'h'), 0.99)).toBe(0.1);
  });
});
