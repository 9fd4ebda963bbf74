// Every error code the session layer raises, provoked on purpose.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ClientSessionCipher,
  ServerSessionCipher,
  SessionError,
  acceptSessionSetup,
  buildNonce,
  completeSessionSetup,
  createSetupRequest,
  decodePublicKey,
  decryptPush,
  decryptRequest,
  decryptResponse,
  deriveSessionKey,
  encryptPush,
  encryptRequest,
  encryptResponse,
  fromHex,
  generateSessionKeyPair,
  parseSessionId,
  requestFrame,
  toBase64,
  MAX_COUNTER,
  type SessionErrorCode,
} from '@tenebra/session';

function code(f: () => unknown): SessionErrorCode | 'none' {
  try {
    f();
  } catch (e) {
    if (e instanceof SessionError) return e.code;
    throw e;
  }
  return 'none';
}

const uuid = '0123456789abcdef0123456789abcdef';

function pair(opts: { maxSkip?: number } = {}): { client: ClientSessionCipher; server: ServerSessionCipher } {
  const { keyPair, frame } = createSetupRequest('1');
  const { cipher: server, data } = acceptSessionSetup(frame.args, uuid, opts);
  return { client: completeSessionSetup(keyPair, data, uuid, opts), server };
}

const place = { place: { symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: '1.25', price: '3000', time_in_force: 'IOC', client_order_id: 'e1' } } as const;

// Low-order X25519 u-coordinates (RFC 7748 / libsodium blocklist), little-endian.
const LOW_ORDER = {
  zero: '0000000000000000000000000000000000000000000000000000000000000000', // neutral element
  one: '0100000000000000000000000000000000000000000000000000000000000000',
  order8a: 'e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800',
  order8b: '5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157',
  pMinus1: 'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  p: 'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // non-canonical 0
  pPlus1: 'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // non-canonical 1
};

describe('invalid_public_key', () => {
  it('a key that is not 32 bytes', () => {
    expect(code(() => acceptSessionSetup({ client_ecdh_pubkey: toBase64(new Uint8Array(31).fill(9)) }, uuid))).toBe('invalid_public_key');
    expect(code(() => acceptSessionSetup({ client_ecdh_pubkey: toBase64(new Uint8Array(33).fill(9)) }, uuid))).toBe('invalid_public_key');
    expect(code(() => acceptSessionSetup({ client_ecdh_pubkey: '' }, uuid))).toBe('invalid_public_key');
    expect(code(() => acceptSessionSetup({}, uuid))).toBe('invalid_public_key');
    expect(code(() => acceptSessionSetup(null, uuid))).toBe('invalid_public_key');
    expect(code(() => decodePublicKey('not base64!'))).toBe('invalid_public_key');
    expect(code(() => deriveSessionKey(generateSessionKeyPair(), new Uint8Array(16)))).toBe('invalid_public_key');
  });

  it('the all-zero point and every other low-order point (all-zero shared secret)', () => {
    for (const [name, hex] of Object.entries(LOW_ORDER)) {
      const key = fromHex(hex);
      expect(code(() => deriveSessionKey(generateSessionKeyPair(), key)), name).toBe('invalid_public_key');
      expect(code(() => acceptSessionSetup({ client_ecdh_pubkey: toBase64(key) }, uuid)), name).toBe('invalid_public_key');
    }
  });

  it('node:crypto confirms those points give an all-zero shared secret', () => {
    const priv = crypto.generateKeyPairSync('x25519').privateKey;
    for (const hex of [LOW_ORDER.zero, LOW_ORDER.order8a]) {
      const pub = crypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b656e032100', 'hex'), fromHex(hex)]), format: 'der', type: 'spki' });
      let secret: Buffer | undefined;
      try {
        secret = crypto.diffieHellman({ privateKey: priv, publicKey: pub });
      } catch {
        secret = Buffer.alloc(32); // OpenSSL may refuse the all-zero result itself
      }
      expect(secret.every((b) => b === 0)).toBe(true);
    }
  });

  it('the client refuses a bad server key in the setup response', () => {
    const { keyPair } = createSetupRequest('1');
    expect(code(() => completeSessionSetup(keyPair, { session_id: '5', server_ecdh_pubkey: toBase64(fromHex(LOW_ORDER.zero)) }, uuid))).toBe('invalid_public_key');
    expect(code(() => completeSessionSetup(keyPair, { session_id: '5', server_ecdh_pubkey: 'AAAA' }, uuid))).toBe('invalid_public_key');
  });
});

describe('decrypt_failed', () => {
  it('an altered ciphertext or tag byte', () => {
    const { client, server } = pair();
    const sealed = client.sealRequest('place', 1, Buffer.from('payload'));
    for (const at of [0, sealed.ciphertext.length - 1]) {
      const bad = Uint8Array.from(sealed.ciphertext);
      bad[at] = (bad[at] as number) ^ 1;
      expect(code(() => server.openRequest(sealed.header, bad, 'order.place'))).toBe('decrypt_failed');
    }
    expect(Buffer.from(server.openRequest(sealed.header, sealed.ciphertext, 'order.place')).toString()).toBe('payload');
  });

  it('altered associated data: symbol_id, request_type, body_length, user_uuid, fencing_epoch', () => {
    const { client, server } = pair();
    const sealed = client.sealRequest('place', 7, Buffer.from('x'));
    expect(code(() => server.openRequest({ ...sealed.header, symbol_id: 8 }, sealed.ciphertext))).toBe('decrypt_failed');
    expect(code(() => server.openRequest({ ...sealed.header, request_type: 'cancel' }, sealed.ciphertext))).toBe('decrypt_failed');
    expect(code(() => server.openRequest(sealed.header, sealed.ciphertext, 'order.cancel'))).toBe('decrypt_failed');
    expect(code(() => server.openRequest({ ...sealed.header, body_length: sealed.header.body_length + 1 }, sealed.ciphertext))).toBe('decrypt_failed');
    // A server bound to another account rebuilds a different AAD.
    const key = crypto.randomBytes(32);
    const c = new ClientSessionCipher(key, 9n, uuid);
    const other = new ServerSessionCipher(key, 9n, 'ffffffffffffffffffffffffffffffff');
    const s2 = c.sealRequest('cancel', 0, Buffer.from('x'));
    expect(code(() => other.openRequest(s2.header, s2.ciphertext))).toBe('decrypt_failed');
    // Responses: a changed message_type or fencing_epoch breaks the tag.
    const res = server.sealResponse('ack', Buffer.from('y'));
    expect(code(() => client.openResponse({ ...res.header, message_type: 'order_update' }, res.ciphertext))).toBe('decrypt_failed');
    expect(code(() => client.openResponse({ ...res.header, fencing_epoch: 1 }, res.ciphertext))).toBe('decrypt_failed');
    expect(Buffer.from(client.openResponse(res.header, res.ciphertext)).toString()).toBe('y');
  });

  it('a wrong session id in the nonce, or a wrong key', () => {
    const key = crypto.randomBytes(32);
    const c = new ClientSessionCipher(key, 1000n, uuid);
    const sealed = c.sealRequest('place', 1, Buffer.from('z'));
    expect(code(() => new ServerSessionCipher(key, 1001n, uuid).openRequest(sealed.header, sealed.ciphertext))).toBe('decrypt_failed');
    expect(code(() => new ServerSessionCipher(crypto.randomBytes(32), 1000n, uuid).openRequest(sealed.header, sealed.ciphertext))).toBe('decrypt_failed');
    expect(code(() => new ServerSessionCipher(key, 1000n, uuid).openRequest({ ...sealed.header, body_length: 15 }, sealed.ciphertext.subarray(0, 15)))).toBe('decrypt_failed');
    expect(Buffer.from(new ServerSessionCipher(key, 1000n, uuid).openRequest(sealed.header, sealed.ciphertext)).toString()).toBe('z');
  });

  it('a failed frame does not move the receive counter: the next honest frame still opens', () => {
    const { client, server } = pair();
    const a = client.sealRequest('place', 1, Buffer.from('a'));
    const bad = Uint8Array.from(a.ciphertext);
    bad[0] = (bad[0] as number) ^ 0x80;
    expect(code(() => server.openRequest(a.header, bad))).toBe('decrypt_failed');
    expect(server.recvCounter).toBe(0);
    const b = client.sealRequest('place', 1, Buffer.from('b'));
    expect(Buffer.from(server.openRequest(b.header, b.ciphertext)).toString()).toBe('b');
    expect(server.recvCounter).toBe(2);
  });
});

describe('nonce_out_of_order', () => {
  it('a replayed frame', () => {
    const { client, server } = pair();
    const f = encryptRequest(client, '1', 1, place);
    expect(decryptRequest(server, f).request).toEqual(place);
    expect(code(() => decryptRequest(server, f))).toBe('nonce_out_of_order');
  });

  it('a regressed counter', () => {
    const { client, server } = pair();
    const f0 = encryptRequest(client, '1', 1, place);
    const f1 = encryptRequest(client, '2', 1, place);
    decryptRequest(server, f1); // skips 0 (inside the window)
    expect(code(() => decryptRequest(server, f0))).toBe('nonce_out_of_order');
  });

  it('a jump past the window (default 32), and any gap when maxSkip is 0', () => {
    const { client, server } = pair();
    const frames = Array.from({ length: 35 }, (_, i) => client.sealRequest('place', 1, Buffer.from(String(i))));
    expect(code(() => server.openRequest(frames[33]!.header, frames[33]!.ciphertext))).toBe('nonce_out_of_order');
    expect(Buffer.from(server.openRequest(frames[32]!.header, frames[32]!.ciphertext)).toString()).toBe('32');
    const strict = pair({ maxSkip: 0 });
    strict.client.sealRequest('place', 1, Buffer.from('lost'));
    const next = strict.client.sealRequest('place', 1, Buffer.from('next'));
    expect(code(() => strict.server.openRequest(next.header, next.ciphertext))).toBe('nonce_out_of_order');
  });

  it('replayed pushes on the client side', () => {
    const { client, server } = pair();
    const push = encryptPush(server, 'positions', 'update', 1, false, {
      position_update: {
        update_reason: 'mark_price', position_id: 'p1', symbol: 'SOL-USDC-PERP', side: 'long', size: '2', entry_price: '150', mark_price: '151',
        margin: '30', leverage: '10', unrealized_pnl: '2', realized_pnl: '0', funding_accrued: '-0.01', liquidation_price: '136', status: 'OPEN', updated_at: '2025-01-15T00:00:00.000Z',
      },
    });
    expect(decryptPush(client, push.data)).toHaveProperty('position_update.mark_price', '151');
    expect(code(() => decryptPush(client, push.data))).toBe('nonce_out_of_order');
  });
});

describe('nonce_overflow', () => {
  it('the frame with counter 2^32-1 is the last one', () => {
    const key = crypto.randomBytes(32);
    const c = new ClientSessionCipher(key, 77n, uuid, { sendCounter: MAX_COUNTER });
    const s = new ServerSessionCipher(key, 77n, uuid, { recvCounter: MAX_COUNTER });
    const last = c.sealRequest('place', 1, Buffer.from('last'));
    expect(last.header.nonce).toBe(0xffff_ffff);
    expect(c.exhausted).toBe(true);
    expect(code(() => c.sealRequest('place', 1, Buffer.from('one too many')))).toBe('nonce_overflow');
    expect(c.sendCounter).toBe(2 ** 32); // the failed seal consumed nothing
    expect(Buffer.from(s.openRequest(last.header, last.ciphertext)).toString()).toBe('last');
    const server = new ServerSessionCipher(key, 77n, uuid, { sendCounter: MAX_COUNTER });
    server.sealResponse('ack', Buffer.from('x'));
    expect(code(() => server.sealResponse('ack', Buffer.from('y')))).toBe('nonce_overflow');
    expect(code(() => buildNonce(77n, 2 ** 32))).toBe('nonce_overflow');
  });
});

describe('session_expired and invalid_frame', () => {
  it('an authentic frame from another fencing epoch expires the client session', () => {
    const { client, server } = pair();
    decryptResponse(client, encryptResponse(server, '1', 'order.place', { ack: { code: 0, message: '', order_id: '1', client_order_id: 'a', reject_reason: '' } }).data);
    expect(client.fencingEpoch).toBe(0);
    server.fencingEpoch = 1;
    const moved = encryptResponse(server, '2', 'order.place', { ack: { code: 0, message: '', order_id: '2', client_order_id: 'b', reject_reason: '' } });
    expect(code(() => decryptResponse(client, moved.data))).toBe('session_expired');
  });

  it('malformed envelopes and session ids', () => {
    const { client, server } = pair();
    const f = encryptRequest(client, '1', 1, place);
    expect(code(() => decryptRequest(server, { op: 'order.bogus', args: f.args }))).toBe('invalid_frame');
    expect(code(() => decryptRequest(server, { op: 'order.place', args: { header: f.args.header, ciphertext: 'not base64' } }))).toBe('invalid_frame');
    expect(code(() => decryptRequest(server, { op: 'order.place', args: { header: { ...f.args.header, nonce: -1 }, ciphertext: f.args.ciphertext } }))).toBe('invalid_frame');
    expect(code(() => decryptRequest(server, { op: 'order.place', args: { ciphertext: f.args.ciphertext } }))).toBe('invalid_frame');
    expect(code(() => decryptRequest(server, { op: 'order.place', args: { header: { ...f.args.header, request_type: 'buy' }, ciphertext: f.args.ciphertext } }))).toBe('invalid_frame');
    // A cancel plaintext under an order.place header/op never executes as a place.
    const cancel = client.sealRequest('place', 1, Buffer.from(new Uint8Array([0x12, 0x03, 0x0a, 0x01, 0x31])));
    expect(code(() => decryptRequest(server, requestFrame('2', 'order.place', cancel)))).toBe('invalid_frame');
    for (const bad of ['', '-1', '01', '18446744073709551616', '1e3', 5]) expect(code(() => parseSessionId(bad))).toBe('invalid_frame');
    expect(parseSessionId('18446744073709551615')).toBe((1n << 64n) - 1n);
  });

  it('the spec codes session_required and rekey_required are typed codes too', () => {
    for (const c of ['session_required', 'rekey_required', 'session_expired'] as const) {
      const e = new SessionError(c, 'x');
      expect(e.code).toBe(c);
      expect(e.message).toBe(`${c}: x`);
    }
  });
});
