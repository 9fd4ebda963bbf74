// Decimals at the edge. Outbound, a price or size may be given as a decimal string, a number or a
// bigint; it is turned into exact decimal text once and written into the JSON as a number literal.
// Inbound, every decimal field is a string. The SDK never does arithmetic on these values.
import { RawNumber } from './json';

/** A decimal as exact text, e.g. "65000.1". */
export type Decimal = string;
/** What the SDK accepts for a decimal: text ("0.001"), a number (0.001, read via its shortest form) or a bigint. */
export type DecimalInput = string | number | bigint;

const PLAIN = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;
const LOOSE = /^([+-]?)(\d+)?(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Canonical decimal text of v (no exponent, no '+', no leading zeros). Throws on NaN, Infinity or junk. */
export function toDecimal(v: DecimalInput, field = 'value'): Decimal {
  let text: string;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError(`${field} must be finite`);
    text = String(v); // shortest round-trip form, e.g. 0.1 → "0.1"
  } else if (typeof v === 'string') {
    text = v.trim();
  } else {
    throw new TypeError(`${field} must be a decimal string, number or bigint`);
  }
  const m = LOOSE.exec(text);
  if (!m || (m[2] === undefined && m[3] === undefined)) throw new TypeError(`${field} '${String(v)}' is not a decimal number`);
  const sign = m[1] === '-' ? '-' : '';
  let int = m[2] ?? '0';
  let frac = m[3] ?? '';
  const exp = Number(m[4] ?? '0');
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 400) throw new TypeError(`${field} exponent out of range`);
  if (exp > 0) {
    const move = frac.padEnd(exp, '0');
    int += move.slice(0, exp);
    frac = move.slice(exp);
  } else if (exp < 0) {
    const digits = int.padStart(-exp + 1, '0');
    frac = digits.slice(digits.length + exp) + frac;
    int = digits.slice(0, digits.length + exp);
  }
  int = int.replace(/^0+(?=\d)/, '');
  frac = frac.replace(/0+$/, '');
  const out = frac ? `${int}.${frac}` : int;
  return out === '0' ? '0' : sign + out;
}

/** A RawNumber for the JSON writer, from any decimal input. */
export function decimalLiteral(v: DecimalInput, field?: string): RawNumber {
  return new RawNumber(toDecimal(v, field));
}

/** A decimal field of a response as text (numbers are exact here: the parser only yields safe integers). */
export function decimalOut(v: unknown): Decimal {
  if (typeof v === 'string' && PLAIN.test(v)) return v;
  if (typeof v === 'number' && Number.isFinite(v)) return toDecimal(v);
  if (typeof v === 'string') return toDecimal(v);
  throw new TypeError(`expected a decimal, got ${JSON.stringify(v)}`);
}

/** A nullable decimal field of a response. */
export function decimalOrNull(v: unknown): Decimal | null {
  return v === null || v === undefined ? null : decimalOut(v);
}

/** An integer field that may exceed 2^53 (nanosecond times), as decimal text. */
export function bigIntText(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return v;
  throw new TypeError(`expected an integer, got ${JSON.stringify(v)}`);
}
