// Interop against the independent implementation in reference.ts, on random inputs: the same
// session key as node:crypto's X25519 + hkdfSync, the same header bytes as a hand-rolled proto3
// encoder, the same ciphertext as node:crypto's AES-256-GCM, in both directions.
import crypto from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ClientSessionCipher,
  ServerSessionCipher,
  acceptSessionSetup,
  completeSessionSetup,
  createSetupRequest,
  deriveSessionKey,
  encodeOrderHeader,
  encodeResponseHeader,
  generateSessionKeyPair,
  sessionKeyPairFromPrivate,
  decodeOrderHeader,
  decodeResponseHeader,
  toHex,
  REQUEST_TYPES,
  MESSAGE_TYPES,
} from '@tenebra/session';
import { refNonce, refOpen, refOrderHeader, refPublicKey, refResponseHeader, refSeal, refSessionKey } from './reference';

const u32 = fc.oneof(fc.constantFrom(0, 1, 127, 128, 16383, 16384, 0x7fff_ffff, 0xffff_ffff), fc.integer({ min: 0, max: 0xffff_ffff }));
const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n });

describe('interop with node:crypto and a hand-rolled protobuf encoder', () => {
  it('session key equals node:crypto X25519 + hkdfSync (both sides, random keys)', () => {
    fc.assert(
      fc.property(bytes(32), bytes(32), (a, b) => {
        const ka = sessionKeyPairFromPrivate(a);
        const kb = sessionKeyPairFromPrivate(b);
        expect(toHex(ka.publicKey)).toBe(refPublicKey(a).toString('hex'));
        const k = toHex(deriveSessionKey(ka, kb.publicKey));
        expect(k).toBe(refSessionKey(a, kb.publicKey).toString('hex'));
        expect(toHex(deriveSessionKey(kb, ka.publicKey))).toBe(k);
      }),
      { numRuns: 40 },
    );
  });

  it('a generated key pair interoperates with node:crypto key objects', () => {
    const ours = generateSessionKeyPair();
    const theirs = crypto.generateKeyPairSync('x25519');
    const theirPublic = theirs.publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
    const theirPrivate = theirs.privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(16);
    expect(toHex(deriveSessionKey(ours, theirPublic))).toBe(refSessionKey(theirPrivate, ours.publicKey).toString('hex'));
  });

  it('OrderHeader bytes equal the hand-rolled encoder and decode back', () => {
    fc.assert(
      fc.property(bytes(16), u32, fc.constantFrom(...REQUEST_TYPES), u32, u32, (uuid, symbolId, rt, nonce, len) => {
        const ours = encodeOrderHeader({ user_uuid: uuid, symbol_id: symbolId, request_type: rt, nonce, body_length: len });
        expect(toHex(ours)).toBe(refOrderHeader(uuid, symbolId, rt, nonce, len).toString('hex'));
        const back = decodeOrderHeader(ours);
        expect(back.request_type).toBe(rt);
        expect(back.nonce ?? 0).toBe(nonce);
      }),
      { numRuns: 300 },
    );
  });

  it('ResponseHeader bytes equal the hand-rolled encoder and decode back', () => {
    fc.assert(
      fc.property(bytes(16), fc.constantFrom(...MESSAGE_TYPES), u32, u32, u32, (uuid, mt, len, nonce, epoch) => {
        const ours = encodeResponseHeader({ user_uuid: uuid, message_type: mt, body_length: len, nonce, fencing_epoch: epoch });
        expect(toHex(ours)).toBe(refResponseHeader(uuid, mt, len, nonce, epoch).toString('hex'));
        expect(decodeResponseHeader(ours).fencing_epoch ?? 0).toBe(epoch);
      }),
      { numRuns: 300 },
    );
  });

  it('requests: our ciphertext equals node:crypto GCM, and node:crypto frames open with our cipher', () => {
    fc.assert(
      fc.property(bytes(32), u64, bytes(16), u32, fc.constantFrom(...REQUEST_TYPES), fc.integer({ min: 0, max: 0xffff_ffff - 1 }), fc.uint8Array({ maxLength: 300 }), (key, sid, uuid, symbolId, rt, counter, plain) => {
        const c = new ClientSessionCipher(key, sid, uuid, { sendCounter: counter });
        const sealed = c.sealRequest(rt, symbolId, plain);
        const nonce = refNonce(sid.toString(), counter);
        const aad = refOrderHeader(uuid, symbolId, rt, counter, plain.length + 16);
        expect(Buffer.from(sealed.ciphertext).toString('hex')).toBe(refSeal(key, nonce, aad, plain).toString('hex'));
        expect(Buffer.from(refOpen(key, nonce, aad, sealed.ciphertext)).equals(Buffer.from(plain))).toBe(true);
        // And the reverse direction: a frame made only by the reference opens on our server side.
        const s = new ServerSessionCipher(key, sid, uuid, { recvCounter: counter });
        const ref = refSeal(key, nonce, aad, plain);
        const opened = s.openRequest({ symbol_id: symbolId, request_type: rt, nonce: counter, body_length: ref.length }, ref);
        expect(Buffer.from(opened).equals(Buffer.from(plain))).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('responses: our ciphertext equals node:crypto GCM, and node:crypto frames open with our cipher', () => {
    fc.assert(
      fc.property(bytes(32), u64, bytes(16), fc.constantFrom(...MESSAGE_TYPES), fc.integer({ min: 0, max: 0xffff_ffff - 1 }), u32, fc.uint8Array({ maxLength: 300 }), (key, sid, uuid, mt, counter, epoch, plain) => {
        const s = new ServerSessionCipher(key, sid, uuid, { sendCounter: counter, fencingEpoch: epoch });
        const sealed = s.sealResponse(mt, plain);
        const nonce = refNonce(sid.toString(), counter);
        const aad = refResponseHeader(uuid, mt, plain.length + 16, counter, epoch);
        const ref = refSeal(key, nonce, aad, plain);
        expect(Buffer.from(sealed.ciphertext).equals(ref)).toBe(true);
        const c = new ClientSessionCipher(key, sid, uuid, { recvCounter: counter });
        expect(Buffer.from(c.openResponse({ message_type: mt, body_length: ref.length, nonce: counter, fencing_epoch: epoch }, ref)).equals(Buffer.from(plain))).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('a full setup between our server and a node:crypto client derives the same key', () => {
    const uuid = crypto.randomBytes(16);
    const clientPrivate = crypto.randomBytes(32);
    const clientPublic = refPublicKey(clientPrivate);
    const { cipher, data } = acceptSessionSetup({ client_ecdh_pubkey: clientPublic.toString('base64') }, uuid);
    const key = refSessionKey(clientPrivate, Buffer.from(data.server_ecdh_pubkey, 'base64'));
    const plain = Buffer.from('hello');
    const aad = refOrderHeader(uuid, 3, 'cancel', 0, plain.length + 16);
    const body = refSeal(key, refNonce(data.session_id, 0), aad, plain);
    expect(Buffer.from(cipher.openRequest({ symbol_id: 3, request_type: 'cancel', nonce: 0, body_length: body.length }, body, 'order.cancel')).toString()).toBe('hello');
  });

  it('a full setup between our client and our server, many frames both ways', () => {
    const uuid = crypto.randomBytes(16);
    const { keyPair, frame } = createSetupRequest('s1');
    const { cipher: server, data } = acceptSessionSetup(frame.args, uuid);
    const client = completeSessionSetup(keyPair, data, uuid);
    for (let i = 0; i < 50; i++) {
      const req = client.sealRequest('place', i, Buffer.from(`order ${i}`));
      expect(req.header.nonce).toBe(i);
      expect(Buffer.from(server.openRequest(req.header, req.ciphertext, 'order.place')).toString()).toBe(`order ${i}`);
      const res = server.sealResponse('ack', Buffer.from(`ack ${i}`));
      expect(Buffer.from(client.openResponse(res.header, res.ciphertext)).toString()).toBe(`ack ${i}`);
    }
    expect(client.sendCounter).toBe(50);
    expect(server.recvCounter).toBe(50);
  });
});
