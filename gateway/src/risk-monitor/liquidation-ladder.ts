// The spec's liquidation ladder (States, "Liquidation ladder"): tranches T1 / T2 / T3 move 10% / 30% /
// 60% of the ORIGINAL size (cumulative 10 / 40 / 100%) from the position to the liquidation vault at
// the mark; each requires the previous one; a pause of 2 s / 3 s / 5 s follows each tranche before
// the ratio is looked at again. Pure functions on stored records; the monitor runs them in one
// transaction with the vault and the insurance fund.
//
// Accounting of a tranche (isolated margin): the transferred part is closed at the mark; its PnL is
// realised INTO the position's margin (the collateral stays with the position, so the smaller
// position is better covered: that is what makes a partial liquidation restore the ratio). When the
// position reaches 0 the margin left goes back to the account's balance, as a close by a fill does.
// A margin that would turn negative is a deficit: the position keeps 0 and the deficit goes to the
// insurance fund (insurance-fund.ts). The vault takes the size at the mark on the same side, so the
// market's open interest is unchanged and the vault starts at zero PnL.
import type { InstrumentSpec } from '@tenebra/config';
import { closePart } from '../positions/reduce';
import { big, str, type AccountRec, type LadderState, type PositionRec } from '../store/records';
import { severity, type HealthTier } from './health-tiers';

/** The account id the liquidation vault's positions are stored under (not a wallet address, so no user can have it). */
export const LIQUIDATION_VAULT_ID = 'liquidation-vault';

export interface Tranche {
  /** the tier the position must be in (or worse) for the tranche to fire */
  tier: HealthTier;
  /** cumulative percent of the original size transferred once this tranche is done */
  cumulativePercent: bigint;
  /** pause after it (ms) */
  pauseMs: number;
}

export const TRANCHES: readonly Tranche[] = [
  { tier: 'T1', cumulativePercent: 10n, pauseMs: 2_000 },
  { tier: 'T2', cumulativePercent: 40n, pauseMs: 3_000 },
  { tier: 'T3', cumulativePercent: 100n, pauseMs: 5_000 },
];

/** Index (0..2) of the tranche due now for a position in `tier`, or null (none due, ladder paused or finished). */
export function dueTranche(ladder: LadderState | null | undefined, tier: HealthTier, nowMs: number): number | null {
  const done = ladder?.done ?? 0;
  if (done >= TRANCHES.length) return null;
  if (ladder && nowMs < ladder.resume_at_ms) return null;
  return severity(tier) >= severity(TRANCHES[done]!.tier) ? done : null;
}

/**
 * Steps tranche i transfers: up to ceil(original × cumulative%) less what was already transferred
 * (rounded up so a small position is still de-risked), never more than the position holds; the
 * last tranche takes everything left.
 */
export function trancheSteps(ladder: LadderState | null | undefined, i: number, currentAbs: bigint): bigint {
  if (i === TRANCHES.length - 1) return currentAbs;
  const original = ladder ? big(ladder.original_steps) : currentAbs;
  const transferred = ladder ? big(ladder.transferred_steps) : 0n;
  const target = (original * TRANCHES[i]!.cumulativePercent + 99n) / 100n;
  const want = target - transferred;
  if (want <= 0n) return 0n;
  return want < currentAbs ? want : currentAbs;
}

export interface TrancheResult {
  position: PositionRec;
  vault: PositionRec;
  account: AccountRec;
  steps: bigint;
  /** realised PnL of the transferred part (micro-USDC, before any deficit cap) */
  pnlMicro: bigint;
  /** loss beyond the position's collateral (micro-USDC, >= 0) */
  deficitMicro: bigint;
}

/** Applies tranche i at markTicks to copies of the records and returns them (nothing is written here). */
export function applyTranche(
  pos: PositionRec, vault: PositionRec, acct: AccountRec, inst: InstrumentSpec, i: number, markTicks: bigint, nowMs: number, nowNs: bigint,
): TrancheResult {
  const p = { ...pos };
  const a = { ...acct };
  const size = big(p.size_steps);
  const dir = size > 0n ? 1n : -1n;
  const absSize = size * dir;
  const ladder: LadderState = p.liquidation ?? {
    original_steps: str(absSize), side: dir > 0n ? 'long' : 'short', done: 0, transferred_steps: '0', resume_at_ms: 0,
  };
  const steps = trancheSteps(ladder, i, absSize);
  // Closed by the rule every close follows (positions/reduce.ts), but the proceeds (the margin's
  // share and the PnL) stay in the position's margin as collateral instead of going to the balance.
  const { pnl, marginOut } = steps > 0n ? closePart(inst, p, steps, markTicks, nowNs) : { pnl: 0n, marginOut: 0n };
  let margin = big(p.margin) + marginOut + pnl;
  let deficit = 0n;
  if (margin < 0n) {
    // the loss beyond the collateral is not the user's (isolated margin): it is the deficit
    deficit = -margin;
    p.realized_pnl = str(big(p.realized_pnl) + deficit);
    margin = 0n;
  }
  if (absSize - steps === 0n) {
    a.balance = str(big(a.balance) + margin); // what is left of the collateral goes home, as on a close
    margin = 0n;
  }
  p.margin = str(margin);
  p.updated_ns = str(nowNs);
  p.liquidation = {
    ...ladder, done: i + 1, transferred_steps: str(big(ladder.transferred_steps) + steps), resume_at_ms: nowMs + TRANCHES[i]!.pauseMs,
  };
  return { position: p, vault: tradeAt(vault, inst, dir * steps, markTicks, nowNs), account: a, steps, pnlMicro: pnl, deficitMicro: deficit };
}

/**
 * The vault's position after taking signedSteps at priceTicks. The vault posts no initial margin:
 * its `margin` is its cash result (realised PnL and funding), which may be negative.
 */
export function tradeAt(pos: PositionRec, inst: InstrumentSpec, signedSteps: bigint, priceTicks: bigint, nowNs: bigint): PositionRec {
  const p = { ...pos };
  let open = signedSteps < 0n ? -signedSteps : signedSteps;
  const dir = signedSteps < 0n ? -1n : 1n;
  const held = big(p.size_steps);
  if (open > 0n && held !== 0n && (held < 0n ? -1n : 1n) !== dir) {
    const absHeld = held < 0n ? -held : held;
    const close = open < absHeld ? open : absHeld;
    // the common close (positions/reduce.ts); the proceeds stay in the vault's margin, its cash result
    const { pnl, marginOut } = closePart(inst, p, close, priceTicks, nowNs);
    p.margin = str(big(p.margin) + marginOut + pnl);
    open -= close;
  }
  p.size_steps = str(big(p.size_steps) + dir * open);
  p.basis_ts = str(big(p.basis_ts) + open * priceTicks);
  p.updated_ns = str(nowNs);
  return p;
}

/** An empty vault position for a symbol. */
export function emptyVaultPosition(symbol: string, nowNs: bigint): PositionRec {
  return {
    user_id: LIQUIDATION_VAULT_ID, symbol, size_steps: '0', basis_ts: '0', margin: '0', realized_pnl: '0', fees_paid: '0', leverage: 1, updated_ns: str(nowNs),
  };
}
