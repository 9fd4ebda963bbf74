// A sample of the fuzzing campaign (gateway/fuzz; `npm run fuzz -- --inputs 100000` runs the whole one):
// a fixed seed, two thousand inputs over every surface, no violation allowed. The verdicts themselves
// are checked first, so a campaign that passed could have failed.
import { describe, it, expect } from 'vitest';
import { runCampaign, report } from '../fuzz/campaign';
import { restProblems, wsFrameProblems } from '../fuzz/verdict';

const ENVELOPE_HEADERS = { 'x-request-id': 'r1', 'x-ratelimit-limit': '1', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1', 'retry-after': '1' };
const envelope = (code: number, error: string) => JSON.stringify({ code, message: `${error}: why`, error, timestamp: '2026-01-01T00:00:00.000Z', request_id: 'r1' });

describe('fuzz verdicts', () => {
  it('accept the spec\'s envelope and refuse everything short of it', () => {
    expect(restProblems(400, ENVELOPE_HEADERS, envelope(40000, 'invalid_request'))).toEqual([]);
    expect(restProblems(429, ENVELOPE_HEADERS, envelope(42900, 'rate_limited'))).toEqual([]);
    expect(restProblems(500, ENVELOPE_HEADERS, envelope(50000, 'internal_error'))).not.toEqual([]);
    expect(restProblems(400, ENVELOPE_HEADERS, '{"error":"Bad Request","message":"Client Error","statusCode":400}')).not.toEqual([]);
    expect(restProblems(400, { 'x-request-id': 'r1' }, envelope(40000, 'invalid_request'))).not.toEqual([]);
    expect(restProblems(400, ENVELOPE_HEADERS, envelope(40000, 'invalid_request').replace('"r1"}', '"r2"}'))).not.toEqual([]);
    expect(restProblems(503, ENVELOPE_HEADERS, envelope(50000, 'internal_error'))).not.toEqual([]);
    expect(restProblems(431, ENVELOPE_HEADERS, '')).not.toEqual([]);
    expect(wsFrameProblems({ id: '1', op: 'ping', code: 40000, message: 'invalid_request: x', error: 'invalid_request' })).toEqual([]);
    expect(wsFrameProblems({ id: '1', op: 'ping', code: 50000, message: 'internal_error: x', error: 'internal_error' })).not.toEqual([]);
    expect(wsFrameProblems({ id: '1', op: 'ping', code: 12345, message: 'x', error: 'y' })).not.toEqual([]);
    expect(wsFrameProblems('text')).not.toEqual([]);
  });
});

describe('fuzz campaign sample', () => {
  it('2,000 seeded inputs over REST, WebSocket, encrypted frames and the results link: no violation', async () => {
    const r = await runCampaign({ inputs: 2_000, seed: 2025 });
    const lines = report(r);
    expect(r.tally.total).toBe(2_000);
    for (const s of ['rest', 'ws-anonymous', 'ws-login', 'ws-encrypted', 'link-results']) expect(r.tally.inputs.get(s) ?? 0, s).toBeGreaterThan(50);
    expect(r.tally.violations, lines.join('\n')).toEqual([]);
  }, 240_000);
});
