// The shared CLI flag parser's number helpers: the benches that use them refuse a bad value by name
// instead of running with NaN.
import { describe, it, expect } from 'vitest';
import { parseFlags, positiveList, positiveNumber } from '../src/flags';

describe('flag numbers (positiveNumber, positiveList)', () => {
  it('read positive numbers and lists of them', () => {
    expect(positiveNumber('8', 'secs')).toBe(8);
    expect(positiveNumber('0.5', 'secs')).toBe(0.5);
    expect(positiveList('200,500,1000', 'rates')).toEqual([200, 500, 1000]);
    expect(positiveList('7,', 'rates')).toEqual([7]);
  });
  it('refuse zero, negatives, words and empty values, naming the flag', () => {
    for (const bad of ['0', '-3', 'ten', '', ' ', 'Infinity']) expect(() => positiveNumber(bad, 'secs')).toThrow(/--secs must be a positive number/);
    expect(() => positiveList('200,x', 'rates')).toThrow(/--rates must be a positive number, got 'x'/);
    expect(() => positiveList(',', 'rates')).toThrow(/--rates needs at least one number/);
  });
  it('combine with parseFlags: an unknown option is refused, a known one read', () => {
    expect(() => parseFlags(['--rate', '5'], ['rates'])).toThrow(/unknown option --rate/);
    expect(positiveList(parseFlags(['--rates=5,6'], ['rates']).str.get('rates')!, 'rates')).toEqual([5, 6]);
  });
});
