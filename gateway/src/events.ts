// Order and position events, emitted after the state change that caused them is committed. The REST
// interface does not need them; the WebSocket channels and SSE streams (later issues) subscribe here.
import { EventEmitter } from 'node:events';
import type { OrderRec, PositionRec } from './store/records';

export type OrderMessageType = 'open' | 'partial_fill' | 'filled' | 'cancelled' | 'rejected' | 'modified' | 'cancel_rejected' | 'modify_rejected';
/**
 * The spec's update reasons; clearing emits fill and closed, the risk monitor (risk-monitor/) mark_price, funding, liquidation (and closed), settlement batches settlement.
 * `margin` is ours: a trader added or removed isolated margin or changed leverage (http/routes-positions.ts).
 */
export type PositionUpdateReason = 'fill' | 'mark_price' | 'funding' | 'liquidation' | 'closed' | 'settlement' | 'margin';

export interface OrderEvent {
  message_type: OrderMessageType;
  order: OrderRec;
  /** reject reason of a cancel_rejected / modify_rejected event (the order itself is unchanged) */
  reject_reason?: string;
  /** a fill event's side of the match: the resting order (maker) or the incoming one (taker) */
  liquidity?: 'maker' | 'taker';
}

export interface PositionEvent {
  update_reason: PositionUpdateReason;
  position: PositionRec;
}

/** Health tiers of the spec's margin model that raise an alert, plus Healthy to clear one. */
export type MarginHealthTier = 'Healthy' | 'Warning150' | 'Critical120' | 'T1' | 'T2' | 'T3';

/** A position's margin health changed tier (emitted by the risk monitor, risk-monitor/monitor.ts). */
export interface MarginAlertEvent {
  user_id: string;
  symbol: string;
  tier: MarginHealthTier;
  /** equity / maintenance margin as a decimal string, e.g. "1.35" */
  margin_ratio: string;
  /** decimal strings */
  mark_price: string;
  liquidation_price: string;
  at_ns: bigint;
}

/** Realised PnL of an account settled in a committed settlement batch. */
export interface SettlementEvent {
  user_id: string;
  batch_id: string;
  status: string;
  /** free-form, JSON-serialisable summary for the account (amounts as decimal strings) */
  detail: Record<string, unknown>;
  at_ns: bigint;
}

/** A taker bonus credited to a maker's balance outside a fill (the hourly window payout, bonus/hourly.ts). */
export interface BonusEvent {
  user_id: string;
  kind: 'hourly';
  window_start_ms: number;
  window_end_ms: number;
  /** micro-USDC credited */
  amount: bigint;
  /** the maker's notional in the window, micro-USDC */
  notional: bigint;
  at_ns: bigint;
}

interface EventMap {
  bonus: [BonusEvent];
  order: [OrderEvent];
  position: [PositionEvent];
  margin_alert: [MarginAlertEvent];
  settlement: [SettlementEvent];
}

/** Typed emitter of committed order and position changes. */
export class GatewayEvents extends EventEmitter<EventMap> {
  constructor() {
    super();
    this.setMaxListeners(1_000);
  }
}
