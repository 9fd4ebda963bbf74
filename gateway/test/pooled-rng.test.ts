// The gateway's Shamir coefficients come from pooledRng (sharing.ts): @tenebra/mpc's cryptoRng
// distribution (127-bit masked CSPRNG words) from the pooled CSPRNG bytes of @tenebra/seal.
import { describe, it, expect } from 'vitest';
import { P, shareSecret, reconstruct } from '@tenebra/mpc';
import { pooledRng } from '../src/sharing';

describe('pooledRng', () => {
  it('gives the asked count of field elements, on both sides of the pool\'s 1 KiB (64-element) direct-read limit', () => {
    for (const count of [0, 1, 8, 64, 65, 200]) {
      const xs = pooledRng(count);
      expect(xs).toHaveLength(count);
      for (const x of xs) {
        expect(typeof x).toBe('bigint');
        expect(x >= 0n && x < P).toBe(true);
      }
    }
  });

  it('spreads over all 127 bits and repeats nothing', () => {
    const xs = pooledRng(4000);
    expect(new Set(xs).size).toBe(xs.length);
    for (const bit of [0n, 63n, 64n, 126n]) {
      const ones = xs.filter((x) => (x >> bit) & 1n).length;
      expect(ones, `bit ${bit}`).toBeGreaterThan(1700);
      expect(ones, `bit ${bit}`).toBeLessThan(2300);
    }
  });

  it('makes shares that reconstruct the secrets from any t+1 parties', () => {
    const secrets = [123n, 0n, P - 1n, 77n];
    const shares = shareSecret(secrets, 5, 2, pooledRng);
    expect(reconstruct([1, 3, 5], [shares[0]!, shares[2]!, shares[4]!], 2)).toEqual(secrets);
    expect(reconstruct([2, 3, 4], [shares[1]!, shares[2]!, shares[3]!], 2)).toEqual(secrets);
  });
});
