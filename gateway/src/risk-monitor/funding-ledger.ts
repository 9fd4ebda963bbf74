// Funding paid, per 10-minute statistics slot and base asset, for the public statistics' `funding`
// metric (GET /stats/platform/overview and /series, stats/service.ts). "Paid" is what the paying side
// paid (Σ of the negative payments), so it is an aggregate only, like volume. Written in the funding
// transaction (risk-monitor/monitor.ts), read by the statistics; keys sort by slot.
//
// Release rule (as the fill ledger's, stats/ledger.ts): what one interval's payers paid is Σ size ×
// mark × rate, and mark and rate are public, so with a single payer it would give that position's
// size. An asset's payments therefore wait in a pending pool until at least `releasePayers` distinct
// accounts have paid into it (default 5), and the pool is then published whole in the slot of the
// accrual that completes it. 1 publishes every accrual at once.
import type { GatewayDb } from '../store/db';
import { SLOT_MS } from '../stats/window';

/** Distinct paying accounts a published funding amount sums at least. */
export const DEFAULT_FUNDING_RELEASE_PAYERS = 5;

const PREFIX = 'risk:funding_paid:';
const key = (slot: number): string => `${PREFIX}${String(slot).padStart(12, '0')}`;
const pendingKey = (asset: string): string => `risk:funding_pending:${asset}`;

/** An asset's funding paid and not yet published: micro-USDC and the distinct payers so far. */
interface PendingFunding {
  micro: string;
  payers: string[];
}

/**
 * Adds micro-USDC paid on an asset at atMs by `payers` (their user ids) to the asset's pending pool,
 * and publishes the pool once `releasePayers` distinct accounts have paid into it (inside a transaction).
 */
export function recordFundingPaid(db: GatewayDb, atMs: number, asset: string, micro: bigint, payers: readonly string[], releasePayers = DEFAULT_FUNDING_RELEASE_PAYERS): void {
  if (micro <= 0n) return;
  const pending = (db.meta.get(pendingKey(asset)) as PendingFunding | undefined) ?? { micro: '0', payers: [] };
  const total = BigInt(pending.micro) + micro;
  const who = [...new Set([...pending.payers, ...payers])];
  if (who.length < releasePayers) {
    db.meta.putSync(pendingKey(asset), { micro: total.toString(), payers: who } satisfies PendingFunding);
    return;
  }
  db.meta.removeSync(pendingKey(asset));
  const k = key(Math.floor(atMs / SLOT_MS));
  const cur = (db.meta.get(k) as Record<string, string> | undefined) ?? {};
  db.meta.putSync(k, { ...cur, [asset]: (BigInt(cur[asset] ?? '0') + total).toString() });
}

/** Funding paid in slots [fromSlot, toSlotExcl): total and per base asset, micro-USDC. */
export function fundingPaidBetween(db: GatewayDb, fromSlot: number, toSlotExcl: number): { total: bigint; perAsset: Map<string, bigint> } {
  const perAsset = new Map<string, bigint>();
  let total = 0n;
  if (toSlotExcl <= fromSlot) return { total, perAsset };
  for (const { value } of db.meta.getRange({ start: key(Math.max(0, fromSlot)), end: key(toSlotExcl) })) {
    for (const [asset, text] of Object.entries(value as Record<string, string>)) {
      const v = BigInt(text);
      perAsset.set(asset, (perAsset.get(asset) ?? 0n) + v);
      total += v;
    }
  }
  return { total, perAsset };
}
