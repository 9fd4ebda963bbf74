// Sealed boxes: anyone can seal to a recipient's X25519 public key; only the recipient unseals.
// Layout: eph_pub (32) || nonce (12) || AES-256-GCM ciphertext || tag (16).
// Key: HKDF-SHA256(ikm = X25519(eph, recipient), salt = eph_pub || recipient_pub, info = 'tenebra-seal-v1').
// A fresh ephemeral key per box means the (key, nonce) pair never repeats; the random nonce is
// belt and braces. Same shape as libsodium's crypto_box_seal / HPKE base mode, with GCM.
import crypto from 'node:crypto';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { SealError } from './errors';
import { concatBytes, utf8 } from './bytes';
import { privateKeyEntry, publicKeyObject, rawPublic, x25519Shared } from './x25519';

const INFO = utf8('tenebra-seal-v1');
const EPH_LEN = 32;
const NONCE_LEN = 12;
const TAG_LEN = 16;
/** Bytes a sealed box adds to its plaintext. */
export const SEAL_OVERHEAD = EPH_LEN + NONCE_LEN + TAG_LEN;
const EMPTY = new Uint8Array(0);

/** The 32-byte AES key for one box (exported for interop tests). */
export function sealKey(shared: Uint8Array, ephPublic: Uint8Array, recipientPublic: Uint8Array): Uint8Array {
  return hkdf(sha256, shared, concatBytes(ephPublic, recipientPublic), INFO, 32);
}

/** Encrypts plaintext so that only the holder of recipientPublicKey's private key can read it. */
export function seal(recipientPublicKey: Uint8Array, plaintext: Uint8Array, aad: Uint8Array = EMPTY): Uint8Array {
  const recipient = publicKeyObject(recipientPublicKey);
  const eph = crypto.generateKeyPairSync('x25519');
  const ephPub = rawPublic(eph.publicKey);
  const key = sealKey(x25519Shared(eph.privateKey, recipient), ephPub, recipientPublicKey);
  const nonce = crypto.randomBytes(NONCE_LEN);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_LEN });
  cipher.setAAD(aad);
  const body = cipher.update(plaintext);
  const final = cipher.final();
  const tag = cipher.getAuthTag();
  const out = new Uint8Array(SEAL_OVERHEAD + plaintext.length);
  out.set(ephPub, 0);
  out.set(nonce, EPH_LEN);
  out.set(body, EPH_LEN + NONCE_LEN);
  out.set(final, EPH_LEN + NONCE_LEN + body.length);
  out.set(tag, out.length - TAG_LEN);
  return out;
}

/** Opens a box made by seal() for this recipient with the same aad; throws SealError on any failure. */
export function unseal(recipientPrivateKey: Uint8Array, sealed: Uint8Array, aad: Uint8Array = EMPTY): Uint8Array {
  if (!(sealed instanceof Uint8Array) || sealed.length < SEAL_OVERHEAD) {
    throw new SealError(`sealed box too short: ${sealed?.length ?? 'none'} bytes, need at least ${SEAL_OVERHEAD}`);
  }
  try {
    const me = privateKeyEntry(recipientPrivateKey);
    const ephPub = sealed.subarray(0, EPH_LEN);
    const nonce = sealed.subarray(EPH_LEN, EPH_LEN + NONCE_LEN);
    const body = sealed.subarray(EPH_LEN + NONCE_LEN, sealed.length - TAG_LEN);
    const tag = sealed.subarray(sealed.length - TAG_LEN);
    const key = sealKey(x25519Shared(me.key, publicKeyObject(ephPub, false)), ephPub, me.publicRaw);
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_LEN });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    const a = decipher.update(body);
    const b = decipher.final();
    return new Uint8Array(b.length === 0 ? a : Buffer.concat([a, b]));
  } catch (e) {
    throw new SealError(`cannot unseal: ${e instanceof Error ? e.message : String(e)}`);
  }
}
