// What every fuzzed answer must satisfy (issue 25, part 3), and the tally the campaign reports:
// no 5xx, every refusal the spec's error envelope (REST) or error frame / close code (WebSocket),
// no state change from a refused input. A violation keeps the input that caused it.
import { WS_ERRORS, CLOSE } from '../src/ws/protocol';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const WS_CODES: ReadonlySet<number> = new Set(Object.values(WS_ERRORS));
/** Close codes a fuzzed socket may see: the server's own (protocol.ts CLOSE) and ws's protocol errors. */
export const ALLOWED_CLOSE: ReadonlySet<number> = new Set([...Object.values(CLOSE), 1002, 1006, 1007]);

export interface Violation {
  surface: string;
  what: string;
  input: string;
}

export class Tally {
  readonly inputs = new Map<string, number>();
  readonly refused = new Map<string, number>();
  readonly violations: Violation[] = [];
  /** wall-clock ms spent per surface */
  readonly ms = new Map<string, number>();

  timed(surface: string, ms: number): void {
    this.ms.set(surface, (this.ms.get(surface) ?? 0) + ms);
  }

  count(surface: string, refused: boolean): void {
    this.inputs.set(surface, (this.inputs.get(surface) ?? 0) + 1);
    if (refused) this.refused.set(surface, (this.refused.get(surface) ?? 0) + 1);
  }

  /** told of each violation as it happens (the CLI prints it, so a long run shows it early) */
  onViolation: ((v: Violation) => void) | null = null;

  fail(surface: string, what: string, input: unknown): void {
    this.onViolation?.({ surface, what, input: clip(input) });
    // keep the first 50 in full; a systematic failure would otherwise fill memory
    if (this.violations.length < 50) this.violations.push({ surface, what, input: clip(input) });
    else this.violations.push({ surface, what, input: '' });
  }

  get total(): number {
    let n = 0;
    for (const v of this.inputs.values()) n += v;
    return n;
  }
}

export function clip(x: unknown, n = 600): string {
  let s: string;
  try {
    s = typeof x === 'string' ? x : JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : Buffer.isBuffer(v) ? `<${v.length} bytes>` : v));
  } catch {
    s = String(x);
  }
  return s.length > n ? `${s.slice(0, n)}…(${s.length})` : s;
}

/** Problems with one REST answer (empty when it is fine). */
export function restProblems(status: number, headers: Record<string, unknown>, body: string, head = false): string[] {
  const p: string[] = [];
  if (status >= 500 && status !== 503) p.push(`status ${status}`);
  if (status < 400) return p;
  // HEAD answers carry the GET's headers and no body (RFC 9110 9.3.2)
  if (head) return p.concat(['x-request-id', 'x-ratelimit-limit'].filter((h) => headers[h] === undefined).map((h) => `no ${h} header`));
  for (const h of ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    if (headers[h] === undefined) p.push(`no ${h} header`);
  }
  let b: Record<string, unknown>;
  try {
    b = JSON.parse(body) as Record<string, unknown>;
  } catch {
    p.push(`body is not JSON: ${body.slice(0, 80)}`);
    return p;
  }
  if (!Number.isInteger(b.code) || b.code === 0) p.push('code is not a non-zero integer');
  if (b.code === 50000) p.push('internal_error');
  if (typeof b.error !== 'string' || typeof b.message !== 'string' || !b.message.startsWith(`${b.error}: `)) p.push('message does not lead with the error name');
  if (typeof b.timestamp !== 'string' || !ISO_MS.test(b.timestamp)) p.push('timestamp is not ISO 8601 with ms');
  if (b.request_id !== headers['x-request-id']) p.push('request_id differs from X-Request-Id');
  // a 503 is allowed only as one of the venue's own refusals (sequencer, capacity, reserve)
  if (status === 503 && ![1501, 1503, 1504, 1505, 50300].includes(b.code as number)) p.push(`503 with code ${String(b.code)}`);
  if (status === 429 && headers['retry-after'] === undefined) p.push('429 without Retry-After');
  return p;
}

/** Problems with one WebSocket frame the server sent (empty when it is fine). */
export function wsFrameProblems(f: unknown): string[] {
  if (f === null || typeof f !== 'object' || Array.isArray(f)) return ['frame is not a JSON object'];
  const o = f as Record<string, unknown>;
  if (typeof o.event === 'string' || typeof o.channel === 'string') return [];
  if (o.code === 0) return [];
  const p: string[] = [];
  if (!WS_CODES.has(o.code as number)) p.push(`unknown error code ${String(o.code)}`);
  if (o.code === WS_ERRORS.internal_error) p.push('internal_error');
  if (typeof o.error !== 'string' || typeof o.message !== 'string' || !o.message.startsWith(`${o.error}: `)) p.push('message does not lead with the error name');
  if (!('id' in o) || !('op' in o)) p.push('error frame without id/op');
  return p;
}
