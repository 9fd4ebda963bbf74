// CCXT's own expectations of its unified structures, ported (re-written, same checks) from the ccxt
// repository's test helpers, which the npm package does not ship:
//   ts/src/test/Exchange/base/test.sharedMethods.ts (assertStructure, assertTimestamp(AndDatetime),
//     assertInArray, assertGreater(OrEqual), assertLessOrEqual, assertSymbol, assertCurrencyCode)
//   ts/src/test/Exchange/base/test.market.ts, test.order.ts, test.trade.ts, test.position.ts,
//   test.balance.ts, test.tradingFee.ts, test.marginModification.ts, and the Leverage structure of ccxt's types.
// Each check throws an Error naming the method, the key and the entry.
import { Precise, type Exchange } from 'ccxt';

type Entry = Record<string, unknown>;
const MIN_TS = 1230940800000; // 03 Jan 2009 (test.sharedMethods: first block)
const MAX_TS = 2147483648000; // 19 Jan 2038

function fail(method: string, entry: unknown, what: string): never {
  throw new Error(`${method}: ${what} <<< ${JSON.stringify(entry, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))} >>>`);
}

function sameType(value: unknown, format: unknown): boolean {
  if (value === undefined) return true;
  if (typeof format === 'string') return typeof value === 'string';
  if (typeof format === 'number') return typeof value === 'number';
  if (typeof format === 'boolean') return typeof value === 'boolean';
  if (Array.isArray(format)) return Array.isArray(value);
  if (typeof format === 'object') return typeof value === 'object';
  return true;
}

/** Every key of `format` is present; a key outside `emptyAllowed` has a value; values have the format's type. */
export function assertStructure(method: string, entry: Entry, format: Entry, emptyAllowed: string[] = [], emptyNotAllowed?: string[]): void {
  if (entry === null || typeof entry !== 'object') fail(method, entry, 'entry is not an object');
  for (const [key, example] of Object.entries(format)) {
    if (!(key in entry)) fail(method, entry, `"${key}" key is missing from structure`);
    const value = entry[key];
    const mayBeEmpty = emptyNotAllowed ? !emptyNotAllowed.includes(key) : emptyAllowed.includes(key);
    if (value === undefined) {
      if (mayBeEmpty) continue;
      fail(method, entry, `"${key}" key is expected to have a value`);
    }
    if (key !== 'info' && !sameType(value, example)) fail(method, entry, `"${key}" key is neither undefined nor of the expected type`);
  }
}

export function assertTimestamp(method: string, entry: Entry, now?: number, key = 'timestamp'): void {
  if (!(key in entry)) fail(method, entry, `timestamp key "${key}" is missing`);
  const ts = entry[key];
  if (ts === undefined) return;
  if (typeof ts !== 'number' || !Number.isInteger(ts)) fail(method, entry, `${key} is not an integer`);
  if (ts <= MIN_TS || ts >= MAX_TS) fail(method, entry, `${key} ${ts} is out of range`);
  if (now !== undefined && ts >= now + 60_000) fail(method, entry, `${key} is ahead of the current time`);
}

export function assertTimestampAndDatetime(ex: Exchange, method: string, entry: Entry, now?: number): void {
  assertTimestamp(method, entry, now);
  if (!('datetime' in entry)) fail(method, entry, '"datetime" key is missing');
  const dt = entry.datetime;
  if (dt === undefined) return;
  if (typeof dt !== 'string') fail(method, entry, 'datetime is not a string');
  if (ex.iso8601(ex.parse8601(dt)) !== ex.iso8601(entry.timestamp as number)) fail(method, entry, 'datetime is not the iso8601 of timestamp');
}

export function assertInArray(method: string, entry: Entry, key: string, values: unknown[]): void {
  const v = entry[key];
  if (v !== undefined && !values.includes(v)) fail(method, entry, `"${key}" (${String(v)}) is not one of ${JSON.stringify(values)}`);
}

function num(entry: Entry, key: string): string | undefined {
  const v = entry[key];
  return v === undefined || v === null ? undefined : String(v);
}

export function assertGreater(method: string, entry: Entry, key: string, than: string): void {
  const v = num(entry, key);
  if (v !== undefined && !Precise.stringGt(v, than)) fail(method, entry, `${key} (${v}) was expected to be > ${than}`);
}

export function assertGreaterOrEqual(method: string, entry: Entry, key: string, than: string | undefined): void {
  const v = num(entry, key);
  if (v !== undefined && than !== undefined && !Precise.stringGe(v, than)) fail(method, entry, `${key} (${v}) was expected to be >= ${than}`);
}

export function assertLessOrEqual(method: string, entry: Entry, key: string, than: string): void {
  const v = num(entry, key);
  if (v !== undefined && !Precise.stringLe(v, than)) fail(method, entry, `${key} (${v}) was expected to be <= ${than}`);
}

export function assertSymbol(method: string, entry: Entry, key: string, expected?: string): void {
  const v = entry[key];
  if (v !== undefined && typeof v !== 'string') fail(method, entry, `${key} is not a string`);
  if (expected !== undefined && v !== expected) fail(method, entry, `${key} (${String(v)}) should be ${expected}`);
}

function assertFee(method: string, entry: Entry, fee: unknown): void {
  if (fee === undefined) return;
  if (fee === null || typeof fee !== 'object') fail(method, entry, 'fee is not an object');
  const f = fee as Entry;
  assertStructure(method, f, { cost: 0.1, currency: 'USDC' }, ['cost', 'currency']);
}

/** test.market.ts: the keys CCXT requires of a market, for a linear swap. */
export function checkMarket(ex: Exchange, method: string, market: Entry): void {
  const format: Entry = {
    id: 'x', symbol: 'x', base: 'x', quote: 'x', settle: 'x', baseId: 'x', quoteId: 'x', settleId: 'x', type: 'swap',
    spot: false, margin: false, swap: true, future: false, option: false, active: true, contract: true, linear: true,
    inverse: false, taker: 0.1, maker: 0.1, contractSize: 1, expiry: 1, expiryDatetime: 'x', strike: 1, optionType: 'x',
    precision: {}, limits: {}, info: {}, created: 1,
  };
  assertStructure(method, market, format, ['expiry', 'expiryDatetime', 'strike', 'optionType', 'margin', 'created', 'taker', 'maker', 'settle', 'settleId']);
  assertInArray(method, market, 'type', ['spot', 'margin', 'swap', 'future', 'option']);
  if (market.symbol !== `${String(market.base)}/${String(market.quote)}:${String(market.settle)}`) fail(method, market, 'a swap symbol is BASE/QUOTE:SETTLE');
  if (!market.contract || market.spot) fail(method, market, 'a swap is a contract, not spot');
  if (market.linear === market.inverse) fail(method, market, 'exactly one of linear / inverse');
  assertGreater(method, market, 'contractSize', '0');
  const precision = market.precision as Entry;
  assertGreater(method, precision, 'amount', '0');
  assertGreater(method, precision, 'price', '0');
  const limits = market.limits as Record<string, Entry>;
  for (const k of ['amount', 'price', 'cost', 'leverage']) {
    const l = limits[k];
    if (l === undefined) continue;
    assertStructure(method, l, { min: 1, max: 1 }, ['min', 'max']);
    if (l.min !== undefined && l.max !== undefined) assertLessOrEqual(method, l, 'min', String(l.max));
  }
  if (!(String(market.quote) in ex.currencies) || !(String(market.base) in ex.currencies)) fail(method, market, 'base and quote must be in exchange.currencies');
}

/**
 * test.order.ts. Its list of keys that must have a value is `['id']`, with a to-do naming id,
 * timestamp, symbol, type, side and price; here the to-do's list applies (price aside: a market
 * order has none; a createOrder answer has no timestamp yet, so callers may pass their own list).
 */
export function checkOrder(method: string, order: Entry, symbol?: string, now?: number, required = ['id', 'timestamp', 'symbol', 'type', 'side', 'amount', 'status']): void {
  const format: Entry = {
    info: {}, id: '1', clientOrderId: '1', timestamp: 1, datetime: 'x', lastTradeTimestamp: 1, symbol: 'x', type: 'limit',
    timeInForce: 'GTC', postOnly: true, side: 'sell', price: 1, stopPrice: 1, amount: 1, cost: 1, average: 1, filled: 1,
    remaining: 1, status: 'ok', fee: {}, trades: [],
  };
  assertStructure(method, order, format, [], required);
  assertTimestamp(method, order, now);
  assertInArray(method, order, 'timeInForce', ['GTC', 'GTK', 'IOC', 'FOK', 'GTD', 'PO']);
  assertInArray(method, order, 'status', ['open', 'closed', 'canceled']);
  assertInArray(method, order, 'side', ['buy', 'sell']);
  assertInArray(method, order, 'postOnly', [true, false]);
  assertSymbol(method, order, 'symbol', symbol);
  assertGreater(method, order, 'price', '0');
  assertGreater(method, order, 'stopPrice', '0');
  // test.order asserts cost > 0, but CCXT's own safeOrder sets cost = filled × average = 0 for an
  // unfilled order (every exchange's open orders), so the port checks cost >= 0
  assertGreaterOrEqual(method, order, 'cost', '0');
  assertGreater(method, order, 'average', '0');
  assertGreaterOrEqual(method, order, 'filled', '0');
  assertGreaterOrEqual(method, order, 'remaining', '0');
  assertGreaterOrEqual(method, order, 'amount', '0');
  assertGreaterOrEqual(method, order, 'amount', num(order, 'remaining'));
  assertGreaterOrEqual(method, order, 'amount', num(order, 'filled'));
  for (const t of (order.trades as Entry[] | undefined) ?? []) checkTrade(undefined, method, t, symbol, now);
  assertFee(method, order, order.fee);
}

/** test.trade.ts */
export function checkTrade(ex: Exchange | undefined, method: string, trade: Entry, symbol?: string, now?: number): void {
  const format: Entry = {
    info: {}, id: '1', timestamp: 1, datetime: 'x', symbol: 'x', order: '1', side: 'buy', takerOrMaker: 'taker',
    price: 1, amount: 1, cost: 1, fees: [], fee: {},
  };
  assertStructure(method, trade, format, ['fees', 'fee', 'symbol', 'order', 'id', 'takerOrMaker', 'timestamp', 'datetime']);
  if (ex) assertTimestampAndDatetime(ex, method, trade, now);
  else assertTimestamp(method, trade, now);
  assertSymbol(method, trade, 'symbol', symbol);
  assertInArray(method, trade, 'side', ['buy', 'sell']);
  assertInArray(method, trade, 'takerOrMaker', ['taker', 'maker']);
  assertFee(method, trade, trade.fee);
  for (const f of (trade.fees as unknown[] | undefined) ?? []) assertFee(method, trade, f);
}

/**
 * test.position.ts. Its `percentage >= 0` check is left out: a losing position's unrealized PnL
 * percentage is negative by CCXT's own definition (unrealizedPnl / initialMargin × 100).
 */
export function checkPosition(method: string, position: Entry, symbol?: string, now?: number): void {
  const format: Entry = {
    info: {}, symbol: 'x', timestamp: 1, datetime: 'x', initialMargin: 1, initialMarginPercentage: 1, maintenanceMargin: 1,
    maintenanceMarginPercentage: 1, entryPrice: 1, notional: 1, leverage: 1, unrealizedPnl: 1, contracts: 1, contractSize: 1,
    marginRatio: 1, liquidationPrice: 1, markPrice: 1, collateral: 1, marginMode: 'cross', side: 'long', percentage: 1,
  };
  assertStructure(method, position, format, [], ['symbol', 'entryPrice', 'side', 'markPrice', 'contracts', 'contractSize', 'marginMode']);
  assertTimestamp(method, position, now);
  assertSymbol(method, position, 'symbol', symbol);
  assertInArray(method, position, 'side', ['long', 'short']);
  assertInArray(method, position, 'marginMode', ['cross', 'isolated']);
  assertGreater(method, position, 'leverage', '0');
  assertLessOrEqual(method, position, 'leverage', '200');
  for (const k of ['initialMargin', 'initialMarginPercentage', 'maintenanceMargin', 'maintenanceMarginPercentage', 'entryPrice', 'notional', 'contracts', 'contractSize', 'marginRatio', 'liquidationPrice', 'markPrice', 'collateral']) {
    assertGreater(method, position, k, '0');
  }
}

/** test.balance.ts: free + used = total for every currency, and each code is a known currency. */
export function checkBalance(ex: Exchange, method: string, balance: Entry): void {
  assertStructure(method, balance, { free: {}, used: {}, total: {}, info: {} }, [], ['free', 'used', 'total']);
  const total = balance.total as Entry;
  const free = balance.free as Entry;
  const used = balance.used as Entry;
  for (const code of Object.keys(total)) {
    if (!(code in ex.currencies)) fail(method, balance, `currency code ${code} should be in exchange.currencies`);
    const t = num(total, code);
    const f = num(free, code);
    const u = num(used, code);
    if (t === undefined || f === undefined || u === undefined) fail(method, balance, `${code}: free, used and total must all be given`);
    if (!Precise.stringEq(t, Precise.stringAdd(f, u))) fail(method, balance, `${code}: free and used do not sum to total`);
  }
}

/** test.tradingFee.ts */
export function checkTradingFee(method: string, fee: Entry, symbol: string): void {
  assertStructure(method, fee, { info: {}, symbol: 'x', maker: 0.1, taker: 0.1, percentage: false, tierBased: false }, ['tierBased', 'percentage', 'symbol']);
  assertSymbol(method, fee, 'symbol', symbol);
}

/** The Leverage structure (ccxt types: {info, symbol, marginMode, longLeverage, shortLeverage}). */
export function checkLeverage(method: string, leverage: Entry, symbol: string): void {
  assertStructure(method, leverage, { info: {}, symbol: 'x', marginMode: 'isolated', longLeverage: 1, shortLeverage: 1 }, ['marginMode']);
  assertSymbol(method, leverage, 'symbol', symbol);
  assertInArray(method, leverage, 'marginMode', ['cross', 'isolated']);
  assertGreater(method, leverage, 'longLeverage', '0');
  assertGreater(method, leverage, 'shortLeverage', '0');
}

/** test.marginModification.ts */
export function checkMarginModification(ex: Exchange, method: string, entry: Entry): void {
  assertStructure(method, entry, { info: {}, type: 'add', amount: 0.1, total: 0.1, code: 'USDC', symbol: 'x', status: 'ok' }, [], ['type', 'status']);
  if (entry.code !== undefined && !(String(entry.code) in ex.currencies)) fail(method, entry, 'code should be in exchange.currencies');
  assertGreaterOrEqual(method, entry, 'amount', '0');
  assertGreaterOrEqual(method, entry, 'total', '0');
  assertInArray(method, entry, 'type', ['add', 'reduce', 'set']);
  assertInArray(method, entry, 'status', ['ok', 'pending', 'canceled', 'failed']);
  assertSymbol(method, entry, 'symbol');
}
