// Persistent state of the hourly taker bonus in the gateway's `bonuses` lmdb table. Accruals are
// written by clearing in the same transaction as the fills they count, and a window is paid in one
// transaction that credits the makers, records the payout and deletes the window's accruals, so a
// restart mid-window loses nothing and a window can never be paid twice.
//
// Keys (w = window index zero-padded, so keys sort by window):
//   C                 last paid window (number); accruals always go to a later window
//   T<w>              open window totals {taker_fees, notional}
//   A<w>\n<user_id>   a maker's open accrual {notional, weighted}
//   W<w>              paid window summary (WindowRec)
//   P<user_id>\n<w>   a maker's payout (PayoutRec)
import type { GatewayDb } from '../store/db';
import { big, str } from '../store/records';
import { hourOf } from './arithmetic';

const WIDTH = 10;
const pad = (w: number): string => String(w).padStart(WIDTH, '0');
export const CLOSED_KEY = 'C';
export const totalsKey = (w: number): string => `T${pad(w)}`;
export const accrualKey = (w: number, userId: string): string => `A${pad(w)}\n${userId}`;
export const windowKey = (w: number): string => `W${pad(w)}`;
export const payoutKey = (userId: string, w: number): string => `P${userId}\n${pad(w)}`;
/** Window index of a T / W key. */
export const windowOfKey = (key: string): number => Number(key.slice(1, 1 + WIDTH));

export interface TotalsRec {
  taker_fees: string;
  notional: string;
}

export interface AccrualRec {
  notional: string;
  weighted: string;
}

export interface WindowRec {
  window: number;
  start_ms: number;
  end_ms: number;
  taker_fees: string;
  notional: string;
  pool: string;
  paid: string;
  remainder: string;
  makers: number;
  paid_at_ms: number;
}

export interface PayoutRec {
  window: number;
  start_ms: number;
  amount: string;
  /** the maker's notional in the window, micro-USDC */
  notional: string;
  /** the window's maker notional, micro-USDC */
  window_notional: string;
  paid_at_ms: number;
}

/** The last paid window, or -1. */
export function lastPaidWindow(db: GatewayDb): number {
  return (db.bonuses.get(CLOSED_KEY) as number | undefined) ?? -1;
}

/**
 * One batch's hourly accruals, kept in memory by clearing's unit of work and written by flush()
 * inside the batch's transaction.
 */
export class HourlyAccrual {
  private readonly totals = new Map<number, { fees: bigint; notional: bigint }>();
  private readonly makers = new Map<string, { w: number; userId: string; notional: bigint; weighted: bigint }>();
  private closed: number | null = null;

  constructor(private readonly db: GatewayDb) {}

  /**
   * The window a fill applied at nowMs counts in: its UTC hour, or the first unpaid window when that
   * hour was already paid (a clock step back), so a paid window never changes.
   */
  windowAt(nowMs: number): number {
    this.closed ??= lastPaidWindow(this.db);
    return Math.max(hourOf(nowMs), this.closed + 1);
  }

  /** Counts one fill: its taker fee in the window, and the maker's notional weighted by its hourly bps. */
  add(w: number, takerFeeMicro: bigint, makerId: string, makerNotionalMicro: bigint, makerHourlyBps: number): void {
    const t = this.totals.get(w) ?? { fees: 0n, notional: 0n };
    t.fees += takerFeeMicro > 0n ? takerFeeMicro : 0n;
    t.notional += makerNotionalMicro;
    this.totals.set(w, t);
    const k = accrualKey(w, makerId);
    const m = this.makers.get(k) ?? { w, userId: makerId, notional: 0n, weighted: 0n };
    m.notional += makerNotionalMicro;
    m.weighted += makerNotionalMicro * BigInt(makerHourlyBps);
    this.makers.set(k, m);
  }

  /** Adds the batch's accruals to the stored ones (call inside the batch's transaction). */
  flush(): void {
    for (const [w, t] of this.totals) {
      const cur = this.db.bonuses.get(totalsKey(w)) as TotalsRec | undefined;
      this.db.bonuses.putSync(totalsKey(w), {
        taker_fees: str(big(cur?.taker_fees ?? '0') + t.fees), notional: str(big(cur?.notional ?? '0') + t.notional),
      } satisfies TotalsRec);
    }
    for (const [k, m] of this.makers) {
      const cur = this.db.bonuses.get(k) as AccrualRec | undefined;
      this.db.bonuses.putSync(k, {
        notional: str(big(cur?.notional ?? '0') + m.notional), weighted: str(big(cur?.weighted ?? '0') + m.weighted),
      } satisfies AccrualRec);
    }
  }
}
