// Query-string helpers every REST route uses: single-valued parameters, list limits, and the refusal
// of any parameter a route does not take (docs/api.md: unknown query parameters are 400 invalid_request).
import { ApiError } from '../errors';

/** The value of a single-valued query parameter, or undefined; invalid_request when repeated or not text. */
export function singleParam(q: Record<string, unknown>, name: string): string | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw new ApiError('invalid_request', `query parameter '${name}' appears more than once`);
  if (typeof v !== 'string') throw new ApiError('invalid_request', `query parameter '${name}' must be text`);
  return v;
}

/** The `limit` query parameter of a list endpoint: an integer from 1 to max, dflt when absent. */
export function limitParam(q: Record<string, unknown>, dflt: number, max: number): number {
  const text = singleParam(q, 'limit');
  if (text === undefined) return dflt;
  if (!/^\d{1,6}$/.test(text) || Number(text) < 1 || Number(text) > max) throw new ApiError('invalid_request', `limit must be an integer from 1 to ${max}`);
  return Number(text);
}

/** invalid_request naming the first query parameter not in allowed. */
export function rejectUnknownParams(q: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(q)) {
    if (!allowed.includes(k)) {
      const list = allowed.length ? `it accepts ${allowed.join(', ')}` : 'it takes no query parameters';
      throw new ApiError('invalid_request', `unknown query parameter '${k.slice(0, 32)}'; ${list}`);
    }
  }
}
