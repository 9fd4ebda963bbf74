// HMAC-SHA256 for pair boxes from libsodium (sodium-native, docs/decisions/0042-libsodium-ciphers.md).
//
// A pair box's key is HMAC-SHA256(directional key, 16-byte salt): per box node:crypto builds an Hmac
// object, re-derives the key's two padded blocks and hashes four blocks (~2.0 µs here). The
// directional key is fixed for the life of a PairBox, so we hash its inner and outer padded blocks
// once (RFC 2104's precomputation, SHA-256 states are plain bytes that copy) and a box costs the two
// compressions that depend on the salt (~0.9 µs). Same function, same bytes: boxes sealed before open
// after, and the reverse.
//
// sodium-native 5.1.0 has no AES-256-GCM binding (nor crypto_auth_hmacsha256), so the boxes' AES-GCM
// stays node:crypto. Where the addon does not load (no prebuild for a platform), node:crypto's Hmac,
// and a warning once per process.
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

interface SodiumSha256 {
  crypto_hash_sha256_STATEBYTES: number;
  crypto_hash_sha256(out: Uint8Array, input: Uint8Array): void;
  crypto_hash_sha256_init(state: Uint8Array): void;
  crypto_hash_sha256_update(state: Uint8Array, input: Uint8Array): void;
  crypto_hash_sha256_final(state: Uint8Array, out: Uint8Array): void;
}

let loaded: { sodium: SodiumSha256 } | { error: string } | undefined;
let warned = false;

/** sodium-native, or why it did not load (once per process). */
export function loadSodium(): { sodium: SodiumSha256 } | { error: string } {
  if (loaded === undefined) {
    try {
      const sodium = createRequire(import.meta.url)('sodium-native') as SodiumSha256;
      if (typeof sodium.crypto_hash_sha256_update !== 'function') throw new Error('no crypto_hash_sha256_update');
      loaded = { sodium };
    } catch (e) {
      loaded = { error: e instanceof Error ? e.message.split('\n')[0]! : String(e) };
    }
  }
  return loaded;
}

const BLOCK = 64;

/**
 * HMAC-SHA256 under a fixed key: `mac(msg)` returns the 32-byte tag. The returned Buffer is a scratch
 * buffer of this keyed function, overwritten by the next call: use it before calling again (pair boxes
 * hand it straight to createCipheriv, which copies it).
 * `sodium`: the addon as loaded (tests pass a failed load to exercise the fallback).
 */
export function hmacSha256(key: Uint8Array, sodium: ReturnType<typeof loadSodium> = loadSodium()): (msg: Uint8Array) => Buffer {
  if ('error' in sodium) {
    if (!warned) {
      warned = true;
      process.emitWarning(`sodium-native did not load (${sodium.error}); pair-box HMAC-SHA256 from node:crypto, slower per box`, { code: 'TENEBRA_NO_SODIUM' });
    }
    const k = Buffer.from(key);
    return (msg) => crypto.createHmac('sha256', k).update(msg).digest();
  }
  const s = sodium.sodium;
  const SB = s.crypto_hash_sha256_STATEBYTES;
  // RFC 2104: a key longer than the block is hashed first, a shorter one is zero-padded.
  const k = new Uint8Array(BLOCK);
  if (key.byteLength > BLOCK) s.crypto_hash_sha256(k.subarray(0, 32), key);
  else k.set(key);
  const pad = new Uint8Array(BLOCK);
  const inner = new Uint8Array(SB);
  const outer = new Uint8Array(SB);
  for (let i = 0; i < BLOCK; i++) pad[i] = k[i]! ^ 0x36;
  s.crypto_hash_sha256_init(inner);
  s.crypto_hash_sha256_update(inner, pad);
  for (let i = 0; i < BLOCK; i++) pad[i] = k[i]! ^ 0x5c;
  s.crypto_hash_sha256_init(outer);
  s.crypto_hash_sha256_update(outer, pad);
  k.fill(0);
  pad.fill(0);
  const state = new Uint8Array(SB);
  const out = Buffer.alloc(32);
  return (msg) => {
    state.set(inner);
    s.crypto_hash_sha256_update(state, msg);
    s.crypto_hash_sha256_final(state, out);
    state.set(outer);
    s.crypto_hash_sha256_update(state, out);
    s.crypto_hash_sha256_final(state, out);
    return out;
  };
}
