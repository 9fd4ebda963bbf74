// What the gateway persists. Big integers are stored as decimal strings (bigint does not survive
// every encoder); helpers below convert. Money is micro-USDC, prices ticks, sizes steps.
import type { SealedOp } from '@tenebra/wire';
import type { Tier } from '../tiers';

export type Scope = 'trade' | 'read';
export const SCOPES: readonly Scope[] = ['trade', 'read'];

export type OrderStatus = 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELLED' | 'REJECTED';
export type Side = 'buy' | 'sell';
export type TimeInForce = 'GTC' | 'GTT' | 'IOC' | 'FOK';
export type OrderType = 'limit' | 'market' | 'peg';
export type PegReference = 'mid' | 'bid' | 'ask';

export interface AccountRec {
  user_id: string;
  /** 32 hex chars (16 bytes): the user_uuid of the encrypted WebSocket header */
  user_uuid: string;
  tier: Tier;
  /** configured default leverage; an order uses min(leverage, instrument max_leverage) unless the symbol has its own */
  leverage: number;
  /** leverage chosen per symbol (POST /positions/{symbol}/leverage; positions/leverage.ts); absent: the default */
  leverage_by_symbol?: Record<string, number>;
  scopes: Scope[];
  api_key: string;
  /** scrypt hashes, see auth/secrets.ts */
  secret_hash: string;
  pass_hash: string;
  /** cash collateral not locked in positions, micro-USDC */
  balance: string;
  /** margin (and worst-case fees) reserved by live orders, micro-USDC */
  reserved: string;
  open_orders: number;
  open_by_symbol: Record<string, number>;
  deposited: string;
  /** collateral released by withdrawals so far, micro-USDC (absent: none) */
  withdrawn?: string;
  created_at: string;
  /** small integer owner id, the secret the committee compares for self-trade prevention (set on the first order) */
  owner_id?: number;
  /** liquidation lockout: new orders are refused with ACCOUNT_IN_LIQUIDATION while set */
  in_liquidation?: boolean;
  /** remaining steps of live orders by `${symbol}|${side}` (worst-case position for the position limit) */
  open_qty?: Record<string, string>;
  /** taker bonuses received so far, micro-USDC: instant (at fills as maker) and hourly (window payouts) */
  bonus_instant?: string;
  bonus_hourly?: string;
}

export interface OrderRec {
  order_id: string;
  user_id: string;
  client_order_id: string | null;
  symbol: string;
  side: Side;
  type: OrderType;
  time_in_force: TimeInForce;
  /** limit price, market cap or peg price (ticks); null for a market order without a cap */
  price_ticks: string | null;
  /** quantity (steps): the original size, or the size a modify set */
  qty_steps: string;
  filled_steps: string;
  /** Σ fill qty_steps × price_ticks, for the exact average fill price */
  notional_ts: string;
  last_fill_steps: string | null;
  last_fill_ticks: string | null;
  status: OrderStatus;
  cancel_reason: string | null;
  reject_reason: string | null;
  in_time_ns: string;
  out_time_ns: string;
  /** leverage and taker fee (pips) the reservation was computed with */
  leverage: number;
  fee_pips: string;
  reserved: string;
  /** the sequencer has acknowledged (journaled) the placement */
  journaled: boolean;
  /** sequence number of the placement, once known (ack or outcome) */
  seq: string | null;
  /** the committee's placement outcome has been applied */
  placed: boolean;
  // ---- issue 4 (absent on older records: read with the defaults in orders/fields.ts) ----
  /** price the reservation and risk checks use (ticks): price_ticks, or a mark-based bound for an uncapped market order */
  risk_ticks?: string;
  /** the price sent to the committee (ticks; a market order's implicit cap too): the price window's entry after a restart */
  book_ticks?: string;
  peg_reference?: PegReference | null;
  /** GTT expiry, ns since the epoch */
  expires_at_ns?: string | null;
  aon?: boolean;
  min_fill_steps?: string | null;
  /** counted in its symbol's book depth (a live GTC/GTT order) */
  in_book?: boolean;
  /** a modify sequenced or submitted whose outcome is not applied yet */
  pending_modify?: PendingModify | null;
  /** cancel_reason a submitted cancel will record (USER_REQUESTED, CANCEL_ON_DISCONNECT, LIQUIDATION, SYSTEM_CANCEL) */
  cancel_requested?: string | null;
  /** instant taker bonus of the last fill (micro-USDC; '0' when it filled as taker) and the order's total */
  last_fill_bonus?: string | null;
  bonus_total?: string;
}

/** A modify waiting for the committee's outcome. */
export interface PendingModify {
  /** new quantity and price (ticks) the modify sets */
  qty_steps: string;
  price_ticks: string;
  /** extra reservation held until the outcome (micro-USDC) */
  hold: string;
}

export interface PositionRec {
  user_id: string;
  symbol: string;
  /** signed: > 0 long, < 0 short */
  size_steps: string;
  /** Σ price_ticks × qty_steps of the open size (cost basis) */
  basis_ts: string;
  margin: string;
  realized_pnl: string;
  fees_paid: string;
  leverage: number;
  updated_ns: string;
  /** funding settled into this position's margin so far, micro-USDC, signed (+ received); absent = 0 (risk-monitor/funding.ts) */
  funding_accrued?: string;
  /** liquidation ladder progress while the position is being liquidated; absent/null otherwise (risk-monitor/liquidation-ladder.ts) */
  liquidation?: LadderState | null;
}

/** A position's progress down the liquidation ladder (persisted: tranche sizes are fractions of the original size). */
export interface LadderState {
  /** absolute size (steps) when the first tranche fired */
  original_steps: string;
  side: 'long' | 'short';
  /** tranches done: 1 (T1), 2 (T2) or 3 (T3) */
  done: number;
  /** steps transferred to the liquidation vault so far */
  transferred_steps: string;
  /** end of the pause after the last tranche (gateway clock, ms): nothing further happens before it */
  resume_at_ms: number;
}

/** An operation persisted before it is submitted, so a restart can resubmit it under the same rid. */
export interface OutboxRec {
  rid: string;
  kind: 'place' | 'cancel' | 'modify' | 'expire';
  order_id: string;
  op: SealedOp;
  created_ns: string;
}

export interface DepositRec {
  deposit_id: string;
  user_id: string;
  amount: string;
  at: string;
}

/** True iff the status can still change by a fill or a cancel. */
export function isLive(status: OrderStatus): boolean {
  return status === 'NEW' || status === 'PARTIALLY_FILLED';
}

export const big = (s: string): bigint => BigInt(s);
export const str = (b: bigint): string => b.toString();
