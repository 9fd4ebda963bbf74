import { afterEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { asCrypto, nodeCrypto } from '@chainsafe/libp2p-noise/crypto';
import { Uint8ArrayList } from 'uint8arraylist';
import { createLibp2p, type Libp2p } from 'libp2p';
import { tcp } from '@libp2p/tcp';
import { yamux } from '@chainsafe/libp2p-yamux';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { loadSodium, sodiumCipher } from '../src/sodium-cipher';
import { leanCrypto, leanNoise } from '../src/lean-noise';
import { freePorts, pattern, waitFor } from './helpers';

const SIZES = [0, 1, 15, 16, 639, 640, 1199, 1200, 4096, 65519];
const sodium = sodiumCipher();

/** The same bytes as a Uint8ArrayList of uneven pieces (Noise hands its crypto sublists). */
function pieces(b: Uint8Array): Uint8ArrayList {
  const list = new Uint8ArrayList();
  for (let i = 0, step = 1; i < b.byteLength; i += step, step = step * 3 + 1) list.append(b.subarray(i, Math.min(b.byteLength, i + step)));
  return list;
}

const eq = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe('sodium-native ChaCha20-Poly1305 for Noise', () => {
  it('loads on this platform (a prebuild ships in the npm package)', () => {
    expect(loadSodium()).toHaveProperty('sodium');
    expect(sodium).toBeDefined();
  });

  it('encrypts to node:crypto\'s and the WebAssembly cipher\'s bytes at every size, from a Uint8Array or a Uint8ArrayList', () => {
    const s = sodium!;
    const k = randomBytes(32);
    for (const adLen of [0, 32]) {
      const ad = randomBytes(adLen);
      for (const size of SIZES) {
        const nonce = randomBytes(12);
        const pt = randomBytes(size);
        const want = nodeCrypto.chaCha20Poly1305Encrypt(pt, nonce, ad, k).subarray();
        expect(eq(s.chaCha20Poly1305Encrypt(pt, nonce, ad, k), want), `size ${size}`).toBe(true);
        expect(eq(s.chaCha20Poly1305Encrypt(pieces(pt), nonce, ad, k), want), `list, size ${size}`).toBe(true);
        expect(eq(asCrypto.chaCha20Poly1305Encrypt(pt, nonce, ad, k).subarray(), want)).toBe(true);
        // and opens what node:crypto sealed, from either input shape, with and without dst
        expect(eq(s.chaCha20Poly1305Decrypt(want, nonce, ad, k), pt)).toBe(true);
        expect(eq(s.chaCha20Poly1305Decrypt(pieces(want), nonce, ad, k), pt)).toBe(true);
        expect(eq(nodeCrypto.chaCha20Poly1305Decrypt(s.chaCha20Poly1305Encrypt(pt, nonce, ad, k), nonce, ad, k, undefined).subarray(), pt)).toBe(true);
      }
    }
  });

  it('decrypts in place into dst as Noise asks (dst = the ciphertext\'s own bytes without the tag) and returns dst', () => {
    const s = sodium!;
    const k = randomBytes(32);
    const nonce = randomBytes(12);
    for (const size of SIZES) {
      const pt = randomBytes(size);
      // a received chunk: some bytes before, the frame, some after (as in Noise's decrypt loop)
      const chunk = Buffer.concat([randomBytes(5), nodeCrypto.chaCha20Poly1305Encrypt(pt, nonce, new Uint8Array(0), k).subarray(), randomBytes(3)]);
      const c = chunk.subarray(5, 5 + size + 16);
      const dst = chunk.subarray(5, 5 + size);
      const out = s.chaCha20Poly1305Decrypt(c, nonce, new Uint8Array(0), k, dst);
      expect(out).toBe(dst);
      expect(eq(dst, pt)).toBe(true);
      // from a multi-piece list, dst is a separate copy (Uint8ArrayList.subarray) and is written
      const list = pieces(nodeCrypto.chaCha20Poly1305Encrypt(pt, nonce, new Uint8Array(0), k).subarray());
      const dst2 = new Uint8Array(size);
      expect(s.chaCha20Poly1305Decrypt(list, nonce, new Uint8Array(0), k, dst2)).toBe(dst2);
      expect(eq(dst2, pt)).toBe(true);
    }
    expect(() => s.chaCha20Poly1305Decrypt(new Uint8Array(20), nonce, new Uint8Array(0), k, new Uint8Array(3))).toThrow(/destination length/);
  });

  it('throws, as the library does, on a tampered tag, ciphertext, aad, nonce or key, or a short input, and leaves no unverified plaintext in dst', () => {
    const s = sodium!;
    const k = randomBytes(32);
    const nonce = randomBytes(12);
    const ad = randomBytes(32);
    for (const size of [0, 1, 640, 4096]) {
      const pt = randomBytes(size);
      const c = Buffer.from(s.chaCha20Poly1305Encrypt(pt, nonce, ad, k));
      const flip = (b: Uint8Array, i: number): Uint8Array => { const x = Uint8Array.from(b); x[i] = x[i]! ^ 0x80; return x; };
      const cases: [string, () => Uint8Array][] = [
        ['tag', () => s.chaCha20Poly1305Decrypt(flip(c, c.length - 1), nonce, ad, k)],
        ['aad', () => s.chaCha20Poly1305Decrypt(c, nonce, flip(ad, 7), k)],
        ['missing aad', () => s.chaCha20Poly1305Decrypt(c, nonce, new Uint8Array(0), k)],
        ['nonce', () => s.chaCha20Poly1305Decrypt(c, flip(nonce, 0), ad, k)],
        ['key', () => s.chaCha20Poly1305Decrypt(c, nonce, ad, flip(k, 31))],
        ['truncated', () => s.chaCha20Poly1305Decrypt(c.subarray(0, c.length - 1), nonce, ad, k)],
        ['list', () => s.chaCha20Poly1305Decrypt(pieces(flip(c, c.length - 16)), nonce, ad, k)],
      ];
      if (size > 0) cases.push(['ciphertext', () => s.chaCha20Poly1305Decrypt(flip(c, 0), nonce, ad, k)]);
      for (const [what, f] of cases) expect(f, `${what}, size ${size}`).toThrow('Invalid chacha20poly1305 decryption');
      // the library's WebAssembly cipher throws the same message for the same fault
      expect(() => asCrypto.chaCha20Poly1305Decrypt(flip(c, c.length - 1), nonce, ad, k)).toThrow('Invalid chacha20poly1305 decryption');
      if (size > 0) {
        const bad = Buffer.from(flip(c, 0));
        expect(() => s.chaCha20Poly1305Decrypt(bad, nonce, ad, k, bad.subarray(0, size))).toThrow('Invalid chacha20poly1305 decryption');
        // libsodium wipes its output when the tag fails: no unverified plaintext is left in dst (the
        // library's WebAssembly cipher leaves it there; either way the connection is torn down)
        expect(bad.subarray(0, size).every((x) => x === 0)).toBe(true);
        expect(bad.subarray(size).equals(Buffer.from(c.subarray(size)))).toBe(true);
      }
    }
    expect(() => s.chaCha20Poly1305Decrypt(new Uint8Array(15), nonce, ad, k)).toThrow('Invalid chacha20poly1305 decryption');
  });

  it('leanCrypto takes it when it loads and the library\'s switch when it does not', () => {
    const k = randomBytes(32);
    const nonce = randomBytes(12);
    const pt = randomBytes(700);
    const fake = { chaCha20Poly1305Encrypt: () => new Uint8Array(0), chaCha20Poly1305Decrypt: () => new Uint8Array(0) };
    expect(leanCrypto(640, fake).chaCha20Poly1305Encrypt).toBe(fake.chaCha20Poly1305Encrypt);
    expect(leanCrypto(640, fake).chaCha20Poly1305Decrypt).toBe(fake.chaCha20Poly1305Decrypt);
    expect(eq(leanCrypto().chaCha20Poly1305Encrypt(pt, nonce, new Uint8Array(0), k).subarray(), sodium!.chaCha20Poly1305Encrypt(pt, nonce, new Uint8Array(0), k))).toBe(true);
    const without = leanCrypto(640, undefined);
    expect(eq(without.chaCha20Poly1305Encrypt(pt, nonce, new Uint8Array(0), k).subarray(), sodium!.chaCha20Poly1305Encrypt(pt, nonce, new Uint8Array(0), k))).toBe(true);
  });
});

describe('a Noise connection between the libsodium cipher and the fallback', () => {
  const nodes: Libp2p[] = [];
  afterEach(async () => { await Promise.all(nodes.splice(0).map((n) => n.stop())); });

  it('carries the same messages both ways (same bytes on the wire), and the fallback says so once in the log', async () => {
    const logs: string[] = [];
    const ports = await freePorts(2);
    const make = async (port: number, encrypter: ReturnType<typeof leanNoise>): Promise<Libp2p> => createLibp2p({
      privateKey: await generateKeyPair('Ed25519'),
      addresses: { listen: [`/ip4/127.0.0.1/tcp/${port}`] },
      transports: [tcp()],
      connectionEncrypters: [encrypter],
      streamMuxers: [yamux()],
    });
    const a = await make(ports[0]!, leanNoise());
    const b = await make(ports[1]!, leanNoise((m) => logs.push(m), { error: 'test: no prebuild' }));
    nodes.push(a, b);
    expect(logs.filter((m) => m.includes('sodium-native did not load'))).toHaveLength(1);
    const sizes = [1, 639, 640, 1199, 1200, 65_519, 65_600, 200_000];
    const echo = (node: Libp2p): Promise<void> => node.handle('/echo/1', async (stream) => {
      for await (const chunk of stream) stream.send(chunk);
      await stream.close();
    });
    await echo(a);
    await echo(b);
    for (const [from, to] of [[a, b], [b, a]] as const) {
      const stream = await from.dialProtocol(to.getMultiaddrs()[0]!, '/echo/1');
      const want = Buffer.concat(sizes.map((s, i) => Buffer.from(pattern(i, 7, s))));
      const got: Uint8Array[] = [];
      let gotBytes = 0;
      stream.addEventListener('message', (e) => { const d = e.data.subarray(); got.push(d); gotBytes += d.byteLength; });
      for (const [i, s] of sizes.entries()) stream.send(pattern(i, 7, s));
      await waitFor(() => gotBytes >= want.byteLength, 'echoed');
      expect(Buffer.concat(got).equals(want)).toBe(true);
      await stream.close();
    }
  }, 30_000);
});
