// The reserve's capacity: cost per op from the engine's consumption cursors, ops covered, and the
// production state a node reports (docs/decisions/0016-outage-capacity.md).
import { describe, expect, it } from 'vitest';
import type { PartyStatus } from '@tenebra/mpc';
import { productionQuorum } from '@tenebra/mpc';
import { CapacityTracker, consumed, opsCovered, type KindCounts } from '../src/capacity';

const k = (bits: number, lex4: number, prod4: number, triples: number): KindCounts => ({ bits, lex4, prod4, triples });

/** The fields of a status the tracker reads. */
function status(alive: number[], reserve: KindCounts, cursor = k(0, 0, 0, 0)): PartyStatus {
  return {
    alive,
    reserve: { bits: reserve.bits, nibbles: reserve.bits / 4, lex4: reserve.lex4, prod4: reserve.prod4, triples: reserve.triples, cursor: { nibbles: cursor.bits / 4, lex4: cursor.lex4, prod4: cursor.prod4, triples: cursor.triples } },
  } as unknown as PartyStatus;
}

const targets = k(40_000, 3_400, 1_000, 2_000);

describe('capacity', () => {
  it('reads the cursors in bits (4 per nibble)', () => {
    expect(consumed(status([1], k(0, 0, 0, 0), k(400, 30, 2, 1)))).toEqual(k(400, 30, 2, 1));
  });

  it('ops covered: the scarcest kind decides; kinds an op never uses do not', () => {
    expect(opsCovered(k(40_000, 3_400, 1_000, 0), k(320, 27, 2, 0))).toBe(125); // 40,000 / 320 = 125, 3,400 / 27 = 125.9
    expect(opsCovered(k(40_000, 270, 1_000, 0), k(320, 27, 2, 0))).toBe(10);
    expect(opsCovered(k(1, 1, 1, 1), k(0, 0, 0, 0))).toBe(Infinity);
  });

  it('unknown cost before any job consumed; the first job sets it; cancels (no consumption) leave it', () => {
    const c = new CapacityTracker(5);
    expect(c.read(status([1, 2, 3, 4, 5], targets), targets)).toEqual({ production: 'idle', exhausted: false, costPerOp: null, opsLeft: null });
    c.jobDone(k(0, 0, 0, 0), k(0, 0, 0, 0), 3);
    expect(c.read(status([1, 2, 3, 4, 5], targets), targets).costPerOp).toBeNull();
    c.jobDone(k(0, 0, 0, 0), k(640, 54, 4, 0), 2);
    const r = c.read(status([1, 2, 3], k(32_000, 2_700, 800, 2_000)), targets);
    expect(r.costPerOp).toEqual(k(320, 27, 2, 0));
    expect(r.opsLeft).toBe(100);
    expect(r.production).toBe('stopped'); // 3 of 5 alive: nothing can be made
  });

  it('starts from a prior (the per-order estimate) and moves towards what jobs consume', () => {
    const c = new CapacityTracker(5, false, k(360, 30, 2, 1));
    const st = status([1, 2, 3], k(7_200, 3_000, 1_000, 100));
    expect(c.read(st, targets)).toMatchObject({ opsLeft: 20, production: 'stopped' }); // 7,200 / 360
    for (let i = 0; i < 200; i++) c.jobDone(k(0, 0, 0, 0), k(120, 10, 1, 0), 1);
    const r = c.read(st, targets);
    expect(r.costPerOp!.bits).toBeGreaterThan(120);
    expect(r.costPerOp!.bits).toBeLessThan(130);
    expect(r.opsLeft).toBeGreaterThan(55);
  });

  it('moves the average towards newer jobs, more for jobs of more ops', () => {
    const one = new CapacityTracker(5);
    one.jobDone(k(0, 0, 0, 0), k(300, 0, 0, 0), 1);
    one.jobDone(k(300, 0, 0, 0), k(700, 0, 0, 0), 1); // 400 per op
    const many = new CapacityTracker(5);
    many.jobDone(k(0, 0, 0, 0), k(300, 0, 0, 0), 1);
    many.jobDone(k(300, 0, 0, 0), k(300 + 400 * 50, 0, 0, 0), 50);
    const a = one.read(undefined, targets).costPerOp!.bits;
    const b = many.read(undefined, targets).costPerOp!.bits;
    expect(a).toBeGreaterThan(300);
    expect(b).toBeGreaterThan(a);
    expect(b).toBeLessThan(400);
  });

  it('production: running below target with all n up, idle at target, stopped with one down; dealer mode never stops', () => {
    const c = new CapacityTracker(5);
    expect(c.read(status([1, 2, 3, 4, 5], k(10_000, 3_400, 1_000, 2_000)), targets).production).toBe('running');
    expect(c.read(status([1, 2, 3, 4, 5], targets), targets).production).toBe('idle');
    expect(c.read(status([1, 2, 3, 4], targets), targets).production).toBe('stopped');
    expect(new CapacityTracker(5, true).read(status([1, 2, 3], targets), targets).production).toBe('idle');
  });

  it('a committee of 7 with t = 2 still produces with two down (ADR 0017), not with three', () => {
    expect(productionQuorum(5, 2)).toBe(5);
    expect(productionQuorum(7, 2)).toBe(5);
    expect(productionQuorum(7, 3)).toBe(7);
    const c = new CapacityTracker(productionQuorum(7, 2));
    expect(c.read(status([1, 2, 4, 5, 7], k(10_000, 3_400, 1_000, 2_000)), targets).production).toBe('running');
    expect(c.read(status([1, 2, 4, 5], targets), targets).production).toBe('stopped');
  });

  it('exhausted from a failed attempt until the next completed job', () => {
    const c = new CapacityTracker(5);
    c.markExhausted();
    expect(c.read(status([1, 2, 3], k(100, 0, 0, 0)), targets).exhausted).toBe(true);
    c.jobDone(k(0, 0, 0, 0), k(0, 0, 0, 0), 1);
    expect(c.exhausted).toBe(false);
  });
});
