// The insurance fund (spec: "Backstop tier 1"): absorbs a liquidation deficit up to its balance.
// Funded by a share of the venue's net fee income (default 10%: clearing's fee total, read, never
// written, so the fee logic needs no hook), plus the rounding residual of funding (payers round up,
// receivers down). Persisted in the meta table; every change runs inside the caller's transaction.
//
// Not implemented (docs/risk.md): auto-deleveraging, socialized loss and the market halt of backstop
// tiers 2 and 3. A deficit the fund cannot cover is recorded as `uncovered` and logged as an error.
import type { GatewayDb } from '../store/db';
import { big, str } from '../store/records';

const KEY = 'risk:insurance_fund';

interface FundRec {
  /** funding rounding residuals and other direct credits, micro-USDC */
  credited: string;
  /** deficits absorbed, micro-USDC */
  absorbed: string;
  /** deficits nothing covered (ADL / socialized loss are not implemented), micro-USDC */
  uncovered: string;
}

export interface FundState {
  /** micro-USDC available now */
  balance: bigint;
  fromFees: bigint;
  credited: bigint;
  absorbed: bigint;
  uncovered: bigint;
}

export class InsuranceFund {
  constructor(
    private readonly db: GatewayDb,
    /** net venue fee income so far, micro-USDC (clearing's total) */
    private readonly venueFees: () => bigint,
    /** share of the fee income that funds the insurance fund, basis points */
    private readonly feeShareBps: bigint,
  ) {}

  private rec(): FundRec {
    return (this.db.meta.get(KEY) as FundRec | undefined) ?? { credited: '0', absorbed: '0', uncovered: '0' };
  }

  state(): FundState {
    const r = this.rec();
    const fees = this.venueFees();
    const fromFees = fees > 0n ? (fees * this.feeShareBps) / 10_000n : 0n;
    const balance = fromFees + big(r.credited) - big(r.absorbed);
    return { balance: balance > 0n ? balance : 0n, fromFees, credited: big(r.credited), absorbed: big(r.absorbed), uncovered: big(r.uncovered) };
  }

  /** Adds to the fund (inside a transaction); a negative amount takes from it. */
  credit(micro: bigint): void {
    if (micro === 0n) return;
    const r = this.rec();
    this.db.meta.putSync(KEY, { ...r, credited: str(big(r.credited) + micro) });
  }

  /** Absorbs a deficit up to the balance (inside a transaction); returns what stays uncovered. */
  absorb(deficit: bigint): bigint {
    if (deficit <= 0n) return 0n;
    const take = deficit < this.state().balance ? deficit : this.state().balance;
    const r = this.rec();
    const uncovered = deficit - take;
    this.db.meta.putSync(KEY, { ...r, absorbed: str(big(r.absorbed) + take), uncovered: str(big(r.uncovered) + uncovered) });
    return uncovered;
  }
}
