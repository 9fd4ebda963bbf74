import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PairBox, PAIR_OVERHEAD, SealError, generateX25519, utf8 } from '../src/index';
import { pairKey } from '../src/pair';
import { x25519 } from '@noble/curves/ed25519.js';
import { hmacSha256, loadSodium } from '../src/sodium';

// The pair-box code as it was before libsodium (main 1b86ce4): node:crypto's Hmac and AES-256-GCM,
// salt (16) || nonce (12) || ciphertext || tag (16). Boxes stored or sequenced by it must still open.
function oldSeal(k: Uint8Array, pt: Uint8Array, aad: Uint8Array): Uint8Array {
  const out = new Uint8Array(PAIR_OVERHEAD + pt.length);
  crypto.randomFillSync(out, 0, 28);
  const key = crypto.createHmac('sha256', k).update(out.subarray(0, 16)).digest();
  const c = crypto.createCipheriv('aes-256-gcm', key, out.subarray(16, 28), { authTagLength: 16 });
  c.setAAD(aad);
  const body = c.update(pt);
  c.final();
  out.set(body, 28);
  out.set(c.getAuthTag(), out.length - 16);
  return out;
}
function oldOpen(k: Uint8Array, box: Uint8Array, aad: Uint8Array): Uint8Array {
  const key = crypto.createHmac('sha256', k).update(box.subarray(0, 16)).digest();
  const d = crypto.createDecipheriv('aes-256-gcm', key, box.subarray(16, 28), { authTagLength: 16 });
  d.setAAD(aad);
  d.setAuthTag(box.subarray(box.length - 16));
  const a = d.update(box.subarray(28, box.length - 16));
  d.final();
  return new Uint8Array(a);
}

describe('pair boxes through libsodium', () => {
  const gw = generateX25519();
  const node = generateX25519();
  const shared = x25519.getSharedSecret(gw.privateKey, node.publicKey);
  const kGwToNode = pairKey(shared, gw.publicKey, node.publicKey);
  const kNodeToGw = pairKey(shared, node.publicKey, gw.publicKey);

  it('loads sodium-native on this platform', () => {
    expect(loadSodium()).toHaveProperty('sodium');
  });

  it('a box sealed by the old code opens with the new, and the reverse, both directions, any length', () => {
    const gwBox = new PairBox(gw.privateKey, node.publicKey);
    const nodeBox = new PairBox(node.privateKey, gw.publicKey);
    for (const len of [0, 1, 15, 16, 17, 200, 5000]) {
      const pt = crypto.randomBytes(len);
      const aad = utf8(`op ${len}`);
      expect(Buffer.from(nodeBox.open(oldSeal(kGwToNode, pt, aad), aad)).equals(pt)).toBe(true);
      expect(Buffer.from(gwBox.open(oldSeal(kNodeToGw, pt, aad), aad)).equals(pt)).toBe(true);
      expect(Buffer.from(oldOpen(kGwToNode, gwBox.seal(pt, aad), aad)).equals(pt)).toBe(true);
      expect(Buffer.from(oldOpen(kNodeToGw, nodeBox.seal(pt, aad), aad)).equals(pt)).toBe(true);
      // an old box opened with the wrong aad or tampered still fails as SealError
      const old = oldSeal(kGwToNode, pt, aad);
      expect(() => nodeBox.open(old, utf8('other'))).toThrow(SealError);
      old[0] = old[0]! ^ 1;
      expect(() => nodeBox.open(old, aad)).toThrow(SealError);
    }
  });

  it('opens to a plain Uint8Array that owns its bytes', () => {
    const gwBox = new PairBox(gw.privateKey, node.publicKey);
    const nodeBox = new PairBox(node.privateKey, gw.publicKey);
    const pt = nodeBox.open(gwBox.seal(utf8('hello')));
    expect(pt.constructor).toBe(Uint8Array);
    expect(pt.byteOffset).toBe(0);
    expect(pt.buffer.byteLength).toBe(5);
  });

  it('HMAC-SHA256 from precomputed pad states equals node:crypto\'s, for any key length, with and without the addon', () => {
    for (const keyLen of [0, 1, 32, 63, 64, 65, 200]) {
      const key = crypto.randomBytes(keyLen);
      const mac = hmacSha256(key);
      const fallback = hmacSha256(key, { error: 'test: no prebuild' });
      for (const msgLen of [0, 16, 55, 56, 64, 1000]) {
        const msg = crypto.randomBytes(msgLen);
        const want = crypto.createHmac('sha256', key).update(msg).digest();
        expect(Buffer.from(mac(msg)).equals(want), `key ${keyLen}, msg ${msgLen}`).toBe(true);
        expect(Buffer.from(fallback(msg)).equals(want)).toBe(true);
      }
    }
    // RFC 4231 test case 2
    const tc2 = hmacSha256(utf8('Jefe'))(utf8('what do ya want for nothing?'));
    expect(Buffer.from(tc2).toString('hex')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });
});
