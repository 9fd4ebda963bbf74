import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as F from '../src/field';
import { Prss, canonicalize, ctrStream, dealPrssKeys, makeOwnKeys, prssSubsetsOf, smallCtrStream, subsetKey, subsets } from '../src/prss';
import { interpolate, reconstruct, reconstructChecked } from '../src/shamir';

const ALL = (n: number) => [...Array(n).keys()].map((i) => i + 1);

describe('prss', () => {
  for (const [n, t] of [[3, 1], [5, 2], [7, 3]] as const) {
    const keys = dealPrssKeys(n, t, `seed-${n}`);
    const parties = ALL(n).map((i) => new Prss(n, t, i, keys[i - 1]!));

    it(`random shares are consistent degree-${t} sharings (n=${n})`, () => {
      const sh = parties.map((p) => p.randomShares('job1:r0', 20));
      const v = reconstructChecked(ALL(n), sh, t, n);
      expect(new Set(v.map(String)).size).toBe(20);
      // a different nonce gives different values
      const v2 = reconstruct(ALL(n), parties.map((p) => p.randomShares('job1:r1', 20)), t);
      expect(v2[0]).not.toBe(v[0]);
    });

    it(`encoded random and zero shares are the same values as the BigInt ones (n=${n})`, () => {
      for (const p of parties) {
        expect(F.decodeFieldVector(p.randomSharesEncoded('enc', 33))).toEqual(p.randomShares('enc', 33));
        expect(F.decodeFieldVector(p.zeroShares2tEncoded('enc', 33))).toEqual(p.zeroShares2t('enc', 33));
      }
    });

    it(`bounded shares are below C(n,t) * 2^bits (n=${n})`, () => {
      const sh = parties.map((p) => p.boundedShares('mask', 50, 41));
      const v = reconstructChecked(ALL(n), sh, t, n);
      const bound = BigInt(F.binomial(n, t)) << 41n;
      for (const x of v) expect(x < bound).toBe(true);
      expect(v.some((x) => x > 1n << 41n)).toBe(true);
    });

    it(`PRZS is a degree-2t sharing of zero (n=${n})`, () => {
      const sh = parties.map((p) => p.zeroShares2t('z', 10));
      const v = interpolate(ALL(n).slice(0, 2 * t + 1), sh.slice(0, 2 * t + 1), 0);
      expect(v.every((x) => x === 0n)).toBe(true);
      // not of degree t: t+1 points do not give zero
      const low = interpolate(ALL(n).slice(0, t + 1), sh.slice(0, t + 1), 0);
      expect(low.some((x) => x !== 0n)).toBe(true);
    });

    it(`recovery masks are degree t and vanish at the recovering point (n=${n})`, () => {
      const point = 2;
      const helpers = ALL(n).filter((i) => i !== point);
      const sh = helpers.map((i) => parties[i - 1]!.zeroAtShares('rec', 5, point));
      const atPoint = interpolate(helpers.slice(0, t + 1), sh.slice(0, t + 1), point);
      expect(atPoint.every((x) => x === 0n)).toBe(true);
      expect(() => reconstructChecked(helpers, sh, t, n)).not.toThrow();
      expect(() => parties[point - 1]!.zeroAtShares('rec', 1, point)).toThrow(/itself/);
    });
  }

  it('ownStream: the same from the same keys (a restart), different per party and per nonce', () => {
    const keys = dealPrssKeys(5, 2, 'own');
    const a = new Prss(5, 2, 1, keys[0]!).ownStream('prep:7:grr0', 64);
    expect(new Prss(5, 2, 1, new Map(keys[0]!)).ownStream('prep:7:grr0', 64)).toEqual(a);
    expect(new Prss(5, 2, 2, keys[1]!).ownStream('prep:7:grr0', 64)).not.toEqual(a);
    expect(new Prss(5, 2, 1, keys[0]!).ownStream('prep:7:grr2', 64)).not.toEqual(a);
    // a party's stream depends on every key it holds: another key for one of its subsets changes it
    const other = new Map(keys[0]!);
    other.set('1,4,5', new Uint8Array(16).fill(9));
    expect(new Prss(5, 2, 1, other).ownStream('prep:7:grr0', 64)).not.toEqual(a);
  });

  it('key ownership: each party makes the keys of subsets it leads', () => {
    const own = makeOwnKeys(5, 2, 3);
    expect(own.size).toBe(subsets(5, 3).filter((a) => a[0] === 3).length);
    expect(prssSubsetsOf(5, 2, 3).length).toBe(6);
    expect(() => new Prss(5, 2, 3, own)).toThrow(/lacks the PRSS key/);
  });
});

describe('smallCtrStream', () => {
  it('gives the bytes of AES-128-CTR, the counter carried across 32-bit words and wrapped at 2^128', () => {
    const key = randomBytes(16);
    const ivs = [
      randomBytes(16),
      Buffer.from('000000000000000000000000fffffffe', 'hex'),
      Buffer.from('0000000000000000fffffffffffffffd', 'hex'),
      Buffer.from('fffffffffffffffffffffffffffffffe', 'hex'),
    ];
    for (const iv of ivs) {
      for (const bytes of [0, 16, 96, 4096]) {
        const want = createCipheriv('aes-128-ctr', key, iv).update(Buffer.alloc(bytes));
        expect(smallCtrStream(key, iv, bytes).equals(want)).toBe(true);
      }
    }
    // the kept cipher carries nothing from one call to the next
    const iv = randomBytes(16);
    expect(smallCtrStream(key, iv, 64).equals(smallCtrStream(key, iv, 64))).toBe(true);
    expect(() => smallCtrStream(key, iv, 15)).toThrow(/CTR stream/);
  });
});

describe('ctrStream (one kept ECB cipher per key) against the former one CTR cipher per stream', () => {
  // the former definitions, verbatim: a fresh AES-128-CTR cipher per call over zeros, IV = SHA-256(nonce '#' sub)
  const ivOf = (nonce: string, sub: number): Buffer => createHash('sha256').update(nonce).update(`#${sub}`).digest().subarray(0, 16);
  const oldCtr = (key: Uint8Array, iv: Uint8Array, bytes: number): Buffer => createCipheriv('aes-128-ctr', key, iv).update(Buffer.alloc(bytes));
  const n = 5;
  const t = 2;
  const keys = dealPrssKeys(n, t, 'ctr-equal');
  const mine = (self: number) => subsets(n, n - t).filter((a) => a.includes(self));
  const pairKey = (self: number, peer: number): Buffer => {
    const h = createHash('sha256').update(`prss-pair:${Math.min(self, peer)},${Math.max(self, peer)}`);
    for (const a of mine(self)) if (a.includes(peer)) h.update(keys[self - 1]!.get(subsetKey(a))!);
    return h.digest().subarray(0, 16);
  };
  const ownKey = (self: number): Buffer => {
    const h = createHash('sha256').update(`prss-own:${self}`);
    for (const a of mine(self)) h.update(keys[self - 1]!.get(subsetKey(a))!);
    return h.digest().subarray(0, 16);
  };
  const nonces = ['prep:1:5/128:grr0:1>2', 'prep:77:x:sq>3', 'prep:77:x:sq>4', '', 'prep:9:prss'];
  const counts = [0, 1, 7, 102, 256, 1190, 4097];

  it('pairStream: the same elements for several nonces and lengths, at both ends, call after call', () => {
    const p1 = new Prss(n, t, 1, keys[0]!);
    const p3 = new Prss(n, t, 3, keys[2]!);
    for (const nonce of nonces) {
      for (const count of counts) {
        const want = canonicalize(new Uint8Array(oldCtr(pairKey(1, 3), ivOf(`pair:${nonce}`, 0), count * 16)));
        expect(Buffer.from(p1.pairStream(3, nonce, count)).equals(Buffer.from(want))).toBe(true);
        expect(Buffer.from(p3.pairStream(1, nonce, count)).equals(Buffer.from(want))).toBe(true);
      }
    }
  });

  it('ownStream and the PRSS sums: the same bytes and values as CTR ciphers made per stream', () => {
    const p2 = new Prss(n, t, 2, keys[1]!);
    for (const nonce of nonces) {
      for (const count of counts) {
        expect(Buffer.from(p2.ownStream(nonce, count * 16)).equals(oldCtr(ownKey(2), ivOf(`own:${nonce}`, 0), count * 16))).toBe(true);
      }
      // randomShares from the former streams (top bit cleared, p read as 0, sum of f_A(2) v_A)
      const count = 33;
      const want = new Array<bigint>(count).fill(0n);
      for (const a of mine(2)) {
        const buf = oldCtr(keys[1]!.get(subsetKey(a))!, ivOf(nonce, 0), count * 16);
        let fa = 1n;
        let den = 1n;
        for (let j = 1; j <= n; j++) if (!a.includes(j)) { fa = F.mod(fa * BigInt(j - 2)); den = F.mod(den * BigInt(j)); }
        const w = F.mod(fa * F.inv(den));
        for (let e = 0; e < count; e++) {
          let v = BigInt(`0x${buf.subarray(e * 16, e * 16 + 16).toString('hex')}`) & F.P;
          if (v === F.P) v = 0n;
          want[e] = F.mod(want[e]! + v * w);
        }
      }
      expect(F.decodeFieldVector(p2.randomSharesEncoded(nonce, count))).toEqual(want);
      expect(p2.randomShares(nonce, count)).toEqual(want);
    }
  });

  it('boundedShares (one set of counter blocks for every subset): the values of CTR ciphers made per stream', () => {
    for (const self of [1, 4]) {
      const pr = new Prss(n, t, self, keys[self - 1]!);
      for (const nonce of ['job:j7:0:0:0:0:3', '', 'mask']) {
        for (const [count, bits] of [[0, 41], [1, 41], [4, 41], [37, 41], [5, 1], [9, 32], [9, 33], [6, 64], [6, 65], [3, 120]] as const) {
          // the former definition: per subset, the low `bits` bits of each block of CTR(k_A, SHA-256(nonce '#1')), times f_A(self)
          const want = new Array<bigint>(count).fill(0n);
          for (const a of mine(self)) {
            const buf = oldCtr(keys[self - 1]!.get(subsetKey(a))!, ivOf(nonce, 1), count * 16);
            let fa = 1n;
            let den = 1n;
            for (let j = 1; j <= n; j++) if (!a.includes(j)) { fa = F.mod(fa * BigInt(j - self)); den = F.mod(den * BigInt(j)); }
            const w = F.mod(fa * F.inv(den));
            for (let e = 0; e < count; e++) {
              const v = BigInt.asUintN(bits, BigInt(`0x${buf.subarray(e * 16, e * 16 + 16).toString('hex')}`));
              want[e] = F.mod(want[e]! + v * w);
            }
          }
          expect(pr.boundedShares(nonce, count, bits)).toEqual(want);
        }
      }
    }
  });

  it('counter blocks: the low word wrapping inside a stream, long streams, and the kept cipher carrying nothing between keys', () => {
    const k1 = randomBytes(16);
    const k2 = randomBytes(16);
    for (const iv of [randomBytes(16), Buffer.from('0123456789abcdef01234567ffffff00', 'hex'), Buffer.from('ffffffffffffffffffffffffffffff80', 'hex')]) {
      for (const bytes of [16, 4112, 65536]) {
        expect(ctrStream(k1, iv, bytes).equals(oldCtr(k1, iv, bytes))).toBe(true);
        expect(ctrStream(k2, iv, bytes).equals(oldCtr(k2, iv, bytes))).toBe(true);
      }
    }
    expect(smallCtrStream).toBe(ctrStream);
  });

  it('canonicalize: the word path gives the byte loop\'s bytes (top bit, p, 2^128 - 1, aligned and unaligned views)', () => {
    const byteLoop = (bytes: Uint8Array): Uint8Array => {
      const out = Uint8Array.from(bytes);
      for (let o = 0; o < out.length; o += 16) {
        out[o]! &= 0x7f;
        if (out[o] !== 0x7f) continue;
        let isP = true;
        for (let i = 1; isP && i < 16; i++) isP = out[o + i] === 0xff;
        if (isP) out.fill(0, o, o + 16);
      }
      return out;
    };
    const special = [
      [0x7f, ...Array(15).fill(0xff)], // p
      Array(16).fill(0xff), // 2^128 - 1: top bit cleared, then p
      [0xff, ...Array(14).fill(0xff), 0xfe], // p - 1 with the top bit set
      [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe], // p - 1
      [0x7f, 0xff, 0xff, 0xff, 0, ...Array(11).fill(0xff)], // first word as p's, the rest not
      [0x80, ...Array(15).fill(0)], // 2^127: 0
      Array(16).fill(0),
    ];
    const elems = [...special, ...Array.from({ length: 40 }, () => [...randomBytes(16)])];
    for (const shift of [0, 4, 1, 3]) {
      const buf = new Uint8Array(shift + elems.length * 16 + 4);
      const v = buf.subarray(shift, shift + elems.length * 16);
      elems.forEach((e, i) => v.set(e, i * 16));
      const want = byteLoop(v);
      expect(canonicalize(v)).toEqual(want);
      expect([...v.subarray(0, 16)]).toEqual(Array(16).fill(0));
      expect([...v.subarray(16, 32)]).toEqual(Array(16).fill(0));
    }
  });
});
