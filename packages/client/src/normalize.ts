// Raw JSON objects (from parseJson or a decrypted plaintext) → the typed resources of types.ts.
// Decimal fields become exact strings whatever the server sent (number literal or string).
import type { OrderUpdate, PositionUpdate } from '@tenebra/session';
import { bigIntText, decimalOrNull, decimalOut } from './decimal';
import type { Account, AccountVip, Fill, Instrument, InstrumentList, JsonObject, MarketReference, Order, OrderEvent, Position, ServerTime, Withdrawal } from './types';

function obj(v: unknown, what: string): JsonObject {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new TypeError(`${what} must be an object`);
  return v as JsonObject;
}

function strOrNull(v: unknown): string | null {
  return v === null || v === undefined || v === '' ? null : String(v);
}

/** An Instrument from its JSON object. */
export function toInstrument(raw: unknown): Instrument {
  const o = obj(raw, 'instrument');
  const symbolId = o['symbol_id'];
  if (typeof symbolId !== 'number' || !Number.isInteger(symbolId)) throw new TypeError(`instrument ${String(o['symbol'])} has no numeric symbol_id`);
  return {
    ...(o as unknown as Instrument),
    symbol_id: symbolId,
    tick_size: decimalOut(o['tick_size']),
    step_size: decimalOut(o['step_size']),
    min_qty: decimalOut(o['min_qty']),
    max_qty: decimalOut(o['max_qty']),
    min_notional: decimalOut(o['min_notional']),
    contract_size: decimalOut(o['contract_size'] ?? 1),
    max_leverage: decimalOut(o['max_leverage']),
    maker_fee_bps: decimalOut(o['maker_fee_bps']),
    taker_fee_bps: decimalOut(o['taker_fee_bps']),
    initial_margin_ratio: decimalOut(o['initial_margin_ratio']),
    maintenance_margin_ratio: decimalOut(o['maintenance_margin_ratio']),
    expires_at: strOrNull(o['expires_at']),
  };
}

/** The instrument list from GET /instruments data. */
export function toInstrumentList(raw: unknown): InstrumentList {
  const o = obj(raw, 'instrument list');
  const list = o['instruments'];
  if (!Array.isArray(list)) throw new TypeError('instrument list has no instruments array');
  return { version: Number(o['version']), updated_at: String(o['updated_at']), instruments: list.map(toInstrument) };
}

/** An Order from the REST order object. */
export function toOrder(raw: unknown): Order {
  const o = obj(raw, 'order');
  return {
    order_id: String(o['order_id']),
    client_order_id: strOrNull(o['client_order_id']),
    symbol: String(o['symbol']),
    side: o['side'] as Order['side'],
    type: o['type'] as Order['type'],
    time_in_force: o['time_in_force'] as Order['time_in_force'],
    price: decimalOrNull(o['price']),
    quantity: decimalOut(o['quantity']),
    filled_quantity: decimalOut(o['filled_quantity']),
    remaining_quantity: decimalOut(o['remaining_quantity']),
    average_fill_price: decimalOrNull(o['average_fill_price']),
    last_fill_qty: decimalOrNull(o['last_fill_qty']),
    last_fill_price: decimalOrNull(o['last_fill_price']),
    status: o['status'] as Order['status'],
    in_time_ns: bigIntText(o['in_time_ns']),
    out_time_ns: bigIntText(o['out_time_ns']),
    cancel_reason: strOrNull(o['cancel_reason']),
    reject_reason: strOrNull(o['reject_reason']),
  };
}

/** An OrderEvent from a decrypted orders-channel plaintext (absent optional fields become null). */
export function orderEventFromUpdate(u: OrderUpdate): OrderEvent {
  return { message_type: u.message_type, ...toOrder(u) };
}

/** A Position from the REST object or a decrypted positions-channel plaintext. */
export function toPosition(raw: unknown | PositionUpdate): Position {
  const o = obj(raw, 'position');
  const p: Position = {
    position_id: String(o['position_id']),
    symbol: String(o['symbol']),
    side: String(o['side']),
    size: decimalOut(o['size']),
    entry_price: decimalOut(o['entry_price']),
    mark_price: decimalOut(o['mark_price']),
    margin: decimalOut(o['margin']),
    leverage: decimalOut(o['leverage']),
    unrealized_pnl: decimalOut(o['unrealized_pnl']),
    realized_pnl: decimalOut(o['realized_pnl']),
    funding_accrued: decimalOut(o['funding_accrued']),
    liquidation_price: decimalOut(o['liquidation_price']),
    status: String(o['status']),
    updated_at: String(o['updated_at']),
  };
  if (o['update_reason'] !== undefined) p.update_reason = o['update_reason'] as Position['update_reason'];
  return p;
}

/** The positions of GET /positions data, whatever the container (the spec leaves its name open). */
export function toPositions(raw: unknown): Position[] {
  if (Array.isArray(raw)) return raw.map(toPosition);
  const o = obj(raw, 'positions');
  const list = Array.isArray(o['positions']) ? o['positions'] : Object.values(o).find(Array.isArray);
  if (!list) throw new TypeError('positions response holds no array');
  return (list as unknown[]).map(toPosition);
}

/** ServerTime from GET /time data. */
export function toServerTime(raw: unknown): ServerTime {
  const o = obj(raw, 'time');
  return { server_time: String(o['server_time']), server_time_ns: bigIntText(o['server_time_ns']) };
}

const ORDER_DECIMALS = ['price', 'quantity', 'filled_quantity', 'remaining_quantity', 'average_fill_price', 'last_fill_qty', 'last_fill_price'];
const ORDER_NANOS = ['in_time_ns', 'out_time_ns'];

/**
 * An order-shaped answer whose full shape the spec leaves open (cancel, modify): every known order
 * field that is present is normalised (decimals and nanosecond times as strings), the rest kept.
 */
export function toOrderLike(raw: unknown): Partial<Order> & JsonObject {
  const o: JsonObject = { ...obj(raw, 'order') };
  for (const k of ORDER_DECIMALS) if (k in o) o[k] = decimalOrNull(o[k]);
  for (const k of ORDER_NANOS) if (o[k] !== undefined && o[k] !== null) o[k] = bigIntText(o[k]);
  if (o['order_id'] !== undefined) o['order_id'] = String(o['order_id']);
  return o as Partial<Order> & JsonObject;
}

/** obj with the named fields as exact decimal strings (null kept): a field's type never depends on its value. */
function withDecimals<T>(raw: unknown, what: string, keys: readonly string[]): T {
  const o = { ...obj(raw, what) };
  for (const k of keys) if (k in o) o[k] = decimalOrNull(o[k]);
  return o as T;
}

/** A Fill from GET /fills. */
export function toFill(raw: unknown): Fill {
  const o = obj(raw, 'fill');
  return {
    fill_id: String(o['fill_id']),
    order_id: String(o['order_id']),
    client_order_id: strOrNull(o['client_order_id']),
    symbol: String(o['symbol']),
    side: o['side'] as Fill['side'],
    price: decimalOut(o['price']),
    quantity: decimalOut(o['quantity']),
    fee: decimalOut(o['fee']),
    liquidity: o['liquidity'] as Fill['liquidity'],
    time_ns: bigIntText(o['time_ns']),
  };
}

const ACCOUNT_DECIMALS = ['balance', 'reserved_margin', 'free_collateral', 'position_margin', 'unrealized_pnl', 'equity', 'total_deposited', 'total_withdrawn', 'maker_fee_bps', 'taker_fee_bps', 'volume_30d'];
const FEE_DECIMALS = ['maker_fee_bps', 'taker_fee_bps', 'maker_fee_pct', 'taker_fee_pct', 'instant_taker_bonus_pct', 'hourly_taker_bonus_pct', 'min_notional'];

/** GET /account (and the socket's account.info). */
export function toAccount(raw: unknown): Account {
  const a = withDecimals<Account>(raw, 'account', ACCOUNT_DECIMALS);
  if (a.config) a.config = withDecimals<Account['config']>(a.config, 'account config', ['min_order_notional']);
  return a;
}

/** GET /account/vip. */
export function toAccountVip(raw: unknown): AccountVip {
  const v = withDecimals<AccountVip>(raw, 'account vip', [...FEE_DECIMALS, 'volume_30d']);
  if (v.next_tier) v.next_tier = withDecimals<NonNullable<AccountVip['next_tier']>>(v.next_tier, 'next_tier', ['min_volume_30d', 'volume_needed']);
  if (v.bonuses_received) v.bonuses_received = withDecimals<AccountVip['bonuses_received']>(v.bonuses_received, 'bonuses_received', ['instant', 'hourly']);
  return v;
}

/** A withdrawal object. */
export function toWithdrawal(raw: unknown): Withdrawal {
  return withDecimals<Withdrawal>(raw, 'withdrawal', ['amount', 'shielded_pool_total']);
}

/** A market reference object. */
export function toMarketReference(raw: unknown): MarketReference {
  return withDecimals<MarketReference>(raw, 'market reference', ['mid', 'bid', 'ask']);
}
