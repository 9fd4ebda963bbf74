// GF(p), p = 2^127 - 1, vector kernels for WebAssembly (AssemblyScript source; `npm run build:kernel`
// compiles it into src/kernel-wasm.ts, and test/kernel.test.ts checks that the two agree).
//
// Why: BigInt arithmetic allocates on every operation; a modular product costs ~120-170 ns and
// feeds the collector. Here a product is ~17 ns on five 26-bit limbs in 64-bit registers (the
// poly1305-donna layout): limb products are below 2^54, a column of five stays below 2^60, and
// 2^130 = 8 (mod p) folds the high columns back with a multiply by 8.
//
// Elements in memory are the engine's wire encoding: 16 bytes, big-endian, canonical (< p).
// Every function takes byte offsets into this module's memory; the JS side (src/kernel.ts) copies
// vectors in and out. No allocation happens here (runtime stub).

const M26: u64 = (1 << 26) - 1;
const M23: u64 = (1 << 23) - 1;

// the limbs of the element being worked on (locals of one element, kept in globals so the helpers
// below can hand back five values without memory traffic; inlined, they become registers)
let a0: u64 = 0;
let a1: u64 = 0;
let a2: u64 = 0;
let a3: u64 = 0;
let a4: u64 = 0;

@inline function loadBE(p: usize): u64 {
  return bswap<u64>(load<u64>(p));
}

/** a = the element at p (canonical input, limbs below 2^26). */
@inline function unpack(p: usize): void {
  const hi = loadBE(p);
  const lo = loadBE(p + 8);
  a0 = lo & M26;
  a1 = (lo >> 26) & M26;
  a2 = ((lo >> 52) | (hi << 12)) & M26;
  a3 = (hi >> 14) & M26;
  a4 = hi >> 40;
}

/** a = (the 16 raw bytes at p with the top bit cleared) mod p: a uniform field element from random bytes (bias 2^-127). */
@inline function unpackRandom(p: usize): void {
  const hi = loadBE(p) & 0x7fffffffffffffff;
  const lo = loadBE(p + 8);
  a0 = lo & M26;
  a1 = (lo >> 26) & M26;
  a2 = ((lo >> 52) | (hi << 12)) & M26;
  a3 = (hi >> 14) & M26;
  a4 = hi >> 40;
}

/** a = a * (b0..b4) mod p, limbs of both below 2^27; result limbs below 2^27. */
@inline function mulBy(b0: u64, b1: u64, b2: u64, b3: u64, b4: u64): void {
  const c0 = a0 * b0 + 8 * (a1 * b4 + a2 * b3 + a3 * b2 + a4 * b1);
  const c1 = a0 * b1 + a1 * b0 + 8 * (a2 * b4 + a3 * b3 + a4 * b2);
  const c2 = a0 * b2 + a1 * b1 + a2 * b0 + 8 * (a3 * b4 + a4 * b3);
  const c3 = a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0 + 8 * (a4 * b4);
  const c4 = a0 * b4 + a1 * b3 + a2 * b2 + a3 * b1 + a4 * b0;
  let t0 = c0 & M26;
  let k = c0 >> 26;
  const v1 = c1 + k;
  let t1 = v1 & M26;
  k = v1 >> 26;
  const v2 = c2 + k;
  a2 = v2 & M26;
  k = v2 >> 26;
  const v3 = c3 + k;
  a3 = v3 & M26;
  k = v3 >> 26;
  const v4 = c4 + k;
  a4 = v4 & M26;
  k = v4 >> 26;
  t0 += 8 * k; // 2^130 = 8
  k = t0 >> 26;
  a0 = t0 & M26;
  t1 += k;
  a1 = t1;
}

/** Carries a (limbs below 2^40) to a canonical value and stores it big-endian at p. */
@inline function pack(p: usize): void {
  let x0 = a0;
  let x1 = a1;
  let x2 = a2;
  let x3 = a3;
  let x4 = a4;
  let k: u64;
  for (let i = 0; i < 2; i++) {
    k = x0 >> 26; x0 &= M26; x1 += k;
    k = x1 >> 26; x1 &= M26; x2 += k;
    k = x2 >> 26; x2 &= M26; x3 += k;
    k = x3 >> 26; x3 &= M26; x4 += k;
    k = x4 >> 23; x4 &= M23; x0 += k; // bit 127 and up: 2^127 = 1
  }
  k = x0 >> 26; x0 &= M26; x1 += k;
  k = x1 >> 26; x1 &= M26; x2 += k;
  k = x2 >> 26; x2 &= M26; x3 += k;
  k = x3 >> 26; x3 &= M26; x4 += k;
  // below 2^127 now; p itself (127 ones) is 0
  let lo: u64 = x0 | (x1 << 26) | (x2 << 52);
  let hi: u64 = (x2 >> 12) | (x3 << 14) | (x4 << 40);
  if (hi == 0x7fffffffffffffff && lo == 0xffffffffffffffff) {
    hi = 0;
    lo = 0;
  }
  store<u64>(p, bswap<u64>(hi));
  store<u64>(p + 8, bswap<u64>(lo));
}

/** dst[e] = src[e]^(2^125), the canonical square root of a residue (p = 3 mod 4); no residue check. */
export function sqrtMany(src: usize, dst: usize, n: i32): void {
  for (let e = 0; e < n; e++) {
    const off = <usize>e << 4;
    unpack(src + off);
    for (let i = 0; i < 125; i++) mulBy(a0, a1, a2, a3, a4);
    pack(dst + off);
  }
}

/** dst[e] = x[e] * y[e] mod p. dst may be x or y. */
export function mulMany(x: usize, y: usize, dst: usize, n: i32): void {
  for (let e = 0; e < n; e++) {
    const off = <usize>e << 4;
    unpack(y + off);
    const b0 = a0;
    const b1 = a1;
    const b2 = a2;
    const b3 = a3;
    const b4 = a4;
    unpack(x + off);
    mulBy(b0, b1, b2, b3, b4);
    pack(dst + off);
  }
}

/**
 * Degree-t Shamir sharing of each of the m secrets at x = 1..n, with coefficients taken from the
 * m*t random 16-byte strings at coeffs (secret e uses strings e*t .. e*t+t-1, lowest degree first):
 * out[(i-1)*m + e] = s_e + sum_d c_{e,d} i^d. Horner in the small integer i: a limb times i <= 64
 * stays below 2^33, so each step is a carry pass, not a product.
 */
export function shareMany(secrets: usize, coeffs: usize, out: usize, m: i32, n: i32, t: i32): void {
  for (let e = 0; e < m; e++) {
    for (let i = 1; i <= n; i++) {
      const x = <u64>i;
      // Horner from the top coefficient
      unpackRandom(coeffs + ((<usize>(e * t + t - 1)) << 4));
      for (let d = t - 2; d >= -1; d--) {
        let y0 = a0 * x;
        let y1 = a1 * x;
        let y2 = a2 * x;
        let y3 = a3 * x;
        let y4 = a4 * x;
        if (d >= 0) unpackRandom(coeffs + ((<usize>(e * t + d)) << 4));
        else unpack(secrets + (<usize>e << 4));
        y0 += a0; y1 += a1; y2 += a2; y3 += a3; y4 += a4;
        // carry back below 2^27 per limb (2^130 = 8)
        let k = y0 >> 26; y0 &= M26; y1 += k;
        k = y1 >> 26; y1 &= M26; y2 += k;
        k = y2 >> 26; y2 &= M26; y3 += k;
        k = y3 >> 26; y3 &= M26; y4 += k;
        k = y4 >> 26; y4 &= M26; y0 += 8 * k;
        a0 = y0; a1 = y1; a2 = y2; a3 = y3; a4 = y4;
      }
      pack(out + ((<usize>((i - 1) * m + e)) << 4));
    }
  }
}
