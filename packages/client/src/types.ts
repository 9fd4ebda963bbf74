// Resource shapes of the spec (Resources and their fields), as the SDK returns them: decimals as
// exact strings, nanosecond times as integer strings, the spec's nulls kept.
import type { Ack } from '@tenebra/session';
import type { OrderEventType, OrderStatus, OrderType, PegReference, PositionUpdateReason, Side, TimeInForce } from '@tenebra/session';
import type { Decimal, DecimalInput } from './decimal';

export type { OrderEventType, OrderStatus, OrderType, PegReference, PositionUpdateReason, Side, TimeInForce };
export type JsonObject = Record<string, unknown>;
export type Scope = 'trade' | 'read';

/** POST /auth/token response (a bare object, no envelope). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

export type InstrumentStatus = 'trading' | 'halted' | 'pre-open' | 'delisted';

export interface Instrument {
  symbol: string;
  /** Numeric id used as symbol_id in the encrypted WebSocket header. */
  symbol_id: number;
  base_asset: string;
  quote_asset: string;
  type: 'perp';
  status: InstrumentStatus;
  tick_size: Decimal;
  step_size: Decimal;
  min_qty: Decimal;
  max_qty: Decimal;
  min_notional: Decimal;
  contract_size: Decimal;
  margin_asset: string;
  max_leverage: Decimal;
  maker_fee_bps: Decimal;
  taker_fee_bps: Decimal;
  initial_margin_ratio: Decimal;
  maintenance_margin_ratio: Decimal;
  listed_at: string;
  expires_at: string | null;
}

export interface InstrumentList {
  version: number;
  updated_at: string;
  instruments: Instrument[];
}

/** POST /orders body. client_order_id is generated when absent, so a retry never places twice. */
export interface PlaceOrderRequest {
  symbol: string;
  side: Side;
  type: OrderType;
  quantity: DecimalInput;
  price?: DecimalInput;
  peg_reference?: PegReference;
  time_in_force: TimeInForce;
  /** Nanosecond epoch expiry (GTT). */
  expiry_time?: bigint | string | number;
  aon?: boolean;
  min_fill_size?: DecimalInput;
  client_order_id?: string;
  /** this order's leverage, 1 to the instrument's max_leverage (above: LEVERAGE_EXCEEDED); absent: the account's on the symbol */
  leverage?: number;
}

/** GET / POST /positions/{symbol}/leverage data. */
export interface LeverageSetting {
  symbol: string;
  leverage: number;
  max_leverage: number;
}

/** POST /orders success data. */
export interface PlaceOrderResult {
  order_id: string;
  client_order_id: string;
  status: OrderStatus;
}

/** PATCH /orders/{orderId} body (the spec leaves the modifiable fields open; these are Tenebra's). */
export interface ModifyOrderRequest {
  price?: DecimalInput;
  quantity?: DecimalInput;
  time_in_force?: TimeInForce;
  expiry_time?: bigint | string | number;
}

/** One cancel-replace leg of a mass quote (the spec leaves the leg fields open). */
export interface MassQuoteLeg {
  /** Order to cancel first, by id or client id. */
  cancel_order_id?: string;
  cancel_client_order_id?: string;
  /** Replacement order; its client_order_id is generated when absent. */
  place?: PlaceOrderRequest;
}

export interface MassQuoteRequest {
  legs: MassQuoteLeg[];
}

/** The spec's order object. */
export interface Order {
  order_id: string;
  client_order_id: string | null;
  symbol: string;
  side: Side;
  type: OrderType;
  time_in_force: TimeInForce;
  price: Decimal | null;
  quantity: Decimal;
  filled_quantity: Decimal;
  remaining_quantity: Decimal;
  average_fill_price: Decimal | null;
  /**
   * The fill an orders-channel event reports (`partial_fill` / `filled` only; null in every other
   * event and in snapshots, so summing over events counts each fill once). Over REST: the order's
   * most recent fill.
   */
  last_fill_qty: Decimal | null;
  last_fill_price: Decimal | null;
  status: OrderStatus;
  /** Nanoseconds since the epoch, as an integer string (beyond 2^53). */
  in_time_ns: string;
  out_time_ns: string;
  cancel_reason: string | null;
  reject_reason: string | null;
}

/** A cancel/modify answer (shape left open by the spec): the order fields it has, normalised. */
export type OrderLike = Partial<Order> & JsonObject;

/** An orders-channel event: the order object plus message_type. */
export interface OrderEvent extends Order {
  message_type: OrderEventType;
}

/** The spec's position object; update_reason only on the positions channel. */
export interface Position {
  update_reason?: PositionUpdateReason;
  position_id: string;
  symbol: string;
  side: string;
  size: Decimal;
  entry_price: Decimal;
  mark_price: Decimal;
  margin: Decimal;
  leverage: Decimal;
  unrealized_pnl: Decimal;
  realized_pnl: Decimal;
  funding_accrued: Decimal;
  liquidation_price: Decimal;
  status: string;
  updated_at: string;
}

export interface ServerTime {
  server_time: string;
  /** Nanoseconds since the epoch, as an integer string. */
  server_time_ns: string;
}

export type StatsRange = '1d' | '7d' | '1m' | '3m' | '1y' | 'd' | 'w' | 'm' | 'y';

export interface StatsQuery {
  range?: StatsRange;
  from?: string;
  to?: string;
}

export interface SeriesQuery extends StatsQuery {
  metric: 'volume' | 'oi' | 'funding' | 'users';
  assets?: string[];
}

/** GET /stats/platform/overview (all numeric values are decimal strings). */
export interface PlatformOverview {
  as_of: string;
  volume_24h: Decimal;
  volume: { value: Decimal; change_24h?: Decimal; change_30d?: Decimal };
  open_interest: { value: Decimal; change_24h?: Decimal };
  funding: { value: Decimal; annualized?: Decimal };
  users: { value: Decimal };
  all_time_volume: Decimal;
  all_time_users: Decimal;
  monthly_active_users: Decimal;
  quarterly_active_users: Decimal;
}

export interface PlatformSeries {
  as_of: string;
  metric: string;
  granularity: 'hour' | 'day';
  points: Array<{ t: string; total: Decimal; by_asset?: Record<string, Decimal> }>;
  cumulative?: Array<{ t: string; total: Decimal }>;
}

/** Rate-limit headers of the last response. */
export interface RateLimitState {
  limit: number | null;
  remaining: number | null;
  /** Unix seconds at which the window resets. */
  reset: number | null;
}

/** GET /fills item: one side of one execution (docs/api.md, "Order history and fills"). */
export interface Fill {
  /** `<seq>-<n>-<M|T>`, stable across restarts: dedupe by it. */
  fill_id: string;
  order_id: string;
  client_order_id: string | null;
  symbol: string;
  side: Side;
  price: Decimal;
  quantity: Decimal;
  /** USDC at the tier's rate; negative for a maker rebate. */
  fee: Decimal;
  liquidity: 'maker' | 'taker';
  /** Nanoseconds since the epoch, as an integer string. */
  time_ns: string;
}

/** Filters of GET /orders?status=closed and GET /fills. */
export interface HistoryQuery {
  symbol?: string;
  /** Inclusive lower bound in ns (closed orders: out_time_ns; fills: time_ns). */
  since_ns?: string | bigint;
  /** 1 to 500 (default 100). */
  limit?: number;
}

export type TierName = 'Core' | 'Select' | 'Advanced' | 'Prime' | 'Apex';

/** GET /account. Every money field is an exact decimal string, whatever its value (never a number for whole amounts). */
export interface Account {
  user_id: string;
  environment: 'production' | 'test';
  currency: 'USDC';
  balance: Decimal;
  reserved_margin: Decimal;
  free_collateral: Decimal;
  position_margin: Decimal;
  unrealized_pnl: Decimal;
  equity: Decimal;
  total_deposited: Decimal;
  total_withdrawn: Decimal;
  open_orders: number;
  open_positions: number;
  vip_tier: TierName;
  maker_fee_bps: Decimal;
  taker_fee_bps: Decimal;
  volume_30d: Decimal;
  config: {
    leverage: number;
    margin_mode: 'isolated';
    api_key: string;
    api_key_scopes: Scope[];
    token_scopes: Scope[];
    max_open_orders: number;
    max_open_orders_per_symbol: number;
    min_order_notional: Decimal;
  };
  created_at: string;
}

/** Fee fields shared by GET /account/vip and GET /vip/tiers. */
export interface TierFees {
  maker_fee_bps: Decimal;
  taker_fee_bps: Decimal;
  maker_fee_pct: Decimal;
  taker_fee_pct: Decimal;
  instant_taker_bonus_pct: Decimal;
  hourly_taker_bonus_pct: Decimal;
  min_notional: Decimal;
}

/** GET /account/vip. */
export interface AccountVip extends TierFees {
  tier: TierName;
  volume_30d: Decimal;
  volume_window_days: number;
  volume_tier: TierName;
  assigned_tier: TierName;
  next_tier: { tier: TierName; min_volume_30d: Decimal; volume_needed: Decimal } | null;
  as_of: string;
  bonuses_received: { instant: Decimal; hourly: Decimal };
}

/** POST /account/withdrawals answer and GET /account/withdrawals[/{id}] items. */
export interface Withdrawal {
  withdrawal_id: string;
  client_withdrawal_id: string | null;
  amount: Decimal;
  recipient: string;
  status: 'pending' | 'released';
  created_at: string;
  released_at: string | null;
  shielded_pool_total: Decimal;
  block: { height: number; hash: string; tx_hash: string; time: string } | null;
}

/** GET /market-data/reference[/{symbol}] item. */
export interface MarketReference {
  symbol: string;
  status: 'fresh' | 'stale' | 'missing';
  detail?: string;
  mid: Decimal | null;
  bid: Decimal | null;
  ask: Decimal | null;
  source: string | null;
  as_of: string | null;
}

/** One leg's result of a mass quote: its cancel and/or its place, each with code 0 on success. */
export interface MassQuoteLegResult {
  cancel?: { code: number; order_id: string; status?: OrderStatus; cancel_reason?: string | null; error?: string; message?: string };
  place?: { code: number; order_id?: string; client_order_id?: string | null; status?: OrderStatus; error?: string; message?: string };
}

/** POST /orders/mass-quote data. */
export interface MassQuoteResult {
  symbol: string;
  legs: MassQuoteLegResult[];
}

/** The channels of the spec (subscribe / unsubscribe). */
export type Channel = 'orders' | 'positions' | 'instruments' | 'transparency' | 'margin_alerts';

/**
 * A trading op's acknowledgement as the SDK returns it: the session's Ack with `reject_reason` and
 * `client_order_id` null when empty (protobuf cannot tell an empty string from absent; a success has
 * no reject_reason, never "").
 */
export type SocketAck = Omit<Ack, 'reject_reason' | 'client_order_id'> & { reject_reason: string | null; client_order_id: string | null };
