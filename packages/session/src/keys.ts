// Session key agreement: a fresh X25519 key pair per session on each side, then
// K = HKDF-SHA256(ikm = X25519(own, peer), salt = min(pubA, pubB) || max(pubA, pubB),
//                 info = "svc-e2e-session-key-v1", L = 32)          (spec: Authentication, step 4).
// @noble/curves does the X25519 and @noble/hashes the HKDF, so the tests' node:crypto path is a truly
// independent implementation. One derivation per session costs ~2 ms here; it is not on the per-frame path.
import { x25519 } from '@noble/curves/ed25519.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { compareBytes, concatBytes, fromBase64, isAllZero, toBase64 } from './bytes';
import { SessionError } from './errors';

/** HKDF info of the v1 derivation; a change of derivation must change this constant. */
export const SESSION_KEY_INFO = 'svc-e2e-session-key-v1';
export const PUBLIC_KEY_BYTES = 32;
export const SESSION_KEY_BYTES = 32;

/** An X25519 key pair as raw 32-byte arrays. */
export interface SessionKeyPair {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
}

/** A fresh random X25519 key pair (use one per session.setup, never reuse). */
export function generateSessionKeyPair(): SessionKeyPair {
  const { secretKey, publicKey } = x25519.keygen();
  return { privateKey: secretKey, publicKey };
}

/** The key pair whose private key is `privateKey` (32 raw bytes); for test vectors. */
export function sessionKeyPairFromPrivate(privateKey: Uint8Array): SessionKeyPair {
  if (privateKey.length !== 32) throw new TypeError('X25519 private key must be 32 bytes');
  return { privateKey: Uint8Array.from(privateKey), publicKey: x25519.getPublicKey(privateKey) };
}

/** A peer public key from base64: exactly 32 raw bytes, else `invalid_public_key`. */
export function decodePublicKey(b64: unknown): Uint8Array {
  if (typeof b64 !== 'string') throw new SessionError('invalid_public_key', 'public key must be a base64 string');
  let raw: Uint8Array;
  try {
    raw = fromBase64(b64, 'public key');
  } catch {
    throw new SessionError('invalid_public_key', 'public key is not standard base64');
  }
  if (raw.length !== PUBLIC_KEY_BYTES) throw new SessionError('invalid_public_key', `public key is ${raw.length} bytes, not 32`);
  return raw;
}

/** Base64 of a raw public key, as sent in session.setup. */
export function encodePublicKey(raw: Uint8Array): string {
  if (raw.length !== PUBLIC_KEY_BYTES) throw new TypeError('public key must be 32 bytes');
  return toBase64(raw);
}

/** The 64-byte HKDF salt: the two public keys, byte-lexicographically smaller first. */
export function sessionSalt(a: Uint8Array, b: Uint8Array): Uint8Array {
  return compareBytes(a, b) <= 0 ? concatBytes(a, b) : concatBytes(b, a);
}

/**
 * The 32-byte session key K from our key pair and the peer's raw public key.
 * Throws `invalid_public_key` for a key that is not 32 bytes, a low-order point (including the
 * neutral element u = 0) or an all-zero shared secret.
 */
export function deriveSessionKey(own: SessionKeyPair, peerPublic: Uint8Array): Uint8Array {
  if (peerPublic.length !== PUBLIC_KEY_BYTES) throw new SessionError('invalid_public_key', `public key is ${peerPublic.length} bytes, not 32`);
  let shared: Uint8Array;
  try {
    // noble refuses the five low-order u coordinates (0, 1, p-1 and the two order-8 points) up front.
    shared = x25519.getSharedSecret(own.privateKey, peerPublic);
  } catch {
    throw new SessionError('invalid_public_key', 'public key is a low-order point');
  }
  // RFC 7748 §6.1 check, kept even though noble's blocklist already covers every low-order input.
  if (isAllZero(shared)) throw new SessionError('invalid_public_key', 'X25519 shared secret is all zero');
  const salt = sessionSalt(own.publicKey, peerPublic);
  return hkdf(sha256, shared, salt, new TextEncoder().encode(SESSION_KEY_INFO), SESSION_KEY_BYTES);
}
