// The insurance fund (spec: "Backstop tier 1"): absorbs a liquidation deficit up to its balance.
// Funded by a share of the venue's net fee income (default 10%: clearing's fee total, read, never
// written, so the fee logic needs no hook), plus the rounding residual of funding (payers round up,
// receivers down) and of auto-deleveraging. It takes on liquidation deficits and funding payments a
// margin could not cover alike (absorb). Persisted in the meta table; every change runs inside the caller's transaction.
//
// What it cannot absorb is socialized (tier 2, deleveraging.ts); what that cannot cover either is
// recorded here as `uncovered`, and the market is halted (tier 3, monitor.ts).
import type { GatewayDb } from '../store/db';
import { big, str } from '../store/records';

const KEY = 'risk:insurance_fund';

interface FundRec {
  /** funding rounding residuals and other direct credits, micro-USDC */
  credited: string;
  /** deficits absorbed, micro-USDC */
  absorbed: string;
  /** deficits neither the fund nor a socialized loss covered (each halted its market), micro-USDC */
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

  /**
   * Adds to the fund (inside a transaction). Never negative: taking from it is absorb(), which stops
   * at the balance and hands the rest to the backstop; a negative credit would drive the balance
   * below 0, where state() shows 0, i.e. money paid out that nobody recorded.
   */
  credit(micro: bigint): void {
    if (micro < 0n) throw new RangeError(`internal: negative insurance fund credit ${micro}`);
    if (micro === 0n) return;
    const r = this.rec();
    this.db.meta.putSync(KEY, { ...r, credited: str(big(r.credited) + micro) });
  }

  /** Absorbs a deficit up to the balance (inside a transaction); returns what it could not absorb. */
  absorb(deficit: bigint): bigint {
    if (deficit <= 0n) return 0n;
    const balance = this.state().balance;
    const take = deficit < balance ? deficit : balance;
    if (take > 0n) {
      const r = this.rec();
      this.db.meta.putSync(KEY, { ...r, absorbed: str(big(r.absorbed) + take) });
    }
    return deficit - take;
  }

  /** Records a deficit nothing covered (inside a transaction). */
  recordUncovered(micro: bigint): void {
    if (micro <= 0n) return;
    const r = this.rec();
    this.db.meta.putSync(KEY, { ...r, uncovered: str(big(r.uncovered) + micro) });
  }
}
