// An independent implementation of the session, for interop tests: node:crypto's X25519
// (crypto.diffieHellman on KeyObjects), hkdfSync and AES-256-GCM, and a hand-rolled proto3 encoder
// for the two headers. It shares no code with src/.
import crypto from 'node:crypto';

const SPKI_X25519 = Buffer.from('302a300506032b656e032100', 'hex');
const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex');

export function refPublicKey(privateRaw: Uint8Array): Buffer {
  const priv = crypto.createPrivateKey({ key: Buffer.concat([PKCS8_X25519, privateRaw]), format: 'der', type: 'pkcs8' });
  const spki = crypto.createPublicKey(priv).export({ format: 'der', type: 'spki' });
  return spki.subarray(SPKI_X25519.length);
}

export function refSharedSecret(privateRaw: Uint8Array, peerPublicRaw: Uint8Array): Buffer {
  const privateKey = crypto.createPrivateKey({ key: Buffer.concat([PKCS8_X25519, privateRaw]), format: 'der', type: 'pkcs8' });
  const publicKey = crypto.createPublicKey({ key: Buffer.concat([SPKI_X25519, peerPublicRaw]), format: 'der', type: 'spki' });
  return crypto.diffieHellman({ privateKey, publicKey });
}

export function refSessionKey(privateRaw: Uint8Array, peerPublicRaw: Uint8Array): Buffer {
  const shared = refSharedSecret(privateRaw, peerPublicRaw);
  const own = refPublicKey(privateRaw);
  const peer = Buffer.from(peerPublicRaw);
  const salt = Buffer.compare(own, peer) <= 0 ? Buffer.concat([own, peer]) : Buffer.concat([peer, own]);
  return Buffer.from(crypto.hkdfSync('sha256', shared, salt, Buffer.from('svc-e2e-session-key-v1', 'ascii'), 32));
}

export function refNonce(sessionId: string, counter: number): Buffer {
  const n = Buffer.alloc(12);
  n.writeBigUInt64BE(BigInt(sessionId), 0);
  n.writeUInt32BE(counter, 8);
  return n;
}

// --- hand-rolled proto3 encoder: varint and length-delimited fields, defaults omitted -------------

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

function uintField(field: number, v: number): number[] {
  return v === 0 ? [] : [...varint(field << 3), ...varint(v)];
}

function bytesField(field: number, b: Uint8Array): number[] {
  return b.length === 0 ? [] : [...varint((field << 3) | 2), ...varint(b.length), ...b];
}

const REQUEST_TYPE = { place: 1, cancel: 2, modify: 3 } as const;
const MESSAGE_TYPE = { ack: 1, order_update: 2, position_update: 3, system_health: 4 } as const;

export function refOrderHeader(uuid: Uint8Array, symbolId: number, requestType: keyof typeof REQUEST_TYPE, nonce: number, bodyLength: number): Buffer {
  return Buffer.from([
    ...bytesField(1, uuid),
    ...uintField(2, symbolId),
    ...uintField(3, REQUEST_TYPE[requestType]),
    ...uintField(4, nonce),
    ...uintField(5, bodyLength),
  ]);
}

export function refResponseHeader(uuid: Uint8Array, messageType: keyof typeof MESSAGE_TYPE, bodyLength: number, nonce: number, epoch: number): Buffer {
  return Buffer.from([
    ...bytesField(1, uuid),
    ...uintField(2, MESSAGE_TYPE[messageType]),
    ...uintField(3, bodyLength),
    ...uintField(4, nonce),
    ...uintField(5, epoch),
  ]);
}

export function refSeal(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array): Buffer {
  const c = crypto.createCipheriv('aes-256-gcm', key, nonce);
  c.setAAD(aad);
  return Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]);
}

export function refOpen(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, body: Uint8Array): Buffer {
  const d = crypto.createDecipheriv('aes-256-gcm', key, nonce);
  d.setAAD(aad);
  d.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([d.update(body.subarray(0, body.length - 16)), d.final()]);
}
