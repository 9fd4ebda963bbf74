// Fixed test vectors. The private keys are RFC 7748 §6.1's Alice (client) and Bob (server); every
// other value was computed with the independent implementation in reference.ts (node:crypto and a
// hand-rolled proto3 encoder) and is written down here so that any change of the byte layout fails.
import { describe, expect, it } from 'vitest';
import {
  ClientSessionCipher,
  ServerSessionCipher,
  acceptSessionSetup,
  completeSessionSetup,
  decodeNodeResponse,
  decryptRequest,
  deriveSessionKey,
  encodeEdgeSequencerRequest,
  encodeNodeResponse,
  encodeOrderHeader,
  encodeResponseHeader,
  encodePublicKey,
  buildNonce,
  fromHex,
  parseSessionId,
  sessionKeyPairFromPrivate,
  toBase64,
  toHex,
  requestFrame,
  type EdgeSequencerRequest,
  type NodeResponse,
} from '@tenebra/session';

const V = {
  clientPrivate: '77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a',
  clientPublic: '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a',
  serverPrivate: '5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb',
  serverPublic: 'de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f',
  // RFC 7748 §6.1 shared secret; HKDF salt = clientPublic || serverPublic (0x85.. < 0xde..).
  sharedSecret: '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742',
  key: 'e01bafb464a8eade9c40ae385c2b59da620659fd17c84f1ab1f3b5acd339e919',
  sessionId: '12345678901234567890',
  userUuid: '00112233445566778899aabbccddeeff',
  symbolId: 7,
  // EdgeSequencerRequest{place{symbol BTC-USDC-PERP, side buy, type limit, quantity 0.5, price 65000.1, GTC, client_order_id vec-1}}
  requestPlain: '0a2a0a0d4254432d555344432d50455250100118022203302e352a0736353030302e31300152057665632d31',
  requests: [
    {
      counter: 0,
      nonce: 'ab54a98ceb1f0ad200000000',
      header: '0a1000112233445566778899aabbccddeeff10071801283c', // nonce 0 is omitted (proto3 default)
      ciphertext: 'U6clqMIKLS4TwdtIwt0EojoPg1NSr3Jruh0PURAz0aqP5g/qdns3oGEykhph6eGX0bF/ZFwjcUWcJlXe',
    },
    {
      counter: 1,
      nonce: 'ab54a98ceb1f0ad200000001',
      header: '0a1000112233445566778899aabbccddeeff100718012001283c',
      ciphertext: 'rvd77459LBHVH73yy5kAzMMYk2c7Rhys9dYBrurzrInupQCSSqzmj+PqVrhEDXsFbgmXVW5Pw4qWScYD',
    },
    {
      counter: 0xffff_ffff,
      nonce: 'ab54a98ceb1f0ad2ffffffff',
      header: '0a1000112233445566778899aabbccddeeff1007180120ffffffff0f283c',
      ciphertext: 'vgYDQyY2dh9m8FganqU9SDt4QyOClkYQTKw3GASvF5cZQStgRlc9zLTXFVEXS0U11k3WRMcusAvWQNNa',
    },
  ],
  // NodeResponse{ack{code 0, order_id 42, client_order_id vec-1, status NEW}}, fencing_epoch 2
  ackPlain: '0a0d1a02343222057665632d312801',
  responses: [
    { counter: 0, header: '0a1000112233445566778899aabbccddeeff1001181f2802', ciphertext: 'U4A1p7RsTAYw9/wm3qVAZm6PlpDudihWTCTKO/N+jw==' },
    { counter: 3, header: '0a1000112233445566778899aabbccddeeff1001181f20032802', ciphertext: 'HasUI5CNzpfkYY6fcQvKDniC6PiCyBcO6YDiUHDjZg==' },
  ],
} as const;

const request: EdgeSequencerRequest = {
  place: { symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: '0.5', price: '65000.1', time_in_force: 'GTC', client_order_id: 'vec-1' },
};
const ack: NodeResponse = { ack: { code: 0, message: '', order_id: '42', client_order_id: 'vec-1', status: 'NEW', reject_reason: '' } };

const client = sessionKeyPairFromPrivate(fromHex(V.clientPrivate));
const server = sessionKeyPairFromPrivate(fromHex(V.serverPrivate));

describe('fixed vectors', () => {
  it('public keys and session key', () => {
    expect(toHex(client.publicKey)).toBe(V.clientPublic);
    expect(toHex(server.publicKey)).toBe(V.serverPublic);
    expect(toHex(deriveSessionKey(client, server.publicKey))).toBe(V.key);
    expect(toHex(deriveSessionKey(server, client.publicKey))).toBe(V.key);
  });

  it('plaintexts', () => {
    expect(toHex(encodeEdgeSequencerRequest(request))).toBe(V.requestPlain);
    expect(toHex(encodeNodeResponse(ack))).toBe(V.ackPlain);
    expect(decodeNodeResponse(fromHex(V.ackPlain))).toEqual(ack);
  });

  it('nonces and headers', () => {
    const uuid = fromHex(V.userUuid);
    for (const r of V.requests) {
      expect(toHex(buildNonce(parseSessionId(V.sessionId), r.counter))).toBe(r.nonce);
      const header = encodeOrderHeader({ user_uuid: uuid, symbol_id: V.symbolId, request_type: 'place', nonce: r.counter, body_length: V.requestPlain.length / 2 + 16 });
      expect(toHex(header)).toBe(r.header);
    }
    for (const r of V.responses) {
      const header = encodeResponseHeader({ user_uuid: uuid, message_type: 'ack', body_length: V.ackPlain.length / 2 + 16, nonce: r.counter, fencing_epoch: 2 });
      expect(toHex(header)).toBe(r.header);
    }
  });

  it('client seals the request ciphertexts; server opens them', () => {
    for (const r of V.requests) {
      const c = new ClientSessionCipher(fromHex(V.key), V.sessionId, V.userUuid, { sendCounter: r.counter });
      const sealed = c.sealRequest('place', V.symbolId, fromHex(V.requestPlain));
      expect(sealed.header).toEqual({ symbol_id: 7, request_type: 'place', nonce: r.counter, body_length: 60 });
      expect(toBase64(sealed.ciphertext)).toBe(r.ciphertext);
      const s = new ServerSessionCipher(fromHex(V.key), V.sessionId, V.userUuid, { recvCounter: r.counter });
      const opened = decryptRequest(s, requestFrame('1', 'order.place', sealed));
      expect(opened.request).toEqual(request);
      expect(s.recvCounter).toBe(r.counter + 1);
    }
  });

  it('server seals the ack ciphertexts; client opens them', () => {
    for (const r of V.responses) {
      const s = new ServerSessionCipher(fromHex(V.key), V.sessionId, V.userUuid, { sendCounter: r.counter, fencingEpoch: 2 });
      const sealed = s.sealResponse('ack', fromHex(V.ackPlain));
      expect(sealed.header).toEqual({ message_type: 'ack', body_length: 31, nonce: r.counter, fencing_epoch: 2 });
      expect(toBase64(sealed.ciphertext)).toBe(r.ciphertext);
      const c = new ClientSessionCipher(fromHex(V.key), V.sessionId, V.userUuid, { recvCounter: r.counter });
      expect(toHex(c.openResponse(sealed.header, sealed.ciphertext))).toBe(V.ackPlain);
    }
  });

  it('the whole setup with fixed keys gives the same session', () => {
    const { cipher: s, data } = acceptSessionSetup({ client_ecdh_pubkey: encodePublicKey(client.publicKey) }, V.userUuid, {
      keyPair: server,
      sessionId: BigInt(V.sessionId),
    });
    expect(data).toEqual({ session_id: V.sessionId, server_ecdh_pubkey: Buffer.from(V.serverPublic, 'hex').toString('base64'), fencing_epoch: 0 });
    const c = completeSessionSetup(client, data, V.userUuid);
    const first = V.requests[0];
    const sealed = c.sealRequest('place', V.symbolId, fromHex(V.requestPlain));
    expect(toBase64(sealed.ciphertext)).toBe(first.ciphertext);
    expect(toHex(s.openRequest(sealed.header, sealed.ciphertext, 'order.place'))).toBe(V.requestPlain);
  });
});
