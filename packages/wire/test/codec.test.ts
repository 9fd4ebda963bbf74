import { describe, expect, it } from 'vitest';
import {
  decodeFrame, decodeGatewayToSequencer, decodeSequencerToNode, decodeToSequencer, decodeNodeToGateway, encodeFrame,
  FrameError, type Frame,
} from '../src/index';

const b64 = Buffer.from('sealed bytes').toString('base64');
const op = { kind: 'place', symbol: 'BTC-PERP', pub: { side: 'buy', tif: 'GTC', reduce: false, x: null, n: 3 }, sealed: [b64, b64] };
const hex = (n: number) => 'ab'.repeat(n / 2);

const good: Frame[] = [
  { t: 'submit', rid: 'r-1', op },
  { t: 'ack', rid: 'r-1', seq: '1', ts_ns: '1795323337546000000' },
  { t: 'nack', rid: '', code: 'BAD_FRAME', message: 'x' },
  { t: 'quote', quote: { measurement: hex(64), enclave_pubkey: hex(64), issued_at: new Date().toISOString(), platform_signature: hex(128) } },
  { t: 'challenge', nonce: hex(64) },
  { t: 'proof', nonce: hex(64), sig: hex(128) },
  { t: 'feed', node: 3, from_seq: '1' },
  { t: 'progress', taken: '0' },
  { t: 'op', seq: '9', ts_ns: '1', kind: 'job_end', symbol: '', pub: {}, sealed: '', batch_end: true },
  { t: 'op', seq: '18446744073709551615', ts_ns: '0', kind: 'cancel', symbol: 'ETH-PERP', pub: {}, sealed: b64, batch_end: true },
  { t: 'hello', node: 1, purpose: 'results', key: hex(64), nonce: hex(64), sig: hex(128), challenge: hex(64) },
  { t: 'auth_challenge', nonce: hex(64) },
  { t: 'auth', role: 'gateway', id: 0, purpose: 'submit', key: hex(64), nonce: hex(64), sig: hex(128) },
  { t: 'auth_ok', role: 'node', id: 3 },
  { t: 'auth_refused', code: 'BAD_SIGNATURE', message: 'x' },
  { t: 'resume', from_seq: '42', key: hex(64), sig: hex(128) },
  { t: 'result', node: 2, seq: '7', pub: { kind: 'place', fills: ['a'], nested: { ok: true } }, sealed: '', job: 'batch:7-7:0' },
  { t: 'capacity', node: 4, production: 'stopped', exhausted: false, orders_left: '130' },
  { t: 'capacity', node: 1, production: 'idle', exhausted: true, orders_left: '' },
];

describe('codec', () => {
  it('round-trips every frame type', () => {
    for (const f of good) expect(decodeFrame(encodeFrame(f))).toEqual(f);
    expect(decodeFrame(Buffer.from(encodeFrame(good[0]!)))).toEqual(good[0]);
  });

  const bad: [string, unknown, RegExp][] = [
    ['not json', '{', /not valid JSON/],
    ['array', '[]', /must be a JSON object/],
    ['unknown type', { t: 'boom' }, /unknown frame type "boom"/],
    ['missing rid', { t: 'submit', op }, /rid must be/],
    ['extra field', { t: 'submit', rid: 'r', op, extra: 1 }, /unknown field 'extra'/],
    ['rid with space', { t: 'submit', rid: 'a b', op }, /rid must be/],
    ['empty symbol', { t: 'submit', rid: 'r', op: { ...op, symbol: '' } }, /symbol must not be empty/],
    ['bad base64', { t: 'submit', rid: 'r', op: { ...op, sealed: ['@@@@'] } }, /sealed\[0\] is not valid base64/],
    ['no sealed', { t: 'submit', rid: 'r', op: { ...op, sealed: [] } }, /sealed must hold/],
    ['object in pub', { t: 'submit', rid: 'r', op: { ...op, pub: { a: {} } } }, /pub.a must be/],
    ['float seq', { t: 'ack', rid: 'r', seq: '1.5', ts_ns: '1' }, /seq must be a decimal/],
    ['zero seq', { t: 'ack', rid: 'r', seq: '0', ts_ns: '1' }, /seq must be between 1/],
    ['leading zero', { t: 'feed', node: 1, from_seq: '01' }, /from_seq must be a decimal/],
    ['seq over u64', { t: 'feed', node: 1, from_seq: '18446744073709551616' }, /between/],
    ['node 0', { t: 'feed', node: 0, from_seq: '1' }, /node must be an integer/],
    ['number seq', { t: 'resume', from_seq: 5, key: hex(64), sig: hex(128) }, /decimal integer string/],
    ['short signature', { t: 'proof', nonce: hex(64), sig: hex(64) }, /sig must be 128/],
    ['unknown production state', { t: 'capacity', node: 1, production: 'paused', exhausted: false, orders_left: '1' }, /production must be one of/],
    ['negative orders_left', { t: 'capacity', node: 1, production: 'idle', exhausted: false, orders_left: '-1' }, /orders_left must be a decimal/],
    ['exhausted as string', { t: 'capacity', node: 1, production: 'idle', exhausted: 'yes', orders_left: '1' }, /exhausted must be a boolean/],
    ['negative progress', { t: 'progress', taken: '-1' }, /taken must be a decimal/],
    ['empty sealed on an op', { t: 'op', seq: '1', ts_ns: '1', kind: 'place', symbol: 's', pub: {}, sealed: '', batch_end: true }, /op.sealed must not be empty/],
    ['empty symbol on an op', { t: 'op', seq: '1', ts_ns: '1', kind: 'place', symbol: '', pub: {}, sealed: b64, batch_end: true }, /op.symbol must not be empty/],
    ['job end with a share', { t: 'op', seq: '1', ts_ns: '1', kind: 'job_end', symbol: '', pub: {}, sealed: b64, batch_end: true }, /empty sealed field and batch_end true/],
    ['job end not ending a job', { t: 'op', seq: '1', ts_ns: '1', kind: 'job_end', symbol: '', pub: {}, sealed: '', batch_end: false }, /empty sealed field and batch_end true/],
    ['batch_end missing', { t: 'op', seq: '1', ts_ns: '1', kind: 'k', symbol: 's', pub: {}, sealed: b64 }, /missing field 'batch_end'/],
  ];
  for (const [name, value, msg] of bad) {
    it(`rejects ${name}`, () => {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      expect(() => decodeFrame(text)).toThrow(FrameError);
      expect(() => decodeFrame(text)).toThrow(msg);
    });
  }

  it('keeps the rid of a submit that fails later validation, for the nack', () => {
    try {
      decodeGatewayToSequencer(JSON.stringify({ t: 'submit', rid: 'keep-me', op: { ...op, kind: 5 } }));
      expect.unreachable();
    } catch (e) {
      expect((e as FrameError).rid).toBe('keep-me');
    }
  });

  it('direction decoders refuse frames that may not travel that way', () => {
    expect(() => decodeToSequencer(encodeFrame(good[1]!))).toThrow(/'ack' is not allowed here/);
    expect(() => decodeSequencerToNode(encodeFrame({ t: 'feed', node: 1, from_seq: '1' }))).toThrow(/not allowed/);
    const hello = { t: 'hello', node: 2, purpose: 'results', key: hex(64), nonce: hex(64), sig: hex(128), challenge: hex(64) } as const;
    expect(decodeNodeToGateway(encodeFrame(hello))).toEqual(hello);
    // A pre-authentication hello (no proof) is refused by the codec, so no server can take it.
    expect(() => decodeNodeToGateway(JSON.stringify({ t: 'hello', node: 2 }))).toThrow(/missing field 'purpose'/);
    expect(() => decodeToSequencer(encodeFrame({ t: 'auth', role: 'admin', id: 0, purpose: 'submit', key: hex(64), nonce: hex(64), sig: hex(128) } as never))).toThrow(/auth.role must be one of/);
    expect(() => decodeToSequencer(encodeFrame({ t: 'auth', role: 'node', id: 1, purpose: 'steal', key: hex(64), nonce: hex(64), sig: hex(128) } as never))).toThrow(/auth.purpose must be one of/);
  });

  it('refuses frames above the size limit', () => {
    expect(() => decodeFrame(encodeFrame(good[0]!), 10)).toThrow(/exceeds the 10-byte limit/);
  });
});
