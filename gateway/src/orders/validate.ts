// POST /orders body -> a checked order intent in integer ticks and steps. Numbers are read through
// their shortest decimal text (or given as decimal strings) and converted exactly; nothing here
// touches storage, so a rejected order leaves no trace.
import {
  MAX_BOOK_UNITS, compareDecimal, decimalOfNumber, formatDecimal, parseDecimal, toUnits,
  type Dec, type InstrumentSpec,
} from '@tenebra/config';
import { ApiError, fail } from '../errors';
import type { InstrumentRegistry } from '../instruments';
import type { Side, TimeInForce } from '../store/records';

export interface OrderIntent {
  inst: InstrumentSpec;
  side: Side;
  type: 'limit';
  tif: TimeInForce;
  priceTicks: bigint;
  qtySteps: bigint;
  clientOrderId: string | null;
}

const FIELDS = new Set(['symbol', 'side', 'type', 'quantity', 'price', 'peg_reference', 'time_in_force', 'expiry_time', 'aon', 'min_fill_size', 'client_order_id']);
export const MAX_CLIENT_ORDER_ID = 64;
const CLIENT_ORDER_ID = /^[\x21-\x7e]+$/;

/** Validates a placement body against the live instrument set and the account's tier minimum notional. */
export function validateOrder(body: unknown, registry: InstrumentRegistry, tierMinNotionalMicro: bigint): OrderIntent {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) fail('INVALID_ORDER', 'the request body must be a JSON object');
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) {
    if (!FIELDS.has(k)) fail('INVALID_ORDER', `unknown field '${k}'; allowed fields: ${[...FIELDS].join(', ')}`);
  }

  if (b.symbol === undefined) fail('INVALID_ORDER', "'symbol' is required");
  if (typeof b.symbol !== 'string') fail('INVALID_ORDER', "'symbol' must be a string");
  const inst = registry.get(b.symbol);
  if (!inst) fail('UNKNOWN_SYMBOL', `unknown symbol '${b.symbol}'; GET /instruments lists the symbols`);

  const side = oneOf(b.side, 'side', ['buy', 'sell'] as const);
  const type = oneOf(b.type, 'type', ['market', 'limit', 'peg'] as const);
  if (type !== 'limit') fail('UNSUPPORTED_ORDER', `type '${type}' is not supported yet; only 'limit' orders are accepted`);
  const tifAny = oneOf(b.time_in_force, 'time_in_force', ['GTC', 'GTT', 'IOC', 'FOK'] as const);
  if (tifAny !== 'GTC' && tifAny !== 'IOC') fail('UNSUPPORTED_ORDER', `time_in_force '${tifAny}' is not supported yet; use 'GTC' or 'IOC'`);
  const tif: TimeInForce = tifAny;

  if (b.peg_reference !== undefined) fail('INVALID_ORDER', "'peg_reference' applies only to type 'peg'");
  if (b.expiry_time !== undefined) fail('INVALID_ORDER', "'expiry_time' applies only to time_in_force 'GTT'");
  if (b.aon !== undefined) {
    if (typeof b.aon !== 'boolean') fail('INVALID_ORDER', "'aon' must be a boolean");
    if (b.aon) fail('UNSUPPORTED_ORDER', 'all-or-none (aon: true) is not supported yet');
  }
  if (b.min_fill_size !== undefined) fail('UNSUPPORTED_ORDER', "'min_fill_size' is not supported yet");

  let clientOrderId: string | null = null;
  if (b.client_order_id !== undefined && b.client_order_id !== null) {
    if (typeof b.client_order_id !== 'string') fail('INVALID_ORDER', "'client_order_id' must be a string");
    if (b.client_order_id.length === 0 || b.client_order_id.length > MAX_CLIENT_ORDER_ID) {
      fail('INVALID_ORDER', `'client_order_id' must be 1 to ${MAX_CLIENT_ORDER_ID} characters`);
    }
    if (!CLIENT_ORDER_ID.test(b.client_order_id)) fail('INVALID_ORDER', "'client_order_id' may contain only printable ASCII characters without spaces");
    clientOrderId = b.client_order_id;
  }

  // quantity
  const qty = decimalField(b.quantity, 'quantity', 'INVALID_QUANTITY');
  if (qty.units === 0n) fail('INVALID_QUANTITY', 'quantity must be greater than 0');
  const qtyText = formatDecimal(qty);
  const qtySteps = toUnits(qtyText, inst.step_size);
  if (qtySteps === null) fail('INVALID_QUANTITY', `quantity ${qtyText} is not a multiple of step_size ${inst.step_size} for ${inst.symbol}`);
  if (compareDecimal(qty, parseDecimal(inst.min_qty)!) < 0) fail('INVALID_QUANTITY', `quantity ${qtyText} is below min_qty ${inst.min_qty} for ${inst.symbol}`);
  if (compareDecimal(qty, parseDecimal(inst.max_qty)!) > 0) fail('INVALID_QUANTITY', `quantity ${qtyText} is above max_qty ${inst.max_qty} for ${inst.symbol}`);

  // price
  if (b.price === undefined || b.price === null) fail('INVALID_PRICE', "'price' is required for limit orders");
  const price = decimalField(b.price, 'price', 'INVALID_PRICE');
  if (price.units === 0n) fail('INVALID_PRICE', 'price must be greater than 0');
  const priceText = formatDecimal(price);
  const priceTicks = toUnits(priceText, inst.tick_size);
  if (priceTicks === null) fail('INVALID_PRICE', `price ${priceText} is not a multiple of tick_size ${inst.tick_size} for ${inst.symbol}`);
  if (priceTicks > MAX_BOOK_UNITS) fail('INVALID_PRICE', `price ${priceText} is outside the acceptable range for ${inst.symbol}`);

  // notional = quantity × price, exactly
  const notional: Dec = { units: qty.units * price.units, scale: qty.scale + price.scale };
  const instMin = parseDecimal(inst.min_notional)!;
  const tierMin: Dec = { units: tierMinNotionalMicro, scale: 6 };
  const min = compareDecimal(instMin, tierMin) >= 0 ? instMin : tierMin;
  if (compareDecimal(notional, min) < 0) {
    fail('MIN_NOTIONAL', `order notional ${formatDecimal(notional)} USDC is below the minimum ${formatDecimal(min)} USDC (instrument and fee tier)`);
  }

  if (inst.status !== 'trading') fail('INSTRUMENT_HALTED', `${inst.symbol} is not accepting orders (status ${inst.status})`);
  return { inst, side, type: 'limit', tif, priceTicks, qtySteps, clientOrderId };
}

function oneOf<T extends string>(v: unknown, field: string, allowed: readonly T[]): T {
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
