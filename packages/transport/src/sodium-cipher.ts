/**
 * Noise's transport cipher (ChaCha20-Poly1305, IETF: 96-bit nonce, 16-byte tag) from libsodium
 * through the sodium-native addon (docs/decisions/0042-libsodium-ciphers.md).
 *
 * Per message this is one N-API call into libsodium's vectorised ChaCha20 and Poly1305, against a
 * createCipheriv/setAAD/update/final/getAuthTag sequence (node:crypto, five crossings into C++ and an
 * object per message) or the library's AssemblyScript cipher (copies into and out of WebAssembly
 * memory, scalar code). Measured here (µs per encryption of 100 / 300 / 1,000 / 4,000 bytes):
 * node:crypto 4.9 / 7.0 / 6.6 / 8.2, AssemblyScript 2.0 / 3.1 / 7.7 / 27, libsodium 1.1 / 1.1 / 1.75 / 3.8.
 * It is the same cipher, so the bytes on the wire are the same.
 *
 * The nonce and key are the ones the library's CipherState hands us; we never keep or derive either.
 * sodium-native ships prebuilt binaries in its npm package; where none loads (a platform without a
 * prebuild), `sodiumCipher()` returns undefined and the caller keeps the library's ciphers.
 */
import { createRequire } from 'node:module';

/** A Uint8ArrayList (uint8arraylist) or a plain Uint8Array, as Noise hands them to its crypto. */
interface Bytes { byteLength: number; subarray(): Uint8Array }

/** The part of sodium-native's API used here (it ships no type declarations). */
export interface SodiumAead {
  crypto_aead_chacha20poly1305_ietf_encrypt(c: Uint8Array, m: Uint8Array, ad: Uint8Array | null, nsec: null, npub: Uint8Array, k: Uint8Array): number;
  crypto_aead_chacha20poly1305_ietf_decrypt(m: Uint8Array, nsec: null, c: Uint8Array, ad: Uint8Array | null, npub: Uint8Array, k: Uint8Array): number;
}

const TAG = 16;

let loaded: { sodium: SodiumAead } | { error: string } | undefined;

/** sodium-native, or why it did not load (once per process). */
export function loadSodium(): { sodium: SodiumAead } | { error: string } {
  if (loaded === undefined) {
    try {
      const sodium = createRequire(import.meta.url)('sodium-native') as SodiumAead;
      if (typeof sodium.crypto_aead_chacha20poly1305_ietf_encrypt !== 'function') throw new Error('no crypto_aead_chacha20poly1305_ietf_encrypt');
      loaded = { sodium };
    } catch (e) {
      loaded = { error: e instanceof Error ? e.message.split('\n')[0]! : String(e) };
    }
  }
  return loaded;
}

/** Thrown for a tag that does not verify: the message the library's own WebAssembly cipher throws. */
function invalid(): Error {
  return new Error('Invalid chacha20poly1305 decryption');
}

function contiguous(b: Uint8Array | Bytes): Uint8Array {
  // A Uint8ArrayList of several pieces is copied into one (the library's WebAssembly path does the
  // same); a Uint8Array, or a list of one piece, is used in place.
  return b instanceof Uint8Array ? b : b.subarray();
}

export interface ChaChaFns {
  chaCha20Poly1305Encrypt(plaintext: Uint8Array | Bytes, nonce: Uint8Array, ad: Uint8Array, k: Uint8Array): Uint8Array;
  chaCha20Poly1305Decrypt(ciphertext: Uint8Array | Bytes, nonce: Uint8Array, ad: Uint8Array, k: Uint8Array, dst?: Uint8Array): Uint8Array;
}

/** Noise's two cipher functions over libsodium, or undefined when sodium-native cannot load. */
export function sodiumCipher(sodium: SodiumAead | undefined = (() => { const l = loadSodium(); return 'sodium' in l ? l.sodium : undefined; })()): ChaChaFns | undefined {
  if (sodium === undefined) return undefined;
  const encrypt = sodium.crypto_aead_chacha20poly1305_ietf_encrypt;
  const decrypt = sodium.crypto_aead_chacha20poly1305_ietf_decrypt;
  return {
    chaCha20Poly1305Encrypt(plaintext, nonce, ad, k) {
      const m = contiguous(plaintext);
      // Every byte of the output is written by the cipher, so an unzeroed (pooled below 4 KB) buffer is safe.
      const c = Buffer.allocUnsafe(m.byteLength + TAG);
      encrypt(c, m, ad, null, nonce, k);
      return c;
    },
    chaCha20Poly1305Decrypt(ciphertext, nonce, ad, k, dst) {
      const c = contiguous(ciphertext);
      const len = c.byteLength - TAG;
      if (len < 0) throw invalid();
      let m: Uint8Array;
      if (dst !== undefined) {
        // Noise passes dst = the ciphertext's own bytes minus the tag, to decrypt in place without an
        // allocation (its WebAssembly cipher writes there and returns it; we do the same). libsodium
        // verifies the tag over c before it writes m, and decrypts in place when m and c start at the
        // same byte; a dst that overlapped c from another offset would be corrupted, so it is refused.
        if (dst.byteLength !== len) throw new Error('ChaCha20Poly1305: incorrect destination length');
        if (dst.buffer === c.buffer && dst.byteOffset !== c.byteOffset && dst.byteOffset < c.byteOffset + c.byteLength && c.byteOffset < dst.byteOffset + dst.byteLength) {
          m = Buffer.allocUnsafe(len);
        } else {
          m = dst;
        }
      } else {
        m = Buffer.allocUnsafe(len);
      }
      try {
        decrypt(m, null, c, ad, nonce, k);
      } catch {
        throw invalid();
      }
      return m;
    },
  };
}
