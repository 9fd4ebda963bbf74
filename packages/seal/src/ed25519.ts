// Ed25519 signatures (RFC 8032) with @noble/curves. Used at connection set-up (quotes, challenges),
// not per order, so noble's ~1 ms per operation is acceptable here.
import { ed25519 } from '@noble/curves/ed25519.js';

/** A fresh Ed25519 key pair: 32-byte secret seed and 32-byte public key. */
export function generateEd25519(): { privateKey: Uint8Array; publicKey: Uint8Array } {
  const privateKey = ed25519.utils.randomSecretKey();
  return { privateKey, publicKey: ed25519.getPublicKey(privateKey) };
}

/** The public key of an Ed25519 secret seed. */
export function ed25519PublicKey(privateKey: Uint8Array): Uint8Array {
  return ed25519.getPublicKey(privateKey);
}

/** Ed25519 signature (64 bytes) of msg. */
export function sign(privateKey: Uint8Array, msg: Uint8Array): Uint8Array {
  return ed25519.sign(msg, privateKey);
}

/** True iff sig is a valid Ed25519 signature of msg by publicKey; false (never throws) otherwise. */
export function verify(publicKey: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean {
  try {
    return ed25519.verify(sig, msg, publicKey);
  } catch {
    return false;
  }
}
