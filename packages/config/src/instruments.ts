// The instrument catalogue (the spec's 20 linear perpetuals) and the exact-decimal arithmetic that
// turns their decimal fields into integer ticks, steps and micro-USDC at the edge.
// Decimal values are kept as strings ("0.001"), never as floats: a float cannot hold 0.1 exactly.

export type InstrumentStatus = 'trading' | 'halted' | 'pre-open' | 'delisted';
export const INSTRUMENT_STATUSES: readonly InstrumentStatus[] = ['trading', 'halted', 'pre-open', 'delisted'];

/** One instrument with every field of the spec's Instrument object; decimals as exact strings. */
export interface InstrumentSpec {
  /** Numeric id (1..20), the `symbol_id` of the encrypted WebSocket header. */
  symbol_id: number;
  symbol: string;
  base_asset: string;
  quote_asset: 'USDC';
  type: 'perp';
  status: InstrumentStatus;
  tick_size: string;
  step_size: string;
  min_qty: string;
  max_qty: string;
  min_notional: string;
  contract_size: string;
  margin_asset: 'USDC';
  max_leverage: number;
  maker_fee_bps: string;
  taker_fee_bps: string;
  initial_margin_ratio: string;
  maintenance_margin_ratio: string;
  listed_at: string;
  expires_at: null;
}

/** Version of the built-in catalogue; the gateway raises it when it changes any field at run time. */
export const INSTRUMENTS_VERSION = 1;
export const INSTRUMENTS_UPDATED_AT = '2025-01-15T00:00:00Z';

/**
 * Bit width of the committee's comparisons (the MPC engine's L: inputs |x| < 2^L). Every secret the
 * books compare is a price in ticks, a quantity in steps, a difference of two quantities or an
 * owner id, all below 2^32 by the gateway's checks, so 32 bits suffice. A comparison costs
 * ceil((L + 1) / 4) random nibbles and fewer closure items as L shrinks: 9 nibbles and 3 lex4 items
 * at 32 bits against 13 and 4 at the engine's default 48 (docs/decisions/0007-comparison-width.md).
 */
export const COMPARISON_BITS = 32;

/**
 * The largest price in ticks or quantity in steps a book holds: comparison inputs stay below
 * 2^COMPARISON_BITS. With the catalogue's ticks (about 1e-5..1e-4 of a price) that is thousands of
 * times any listed price, and every max_qty is far below it.
 */
export const MAX_BOOK_UNITS = (1n << BigInt(COMPARISON_BITS)) - 1n;

// base, tick, step, min_qty, max_qty, min_notional, max_leverage, maintenance ratio.
// Sizes follow a reference price at listing time: a tick is about 1e-5..1e-4 of the price, a step
// is worth roughly 0.1..10 USDC, max_qty is worth a few million USDC at most.
type Row = [string, string, string, string, string, string, number, string];
const ROWS: Row[] = [
  ['AAVE', '0.01', '0.01', '0.01', '20000', '10', 8, '0.05'],
  ['ADA', '0.0001', '1', '1', '5000000', '10', 8, '0.05'],
  ['APT', '0.001', '0.1', '0.1', '500000', '10', 8, '0.05'],
  ['ARB', '0.0001', '1', '1', '5000000', '10', 8, '0.05'],
  ['AVAX', '0.001', '0.1', '0.1', '200000', '10', 8, '0.05'],
  ['BNB', '0.01', '0.01', '0.01', '10000', '10', 10, '0.05'],
  ['BTC', '0.1', '0.001', '0.001', '500', '10', 10, '0.05'],
  ['DOGE', '0.00001', '1', '1', '20000000', '10', 5, '0.1'],
  ['DOT', '0.001', '0.1', '0.1', '1000000', '10', 8, '0.05'],
  ['ETH', '0.01', '0.001', '0.001', '5000', '10', 10, '0.05'],
  ['HYPE', '0.001', '0.01', '0.01', '200000', '10', 5, '0.1'],
  ['LINK', '0.001', '0.1', '0.1', '300000', '10', 8, '0.05'],
  ['NEAR', '0.001', '0.1', '0.1', '1000000', '10', 8, '0.05'],
  ['PEPE', '0.00000001', '1000', '1000', '10000000000', '10', 5, '0.1'],
  ['POL', '0.0001', '1', '1', '10000000', '10', 8, '0.05'],
  ['SOL', '0.01', '0.01', '0.01', '50000', '10', 10, '0.05'],
  ['SUI', '0.0001', '0.1', '0.1', '2000000', '10', 8, '0.05'],
  ['TRX', '0.00001', '1', '1', '20000000', '10', 8, '0.05'],
  ['UNI', '0.001', '0.1', '0.1', '500000', '10', 8, '0.05'],
  ['XRP', '0.0001', '1', '1', '3000000', '10', 10, '0.05'],
];

/**
 * Price ceiling per instrument, as a bit width: a book of that instrument holds prices (ticks) in
 * [1, 2^bits), and the gateway refuses a limit price, a market order's cap or a peg reference at or
 * above 2^bits with INVALID_PRICE (the committee's decode refuses such a peg too). Catrina-de Hoogh
 * needs a bound on the compared difference only, so a price comparison costs ceil(bits / 4) random
 * nibbles: 5 (20 bits) against 9 at COMPARISON_BITS (docs/decisions/0014-random-bits-per-order.md).
 * Sized at more than 3x the listing reference price (the simulated oracle stays within 2x of it and
 * a limit price within the mark +/- 50%): 20 bits (1,048,575 ticks) fits every listed instrument but
 * BTC (650,000 ticks at 65,000 USDC), which takes 24.
 */
export const DEFAULT_PRICE_BITS = 20;
const PRICE_BITS: Readonly<Record<string, number>> = { BTC: 24 };

/**
 * Price window per instrument, as a bit width: the gateway keeps every live price of a book (resting
 * orders, limits, caps and pegs in flight) within a span below 2^bits ticks, refusing a price that
 * would widen it (INVALID_PRICE) and cancelling resting orders the mark leaves behind
 * (gateway/src/orders/price-window.ts), so the committee compares prices at this width instead of
 * the ceiling's (docs/decisions/0024-price-window.md). Sized, in whole nibbles (a comparison
 * takes ceil(bits / 4) of them), to hold 8 x the instrument's limit band x its listing reference
 * price: the band on both sides of the mark, at a mark up to 2x the reference, with as much again
 * for the mark to move before a left-behind order is cancelled (gateway/test/price-window.test.ts
 * checks the catalogue). ETH: 2^16 ticks = 655.36 USDC against 8 x 2.5% x 3,000 = 600.
 */
const BAND_BITS: Readonly<Record<string, number>> = {
  AAVE: 16, ADA: 12, APT: 12, ARB: 12, AVAX: 16, BNB: 16, BTC: 20, DOGE: 16, DOT: 12, ETH: 16,
  HYPE: 16, LINK: 16, NEAR: 12, PEPE: 12, POL: 12, SOL: 12, SUI: 16, TRX: 12, UNI: 12, XRP: 12,
};

/**
 * The public value bounds of an instrument's book: prices in [0, 2^priceBits), any two live prices
 * less than 2^bandBits apart (bandBits <= priceBits; the ceiling's width for an instrument without
 * a window), quantities in [0, 2^qtyBits) (qtyBits from max_qty).
 */
export function bookWidthsOf(inst: Pick<InstrumentSpec, 'base_asset' | 'max_qty' | 'step_size'>): BookWidthBits {
  // instrument specs are frozen or replaced whole, so a result per object stays true
  let w = WIDTHS.get(inst);
  if (!w) WIDTHS.set(inst, (w = Object.freeze(computeBookWidths(inst))));
  return w;
}

/** An instrument's book widths in bits (bookWidthsOf). */
export interface BookWidthBits { priceBits: number; qtyBits: number; bandBits: number }
const WIDTHS = new WeakMap<object, Readonly<BookWidthBits>>();

function computeBookWidths(inst: Pick<InstrumentSpec, 'base_asset' | 'max_qty' | 'step_size'>): BookWidthBits {
  const maxSteps = toUnits(inst.max_qty, inst.step_size);
  if (maxSteps === null || maxSteps < 1n) throw new Error(`instrument ${inst.base_asset}: max_qty off the step grid`);
  const priceBits = PRICE_BITS[inst.base_asset] ?? DEFAULT_PRICE_BITS;
  return { priceBits, qtyBits: maxSteps.toString(2).length, bandBits: Math.min(priceBits, BAND_BITS[inst.base_asset] ?? priceBits) };
}

/** The span (ticks) every two live prices of an instrument's book stay below: 2^bandBits. */
export function priceWindowTicks(inst: Pick<InstrumentSpec, 'base_asset' | 'max_qty' | 'step_size'>): bigint {
  return 1n << BigInt(bookWidthsOf(inst).bandBits);
}

/** The largest price in ticks an instrument's book accepts: 2^priceBits - 1 (the gateway's INVALID_PRICE bound). */
export function maxPriceTicks(inst: Pick<InstrumentSpec, 'base_asset' | 'max_qty' | 'step_size'>): bigint {
  return (1n << BigInt(bookWidthsOf(inst).priceBits)) - 1n;
}

/** The built-in catalogue, ordered by symbol_id. */
export const INSTRUMENTS: readonly InstrumentSpec[] = Object.freeze(
  ROWS.map(([base, tick, step, minQty, maxQty, minNotional, maxLev, mmr], i): InstrumentSpec => Object.freeze({
    symbol_id: i + 1,
    symbol: `${base}-USDC-PERP`,
    base_asset: base,
    quote_asset: 'USDC',
    type: 'perp',
    status: 'trading',
    tick_size: tick,
    step_size: step,
    min_qty: minQty,
    max_qty: maxQty,
    min_notional: minNotional,
    contract_size: '1',
    margin_asset: 'USDC',
    max_leverage: maxLev,
    // Core-tier defaults (0.02% / 0.05%); the account's fee tier governs execution.
    maker_fee_bps: '2',
    taker_fee_bps: '5',
    initial_margin_ratio: ratioToDecimal(1n, BigInt(maxLev), 6),
    maintenance_margin_ratio: mmr,
    listed_at: '2025-01-15T00:00:00Z',
    expires_at: null,
  })),
);

const BY_SYMBOL = new Map(INSTRUMENTS.map((i) => [i.symbol, i]));
const BY_ID = new Map(INSTRUMENTS.map((i) => [i.symbol_id, i]));

/** The built-in instrument with this symbol, or undefined. */
export function instrumentBySymbol(symbol: string): InstrumentSpec | undefined {
  return BY_SYMBOL.get(symbol);
}

/** The built-in instrument with this symbol_id, or undefined. */
export function instrumentById(id: number): InstrumentSpec | undefined {
  return BY_ID.get(id);
}

// ---------------------------------------------------------------------------------------------
// Exact decimals

/** An exact non-negative decimal: units / 10^scale. */
export interface Dec {
  units: bigint;
  scale: number;
}

const PLAIN = /^(\d+)(?:\.(\d+))?$/;
const EXPONENT = /^(\d+)(?:\.(\d+))?[eE]([+-]?\d+)$/;
/** Longest decimal text we parse; anything longer is not a price or size. */
const MAX_DECIMAL_CHARS = 64;

/**
 * Texts parsed lately (frozen results; null for malformed ones). The gateway's risk sweeps parse the
 * same instrument constants (tick and step sizes, margin ratios) thousands of times a second: they
 * were 5% of its CPU under a sustained load. Bounded: emptied when full.
 */
const PARSED = new Map<string, Readonly<Dec> | null>();
const PARSED_MAX = 4_096;

/** Parses a plain non-negative decimal ("12", "0.001", also "1e-7" as JS prints it); null if malformed. */
export function parseDecimal(text: string): Readonly<Dec> | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_DECIMAL_CHARS) return null;
  const seen = PARSED.get(text);
  if (seen !== undefined) return seen;
  if (PARSED.size >= PARSED_MAX) PARSED.clear();
  const d = parseDecimalText(text);
  PARSED.set(text, d && Object.freeze(d));
  return d;
}

function parseDecimalText(text: string): Dec | null {
  let m = PLAIN.exec(text);
  if (m) {
    const frac = m[2] ?? '';
    return { units: BigInt(m[1]! + frac), scale: frac.length };
  }
  m = EXPONENT.exec(text);
  if (!m) return null;
  const frac = m[2] ?? '';
  const exp = Number(m[3]);
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 40) return null;
  const units = BigInt(m[1]! + frac);
  const scale = frac.length - exp;
  return scale >= 0 ? { units, scale } : { units: units * 10n ** BigInt(-scale), scale: 0 };
}

/** The shortest decimal text of a JSON number (JS's own shortest round-trip form), or null if not a finite number >= 0. */
export function decimalOfNumber(x: number): string | null {
  if (typeof x !== 'number' || !Number.isFinite(x) || x < 0) return null;
  const d = parseDecimal(String(x));
  return d ? formatDecimal(d) : null;
}

/** Plain decimal text of d without trailing fractional zeros ("1.50" -> "1.5", "3.0" -> "3"). */
export function formatDecimal(d: Dec): string {
  let { units, scale } = d;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale--;
  }
  if (scale === 0) return units.toString();
  const s = units.toString().padStart(scale + 1, '0');
  return `${s.slice(0, s.length - scale)}.${s.slice(s.length - scale)}`;
}

/** Compares two decimals exactly: -1, 0 or 1. */
export function compareDecimal(a: Dec, b: Dec): number {
  const s = Math.max(a.scale, b.scale);
  const x = a.units * 10n ** BigInt(s - a.scale);
  const y = b.units * 10n ** BigInt(s - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

function mustParse(text: string, what: string): Dec {
  const d = parseDecimal(text);
  if (!d) throw new Error(`${what} '${text}' is not a decimal`);
  return d;
}

/** value / unit when value is an exact multiple of unit (both decimal text); null when off the grid. */
export function toUnits(value: string, unit: string): bigint | null {
  const v = parseDecimal(value);
  const u = mustParse(unit, 'unit');
  if (!v || u.units === 0n) return null;
  // value / unit = v.units * 10^u.scale / (u.units * 10^v.scale)
  const num = v.units * 10n ** BigInt(u.scale);
  const den = u.units * 10n ** BigInt(v.scale);
  return num % den === 0n ? num / den : null;
}

/** units × unit as plain decimal text ("123" ticks of "0.01" -> "1.23"). */
export function fromUnits(units: bigint, unit: string): string {
  const u = mustParse(unit, 'unit');
  const neg = units < 0n;
  const text = formatDecimal({ units: (neg ? -units : units) * u.units, scale: u.scale });
  return neg ? `-${text}` : text;
}

/** num/den as plain decimal text rounded half away from zero to at most `digits` fractional digits. */
export function ratioToDecimal(num: bigint, den: bigint, digits: number): string {
  if (den === 0n) throw new RangeError('ratioToDecimal: zero denominator');
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const neg = num < 0n;
  const a = neg ? -num : num;
  const scale = 10n ** BigInt(digits);
  const q = (a * scale * 2n + den) / (den * 2n);
  const text = formatDecimal({ units: q, scale: digits });
  return neg && text !== '0' ? `-${text}` : text;
}

/** Micro-USDC per (tick × step) of an instrument, as the exact fraction num/den. */
export function microPerTickStep(inst: Pick<InstrumentSpec, 'tick_size' | 'step_size'>): { num: bigint; den: bigint } {
  // once per instrument object (specs are frozen or replaced whole): the risk sweeps ask per order
  let r = PER_TICK_STEP.get(inst);
  if (!r) {
    const t = mustParse(inst.tick_size, 'tick_size');
    const s = mustParse(inst.step_size, 'step_size');
    PER_TICK_STEP.set(inst, (r = Object.freeze({ num: t.units * s.units * 1_000_000n, den: 10n ** BigInt(t.scale + s.scale) })));
  }
  return r;
}
const PER_TICK_STEP = new WeakMap<object, Readonly<{ num: bigint; den: bigint }>>();

/** Micro-USDC of a notional given in tick×step units (Σ price_ticks × qty_steps), rounded as asked. */
export function notionalMicro(inst: Pick<InstrumentSpec, 'tick_size' | 'step_size'>, tickSteps: bigint, rounding: 'floor' | 'ceil'): bigint {
  const { num, den } = microPerTickStep(inst);
  return divRound(tickSteps * num, den, rounding);
}

/** a / b for b > 0 rounded toward -infinity (floor) or +infinity (ceil); exact for negative a. */
export function divRound(a: bigint, b: bigint, rounding: 'floor' | 'ceil'): bigint {
  if (b <= 0n) throw new RangeError('divRound: divisor must be positive');
  const q = a / b;
  const r = a % b;
  if (r === 0n) return q;
  if (rounding === 'floor') return a < 0n ? q - 1n : q;
  return a < 0n ? q : q + 1n;
}

/** Micro-USDC of a USDC decimal text ("12.5" -> 12500000n); null if malformed or finer than 1e-6. */
export function usdcToMicro(text: string): bigint | null {
  return toUnits(text, '0.000001');
}

/** USDC decimal text of a micro-USDC amount (12500000n -> "12.5"). */
export function microToUsdc(micro: bigint): string {
  return fromUnits(micro, '0.000001');
}

/**
 * Checks an instrument's internal consistency: every decimal parses, min/max quantities lie on the
 * step grid, min_qty <= max_qty, the largest order fits MAX_BOOK_UNITS; throws naming the fault.
 */
export function checkInstrument(inst: InstrumentSpec): void {
  const where = `instrument ${inst.symbol}`;
  for (const f of ['tick_size', 'step_size', 'min_qty', 'max_qty', 'min_notional', 'contract_size', 'initial_margin_ratio', 'maintenance_margin_ratio'] as const) {
    const d = parseDecimal(inst[f]);
    if (!d) throw new Error(`${where}: ${f} '${inst[f]}' is not a decimal`);
  }
  if (parseDecimal(inst.tick_size)!.units === 0n || parseDecimal(inst.step_size)!.units === 0n) throw new Error(`${where}: zero tick or step`);
  const minSteps = toUnits(inst.min_qty, inst.step_size);
  const maxSteps = toUnits(inst.max_qty, inst.step_size);
  if (minSteps === null || maxSteps === null) throw new Error(`${where}: min_qty/max_qty off the step grid`);
  if (minSteps < 1n || minSteps > maxSteps) throw new Error(`${where}: need 0 < min_qty <= max_qty`);
  if (maxSteps > MAX_BOOK_UNITS) throw new Error(`${where}: max_qty is ${maxSteps} steps, above ${MAX_BOOK_UNITS}`);
  const { priceBits, bandBits } = bookWidthsOf(inst);
  if (!Number.isInteger(priceBits) || priceBits < 2 || priceBits > COMPARISON_BITS) throw new Error(`${where}: price ceiling of ${priceBits} bits outside 2..${COMPARISON_BITS}`);
  if (!Number.isInteger(bandBits) || bandBits < 2 || bandBits > priceBits) throw new Error(`${where}: price window of ${bandBits} bits outside 2..${priceBits}`);
  if (!Number.isInteger(inst.max_leverage) || inst.max_leverage < 1) throw new Error(`${where}: max_leverage must be a positive integer`);
  if (!/^-?\d+(\.\d+)?$/.test(inst.maker_fee_bps) || !/^\d+(\.\d+)?$/.test(inst.taker_fee_bps)) throw new Error(`${where}: bad fee fields`);
  if (compareDecimal(parseDecimal(inst.initial_margin_ratio)!, parseDecimal(inst.maintenance_margin_ratio)!) <= 0) {
    throw new Error(`${where}: initial margin ratio must exceed the maintenance ratio`);
  }
}
