// Window arithmetic of the public statistics (pure, no I/O): the delayed as_of, the query parameters
// range / from / to (aliases, defaults, clamping, the 2-year span limit), and hourly or daily buckets.
//
// Data is kept in 10-minute slots [s, s + 600 s). A window covers whole slots: `from` falls into its
// slot, `to` (clamped to as_of first) is covered by the slot it lies in, and a `to` exactly on a slot
// boundary ends there. Because as_of is itself a slot boundary, no slot after as_of is ever read.
import { ApiError } from '../errors';
import { singleParam } from '../http/query';
// the query helpers moved to http/query.ts (every route's); re-exported for their existing importers
export { singleParam, limitParam, rejectUnknownParams } from '../http/query';

export const SLOT_MS = 600_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** Public delay of the statistics (spec: 600 seconds). */
export const PUBLIC_DELAY_MS = 600_000;
/** Windows of at most this length get hourly buckets (spec: two days or less). */
export const HOURLY_MAX_MS = 2 * DAY_MS;
export const SLOTS_PER_HOUR = HOUR_MS / SLOT_MS;
export const SLOTS_PER_DAY = DAY_MS / SLOT_MS;

export type RangeName = '1d' | '7d' | '1m' | '3m' | '1y';
export const RANGE_MS: Record<RangeName, number> = { '1d': DAY_MS, '7d': 7 * DAY_MS, '1m': 30 * DAY_MS, '3m': 90 * DAY_MS, '1y': 365 * DAY_MS };
/** Accepted spellings of range: the names and the spec's aliases. */
export const RANGE_ALIASES: Record<string, RangeName> = { '1d': '1d', '7d': '7d', '1m': '1m', '3m': '3m', '1y': '1y', d: '1d', w: '7d', m: '1m', y: '1y' };
export const DEFAULT_RANGE: RangeName = '1m';

export type Granularity = 'hour' | 'day';

export interface StatsWindow {
  asOfMs: number;
  /** the window as asked, after defaults and clamping */
  fromMs: number;
  toMs: number;
  /** slots covered: [fromSlot, toSlotExcl) */
  fromSlot: number;
  toSlotExcl: number;
  granularity: Granularity;
}

export interface Bucket {
  /** bucket start (hour or UTC day), ms */
  t: number;
  /** slots of the bucket inside the window: [fromSlot, toSlotExcl) */
  fromSlot: number;
  toSlotExcl: number;
}

/** The public time: now minus 600 s, floored to a 10-minute boundary. */
export function asOf(nowMs: number): number {
  return Math.floor((nowMs - PUBLIC_DELAY_MS) / SLOT_MS) * SLOT_MS;
}

export const slotOf = (ms: number): number => Math.floor(ms / SLOT_MS);
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);

/** RFC 3339 text (ms precision, always UTC "Z") of a time. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+\- ]\d{2}:\d{2}))?$/;

/**
 * Milliseconds of an RFC 3339 date-time (any offset; fractions beyond ms truncated), or of a bare
 * full-date as its UTC midnight; null when malformed or not a real calendar time. A space in place
 * of the offset's '+' is read as '+', since an unescaped '+' in a query string decodes to a space.
 */
export function parseRfc3339(text: string): number | null {
  if (text.length > 40) return null;
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return null;
  if (m[4] === undefined) return Date.UTC(y, mo - 1, d);
  const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6])];
  if (h > 23 || mi > 59 || s > 59) return null;
  const ms = m[7] ? Number(m[7].slice(1, 4).padEnd(3, '0')) : 0;
  let offsetMin = 0;
  const z = m[8]!;
  if (z !== 'Z' && z !== 'z') {
    const oh = Number(z.slice(1, 3));
    const om = Number(z.slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offsetMin = (z[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms) - offsetMin * 60_000;
  return Number.isFinite(t) ? t : null;
}

function daysInMonth(y: number, mo: number): number {
  return new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/** from plus two calendar years (UTC): the latest `to` a window starting at from may have. */
export function twoYearsAfter(fromMs: number): number {
  const d = new Date(fromMs);
  d.setUTCFullYear(d.getUTCFullYear() + 2);
  return d.getTime();
}

/**
 * The statistics window of a query (range, from, to) at asOfMs. Rules (spec: GET /stats/platform/*):
 * range is 1d, 7d, 1m (30 days), 3m (90 days) or 1y (365 days), aliases d, w, m, y, default 1m, and
 * is ignored when from is given (not even checked: the spec says so, so a client may leave a stale
 * range in its query); to defaults to as_of and is clamped to it; from defaults to to minus the range;
 * from must be before to; the span may not exceed two calendar years.
 */
export function parseWindow(q: Record<string, unknown>, asOfMs: number): StatsWindow {
  const toText = singleParam(q, 'to');
  const fromText = singleParam(q, 'from');
  let toMs = asOfMs;
  if (toText !== undefined) {
    const t = parseRfc3339(toText);
    if (t === null) throw new ApiError('invalid_request', `to '${toText.slice(0, 40)}' is not an RFC 3339 date-time such as 2026-01-05T12:00:00Z`);
    toMs = Math.min(t, asOfMs);
  }
  let fromMs: number;
  if (fromText !== undefined) {
    const f = parseRfc3339(fromText);
    if (f === null) throw new ApiError('invalid_request', `from '${fromText.slice(0, 40)}' is not an RFC 3339 date-time such as 2026-01-05T12:00:00Z`);
    fromMs = f;
  } else {
    fromMs = toMs - RANGE_MS[parseRange(q)];
  }
  if (fromMs >= toMs) {
    const clamped = toText === undefined || parseRfc3339(toText)! > asOfMs ? ` (to is clamped to as_of ${rfc3339(asOfMs)})` : '';
    throw new ApiError('invalid_request', `from must be before to${clamped}`);
  }
  if (toMs > twoYearsAfter(fromMs)) throw new ApiError('invalid_request', 'the window from..to may span at most 2 years');
  return {
    asOfMs, fromMs, toMs,
    fromSlot: slotOf(fromMs),
    toSlotExcl: Math.ceil(toMs / SLOT_MS),
    granularity: toMs - fromMs <= HOURLY_MAX_MS ? 'hour' : 'day',
  };
}

/** The range parameter (default 1m); invalid_request when repeated or not one of the names and aliases. */
function parseRange(q: Record<string, unknown>): RangeName {
  const rangeText = singleParam(q, 'range');
  if (rangeText === undefined) return DEFAULT_RANGE;
  const r = RANGE_ALIASES[rangeText];
  if (!r) throw new ApiError('invalid_request', `range '${rangeText.slice(0, 16)}' is not one of 1d, 7d, 1m, 3m, 1y (aliases d, w, m, y)`);
  return r;
}

/** The window's buckets in time order: hours or UTC days, the first and last possibly partial. */
export function buckets(w: StatsWindow): Bucket[] {
  const size = w.granularity === 'hour' ? SLOTS_PER_HOUR : SLOTS_PER_DAY;
  const out: Bucket[] = [];
  for (let start = Math.floor(w.fromSlot / size) * size; start < w.toSlotExcl; start += size) {
    out.push({ t: start * SLOT_MS, fromSlot: Math.max(start, w.fromSlot), toSlotExcl: Math.min(start + size, w.toSlotExcl) });
  }
  return out;
}
