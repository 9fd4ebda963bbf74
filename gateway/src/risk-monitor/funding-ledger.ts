// Funding paid, per 10-minute statistics slot and base asset, for the public statistics' `funding`
// metric (GET /stats/platform/overview and /series, stats/service.ts). "Paid" is what the paying side
// paid (Σ of the negative payments), so it is an aggregate only, like volume. Written in the funding
// transaction (risk-monitor/monitor.ts), read by the statistics; keys sort by slot.
import type { GatewayDb } from '../store/db';
import { SLOT_MS } from '../stats/window';

const PREFIX = 'risk:funding_paid:';
const key = (slot: number): string => `${PREFIX}${String(slot).padStart(12, '0')}`;

/** Adds micro-USDC paid on an asset at atMs (inside a transaction). */
export function recordFundingPaid(db: GatewayDb, atMs: number, asset: string, micro: bigint): void {
  if (micro <= 0n) return;
  const k = key(Math.floor(atMs / SLOT_MS));
  const cur = (db.meta.get(k) as Record<string, string> | undefined) ?? {};
  db.meta.putSync(k, { ...cur, [asset]: (BigInt(cur[asset] ?? '0') + micro).toString() });
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
