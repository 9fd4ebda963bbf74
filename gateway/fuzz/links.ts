// Fuzzing an internal link (docs/decisions/0003-internal-authentication.md) as an unauthenticated
// peer: connect, read the auth_challenge, send hostile frames (forged hellos with random keys,
// signatures, nonces and purposes; results or capacity frames before any hello; non-JSON, binary).
// The link must answer nothing but auth_refused and close (1008, or a WebSocket protocol close),
// and nothing the gateway holds may move (results cursor, live nodes).
import fc from 'fast-check';
import WebSocket from 'ws';
import { clip, type Tally } from './verdict';

const hex = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b).toString('hex'));
const field = fc.oneof(fc.string({ maxLength: 16 }), fc.integer(), fc.constant(null), hex(32), hex(64), fc.constant('x'.repeat(5000)));

/** One hostile frame; `nonce` stands for the challenge's nonce (a peer sees it). */
export const linkFrame: fc.Arbitrary<(nonce: string) => string | Buffer> = fc.oneof(
  { weight: 4, arbitrary: fc.record({
    t: fc.constantFrom('hello', 'result', 'capacity', 'submit', 'auth', 'resume', 'subscribe'),
    node: fc.oneof(fc.integer({ min: -1, max: 8 }), field), purpose: fc.oneof(fc.constantFrom('results', 'feed', 'submit'), field),
    key: fc.oneof(hex(32), field), sig: fc.oneof(hex(64), field), challenge: fc.oneof(hex(32), field),
    seq: fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String), field), useNonce: fc.boolean(),
  }, { requiredKeys: ['t'] }).map(({ useNonce, ...f }) => (nonce: string) => JSON.stringify({ ...f, ...(useNonce ? { nonce } : {}) })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => () => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 64 }).map((s) => () => s) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => () => Buffer.from(b)) },
);

export interface LinkTarget {
  name: string;
  url: string;
  /** what must not move: a text compared before and after */
  state: () => string;
}

/** One connection, one to three hostile frames; checks the answers, the close and the state. */
export async function fuzzLink(t: LinkTarget, frames: ((nonce: string) => string | Buffer)[], tally: Tally): Promise<void> {
  const before = t.state();
  const ws = new WebSocket(t.url);
  const got: string[] = [];
  const sent: string[] = [];
  const closed = await new Promise<number>((resolve) => {
    const timer = setTimeout(() => {
      ws.terminate();
      resolve(-1);
    }, 10_000);
    ws.on('message', (d) => {
      const s = d.toString();
      got.push(s);
      if (got.length === 1) {
        let nonce = '';
        try {
          nonce = String((JSON.parse(s) as { nonce?: unknown }).nonce ?? '');
        } catch { /* checked below */ }
        for (const f of frames) {
          const x = f(nonce);
          sent.push(clip(x, 200));
          ws.send(x);
        }
      }
    });
    ws.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    ws.on('error', () => undefined);
  });
  tally.count(`link-${t.name}`, true);
  const input = { frames: sent };
  if (closed === -1) tally.fail(`link-${t.name}`, 'the link neither refused nor closed within 10 s', input);
  else if (![1008, 1002, 1009, 1007].includes(closed)) tally.fail(`link-${t.name}`, `closed with ${closed}`, input);
  const first = got[0] ? safeJson(got[0]) : null;
  if (!first || first.t !== 'auth_challenge') tally.fail(`link-${t.name}`, 'no auth_challenge first', { ...input, got: got.slice(0, 2) });
  for (const g of got.slice(1)) {
    const f = safeJson(g);
    if (!f || f.t !== 'auth_refused' || typeof f.code !== 'string') tally.fail(`link-${t.name}`, `answered an unauthenticated peer: ${g.slice(0, 120)}`, input);
  }
  const after = t.state();
  if (after !== before) tally.fail(`link-${t.name}`, 'state moved', { ...input, before, after });
}

function safeJson(s: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(s) as unknown;
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
