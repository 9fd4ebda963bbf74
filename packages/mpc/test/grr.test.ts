import { describe, expect, it } from 'vitest';
import * as F from '../src/field';
import { dealGrr, dealGrrProducts, dealGrrProductsSending, dealPlan, dealSeeded, grrRecombine, scaledPlan, seededPeers } from '../src/grr';
import { Prss, canonicalize, dealPrssKeys } from '../src/prss';
import { interpolate, lagrange, shareSecret } from '../src/shamir';
import { lincombEncoded, mulEncoded, nibbleHigherEncoded, nibblePairsEncoded, productsEncoded } from '../src/kernel';
import { seededRng } from '../src/preprocessing';

const enc = F.encodeFieldVector;
const dec = F.decodeFieldVector;

describe('seeded GRR (grr.ts)', () => {
  for (const [n, t] of [[3, 1], [5, 2], [7, 3], [9, 4]] as const) {
    it(`n = ${n}, t = ${t}: resharing products gives degree-t sharings of them, with t rows per dealer never sent`, () => {
      const keys = dealPrssKeys(n, t, `grr-test:${n}`);
      const prss = keys.map((k, i) => new Prss(n, t, i + 1, k));
      const rng = seededRng(`grr-test:${n}`);
      const m = 40;
      const a = rng(m).map(F.mod);
      const b = rng(m).map(F.mod);
      a[0] = 0n;
      b[1] = F.P - 1n;
      const sa = shareSecret(a, n, t, rng);
      const sb = shareSecret(b, n, t, rng);
      // each party's degree-2t product shares
      const h = Array.from({ length: n }, (_, i) => mulEncoded(enc(sa[i]!), enc(sb[i]!)));
      const seed = (dealer: number, peer: number): Uint8Array =>
        prss[dealer - 1]!.pairStream(peer, `nonce:${dealer}>${peer}`, m);
      const dealt = h.map((hi, i) => {
        const dealer = i + 1;
        const rows = dealSeeded(hi, seededPeers(n, t, dealer).map((s) => seed(dealer, s)), n, t, dealer);
        // nothing to send to the t seeded peers, a full row to everyone else
        rows.forEach((r, x) => expect(r.length).toBe(seededPeers(n, t, dealer).includes(x + 1) ? 0 : m * 16));
        return rows;
      });
      // the dealt values (sent rows and seeds) lie on one degree-t polynomial through h_i at 0
      for (let dealer = 1; dealer <= n; dealer++) {
        const values = Array.from({ length: n }, (_, x) =>
          seededPeers(n, t, dealer).includes(x + 1) ? dec(prss[x]!.pairStream(dealer, `nonce:${dealer}>${x + 1}`, m)) : dec(dealt[dealer - 1]![x]!));
        const first = Array.from({ length: t + 1 }, (_, k) => k + 1);
        const last = Array.from({ length: t + 1 }, (_, k) => n - k);
        expect(interpolate(first, first.map((x) => values[x - 1]!), 0)).toEqual(dec(h[dealer - 1]!));
        expect(interpolate(last, last.map((x) => values[x - 1]!), 0)).toEqual(dec(h[dealer - 1]!));
      }
      // recombination at each party, its seeded rows computed from the pair stream
      const lam = lagrange(Array.from({ length: n }, (_, k) => k + 1), 0);
      const shares = Array.from({ length: n }, (_, j) => {
        const self = j + 1;
        const rows = Array.from({ length: n }, (_, i) => {
          const dealer = i + 1;
          return seededPeers(n, t, dealer).includes(self) ? seed(dealer, self) : dealt[i]![j]!;
        });
        return dec(lincombEncoded(rows, lam));
      });
      const ab = a.map((x, k) => F.mul(x, b[k]!));
      const first = Array.from({ length: t + 1 }, (_, k) => k + 1);
      const last = Array.from({ length: t + 1 }, (_, k) => n - k);
      expect(interpolate(first, first.map((x) => shares[x - 1]!), 0)).toEqual(ab);
      expect(interpolate(last, last.map((x) => shares[x - 1]!), 0)).toEqual(ab);
    });
  }

  it('over a participant set S (ADR 0017): seeded peers are the t members after the dealer in S, rows go to members only, recombination over S', () => {
    const n = 7;
    const t = 2;
    const S = [1, 2, 4, 5, 7];
    expect(seededPeers(n, t, 5, S)).toEqual([7, 1]);
    expect(seededPeers(n, t, 7, S)).toEqual([1, 2]);
    expect(seededPeers(n, t, 2, S)).toEqual([4, 5]);
    expect(() => seededPeers(n, t, 3, S)).toThrow(/not a member/);
    const keys = dealPrssKeys(n, t, 'grr-test:S');
    const prss = keys.map((k, i) => new Prss(n, t, i + 1, k));
    const rng = seededRng('grr-test:S');
    const m = 24;
    const a = rng(m).map(F.mod);
    const b = rng(m).map(F.mod);
    const sa = shareSecret(a, n, t, rng);
    const sb = shareSecret(b, n, t, rng);
    const h = new Map(S.map((i) => [i, mulEncoded(enc(sa[i - 1]!), enc(sb[i - 1]!))]));
    const seed = (dealer: number, peer: number): Uint8Array => prss[dealer - 1]!.pairStream(peer, `S:${dealer}>${peer}`, m);
    const dealt = new Map(S.map((dealer) => {
      const peers = seededPeers(n, t, dealer, S);
      const rows = dealSeeded(h.get(dealer)!, peers.map((s) => seed(dealer, s)), n, t, dealer, S);
      // a full row to the |S| - 1 - t other members and the dealer itself, nothing to seeded peers or non-members
      rows.forEach((r, x) => expect(r.length).toBe(S.includes(x + 1) && !peers.includes(x + 1) ? m * 16 : 0));
      return [dealer, rows] as const;
    }));
    const lam = lagrange(S, 0);
    const shares = new Map(S.map((self) => {
      const rows = S.map((dealer) => (seededPeers(n, t, dealer, S).includes(self) ? prss[self - 1]!.pairStream(dealer, `S:${dealer}>${self}`, m) : dealt.get(dealer)![self - 1]!));
      return [self, dec(lincombEncoded(rows, lam))] as const;
    }));
    const ab = a.map((x, k) => F.mul(x, b[k]!));
    for (const pts of [[1, 2, 4], [4, 5, 7], [1, 5, 7]]) expect(interpolate(pts, pts.map((x) => shares.get(x)!), 0)).toEqual(ab);
  });

  // scaled dealing (dealGrr / grrRecombine): rows of D h's polynomial, the seeded shares D u, one D^-1 in the recombination
  for (const [n, t, S] of [[3, 1, undefined], [5, 2, undefined], [7, 3, undefined], [9, 4, undefined], [7, 2, [1, 2, 4, 5, 7]], [6, 2, [1, 3, 4, 5, 6]]] as const) {
    it(`scaled dealing, n = ${n}, t = ${t}${S ? `, S = ${S.join('.')}` : ''}: degree-t sharings of the products, t rows per dealer never sent, no product per dealt share`, () => {
      const set: readonly number[] = S ?? Array.from({ length: n }, (_, k) => k + 1);
      const keys = dealPrssKeys(n, t, `grr-scaled:${n}`);
      const prss = keys.map((k, i) => new Prss(n, t, i + 1, k));
      const rng = seededRng(`grr-scaled:${n}:${set.join('.')}`);
      const m = 30;
      const a = rng(m).map(F.mod);
      const b = rng(m).map(F.mod);
      a[0] = 0n;
      b[1] = F.P - 1n;
      const sa = shareSecret(a, n, t, rng);
      const sb = shareSecret(b, n, t, rng);
      const h = new Map(set.map((i) => [i, mulEncoded(enc(sa[i - 1]!), enc(sb[i - 1]!))]));
      const seed = (dealer: number, peer: number): Uint8Array => prss[dealer - 1]!.pairStream(peer, `sc:${dealer}>${peer}`, m);
      const plan = scaledPlan(n, t, S);
      expect(plan).toBeDefined();
      const D = plan!.D;
      const dealt = new Map(set.map((dealer) => {
        const peers = seededPeers(n, t, dealer, S);
        const rows = dealGrr(h.get(dealer)!, peers.map((s) => seed(dealer, s)), n, t, dealer, S);
        rows.forEach((r, x) => expect(r.length).toBe(set.includes(x + 1) && !peers.includes(x + 1) ? m * 16 : 0));
        // the dealt values and D times the seeds lie on one degree-t polynomial through D h at 0
        const values = new Map(set.map((x) => [x, peers.includes(x) ? dec(seed(dealer, x)).map((u) => F.mul(u, D)) : dec(rows[x - 1]!)]));
        for (const pts of [set.slice(0, t + 1), set.slice(set.length - t - 1)]) {
          expect(interpolate(pts, pts.map((x) => values.get(x)!), 0)).toEqual(dec(h.get(dealer)!).map((v) => F.mul(v, D)));
        }
        return [dealer, rows] as const;
      }));
      const shares = new Map(set.map((self) => {
        const rows = set.map((dealer) => (seededPeers(n, t, dealer, S).includes(self) ? prss[self - 1]!.pairStream(dealer, `sc:${dealer}>${self}`, m) : dealt.get(dealer)![self - 1]!));
        return [self, dec(grrRecombine(rows, n, t, self, S))] as const;
      }));
      const ab = a.map((x, k) => F.mul(x, b[k]!));
      for (const pts of [set.slice(0, t + 1), set.slice(set.length - t - 1), [set[0]!, ...set.slice(set.length - t)]]) {
        expect(interpolate(pts, pts.map((x) => shares.get(x)!), 0)).toEqual(ab);
      }
    });
  }

  it('deal weights are small integers over a common denominator that evaluate the polynomial', () => {
    for (const [n, t] of [[5, 2], [7, 3]] as const) {
      for (let dealer = 1; dealer <= n; dealer++) {
        const plan = dealPlan(n, t, dealer);
        expect(plan.map((w) => w.x).sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, k) => k + 1).filter((x) => !seededPeers(n, t, dealer).includes(x)));
        for (const w of plan) {
          expect(w.small).toBeDefined();
          expect(w.small!.c.map((c) => F.mul(F.mod(BigInt(c)), w.small!.scale))).toEqual(w.field);
        }
      }
    }
    expect(seededPeers(5, 2, 4)).toEqual([5, 1]);
    expect(seededPeers(5, 2, 5)).toEqual([1, 2]);
  });

  it('pair streams: the same at both ends, different for another pair or nonce, canonical', () => {
    const keys = dealPrssKeys(5, 2, 'pairs');
    const p = keys.map((k, i) => new Prss(5, 2, i + 1, k));
    const x = p[0]!.pairStream(3, 'n1', 100);
    expect(p[2]!.pairStream(1, 'n1', 100)).toEqual(x);
    expect(p[0]!.pairStream(4, 'n1', 100)).not.toEqual(x);
    expect(p[1]!.pairStream(3, 'n1', 100)).not.toEqual(x);
    expect(p[0]!.pairStream(3, 'n2', 100)).not.toEqual(x);
    for (let o = 0; o < x.length; o += 16) expect(x[o]! < 0x80).toBe(true);
    expect(() => p[0]!.pairStream(1, 'n1', 1)).toThrow(/no pair key/);
    // p itself reads as 0; other values keep their bytes, top bit cleared
    const raw = new Uint8Array(32).fill(0xff);
    raw[16] = 0x12;
    const c = canonicalize(raw);
    expect(dec(c)).toEqual([0n, F.mod(BigInt('0x12' + 'ff'.repeat(15)))]);
  });
});

describe('products dealt in the kernel (dealGrrProducts)', () => {
  // the rounds' GRR inputs as preprocessing.ts built them before: concatenations of products and the nibbles' products
  const rng = seededRng('grr-products');
  const vec = (m: number): Uint8Array => {
    const v = rng(m).map(F.mod);
    if (m > 2) {
      v[0] = 0n;
      v[1] = F.P - 1n;
    }
    return enc(v);
  };
  const xs = [vec(7), vec(3), vec(0), vec(5)];
  const ys = [vec(7), vec(3), vec(0), vec(5)];
  const r = vec(4 * 6);
  const p2 = nibblePairsEncoded(r);
  const cases = [
    { name: 'round 0 (products, then nibble pairs)', spec: { xs, ys, nibbles: { r, first: false } }, h: F.concatEncoded([mulEncoded(F.concatEncoded(xs), F.concatEncoded(ys)), nibblePairsEncoded(r)]) },
    { name: 'round 1 (nibble higher products, then products)', spec: { xs, ys, nibbles: { r, p2, first: true } }, h: F.concatEncoded([nibbleHigherEncoded(r, p2), mulEncoded(F.concatEncoded(xs), F.concatEncoded(ys))]) },
    { name: 'products only', spec: { xs, ys }, h: mulEncoded(F.concatEncoded(xs), F.concatEncoded(ys)) },
    { name: 'nibbles only', spec: { xs: [], ys: [], nibbles: { r, first: false } }, h: nibblePairsEncoded(r) },
  ];
  for (const { name, spec, h } of cases) {
    it(`${name}: the same h, and the same rows as dealGrr of it, bit for bit`, () => {
      expect(Buffer.from(productsEncoded(spec)).equals(Buffer.from(h))).toBe(true);
      for (const [n, t, S] of [[5, 2, undefined], [7, 2, [1, 2, 4, 5, 7]], [7, 3, undefined]] as const) {
        const set: readonly number[] = S ?? Array.from({ length: n }, (_, k) => k + 1);
        const prss = dealPrssKeys(n, t, `grr-products:${n}`).map((k, i) => new Prss(n, t, i + 1, k));
        const m = h.length / 16;
        for (const dealer of set) {
          const seeds = seededPeers(n, t, dealer, S).map((s) => prss[dealer - 1]!.pairStream(s, `gp:${dealer}>${s}`, m));
          const want = dealGrr(h, seeds, n, t, dealer, S);
          const got = dealGrrProducts(spec, seeds, n, t, dealer, S);
          expect(got.map((v) => Buffer.from(v).toString('hex'))).toEqual(want.map((v) => Buffer.from(v).toString('hex')));
          expect(got.some((v) => v.length > 0)).toBe(true);
          // sending from kernel memory (ADR 0040): the rows seen by send, copied there, and the kept own row
          let sent: string[] = [];
          const own = dealGrrProductsSending(spec, seeds, n, t, dealer, S, (rows) => (sent = rows.map((v) => Buffer.from(v).toString('hex'))));
          expect(sent).toEqual(want.map((v) => Buffer.from(v).toString('hex')));
          expect(Buffer.from(own).toString('hex')).toBe(Buffer.from(want[dealer - 1]!).toString('hex'));
          // the kept row is an output of its own: later kernel calls leave it alone
          const ownHex = Buffer.from(own).toString('hex');
          dealGrrProducts(spec, seeds, n, t, dealer, S);
          expect(Buffer.from(own).toString('hex')).toBe(ownHex);
        }
      }
    });
  }
  it('rejects factor vectors of unequal lengths', () => {
    expect(() => productsEncoded({ xs: [vec(3)], ys: [vec(2)] })).toThrow();
  });
});
