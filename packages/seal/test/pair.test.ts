import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { x25519 } from '@noble/curves/ed25519.js';
import { hkdfSync } from 'node:crypto';
import { PairBox, pairKey, PAIR_OVERHEAD, SealError, generateX25519, seal, utf8 } from '../src/index';

describe('pair boxes', () => {
  const gw = generateX25519();
  const node = generateX25519();
  const gwBox = new PairBox(gw.privateKey, node.publicKey);
  const nodeBox = new PairBox(node.privateKey, gw.publicKey);

  it('round trip both ways, any length, with and without aad', () => {
    for (const len of [0, 1, 16, 200, 5000]) {
      const pt = crypto.randomBytes(len);
      const aad = utf8(`seq=${len}`);
      const box = gwBox.seal(pt, aad);
      expect(box.length).toBe(len + PAIR_OVERHEAD);
      expect(Buffer.from(nodeBox.open(box, aad)).equals(pt)).toBe(true);
      expect(Buffer.from(gwBox.open(nodeBox.seal(pt)).valueOf()).equals(pt)).toBe(true);
    }
  });

  it('directional keys: a box cannot be reflected to its sender, and they match an independent derivation', () => {
    const box = gwBox.seal(utf8('share'), utf8('a'));
    expect(() => gwBox.open(box, utf8('a'))).toThrow(SealError);
    // noble x25519 + node hkdf, independently of the node:crypto key path
    const shared = x25519.getSharedSecret(gw.privateKey, node.publicKey);
    const want = Buffer.from(hkdfSync('sha256', shared, Buffer.concat([gw.publicKey, node.publicKey]), 'tenebra-pair-v1', 32));
    expect(Buffer.from(pairKey(shared, gw.publicKey, node.publicKey)).equals(want)).toBe(true);
  });

  it('every bit flip, wrong aad, a third party and truncation are refused with SealError', () => {
    const aad = utf8('context');
    const box = gwBox.seal(utf8('secret 123456789'), aad);
    for (let i = 0; i < box.length; i++) {
      const bad = box.slice();
      bad[i]! ^= 1 << (i % 8);
      expect(() => nodeBox.open(bad, aad)).toThrow(SealError);
    }
    expect(() => nodeBox.open(box, utf8('contexT'))).toThrow(SealError);
    const other = generateX25519();
    expect(() => new PairBox(node.privateKey, other.publicKey).open(box, aad)).toThrow(SealError);
    // someone with only the node's public key (the sequencer, say) cannot make a box the node accepts
    expect(() => nodeBox.open(new PairBox(other.privateKey, node.publicKey).seal(utf8('forged'), aad), aad)).toThrow(SealError);
    expect(() => nodeBox.open(box.subarray(0, PAIR_OVERHEAD - 1), aad)).toThrow(SealError);
  });

  it('two boxes of the same plaintext differ', () => {
    expect(Buffer.from(gwBox.seal(utf8('x'))).equals(gwBox.seal(utf8('x')))).toBe(false);
  });

  it('an anonymous box to the node (which anyone holding its public key can make) does not open as a pair box', () => {
    const aad = utf8('op');
    expect(Buffer.from(nodeBox.open(gwBox.seal(utf8('new'), aad), aad)).toString()).toBe('new');
    expect(() => nodeBox.open(seal(node.publicKey, utf8('forged'), aad), aad)).toThrow(SealError);
  });
});
