// Figures from two scrapes of one process: counter rates, and quantiles of a histogram's
// observations between them (as Prometheus's rate() and histogram_quantile() compute them).
import type { Sample } from '@tenebra/metrics';

/** Sum of the samples named `name` whose labels include `match`. */
export function total(samples: readonly Sample[], name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples) {
    if (s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}

/** Whether any sample is named `name` (a series that a process serves only in some states). */
export function has(samples: readonly Sample[], name: string): boolean {
  return samples.some((s) => s.name === name);
}

/** Per-second increase of a counter between two scrapes `seconds` apart; a reset (restart) counts from 0. */
export function rate(prev: readonly Sample[] | undefined, now: readonly Sample[], seconds: number, name: string, match: Record<string, string> = {}): number {
  if (!prev || seconds <= 0) return 0;
  const a = total(prev, name, match);
  const b = total(now, name, match);
  return (b >= a ? b - a : b) / seconds;
}

/** Values of one label over the samples named `name` (e.g. every leakage label). */
export function labelValues(samples: readonly Sample[], name: string, label: string): string[] {
  const out = new Set<string>();
  for (const s of samples) if (s.name === name && s.labels[label] !== undefined) out.add(s.labels[label]!);
  return [...out].sort();
}

/** Cumulative bucket counts of histogram `name` (the `_bucket` series), summed over other labels. */
export function buckets(samples: readonly Sample[], name: string, match: Record<string, string> = {}): { le: number; count: number }[] {
  const byLe = new Map<number, number>();
  for (const s of samples) {
    if (s.name !== `${name}_bucket` || !Object.entries(match).every(([k, v]) => s.labels[k] === v)) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    byLe.set(le, (byLe.get(le) ?? 0) + s.value);
  }
  return [...byLe.entries()].sort((x, y) => x[0] - y[0]).map(([le, count]) => ({ le, count }));
}

/**
 * The q-quantile of the observations made between two bucket readings, interpolated linearly in
 * its bucket (null when none were made; the last finite bound when it falls in +Inf).
 */
export function quantileBetween(prev: { le: number; count: number }[], now: { le: number; count: number }[], q: number): number | null {
  const before = new Map(prev.map((b) => [b.le, b.count]));
  // a reset (fewer observations than before) reads the new counts alone
  const reset = now.some((b) => b.count < (before.get(b.le) ?? 0));
  const delta = now.map((b) => ({ le: b.le, count: b.count - (reset ? 0 : (before.get(b.le) ?? 0)) }));
  const all = delta.at(-1)?.count ?? 0;
  if (all <= 0) return null;
  const rank = q * all;
  let lower = 0;
  let below = 0;
  for (const b of delta) {
    if (b.count >= rank) {
      if (b.le === Infinity) return lower;
      const inBucket = b.count - below;
      return inBucket <= 0 ? b.le : lower + (b.le - lower) * ((rank - below) / inBucket);
    }
    lower = b.le;
    below = b.count;
  }
  return lower;
}
