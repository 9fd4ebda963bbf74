// Fuzzing the sequencer's client link from an unauthenticated peer (issue 25, part 3): seeded
// fast-check frame sequences (forged auth frames with random keys, signatures, roles and purposes;
// submits and subscriptions before any auth; non-JSON, binary, oversized). Before authentication
// the link may answer only a `proof` to a `challenge`; anything else gets `auth_refused` and a 1008
// close, and nothing is sequenced. Hundreds of inputs here; docs/reliability.md, "Fuzzing".
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import WebSocket from 'ws';
import { pino } from 'pino';
import { startSequencer } from '../src/index';
import { cleanupDirs, fixture, opaqueOp } from './helpers';

afterAll(cleanupDirs);

const hex = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b).toString('hex'));
const field = fc.oneof(fc.string({ maxLength: 16 }), fc.integer(), fc.constant(null), hex(32), hex(64));

/** One hostile frame; `nonce` is the connection's challenge nonce (a peer sees it). */
const frame: fc.Arbitrary<(nonce: string) => string | Buffer> = fc.oneof(
  { weight: 4, arbitrary: fc.record({
    t: fc.constantFrom('auth', 'submit', 'subscribe', 'challenge', 'hello', 'ack', 'resume'),
    role: fc.oneof(fc.constantFrom('gateway', 'node'), field), id: fc.oneof(fc.integer({ min: -1, max: 8 }), field),
    purpose: fc.oneof(fc.constantFrom('submit', 'feed', 'results'), field), key: fc.oneof(hex(32), field), sig: fc.oneof(hex(64), field),
    challenge: fc.oneof(hex(32), field), rid: field, from: field, useNonce: fc.boolean(),
    op: fc.constantFrom(undefined, opaqueOp(5, 1)),
  }, { requiredKeys: ['t'] }).map(({ useNonce, ...f }) => (nonce: string) => JSON.stringify({ ...f, ...(useNonce ? { nonce } : {}) })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => () => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 64 }).map((s) => () => s) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => () => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.constant(() => `{"t":"submit","pad":"${'x'.repeat(300_000)}"}`) },
);

describe('sequencer client link: fuzzed frames from an unauthenticated peer', () => {
  it('refuses every sequence, answers nothing but proof / auth_refused, sequences nothing', async () => {
    const f = fixture(5);
    const s = await startSequencer(f.config, f.platform.privateKey, pino({ level: 'silent' }));
    try {
      const before = s.sequencer.lastSeq;
      const problems: string[] = [];
      let refusals = 0;
      const inputs = fc.sample(fc.array(frame, { minLength: 1, maxLength: 3 }), { numRuns: 300, seed: 25 });
      for (const frames of inputs) {
        const ws = new WebSocket(s.url);
        const got: Record<string, unknown>[] = [];
        const sent: string[] = [];
        const code = await new Promise<number>((resolve) => {
          const timer = setTimeout(() => {
            ws.terminate();
            resolve(-1);
          }, 10_000);
          ws.on('message', (d) => {
            got.push(JSON.parse(d.toString()) as Record<string, unknown>);
            if (got.length !== 2) return; // the quote, then auth_challenge with the nonce
            for (const fr of frames) {
              const x = fr(String(got[1]!.nonce));
              sent.push(String(x).slice(0, 160));
              ws.send(x);
            }
            // sequences made only of challenges are answered and left waiting for auth: end them here
            setTimeout(() => ws.close(), 300);
          });
          ws.on('close', (c) => {
            clearTimeout(timer);
            resolve(c);
          });
          ws.on('error', () => undefined);
        });
        const answers = got.slice(2);
        const bad = answers.filter((a) => a.t !== 'proof' && a.t !== 'auth_refused');
        if (bad.length) problems.push(`answered ${JSON.stringify(bad[0]).slice(0, 120)} to ${sent.join(' | ')}`);
        const refused = answers.some((a) => a.t === 'auth_refused');
        if (refused) refusals++;
        if (refused && code !== 1008) problems.push(`refused but closed with ${code}`);
        if (!refused && code !== 1000 && code !== 1005) problems.push(`closed with ${code} without a refusal: ${sent.join(' | ')}`);
      }
      expect(problems).toEqual([]);
      expect(refusals).toBeGreaterThan(200); // the inputs reached the refusal path, not only challenges
      expect(s.sequencer.lastSeq).toBe(before);
      expect(s.sequencer.acceptedCount).toBe(0);
    } finally {
      await s.close();
    }
  }, 180_000);
});
