// With boundaryHoldMs (an option, off by default: ADR 0045) a job boundary's export and write wait a
// little after the job while no op is queued:
// on one host the peers still in the job's last round get the CPU first. Anything that needs the
// boundary ends the wait at once: the next op (its job needs the export first), a preprocessing
// vote (its write releases it), stop().
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { NodeConfig } from '@tenebra/config';
import { boundaryHoldMsOf, CommitteeNode, DEFAULT_BOUNDARY_HOLD_MS } from '../src/node';

function rig(holdMs: number) {
  const cfg = { index: 1, n: 5, t: 2, boundaryHoldMs: holdMs, preprocessing: { mode: 'committee', targetBits: 100, targetTriples: 1 } } as unknown as NodeConfig;
  const node = new CommitteeNode(cfg, pino({ level: 'silent' }));
  const inner = node as unknown as Record<string, unknown>;
  inner.running = true;
  inner.applier = { decode: (f: unknown) => f };
  inner.store = { lastSeq: () => 7n, commitSnapshot: async () => undefined };
  inner.party = { lastFinishedJob: () => 'batch:8-8:0', exportStateParts: () => ({}) };
  /** ms until the hold ended */
  const hold = async (): Promise<number> => {
    const t0 = performance.now();
    await (inner.boundaryHold as () => Promise<void>).call(node);
    return performance.now() - t0;
  };
  const enqueue = (seq: bigint): Promise<void> => (inner.enqueue as (f: unknown) => Promise<void>).call(node, { seq });
  const persistStaged = (): Promise<void> => (inner.persistStaged as () => Promise<void>).call(node);
  return { node, inner, hold, enqueue, persistStaged };
}

describe('boundary hold', () => {
  it('waits up to the hold while nothing is queued', async () => {
    const r = rig(60);
    expect(await r.hold()).toBeGreaterThanOrEqual(55);
  });

  it('ends at once when an op arrives', async () => {
    const r = rig(500);
    const held = r.hold();
    setTimeout(() => void r.enqueue(9n), 10);
    expect(await held).toBeLessThan(250);
  });

  it('does not hold when an op is already queued, or with a hold of 0', async () => {
    const r = rig(500);
    void r.enqueue(9n);
    expect(await r.hold()).toBeLessThan(50);
    expect(await rig(0).hold()).toBeLessThan(50);
  });

  it('ends when a preprocessing vote waits for the boundary (its write releases the vote)', async () => {
    const r = rig(500);
    const held = r.hold();
    setTimeout(() => void r.persistStaged(), 10);
    expect(await held).toBeLessThan(250);
  });

  it('ends on stop', async () => {
    const r = rig(500);
    const held = r.hold();
    setTimeout(() => {
      r.inner.running = false;
      (r.inner.endHold as (() => void) | null)?.();
    }, 10);
    expect(await held).toBeLessThan(250);
  });

  it('takes the config, else TENEBRA_BOUNDARY_HOLD_MS, else the default; refuses what is not whole ms from 0 to 1,000', () => {
    expect(boundaryHoldMsOf({}, {})).toBe(DEFAULT_BOUNDARY_HOLD_MS);
    expect(DEFAULT_BOUNDARY_HOLD_MS).toBe(0); // off by default
    expect(boundaryHoldMsOf({}, { TENEBRA_BOUNDARY_HOLD_MS: '20' })).toBe(20);
    expect(boundaryHoldMsOf({}, { TENEBRA_BOUNDARY_HOLD_MS: '0' })).toBe(0);
    expect(boundaryHoldMsOf({ boundaryHoldMs: 7 }, { TENEBRA_BOUNDARY_HOLD_MS: '0' })).toBe(7);
    expect(() => boundaryHoldMsOf({ boundaryHoldMs: -1 }, {})).toThrow(/boundaryHoldMs/);
    expect(() => boundaryHoldMsOf({}, { TENEBRA_BOUNDARY_HOLD_MS: '2.5' })).toThrow(/boundaryHoldMs/);
    expect(() => boundaryHoldMsOf({}, { TENEBRA_BOUNDARY_HOLD_MS: '5000' })).toThrow(/boundaryHoldMs/);
  });
});
