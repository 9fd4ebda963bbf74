// The spec's margin health tiers (States, "Margin health tiers") by margin ratio = equity / maintenance,
// compared exactly by cross-multiplication (no division, no floats). Bands, each closed at its top:
//   Healthy  r > 150%      Warning150  120% < r <= 150%     Critical120  110% < r <= 120%
//   T1  100% <= r <= 110%  T2  80% < r < 100%               T3  r <= 80%
// (the spec says "below 100% triggers liquidation" and "T3 at or below 80%": so exactly 100% is still T1.)
import type { MarginHealthTier } from '../events';

export type HealthTier = MarginHealthTier;

/** Tiers from best to worst. */
export const TIERS_BY_SEVERITY: readonly HealthTier[] = ['Healthy', 'Warning150', 'Critical120', 'T1', 'T2', 'T3'];

/** A ratio above this (percent) ends a liquidation: 120% plus the spec's 10% hysteresis. */
export const RECOVERY_PERCENT = 130n;

export function severity(t: HealthTier): number {
  return TIERS_BY_SEVERITY.indexOf(t);
}

/** The worse of two tiers. */
export function worse(a: HealthTier, b: HealthTier): HealthTier {
  return severity(a) >= severity(b) ? a : b;
}

/** The tier of equity / maintenance (micro-USDC both). No maintenance requirement (flat) is Healthy. */
export function tierOf(equityMicro: bigint, maintenanceMicro: bigint): HealthTier {
  if (maintenanceMicro <= 0n) return 'Healthy';
  // equity × 100 compared with p × maintenance; no inner closure: run through tsx, each call would
  // wrap a new one in esbuild's __name (a defineProperty), most of this function's time in the
  // gateway's risk ticks
  const m = maintenanceMicro;
  const e = equityMicro * 100n;
  if (e > 150n * m) return 'Healthy';
  if (e > 120n * m) return 'Warning150';
  if (e > 110n * m) return 'Critical120';
  if (e >= 100n * m) return 'T1';
  if (e > 80n * m) return 'T2';
  return 'T3';
}

/** True when the ratio is above the recovery threshold (130%). */
export function recovered(equityMicro: bigint, maintenanceMicro: bigint): boolean {
  return maintenanceMicro <= 0n || equityMicro * 100n > RECOVERY_PERCENT * maintenanceMicro;
}
