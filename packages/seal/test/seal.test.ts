import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { x25519 } from '@noble/curves/ed25519.js';
import { generateX25519, seal, unseal, sealKey, SealError, SEAL_OVERHEAD, utf8 } from '../src/index';

describe('seal / unseal', () => {
  it('round trips, including empty plaintext and aad', () => {
    const r = generateX25519();
    for (const len of [0, 1, 16, 200, 5000]) {
      const pt = crypto.randomBytes(len);
      const box = seal(r.publicKey, pt);
      expect(box.length).toBe(len + SEAL_OVERHEAD);
      expect(Buffer.from(unseal(r.privateKey, box)).equals(pt)).toBe(true);
      const aad = utf8('seq=7');
      expect(Buffer.from(unseal(r.privateKey, seal(r.publicKey, pt, aad), aad)).equals(pt)).toBe(true);
    }
  });

  it('two seals of the same plaintext differ (fresh ephemeral key and nonce)', () => {
    const r = generateX25519();
    const pt = utf8('same');
    expect(Buffer.from(seal(r.publicKey, pt)).equals(seal(r.publicKey, pt))).toBe(false);
  });

  it('rejects every single-bit flip, wrong aad, wrong key and truncation with SealError', () => {
    const r = generateX25519();
    const other = generateX25519();
    const aad = utf8('context');
    const box = seal(r.publicKey, utf8('secret 123456789'), aad);
    for (let i = 0; i < box.length; i++) {
      const bad = box.slice();
      bad[i]! ^= 1 << (i % 8);
      expect(() => unseal(r.privateKey, bad, aad)).toThrow(SealError);
    }
    expect(() => unseal(r.privateKey, box, utf8('contexT'))).toThrow(SealError);
    expect(() => unseal(r.privateKey, box)).toThrow(SealError);
    expect(() => unseal(other.privateKey, box, aad)).toThrow(SealError);
    expect(() => unseal(r.privateKey, box.subarray(0, box.length - 1), aad)).toThrow(SealError);
    expect(() => unseal(r.privateKey, box.subarray(0, SEAL_OVERHEAD - 1), aad)).toThrow(SealError);
  });

  it('rejects a box whose ephemeral key is a low-order point', () => {
    const r = generateX25519();
    const box = seal(r.publicKey, utf8('x'));
    box.fill(0, 0, 32); // u = 0 is of small order: shared secret would be zero
    expect(() => unseal(r.privateKey, box)).toThrow(SealError);
  });
});

describe('interop: X25519 + HKDF path against independent implementations', () => {
  it('node:crypto keys agree with @noble/curves x25519 both ways', () => {
    for (let i = 0; i < 5; i++) {
      const a = generateX25519();
      const b = generateX25519();
      expect(Buffer.from(x25519.getPublicKey(a.privateKey)).equals(a.publicKey)).toBe(true);
      const nobleAB = x25519.getSharedSecret(a.privateKey, b.publicKey);
      const nobleBA = x25519.getSharedSecret(b.privateKey, a.publicKey);
      expect(Buffer.from(nobleAB).equals(nobleBA)).toBe(true);
    }
  });

  it('a box decrypts with a key rebuilt from noble x25519 + node hkdfSync + node AES-GCM', () => {
    const r = generateX25519();
    const pt = utf8('interop check 42');
    const aad = utf8('aad');
    const box = seal(r.publicKey, pt, aad);
    const eph = box.subarray(0, 32);
    const shared = x25519.getSharedSecret(r.privateKey, eph);
    const salt = Buffer.concat([eph, r.publicKey]);
    const key = Buffer.from(crypto.hkdfSync('sha256', shared, salt, 'tenebra-seal-v1', 32));
    expect(key.equals(sealKey(shared, eph, r.publicKey))).toBe(true);
    const d = crypto.createDecipheriv('aes-256-gcm', key, box.subarray(32, 44));
    d.setAAD(aad);
    d.setAuthTag(box.subarray(box.length - 16));
    const out = Buffer.concat([d.update(box.subarray(44, box.length - 16)), d.final()]);
    expect(out.toString()).toBe('interop check 42');
  });

  it('unseals a box built by hand with node crypto.diffieHellman + hkdfSync', () => {
    const r = generateX25519();
    const eph = crypto.generateKeyPairSync('x25519');
    const ephPub = eph.publicKey.export({ format: 'jwk' }).x!;
    const ephRaw = Buffer.from(ephPub, 'base64url');
    const recipient = crypto.createPublicKey({
      key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(r.publicKey).toString('base64url') },
      format: 'jwk',
    });
    const shared = crypto.diffieHellman({ privateKey: eph.privateKey, publicKey: recipient });
    const key = Buffer.from(crypto.hkdfSync('sha256', shared, Buffer.concat([ephRaw, r.publicKey]), 'tenebra-seal-v1', 32));
    const nonce = crypto.randomBytes(12);
    const c = crypto.createCipheriv('aes-256-gcm', key, nonce);
    const body = Buffer.concat([c.update('hand made'), c.final()]);
    const box = Buffer.concat([ephRaw, nonce, body, c.getAuthTag()]);
    expect(Buffer.from(unseal(r.privateKey, box)).toString()).toBe('hand made');
  });
});
