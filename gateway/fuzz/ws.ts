// WebSocket fuzzing on the gateway's real socket: hostile frames before login (fresh sockets, a few
// frames each, within the anonymous budget) and after login, and tampered encrypted trading frames
// (ciphertext bits, header fields that are the AAD, nonces, lengths, replays, op swaps, setup key
// material). After each input a plain ping must still be answered (the socket lives) unless the
// server closed it with one of its close codes; every frame it sent must be a well-formed answer; a
// tampered frame must never be accepted, and the account must not change.
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { createSetupRequest, parseRequestHeader } from '@tenebra/session';
import { RawWs } from '../test/ws-helpers';
import { OPS, CHANNELS } from '../src/ws/protocol';
import { ALLOWED_CLOSE, clip, wsFrameProblems, type Tally } from './verdict';

const text = fc.oneof(fc.string({ maxLength: 24 }), fc.constantFrom('', 'ETH-USDC-PERP', 'orders', 'x'.repeat(300), '\u0000', '\ud800'));
const scalar = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
const jsonish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(text, tie('v'), { maxKeys: 4 })),
})).v;

/** One hostile frame: text (JSON or not) or binary. */
export const wsFrame: fc.Arbitrary<string | Buffer> = fc.oneof(
  { weight: 4, arbitrary: fc.record({
    id: fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), scalar, fc.constant('x'.repeat(200))),
    op: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...OPS) }, { weight: 1, arbitrary: text }),
    args: fc.oneof(
      fc.record({ channels: fc.array(fc.oneof(fc.constantFrom(...CHANNELS), text), { maxLength: 3 }) }, { requiredKeys: [] }),
      fc.record({ token: fc.oneof(text, fc.constant('a.b.c')), cancel_on_disconnect: scalar }, { requiredKeys: [] }),
      fc.record({ header: jsonish, ciphertext: fc.oneof(text, fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('base64'))), public_key: text }, { requiredKeys: [] }),
      jsonish,
    ),
  }, { requiredKeys: ['id', 'op'] }).map((f) => JSON.stringify(f)) },
  { weight: 1, arbitrary: jsonish.map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 1, arbitrary: fc.string({ maxLength: 64 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.constantFrom('{"id":"1","op":"ping","args":[]}', '{"id":"1","op":"login"}', `{"id":"1","op":"ping","pad":"${'x'.repeat(20_000)}"}`, '{"id":"1","op":"subscribe","args":{"channels":["orders","orders"]}}') },
);

/** Sends frames, then a ping; returns what the server said up to the pong (or the close). */
async function exchange(c: RawWs, frames: (string | Buffer)[], tally: Tally, surface: string, input: unknown): Promise<'alive' | 'closed'> {
  const from = c.frames.length;
  for (const f of frames) c.send(f);
  const id = `probe-${Math.random().toString(36).slice(2)}`;
  c.send({ id, op: 'ping' });
  const end = Date.now() + 10_000;
  let pong = false;
  while (!c.closed && Date.now() < end) {
    if (c.frames.slice(from).some((r) => r.f.id === id)) {
      pong = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  for (const r of c.frames.slice(from)) for (const p of wsFrameProblems(r.f)) tally.fail(surface, p, { input, answer: r.raw.slice(0, 200) });
  if (c.closed) {
    if (!ALLOWED_CLOSE.has(c.closed.code)) tally.fail(surface, `closed with code ${c.closed.code}`, input);
    return 'closed';
  }
  if (!pong) tally.fail(surface, 'no answer to a ping after the input (socket hung)', input);
  return 'alive';
}

/** Before login: each socket takes up to four hostile frames (the anonymous budget is 10 a second). */
export async function fuzzPreLogin(wsUrl: string, frames: (string | Buffer)[], tally: Tally): Promise<void> {
  for (let i = 0; i < frames.length; i += 4) {
    const batch = frames.slice(i, i + 4);
    const c = await RawWs.open(wsUrl);
    const r = await exchange(c, batch, tally, 'ws-anonymous', batch.map((b) => clip(b, 200)));
    if (r === 'closed') tally.count('ws-anonymous-closed', false);
    for (let k = 0; k < batch.length; k++) tally.count('ws-anonymous', true);
    await c.close();
  }
}

/** A logged-in socket kept across inputs (reopened when the server closes it). */
export class LoggedIn {
  private c: RawWs | null = null;
  constructor(private readonly wsUrl: string, private readonly token: () => string, private readonly withSession: boolean) {}

  async socket(): Promise<RawWs> {
    if (this.c && !this.c.closed) return this.c;
    const c = await RawWs.open(this.wsUrl);
    const l = await c.login(this.token());
    if (l.f.code !== 0) throw new Error(`fuzz login refused: ${l.raw}`);
    if (this.withSession) {
      const s = await c.setup();
      if (s.f.code !== 0) throw new Error(`fuzz session.setup refused: ${s.raw}`);
    }
    this.c = c;
    return c;
  }

  async close(): Promise<void> {
    await this.c?.close();
  }
}

/** After login: one hostile frame per input. */
export async function fuzzLoggedIn(s: LoggedIn, frame: string | Buffer, tally: Tally, fingerprint: () => Promise<string>): Promise<void> {
  const c = await s.socket();
  const before = await fingerprint();
  await exchange(c, [frame], tally, 'ws-login', clip(frame, 300));
  // a plain frame after login can never place or cancel (trading ops must be sealed)
  const after = await fingerprint();
  if (after !== before) tally.fail('ws-login', 'state changed by a plain frame', clip(frame, 300));
  tally.count('ws-login', true);
}

export type Tamper =
  | { kind: 'ct-bit'; at: number; bit: number }
  | { kind: 'ct-length'; delta: number }
  | { kind: 'ct-text'; text: string }
  | { kind: 'header'; field: 'symbol_id' | 'request_type' | 'nonce' | 'body_length'; value: unknown }
  | { kind: 'replay' }
  | { kind: 'op-swap'; op: string }
  | { kind: 'setup-key'; key: string };

export const tamper: fc.Arbitrary<Tamper> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('ct-bit' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('ct-length' as const), delta: fc.integer({ min: -40, max: 40 }).filter((d) => d !== 0) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('ct-text' as const), text: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', '====', '!!', 'AAAA')) }) },
  { weight: 3, arbitrary: fc.record({
    kind: fc.constant('header' as const), field: fc.constantFrom('symbol_id', 'request_type', 'nonce', 'body_length'),
    value: fc.oneof(fc.integer({ min: -2, max: 2 ** 33 }), fc.constantFrom('place', 'cancel', 'modify', 'x', null, 1.5, 2 ** 53)),
  }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'replay' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('op-swap' as const), op: fc.constantFrom('order.place', 'order.cancel', 'order.modify', 'session.setup', 'login', 'subscribe') }) },
  { weight: 1, arbitrary: fc.record({
    kind: fc.constant('setup-key' as const),
    key: fc.oneof(
      fc.uint8Array({ minLength: 0, maxLength: 40 }).map((b) => Buffer.from(b).toString('base64')),
      fc.constantFrom(Buffer.alloc(32).toString('base64'), Buffer.from([1, ...Array<number>(31).fill(0)]).toString('base64'), Buffer.alloc(32, 0xff).toString('base64'), 'not base64', ''),
    ),
  }) },
);

/** One tampered encrypted frame on a live session; the session is renewed after each. */
export async function fuzzEncrypted(s: LoggedIn, t: Tamper, symbolId: number, order: Record<string, unknown>, tally: Tally, fingerprint: () => Promise<string>): Promise<void> {
  const c = await s.socket();
  const before = await fingerprint();
  const from = c.frames.length;
  let sent: Record<string, any>;
  if (t.kind === 'setup-key') {
    const { frame } = createSetupRequest(c.nextId());
    sent = { ...frame, args: { ...(frame.args as unknown as Record<string, unknown>) } };
    const args = sent.args as Record<string, unknown>;
    // replace whichever field carries the client's public key
    for (const k of Object.keys(args)) if (/key/i.test(k)) args[k] = t.key;
  } else {
    const frame = c.seal({ place: order } as never, symbolId) as Record<string, any>;
    sent = { ...frame, args: { ...frame.args, header: { ...frame.args.header } } };
    if (t.kind === 'replay') {
      c.send(frame); // the original first, then the same nonce again: only the first may be accepted
      await c.waitFor((r) => r.f.id === frame.id, 'replayed original', 10_000, from);
      sent.id = `${frame.id}r`;
    } else applyTamper(sent, t);
  }
  c.send(sent);
  const outcome = await exchangeAfter(c, sent.id as string, tally, t);
  const accepted = c.frames.slice(from).filter((r) => r.f.id === sent.id && r.f.code === 0);
  if (t.kind !== 'setup-key' && accepted.length) tally.fail('ws-encrypted', 'a tampered frame was accepted', { t, answer: accepted[0]!.raw.slice(0, 200) });
  if (t.kind === 'setup-key' && accepted.length && !validKey(t.key)) tally.fail('ws-encrypted', 'session.setup accepted a bad public key', t);
  // the replay's original was a real placement: its effect is allowed, nothing beyond it
  if (t.kind !== 'replay') {
    const after = await fingerprint();
    if (after !== before) tally.fail('ws-encrypted', 'state changed by a tampered frame', t);
  }
  tally.count('ws-encrypted', true);
  // a fresh session for the next input (a refused frame may have moved the receive counter)
  if (outcome === 'alive') {
    const r = await c.setup();
    if (r.f.code !== 0) await c.close();
  }
}

function validKey(b64: string): boolean {
  const b = Buffer.from(b64, 'base64');
  return b.length === 32 && !b.equals(Buffer.alloc(32)) && b.some((x, i) => i > 0 && x !== 0);
}

async function exchangeAfter(c: RawWs, _id: string, tally: Tally, t: Tamper): Promise<'alive' | 'closed'> {
  return exchange(c, [], tally, 'ws-encrypted', t);
}

function parsesTo(header: unknown, original: string): boolean {
  try {
    return JSON.stringify(parseRequestHeader(header)) === original;
  } catch {
    return false;
  }
}

function applyTamper(f: Record<string, any>, t: Tamper): void {
  const args = f.args as { header: Record<string, unknown>; ciphertext: string };
  switch (t.kind) {
    case 'ct-bit': {
      const b = Buffer.from(args.ciphertext, 'base64');
      b[t.at % b.length]! ^= 1 << t.bit;
      args.ciphertext = b.toString('base64');
      return;
    }
    case 'ct-length': {
      const b = Buffer.from(args.ciphertext, 'base64');
      args.ciphertext = (t.delta < 0 ? b.subarray(0, Math.max(0, b.length + t.delta)) : Buffer.concat([b, randomBytes(t.delta)])).toString('base64');
      return;
    }
    case 'ct-text':
      args.ciphertext = t.text === args.ciphertext ? `${t.text}A` : t.text;
      return;
    case 'header': {
      const old = args.header[t.field];
      const original = JSON.stringify(parseRequestHeader(args.header));
      args.header[t.field] = t.value;
      // proto3 JSON spells one header several ways (null or absent number = 0, an enum by its number):
      // a value that parses to the same header is no tamper, so it is replaced by one that cannot
      if (parsesTo(args.header, original)) args.header[t.field] = typeof old === 'number' ? old + 1 : 'x';
      return;
    }
    case 'op-swap':
      f.op = t.op === f.op ? 'order.cancel' : t.op;
      return;
    default:
  }
}
