import { describe, expect, it } from 'vitest';
import { cluster } from './helpers';

// stats.productionMs (status: made.productionMs; scripts/src/outage.ts turns it into bits per second
// of production) counts each millisecond of phase-A computation once: it cannot exceed the time the
// phase-A steps held the event loop (every step logs its own wall time as prep-step).

type Stats = { prep: { stats: { productionMs: number; made: { nibbles: number } } } };

describe('preprocessing production time', () => {
  for (const pieces of [false, true]) it(`productionMs is at most the summed wall time of the phase-A steps${pieces ? ' (in pieces: one prep-step per piece)' : ''}`, async () => {
    const c = await cluster({ seed: 21, prep: { targetTriples: 200, targetBits: 4096, batch: 256, pieces } });
    for (const p of c.parties) {
      const id = (p as unknown as { id: number }).id;
      const steps = c.logs.filter((e) => (e as { ev?: string; party?: number }).ev === 'prep-step' && (e as { party?: number }).party === id);
      const wall = steps.reduce((s, e) => s + (e as { ms: number }).ms, 0);
      const { productionMs, made } = (p as unknown as Stats).prep.stats;
      expect(made.nibbles).toBeGreaterThan(0);
      expect(steps.length).toBeGreaterThan(0);
      expect(wall).toBeGreaterThan(5); // enough computation for a double count to show
      // the log rounds each step to 1 us
      expect(productionMs).toBeLessThanOrEqual(wall + 0.001 * steps.length);
      expect(productionMs).toBeGreaterThanOrEqual(wall - 0.001 * steps.length);
    }
  }, 60_000);
});
