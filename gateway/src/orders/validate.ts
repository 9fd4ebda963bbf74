// POST /orders body -> a checked order intent in integer ticks and steps. Numbers are read through
// their shortest decimal text (or given as decimal strings) and converted exactly; nothing here
// touches storage, so a rejected order leaves no trace.
//
// Supported combinations (the spec leaves the matrix open; this is matching's own matrix, see
// packages/matching/README.md "Supported orders", and the codes match its checkPlace):
//
//            GTC  GTT  IOC  FOK
//   limit     ✓    ✓    ✓    ✓
//   peg       ✓    ✓    ✓    ✓      (priced from the oracle reference; re-priced as it moves: repeg.ts)
//   market    ✗    ✗    ✓    ✓      MARKET_TIF: a market order never rests; optional price = cap
//   aon       ✗    ✗    ✓    ✓      AON_TIF: IOC+aon behaves as FOK
//   min_fill  ✗    ✗    ✓    ✗      MIN_FILL_TIF; a minimum per execution; MIN_FILL_AON with FOK or aon
import {
  MAX_BOOK_UNITS, maxPriceTicks, fromUnits, compareDecimal, decimalOfNumber, formatDecimal, parseDecimal, toUnits,
  type Dec, type InstrumentSpec,
} from '@tenebra/config';
import { ApiError, fail } from '../errors';
import type { InstrumentRegistry } from '../instruments';
import type { OrderType, PegReference, Side, TimeInForce } from '../store/records';
import { leverageField } from '../positions/leverage';

export interface OrderIntent {
  inst: InstrumentSpec;
  side: Side;
  type: OrderType;
  tif: TimeInForce;
  /** limit price or market cap (ticks); null for a peg (priced later) and an uncapped market order */
  priceTicks: bigint | null;
  pegReference: PegReference | null;
  qtySteps: bigint;
  /** GTT expiry, ns since the epoch */
  expiresAtNs: bigint | null;
  aon: boolean;
  minFillSteps: bigint | null;
  clientOrderId: string | null;
  /** the order's own leverage (1..max_leverage); null: the account's leverage on the symbol */
  leverage: number | null;
}

const FIELDS = new Set(['symbol', 'side', 'type', 'quantity', 'price', 'peg_reference', 'time_in_force', 'expiry_time', 'aon', 'min_fill_size', 'client_order_id', 'leverage']);
export const MAX_CLIENT_ORDER_ID = 64;
const CLIENT_ORDER_ID = /^[\x21-\x7e]+$/;
/** Farthest a GTT expiry may lie in the future. */
export const MAX_GTT_HORIZON_NS = 90n * 24n * 3600n * 1_000_000_000n;

/** The client_order_id of a body (null when absent); throws INVALID_ORDER when malformed. */
export function clientOrderIdOf(b: Record<string, unknown>): string | null {
  const v = b.client_order_id;
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') fail('INVALID_ORDER', "'client_order_id' must be a string");
  if (v.length === 0 || v.length > MAX_CLIENT_ORDER_ID) fail('INVALID_ORDER', `'client_order_id' must be 1 to ${MAX_CLIENT_ORDER_ID} characters`);
  if (!CLIENT_ORDER_ID.test(v)) fail('INVALID_ORDER', "'client_order_id' may contain only printable ASCII characters without spaces");
  return v;
}

/** The body as an object, or INVALID_ORDER. */
export function bodyObject(body: unknown, what = 'the request body'): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) fail('INVALID_ORDER', `${what} must be a JSON object`);
  return body as Record<string, unknown>;
}

/**
 * Validates a placement body against the live instrument set: fields, types, grids, ranges and the
 * supported combinations. The minimum notional of limit and capped market orders is checked here
 * (tierMinNotionalMicro); pegs and uncapped market orders are checked once priced (checkMinNotional).
 */
export function validateOrder(body: unknown, registry: InstrumentRegistry, tierMinNotionalMicro: bigint, nowNs: bigint): OrderIntent {
  const b = bodyObject(body);
  for (const k of Object.keys(b)) {
    if (!FIELDS.has(k)) fail('INVALID_ORDER', `unknown field '${k}'; allowed fields: ${[...FIELDS].join(', ')}`);
  }

  if (b.symbol === undefined) fail('INVALID_ORDER', "'symbol' is required");
  if (typeof b.symbol !== 'string') fail('INVALID_ORDER', "'symbol' must be a string");
  const inst = registry.get(b.symbol);
  if (!inst) fail('UNKNOWN_SYMBOL', `unknown symbol '${b.symbol}'; GET /instruments lists the symbols`);

  const side = oneOf(b.side, 'side', ['buy', 'sell'] as const);
  const type = oneOf(b.type, 'type', ['market', 'limit', 'peg'] as const);
  const tif = oneOf(b.time_in_force, 'time_in_force', ['GTC', 'GTT', 'IOC', 'FOK'] as const);
  const clientOrderId = clientOrderIdOf(b);
  // above the instrument maximum: LEVERAGE_EXCEEDED, the spec's "requested leverage above instrument maximum"
  const leverage = b.leverage === undefined || b.leverage === null ? null : leverageField(b.leverage, inst, 'INVALID_ORDER');

  // peg_reference: required for peg, refused otherwise.
  let pegReference: PegReference | null = null;
  if (type === 'peg') pegReference = oneOf(b.peg_reference, 'peg_reference', ['mid', 'bid', 'ask'] as const);
  else if (b.peg_reference !== undefined) fail('INVALID_ORDER', "'peg_reference' applies only to type 'peg'");

  // expiry_time: required for GTT, refused otherwise; integer ns (a JSON number or a decimal string).
  let expiresAtNs: bigint | null = null;
  if (tif === 'GTT') {
    if (b.expiry_time === undefined || b.expiry_time === null) fail('INVALID_ORDER', "'expiry_time' (nanoseconds since the epoch) is required for time_in_force 'GTT'");
    expiresAtNs = nanosField(b.expiry_time, 'expiry_time');
    if (expiresAtNs <= nowNs) fail('INVALID_ORDER', `'expiry_time' ${expiresAtNs} is not in the future (server time ${nowNs} ns)`);
    if (expiresAtNs - nowNs > MAX_GTT_HORIZON_NS) fail('INVALID_ORDER', "'expiry_time' lies more than 90 days ahead");
  } else if (b.expiry_time !== undefined) {
    fail('INVALID_ORDER', "'expiry_time' applies only to time_in_force 'GTT'");
  }

  let aon = false;
  if (b.aon !== undefined) {
    if (typeof b.aon !== 'boolean') fail('INVALID_ORDER', "'aon' must be a boolean");
    aon = b.aon;
  }

  // quantity
  const qtySteps = stepsField(b.quantity, 'quantity', inst);
  const qtyDec = { units: qtySteps * parseDecimal(inst.step_size)!.units, scale: parseDecimal(inst.step_size)!.scale };
  if (compareDecimal(qtyDec, parseDecimal(inst.min_qty)!) < 0) fail('INVALID_QUANTITY', `quantity ${formatDecimal(qtyDec)} is below min_qty ${inst.min_qty} for ${inst.symbol}`);
  if (compareDecimal(qtyDec, parseDecimal(inst.max_qty)!) > 0) fail('INVALID_QUANTITY', `quantity ${formatDecimal(qtyDec)} is above max_qty ${inst.max_qty} for ${inst.symbol}`);

  // min_fill_size: on the step grid, positive, at most the quantity.
  let minFillSteps: bigint | null = null;
  if (b.min_fill_size !== undefined && b.min_fill_size !== null) {
    minFillSteps = stepsField(b.min_fill_size, 'min_fill_size', inst);
    if (minFillSteps > qtySteps) fail('INVALID_QUANTITY', "'min_fill_size' must not exceed quantity");
  }

  // price: required for limit, optional cap for market, omitted for peg.
  let priceTicks: bigint | null = null;
  if (type === 'peg') {
    if (b.price !== undefined && b.price !== null) fail('INVALID_ORDER', "'price' must be omitted for peg orders: the price follows the oracle reference named by 'peg_reference'");
  } else if (b.price === undefined || b.price === null) {
    if (type === 'limit') fail('INVALID_PRICE', "'price' is required for limit orders");
  } else {
    priceTicks = ticksField(b.price, 'price', inst);
  }

  // Supported combinations (see the matrix above).
  const immediate = tif === 'IOC' || tif === 'FOK';
  if (type === 'market' && !immediate) fail('UNSUPPORTED_ORDER', `MARKET_TIF: market orders never rest: time_in_force must be IOC or FOK, not ${tif}`);
  if (aon && !immediate) fail('UNSUPPORTED_ORDER', 'AON_TIF: aon is supported only with IOC or FOK: a resting all-or-none order would cost every taker one more secret test per such maker on the committee (docs/orders.md)');
  if (minFillSteps !== null && !immediate) fail('UNSUPPORTED_ORDER', 'MIN_FILL_TIF: min_fill_size is supported only with IOC: a resting minimum per execution would cost every taker one more secret test per such maker on the committee (docs/orders.md)');
  if (minFillSteps !== null && (tif === 'FOK' || aon)) fail('UNSUPPORTED_ORDER', 'MIN_FILL_AON: min_fill_size (a minimum per execution) is not supported with FOK or aon: send one or the other (docs/orders.md)');

  if (priceTicks !== null) checkMinNotional(inst, qtySteps, priceTicks, tierMinNotionalMicro);
  if (inst.status !== 'trading') fail('INSTRUMENT_HALTED', `${inst.symbol} is not accepting orders (status ${inst.status})`);
  return { inst, side, type, tif, priceTicks, pegReference, qtySteps, expiresAtNs, aon, minFillSteps, clientOrderId, leverage };
}

/** Throws MIN_NOTIONAL when quantity × price is below the larger of the instrument's and the tier's minimum. */
export function checkMinNotional(inst: InstrumentSpec, qtySteps: bigint, priceTicks: bigint, tierMinNotionalMicro: bigint): void {
  const step = parseDecimal(inst.step_size)!;
  const tick = parseDecimal(inst.tick_size)!;
  const notional: Dec = { units: qtySteps * step.units * priceTicks * tick.units, scale: step.scale + tick.scale };
  const instMin = parseDecimal(inst.min_notional)!;
  const tierMin: Dec = { units: tierMinNotionalMicro, scale: 6 };
  const min = compareDecimal(instMin, tierMin) >= 0 ? instMin : tierMin;
  if (compareDecimal(notional, min) < 0) {
    fail('MIN_NOTIONAL', `order notional ${formatDecimal(notional)} USDC is below the minimum ${formatDecimal(min)} USDC (instrument and fee tier)`);
  }
}

/** A positive quantity field on the instrument's step grid, in steps. */
export function stepsField(v: unknown, field: string, inst: InstrumentSpec): bigint {
  const d = decimalField(v, field, 'INVALID_QUANTITY');
  if (d.units === 0n) fail('INVALID_QUANTITY', `${field} must be greater than 0`);
  const text = formatDecimal(d);
  const steps = toUnits(text, inst.step_size);
  if (steps === null) fail('INVALID_QUANTITY', `${field} ${text} is not a multiple of step_size ${inst.step_size} for ${inst.symbol}`);
  if (steps > MAX_BOOK_UNITS) fail('INVALID_QUANTITY', `${field} ${text} is outside the acceptable range for ${inst.symbol}`);
  return steps;
}

/** A positive price field on the instrument's tick grid, in ticks. */
export function ticksField(v: unknown, field: string, inst: InstrumentSpec): bigint {
  const d = decimalField(v, field, 'INVALID_PRICE');
  if (d.units === 0n) fail('INVALID_PRICE', `${field} must be greater than 0`);
  const text = formatDecimal(d);
  const ticks = toUnits(text, inst.tick_size);
  if (ticks === null) fail('INVALID_PRICE', `${field} ${text} is not a multiple of tick_size ${inst.tick_size} for ${inst.symbol}`);
  // the instrument's price ceiling: its book compares prices at that width (docs/decisions/0014)
  if (ticks > maxPriceTicks(inst)) fail('INVALID_PRICE', `${field} ${text} is outside the acceptable range for ${inst.symbol} (at most ${fromUnits(maxPriceTicks(inst), inst.tick_size)})`);
  return ticks;
}

/**
 * An integer nanosecond timestamp: a decimal string (exact) or a JSON number. A JSON number above
 * 2^53 arrives as the nearest double (within 256 ns of a current timestamp); it is taken as that value.
 */
export function nanosField(v: unknown, field: string): bigint {
  let text: string | null = null;
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) text = v;
  else if (typeof v === 'number' && Number.isInteger(v) && v >= 0) text = decimalOfNumber(v);
  if (text === null || !/^\d+$/.test(text)) fail('INVALID_ORDER', `'${field}' must be a non-negative integer number of nanoseconds since the epoch (a JSON integer or a decimal string)`);
  const ns = BigInt(text);
  if (ns >= 1n << 63n) fail('INVALID_ORDER', `'${field}' is beyond the 64-bit range`);
  return ns;
}

export function oneOf<T extends string>(v: unknown, field: string, allowed: readonly T[]): T {
  if (v === undefined || v === null) fail('INVALID_ORDER', `'${field}' is required`);
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    fail('INVALID_ORDER', `'${field}' must be one of ${allowed.join(', ')}`);
  }
  return v as T;
}

const DECIMAL_STRING = /^\d+(\.\d+)?$/;

/** A JSON number (read through its shortest decimal text) or a plain decimal string, as an exact decimal. */
export function decimalField(v: unknown, field: string, err: 'INVALID_QUANTITY' | 'INVALID_PRICE' | 'invalid_request'): Dec {
  let text: string | null = null;
  if (typeof v === 'number') text = decimalOfNumber(v);
  else if (typeof v === 'string' && v.length <= 40 && DECIMAL_STRING.test(v)) text = v;
  const d = text === null ? null : parseDecimal(text);
  if (!d) throw new ApiError(err, `'${field}' must be a non-negative decimal number (a JSON number or a decimal string)`);
  return d;
}
