// When a restarted node gives up on share recovery and resumes from its own persisted state.
import { describe, expect, it } from 'vitest';
import { NO_HELPERS_FALLBACK_MS, RecoveryFallback, UNREACHABLE_FALLBACK_MS, type HelperView } from '../src/recovery-fallback';

const view = (alive: number, ready: number, busy: Record<number, string> = {}): HelperView => ({ alive, ready, needed: 3, busy });

/** Checks once a second from 0 to `until` ms; the first reason given, with its time. */
function run(f: RecoveryFallback, at: (ms: number) => HelperView, until: number): { ms: number; why: string } | null {
  for (let ms = 0; ms <= until; ms += 1_000) {
    const why = f.check(at(ms), ms);
    if (why !== null) return { ms, why };
  }
  return null;
}

describe('recovery fallback (t = 2)', () => {
  it('a killed pair on a slow host: survivors not yet connected are waited for, not given up on after 15 s', () => {
    // the links to the three survivors come up one by one, the last after 40 s; they are ready
    const f = new RecoveryFallback(2, '2');
    const at = (ms: number) => {
      const up = ms < 20_000 ? 1 : ms < 40_000 ? 2 : 4;
      return view(up, up >= 4 ? 3 : up - 1, { 2: 'phase recovering; persisted-seq 2' });
    };
    expect(run(f, at, 90_000)).toBeNull();
  });

  it('a third death: enough helpers connected, too few ready, resumes after 15 s of it', () => {
    const f = new RecoveryFallback(2, '7');
    const r = run(f, (ms) => (ms < 5_000 ? view(1, 1) : view(4, 2, { 3: 'phase recovering; persisted-seq 5', 4: 'phase recovering; persisted-seq 6' })), 60_000);
    expect(r).toEqual({ ms: 5_000 + NO_HELPERS_FALLBACK_MS, why: 'fewer than 3 ready helpers for 15000 ms' });
  });

  it('helpers never reachable: resumes after the longer bound', () => {
    const f = new RecoveryFallback(2, '7');
    expect(run(f, () => view(1, 0), 120_000)?.ms).toBe(UNREACHABLE_FALLBACK_MS);
  });

  it('configured bounds (NodeConfig.recoveryFallback) replace the defaults; bad ones are refused', () => {
    expect(run(new RecoveryFallback(2, '7', { unreachableMs: 20_000 }), () => view(1, 0), 120_000)).toEqual({ ms: 20_000, why: 'fewer than 3 ready helpers for 20000 ms, fewer than 3 even connected for part of it' });
    const f = new RecoveryFallback(2, '7', { noHelpersMs: 4_000 });
    expect(run(f, (ms) => (ms < 5_000 ? view(1, 1) : view(4, 2)), 60_000)).toEqual({ ms: 9_000, why: 'fewer than 3 ready helpers for 4000 ms' });
    expect(run(new RecoveryFallback(2, '7', {}), () => view(1, 0), 120_000)?.ms).toBe(UNREACHABLE_FALLBACK_MS);
    for (const bad of [{ unreachableMs: 0 }, { unreachableMs: 1.5e3 + 0.5 }, { noHelpersMs: -1 }, { noHelpersMs: Number.NaN }, { unreachableMs: 1e9 }, { unreachable: 5_000 }]) {
      expect(() => new RecoveryFallback(2, '7', bad as never), JSON.stringify(bad)).toThrow(RangeError);
    }
  });

  it('the whole committee restarted: t+1 at our seq resume at once; a later seq elsewhere keeps us waiting', () => {
    expect(new RecoveryFallback(2, '9').check(view(2, 0, { 2: 'phase recovering; persisted-seq 9', 3: 'phase recovering; persisted-seq 9' }), 0)).toBe('3 or more recovering nodes persisted at seq 9');
    const f = new RecoveryFallback(2, '9');
    expect(run(f, () => view(4, 0, { 2: 'phase recovering; persisted-seq 12', 3: 'phase recovering; persisted-seq 9' }), 120_000)).toBeNull();
  });

  it('enough ready helpers reset the clocks', () => {
    const f = new RecoveryFallback(2, '1');
    const r = run(f, (ms) => (Math.floor(ms / 10_000) % 2 === 0 ? view(4, 2) : view(4, 3)), 120_000);
    expect(r).toBeNull();
  });
});
