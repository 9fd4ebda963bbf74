// Issue 22 (part 1): a share-recovery mask must bind the state it answers for. Helpers answer "as of
// the start of their current job", so under one request nonce a recovering party can get answers
// from helpers at two states S1 and S2 (an expected path: they are grouped by state and the groups
// wait for a new attempt). If the mask depended on the nonce alone, the coalition of the recovering
// party and one helper (t = 2 in all, n = 5) could rebuild s1 + u*f and s2 + u*f under the same
// unknown mask u*f and subtract: s1(0) - s2(0), e.g. the size a partial fill took off a resting order.
// These tests play that coalition on the pure functions, with the exact bytes helpers send.

import { describe, expect, it } from 'vitest';
import * as F from '../src/field';
import { decode, decodeVector, encode, bytesText } from '../src/messages';
import { Prss, dealPrssKeys } from '../src/prss';
import { seededRng } from '../src/preprocessing';
import { answerRecovery } from '../src/recovery';
import { emptyItems, zeroCounts } from '../src/reserve';
import { interpolate, shareSecret } from '../src/shamir';
import type { PartySnapshot } from '../src/state';

const n = 5;
const t = 2;
const keys = dealPrssKeys(n, t, 'recovery-mask');
const prss = [...Array(n).keys()].map((i) => new Prss(n, t, i + 1, keys[i]!));

/** Sizes of three resting orders; between S1 and S2 a partial fill takes 40 off the first. */
const S1 = [100n, 250n, 7n];
const S2 = [60n, 250n, 7n];
const trueDiff = S1.map((x, i) => F.sub(x, S2[i]!));

function snapshots(values: bigint[], finished: string[], seed: string): PartySnapshot[] {
  const sh = shareSecret(values, n, t, seededRng(seed));
  return sh.map((mine) => ({
    n, t, L: 0, kappa: 0, mode: 'test', keys: [],
    store: [['book/size', mine.slice()]],
    pub: [['book/count', '3']],
    cursor: zeroCounts(),
    items: emptyItems(),
    finished,
    prep: { resolved: 0, committed: 0 },
  }));
}
const atS1 = snapshots(S1, ['job-7'], 's1');
const atS2 = snapshots(S2, ['job-7', 'job-8'], 's2');

/** What helper `j` sends to `to` for `nonce` at state `snap`: the masked values and its meta, from the wire bytes. */
function answer(j: number, to: number, nonce: string, snap: PartySnapshot): { values: bigint[]; stateId: string } {
  const msgs = answerRecovery(prss[j - 1]!, to, nonce, snap, undefined, (m) => encode({ ...m, prepCommitted: 0, prepNext: 0 }));
  const envs = msgs.map(decode);
  const meta = JSON.parse(bytesText(envs[0]!.extra)) as { stateId: string };
  return { values: envs.flatMap((e) => decodeVector(e.vectors[0]!)), stateId: meta.stateId };
}

/** The coalition's estimate of s1(0) - s2(0): the values at 0 of two degree-t polynomials through its points. */
function estimate(pts1: [number, bigint[]][], pts2: [number, bigint[]][]): bigint[] {
  const g1 = interpolate(pts1.map(([x]) => x), pts1.map(([, v]) => v), 0);
  const g2 = interpolate(pts2.map(([x]) => x), pts2.map(([, v]) => v), 0);
  return g1.map((x, i) => F.sub(x, g2[i]!));
}

describe('share recovery: masks bind the state answered at (issue 22)', () => {
  it('recovery still gives the recovering party its own share, from any t+1 helpers at one state', () => {
    for (const helpers of [[2, 3, 4], [3, 4, 5], [2, 4, 5]]) {
      const got = interpolate(helpers, helpers.map((j) => answer(j, 1, 'n0', atS1[j - 1]!).values), 1);
      expect(got).toEqual(atS1[0]!.store[0]![1]);
    }
  });

  it('helpers at one state agree on the state id; the two states have different ids', () => {
    const ids1 = new Set([2, 3, 4, 5].map((j) => answer(j, 1, 'n0', atS1[j - 1]!).stateId));
    const ids2 = new Set([2, 3, 4, 5].map((j) => answer(j, 1, 'n0', atS2[j - 1]!).stateId));
    expect(ids1.size).toBe(1);
    expect(ids2.size).toBe(1);
    expect([...ids1][0]).not.toBe([...ids2][0]);
  });

  it('a helper asked twice at one state sends the same bytes (a retry gives nothing new)', () => {
    expect(answer(3, 1, 'n0', atS1[2]!).values).toEqual(answer(3, 1, 'n0', atS1[2]!).values);
  });

  // Party 1 asks without having lost its memory (helpers cannot tell), so it holds s1(1) and s2(1);
  // party 2 colludes (its shares, its PRSS keys, so its own masked answer at either state). Each honest
  // helper answers once: 3 at S1, 4 at S2 (its job finished in between). A mask vanishes at point 1,
  // so 1's own share is a point of both masked polynomials.
  it('the recovering party and one helper cannot compute the difference from answers at two states (honest helpers answer once)', () => {
    for (let trial = 0; trial < 20; trial++) {
      const nonce = `req-${trial}`;
      const est = estimate(
        [[1, atS1[0]!.store[0]![1]], [2, answer(2, 1, nonce, atS1[1]!).values], [3, answer(3, 1, nonce, atS1[2]!).values]],
        [[1, atS2[0]!.store[0]![1]], [2, answer(2, 1, nonce, atS2[1]!).values], [4, answer(4, 1, nonce, atS2[3]!).values]],
      );
      // with a nonce-only mask est equals trueDiff at every index (the 40 taken off order 0 included)
      for (let i = 0; i < S1.length; i++) expect(est[i]).not.toBe(trueDiff[i]);
    }
  });

  // A memory-less recovering party 1, party 2 colluding; helper 3 answers at S1, restarts (so it
  // forgets which nonces it answered) and answers the same nonce again at S2, beside 4 (S1) and 5 (S2).
  it('nor when an honest helper answers the same nonce again at a later state (after a restart)', () => {
    for (let trial = 0; trial < 20; trial++) {
      const nonce = `req-${trial}`;
      const est = estimate(
        [[2, answer(2, 1, nonce, atS1[1]!).values], [3, answer(3, 1, nonce, atS1[2]!).values], [4, answer(4, 1, nonce, atS1[3]!).values]],
        [[2, answer(2, 1, nonce, atS2[1]!).values], [3, answer(3, 1, nonce, atS2[2]!).values], [5, answer(5, 1, nonce, atS2[4]!).values]],
      );
      for (let i = 0; i < S1.length; i++) expect(est[i]).not.toBe(trueDiff[i]);
    }
  });

  it('the error left in the coalition\'s estimate looks uniform: distinct across indices and requests', () => {
    const seen = new Set<bigint>();
    for (let trial = 0; trial < 10; trial++) {
      const nonce = `other-${trial}`;
      const est = estimate(
        [[1, atS1[0]!.store[0]![1]], [2, answer(2, 1, nonce, atS1[1]!).values], [3, answer(3, 1, nonce, atS1[2]!).values]],
        [[1, atS2[0]!.store[0]![1]], [2, answer(2, 1, nonce, atS2[1]!).values], [4, answer(4, 1, nonce, atS2[3]!).values]],
      );
      for (let i = 0; i < S1.length; i++) seen.add(F.sub(est[i]!, trueDiff[i]!));
    }
    expect(seen.size).toBe(30);
  });
});
