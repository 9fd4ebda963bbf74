// The shielded pool's total, the one public aggregate of the settlement layer: every deposit ever
// credited less every withdrawal ever released.
import type { GatewayDb } from '../store/db';
import { big } from '../store/records';

/** Σ over accounts of deposited − withdrawn, micro-USDC (call inside a transaction for a consistent read). */
export function shieldedPoolTotal(db: GatewayDb): bigint {
  let pool = 0n;
  for (const { value } of db.accounts.getRange()) pool += big(value.deposited) - big(value.withdrawn ?? '0');
  return pool;
}
