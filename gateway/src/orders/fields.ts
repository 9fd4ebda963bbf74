// Small shared readers of order records and the mapping of matching's reject reasons to the spec's.
import type { OrderRec } from '../store/records';

/** meta key of a symbol's book depth count (live GTC/GTT orders). */
export const depthKey = (symbol: string): string => `depth:${symbol}`;

/** The price (ticks, decimal text) an order's reservation uses; records older than issue 4 lack risk_ticks. */
export function riskTicksOf(o: Pick<OrderRec, 'risk_ticks' | 'price_ticks'>): string {
  return o.risk_ticks ?? o.price_ticks ?? '0';
}

/**
 * The spec's reject_reason for a committee (matching) reject. None of these should happen for an
 * order the gateway accepted (it checks the same rules first), so they are all RISK_CHECK_FAILED;
 * the matching reason is logged.
 */
export function specRejectOfMatching(_reason: string): string {
  return 'RISK_CHECK_FAILED';
}

/** cancel_reason values a caller may ask a cancel to record (USER_REQUESTED by default). */
export type RequestedCancelReason = 'USER_REQUESTED' | 'CANCEL_ON_DISCONNECT' | 'LIQUIDATION' | 'SYSTEM_CANCEL';
