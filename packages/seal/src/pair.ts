// Pair boxes: boxes between two parties that both hold long-lived X25519 keys (the gateway and one
// committee node). The key agreement is done once per pair, not once per box: a box costs an HMAC
// and one AES-GCM pass (~10 µs) instead of an ephemeral key pair and an X25519 (~170 µs). The
// gateway seals five boxes per order and every node unseals one per op and seals one result per op,
// so this is most of the acknowledgement path's CPU (docs/decisions/0004-pair-boxes.md).
//
// Keys: shared = X25519(my_priv, peer_pub); one directional key per direction,
//   k(sender -> recipient) = HKDF-SHA256(shared, salt = sender_pub || recipient_pub, info 'tenebra-pair-v1'),
// so a box can never be reflected back to its sender. Per box: 16 random bytes `salt`, box key =
// HMAC-SHA256(k, salt), 12 random bytes nonce. A fresh key per box keeps GCM's (key, nonce) pair
// unique with no counter to persist; the random nonce is belt and braces.
// The HMAC is libsodium's SHA-256 with the directional key's padded blocks hashed once per PairBox
// (./sodium.ts, ADR 0042): the same bytes as node:crypto's Hmac at half the CPU; AES-GCM is node:crypto's.
// Layout: salt (16) || nonce (12) || AES-256-GCM ciphertext || tag (16).
//
// Unlike seal() (anyone may seal to a public key), a pair box also authenticates its sender: only
// the two key holders can make one, so the sequencer, which carries the boxes, cannot forge a share.
import crypto from 'node:crypto';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { SealError } from './errors';
import { concatBytes, utf8 } from './bytes';
import { privateKeyEntry, publicKeyObject, x25519Shared } from './x25519';
import { fillRandom } from './random-pool';
import { hmacSha256 } from './sodium';

const INFO = utf8('tenebra-pair-v1');
const SALT_LEN = 16;
const NONCE_LEN = 12;
const TAG_LEN = 16;
/** Bytes a pair box adds to its plaintext. */
export const PAIR_OVERHEAD = SALT_LEN + NONCE_LEN + TAG_LEN;
const EMPTY = new Uint8Array(0);

/** The directional key for boxes from `senderPublic` to `recipientPublic` (exported for tests). */
export function pairKey(shared: Uint8Array, senderPublic: Uint8Array, recipientPublic: Uint8Array): Uint8Array {
  return hkdf(sha256, shared, concatBytes(senderPublic, recipientPublic), INFO, 32);
}

/** Seals to and opens from one peer; both ends hold long-lived X25519 keys. */
export class PairBox {
  /** HMAC-SHA256 under the directional keys: box key = sendMac(salt) / recvMac(salt). */
  private readonly sendMac: (salt: Uint8Array) => Buffer;
  private readonly recvMac: (salt: Uint8Array) => Buffer;

  /** myPrivateKey: this party's raw X25519 private key; peerPublicKey: the peer's raw public key. */
  constructor(myPrivateKey: Uint8Array, peerPublicKey: Uint8Array) {
    const me = privateKeyEntry(myPrivateKey);
    const shared = x25519Shared(me.key, publicKeyObject(peerPublicKey));
    this.sendMac = hmacSha256(pairKey(shared, me.publicRaw, peerPublicKey));
    this.recvMac = hmacSha256(pairKey(shared, peerPublicKey, me.publicRaw));
  }

  /** Encrypts plaintext for the peer, bound to aad; only the peer can open it, and it knows we made it. */
  seal(plaintext: Uint8Array, aad: Uint8Array = EMPTY): Uint8Array {
    const out = new Uint8Array(PAIR_OVERHEAD + plaintext.length);
    fillRandom(out, 0, SALT_LEN + NONCE_LEN);
    const key = this.sendMac(out.subarray(0, SALT_LEN)); // a scratch buffer: createCipheriv copies it
    const cipher = crypto.createCipheriv('aes-256-gcm', key, out.subarray(SALT_LEN, SALT_LEN + NONCE_LEN), { authTagLength: TAG_LEN });
    cipher.setAAD(aad);
    const body = cipher.update(plaintext);
    const final = cipher.final();
    out.set(body, SALT_LEN + NONCE_LEN);
    out.set(final, SALT_LEN + NONCE_LEN + body.length);
    out.set(cipher.getAuthTag(), out.length - TAG_LEN);
    return out;
  }

  /** Opens a box the peer sealed to us with the same aad; throws SealError on any failure. */
  open(box: Uint8Array, aad: Uint8Array = EMPTY): Uint8Array {
    if (!(box instanceof Uint8Array) || box.length < PAIR_OVERHEAD) {
      throw new SealError(`pair box too short: ${box?.length ?? 'none'} bytes, need at least ${PAIR_OVERHEAD}`);
    }
    try {
      const key = this.recvMac(box.subarray(0, SALT_LEN)); // a scratch buffer: createDecipheriv copies it
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, box.subarray(SALT_LEN, SALT_LEN + NONCE_LEN), { authTagLength: TAG_LEN });
      decipher.setAAD(aad);
      decipher.setAuthTag(box.subarray(box.length - TAG_LEN));
      const a = decipher.update(box.subarray(SALT_LEN + NONCE_LEN, box.length - TAG_LEN));
      const b = decipher.final();
      const pt = b.length === 0 ? a : Buffer.concat([a, b]);
      // a Uint8Array view of the plaintext's Buffer, as before, without copying it
      return new Uint8Array(pt.buffer, pt.byteOffset, pt.byteLength);
    } catch (e) {
      throw new SealError(`cannot open pair box: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
