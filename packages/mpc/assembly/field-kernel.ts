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

// Byte order: an element is 16 bytes big-endian. WebAssembly has no byte-swap instruction, so a
// scalar bswap<u64> is a dozen shifts and masks; one SIMD shuffle reverses all 16 bytes of an element
// instead, leaving lo in lane 0 and hi in lane 1 (a load, a pshufb, two lane moves).

/** The 16 bytes of v in reverse order: big-endian (hi, lo) in memory <-> little-endian lanes (lo, hi). */
@inline function rev16(v: v128): v128 {
  return i8x16.shuffle(v, v, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}

/** The element at p as little-endian lanes: lane 0 its low 64 bits, lane 1 its high 64 bits. */
@inline function loadEl(p: usize): v128 {
  return rev16(v128.load(p));
}

/** Stores the 128-bit value hi:lo at p, big-endian. */
@inline function storeEl(p: usize, hi: u64, lo: u64): void {
  v128.store(p, rev16(i64x2.replace_lane(i64x2.splat(lo), 1, hi)));
}

/** a = the 128-bit value hi:lo (below 2^127) as limbs below 2^26. */
@inline function setA(hi: u64, lo: u64): void {
  a0 = lo & M26;
  a1 = (lo >> 26) & M26;
  a2 = ((lo >> 52) | (hi << 12)) & M26;
  a3 = (hi >> 14) & M26;
  a4 = hi >> 40;
}

/** a = the element at p (canonical input, limbs below 2^26). */
@inline function unpack(p: usize): void {
  const v = loadEl(p);
  setA(i64x2.extract_lane(v, 1), i64x2.extract_lane(v, 0));
}

/** a += the element at p, limbwise (canonical input; each limb grows by less than 2^26). */
@inline function addAt(p: usize): void {
  const x0 = a0;
  const x1 = a1;
  const x2 = a2;
  const x3 = a3;
  const x4 = a4;
  unpack(p);
  a0 += x0; a1 += x1; a2 += x2; a3 += x3; a4 += x4;
}

/** a = (the 16 raw bytes at p with the top bit cleared) mod p: a uniform field element from random bytes (bias 2^-127). */
@inline function unpackRandom(p: usize): void {
  const v = loadEl(p);
  setA(i64x2.extract_lane(v, 1) & 0x7fffffffffffffff, i64x2.extract_lane(v, 0));
}

/** a = a * (b0..b4) mod p, limbs of both below 2^27; result limbs below 2^27. */
@inline function mulBy(b0: u64, b1: u64, b2: u64, b3: u64, b4: u64): void {
  const c0 = a0 * b0 + 8 * (a1 * b4 + a2 * b3 + a3 * b2 + a4 * b1);
  const c1 = a0 * b1 + a1 * b0 + 8 * (a2 * b4 + a3 * b3 + a4 * b2);
  const c2 = a0 * b2 + a1 * b1 + a2 * b0 + 8 * (a3 * b4 + a4 * b3);
  const c3 = a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0 + 8 * (a4 * b4);
  const c4 = a0 * b4 + a1 * b3 + a2 * b2 + a3 * b1 + a4 * b0;
  carryProduct(c0, c1, c2, c3, c4);
}

/**
 * a = a^2 mod p, limbs below 2^27: mulBy(a) with each cross product a_i a_j (i != j) taken once and
 * doubled, 15 limb products instead of 25 (the square roots' and inversion's chains of squarings).
 * The columns are mulBy's, term for term, so the same bounds hold.
 */
@inline function sqrA(): void {
  const d0 = a0 << 1;
  const d1 = a1 << 1;
  const d2 = a2 << 1;
  const c0 = a0 * a0 + 8 * (d1 * a4 + d2 * a3);
  const c1 = d0 * a1 + 8 * (d2 * a4 + a3 * a3);
  const c2 = d0 * a2 + a1 * a1 + 8 * ((a3 << 1) * a4);
  const c3 = d0 * a3 + d1 * a2 + 8 * (a4 * a4);
  const c4 = d0 * a4 + d1 * a3 + a2 * a2;
  carryProduct(c0, c1, c2, c3, c4);
}

/** a = the product columns c0..c4 (each below 2^60) carried to limbs below 2^27 (2^130 = 8). */
@inline function carryProduct(c0: u64, c1: u64, c2: u64, c3: u64, c4: u64): void {
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

// Saved limb sets: a value kept while `a` computes another (inlined, they stay in registers).
let b0: u64 = 0;
let b1: u64 = 0;
let b2: u64 = 0;
let b3: u64 = 0;
let b4: u64 = 0;
let c0: u64 = 0;
let c1: u64 = 0;
let c2: u64 = 0;
let c3: u64 = 0;
let c4: u64 = 0;

@inline function aToB(): void {
  b0 = a0; b1 = a1; b2 = a2; b3 = a3; b4 = a4;
}

@inline function aToC(): void {
  c0 = a0; c1 = a1; c2 = a2; c3 = a3; c4 = a4;
}

/** a = a * b. */
@inline function mulByB(): void {
  mulBy(b0, b1, b2, b3, b4);
}

/** a = a * c. */
@inline function mulByC(): void {
  mulBy(c0, c1, c2, c3, c4);
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
  storeEl(p, hi, lo);
}

/** d = p * q (elements at those offsets). */
@inline function mulAt(p: usize, q: usize, d: usize): void {
  unpack(q);
  aToB();
  unpack(p);
  mulByB();
  pack(d);
}

// ---- four elements at once (SIMD): limb i of elements e..e+3 in the four u32 lanes of one i32x4 ----
// WebAssembly has i64x2.extmul_{low,high}_i32x4_u (32x32 -> 64, two per instruction; x64 vpmuludq);
// its i64x2.mul is a 64x64 emulation and no faster than scalar. The columns and carries are
// sqrA's and carryProduct's, lane by lane, so each lane computes exactly what the scalar code does.

// the carried limbs of two lanes (i64x2), carry4's outputs
let V0: v128 = i64x2.splat(0);
let V1: v128 = i64x2.splat(0);
let V2: v128 = i64x2.splat(0);
let V3: v128 = i64x2.splat(0);
let V4: v128 = i64x2.splat(0);

/** carryProduct on two lanes: columns below 2^60 to limbs below 2^27, into V0..V4. */
@inline function carry2(c0: v128, c1: v128, c2: v128, c3: v128, c4: v128): void {
  const M = i64x2.splat(M26);
  let t0 = v128.and(c0, M);
  let k = i64x2.shr_u(c0, 26);
  const v1 = i64x2.add(c1, k);
  const t1 = v128.and(v1, M);
  k = i64x2.shr_u(v1, 26);
  const v2 = i64x2.add(c2, k);
  V2 = v128.and(v2, M);
  k = i64x2.shr_u(v2, 26);
  const v3 = i64x2.add(c3, k);
  V3 = v128.and(v3, M);
  k = i64x2.shr_u(v3, 26);
  const v4 = i64x2.add(c4, k);
  V4 = v128.and(v4, M);
  k = i64x2.shr_u(v4, 26);
  t0 = i64x2.add(t0, i64x2.shl(k, 3)); // 2^130 = 8
  k = i64x2.shr_u(t0, 26);
  V0 = v128.and(t0, M);
  V1 = i64x2.add(t1, k);
}

@inline function xm(x: v128, y: v128, high: bool): v128 {
  return high ? i64x2.extmul_high_i32x4_u(x, y) : i64x2.extmul_low_i32x4_u(x, y);
}

/** sqrA's columns for lanes 0-1 (or 2-3 with `high`) of the four-lane limbs x0..x4 (below 2^27), carried into V0..V4. */
@inline function sqr2(x0: v128, x1: v128, x2: v128, x3: v128, x4: v128, high: bool): void {
  const d0 = i32x4.shl(x0, 1);
  const d1 = i32x4.shl(x1, 1);
  const d2 = i32x4.shl(x2, 1);
  const d3 = i32x4.shl(x3, 1);
  const c0 = i64x2.add(xm(x0, x0, high), i64x2.shl(i64x2.add(xm(d1, x4, high), xm(d2, x3, high)), 3));
  const c1 = i64x2.add(xm(d0, x1, high), i64x2.shl(i64x2.add(xm(d2, x4, high), xm(x3, x3, high)), 3));
  const c2 = i64x2.add(i64x2.add(xm(d0, x2, high), xm(x1, x1, high)), i64x2.shl(xm(d3, x4, high), 3));
  const c3 = i64x2.add(i64x2.add(xm(d0, x3, high), xm(d1, x2, high)), i64x2.shl(xm(x4, x4, high), 3));
  const c4 = i64x2.add(i64x2.add(xm(d0, x4, high), xm(d1, x3, high)), xm(x2, x2, high));
  carry2(c0, c1, c2, c3, c4);
}

/** The four-lane limbs of two-lane halves lo (lanes 0-1) and hi (lanes 2-3), each limb below 2^32. */
@inline function narrow4(lo: v128, hi: v128): v128 {
  return i32x4.shuffle(lo, hi, 0, 2, 4, 6);
}

/** dst[e] = src[e]^(2^125), the canonical square root of a residue (p = 3 mod 4); no residue check. */
export function sqrtMany(src: usize, dst: usize, n: i32): void {
  let e = 0;
  // four at a time: the 125 squarings of four elements in the lanes of five i32x4 limbs
  for (; e + 4 <= n; e += 4) {
    const off = <usize>e << 4;
    let x0 = i32x4.splat(0);
    let x1 = i32x4.splat(0);
    let x2 = i32x4.splat(0);
    let x3 = i32x4.splat(0);
    let x4 = i32x4.splat(0);
    unpack(src + off);
    x0 = i32x4.replace_lane(x0, 0, <u32>a0); x1 = i32x4.replace_lane(x1, 0, <u32>a1); x2 = i32x4.replace_lane(x2, 0, <u32>a2); x3 = i32x4.replace_lane(x3, 0, <u32>a3); x4 = i32x4.replace_lane(x4, 0, <u32>a4);
    unpack(src + off + 16);
    x0 = i32x4.replace_lane(x0, 1, <u32>a0); x1 = i32x4.replace_lane(x1, 1, <u32>a1); x2 = i32x4.replace_lane(x2, 1, <u32>a2); x3 = i32x4.replace_lane(x3, 1, <u32>a3); x4 = i32x4.replace_lane(x4, 1, <u32>a4);
    unpack(src + off + 32);
    x0 = i32x4.replace_lane(x0, 2, <u32>a0); x1 = i32x4.replace_lane(x1, 2, <u32>a1); x2 = i32x4.replace_lane(x2, 2, <u32>a2); x3 = i32x4.replace_lane(x3, 2, <u32>a3); x4 = i32x4.replace_lane(x4, 2, <u32>a4);
    unpack(src + off + 48);
    x0 = i32x4.replace_lane(x0, 3, <u32>a0); x1 = i32x4.replace_lane(x1, 3, <u32>a1); x2 = i32x4.replace_lane(x2, 3, <u32>a2); x3 = i32x4.replace_lane(x3, 3, <u32>a3); x4 = i32x4.replace_lane(x4, 3, <u32>a4);
    for (let i = 0; i < 125; i++) {
      sqr2(x0, x1, x2, x3, x4, false);
      const l0 = V0, l1 = V1, l2 = V2, l3 = V3, l4 = V4;
      sqr2(x0, x1, x2, x3, x4, true);
      x0 = narrow4(l0, V0);
      x1 = narrow4(l1, V1);
      x2 = narrow4(l2, V2);
      x3 = narrow4(l3, V3);
      x4 = narrow4(l4, V4);
    }
    lanesToA(x0, x1, x2, x3, x4, 0);
    pack(dst + off);
    lanesToA(x0, x1, x2, x3, x4, 1);
    pack(dst + off + 16);
    lanesToA(x0, x1, x2, x3, x4, 2);
    pack(dst + off + 32);
    lanesToA(x0, x1, x2, x3, x4, 3);
    pack(dst + off + 48);
  }
  for (; e < n; e++) {
    const off = <usize>e << 4;
    unpack(src + off);
    for (let i = 0; i < 125; i++) sqrA();
    pack(dst + off);
  }
}

/** Lane `lane` (a constant) of the four-lane limbs x (extract_lane takes only a literal lane). */
@inline function lane4(x: v128, lane: i32): u64 {
  return <u64>(lane == 0 ? i32x4.extract_lane(x, 0) : lane == 1 ? i32x4.extract_lane(x, 1) : lane == 2 ? i32x4.extract_lane(x, 2) : i32x4.extract_lane(x, 3));
}

/** a = lane `lane` of the four-lane limbs. */
@inline function lanesToA(x0: v128, x1: v128, x2: v128, x3: v128, x4: v128, lane: i32): void {
  a0 = lane4(x0, lane);
  a1 = lane4(x1, lane);
  a2 = lane4(x2, lane);
  a3 = lane4(x3, lane);
  a4 = lane4(x4, lane);
}

/** dst[e] = x[e] * y[e] mod p. dst may be x or y. */
export function mulMany(x: usize, y: usize, dst: usize, n: i32): void {
  for (let e = 0; e < n; e++) {
    const off = <usize>e << 4;
    mulAt(x + off, y + off, dst + off);
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

// ---- canonical elements as (hi, lo) 64-bit halves: additions and subtractions mod p ----

const HI_P: u64 = 0x7fffffffffffffff;
const LO_P: u64 = 0xffffffffffffffff;

let h: u64 = 0;
let l: u64 = 0;

@inline function ld2(p: usize): void {
  const v = loadEl(p);
  h = i64x2.extract_lane(v, 1);
  l = i64x2.extract_lane(v, 0);
}

@inline function st2(p: usize): void {
  storeEl(p, h, l);
}

/** (h, l) = (h, l) * 2^-4 = (h, l) * 2^123 mod p: the 127 bits rotated right by 4 (canonical in, canonical out: only p maps to p). */
@inline function rotr4(): void {
  const lo = (l >> 4) | (h << 60);
  h = (h >> 4) | ((l & 15) << 59);
  l = lo;
}

/** (h, l) = (h, l) * 2^k mod p for 0 < k < 63: the 127 bits rotated left by k (canonical in and out). */
@inline function rotl(k: u64): void {
  const out = h >> (63 - k); // bits 127-k .. 126, which wrap to bits 0 .. k-1 (2^127 = 1)
  h = ((h << k) | (l >> (64 - k))) & HI_P;
  l = (l << k) | out;
}

/** (h, l) = (hi, lo), a value at most p: p itself is stored as 0. */
@inline function storeCanonical(hi: u64, lo: u64): void {
  if (hi == HI_P && lo == LO_P) {
    h = 0;
    l = 0;
  } else {
    h = hi;
    l = lo;
  }
}

/** (h, l) = (h, l) + (yh, yl) mod p, all canonical. */
@inline function fadd(yh: u64, yl: u64): void {
  const lo = l + yl;
  let hi = h + yh + (lo < l ? 1 : 0);
  // below 2^128 - 2: fold bit 127 (2^127 = 1); the result is below p or equal to it
  const top = hi >> 63;
  hi &= HI_P;
  const lo2 = lo + top;
  hi += lo2 < lo ? 1 : 0;
  storeCanonical(hi, lo2);
}

/** (h, l) = (h, l) - (yh, yl) mod p, all canonical. */
@inline function fsub(yh: u64, yl: u64): void {
  const lo = l - yl;
  let hi = h - yh - (l < yl ? 1 : 0);
  if (hi >> 63) {
    // borrowed: add p = 2^127 - 1 (mod 2^128)
    const lo2 = lo + LO_P;
    hi = hi + HI_P + (lo2 < lo ? 1 : 0);
    h = hi & 0xffffffffffffffff;
    l = lo2;
  } else {
    h = hi;
    l = lo;
  }
}

/** dst[e] = x[e] + y[e], or x[e] - y[e] with `subtract` (inlined with a constant: no branch left). */
@inline function addOrSub(x: usize, y: usize, dst: usize, n: i32, subtract: bool): void {
  for (let e = 0; e < n; e++) {
    const off = <usize>e << 4;
    ld2(y + off);
    const yh = h;
    const yl = l;
    ld2(x + off);
    if (subtract) fsub(yh, yl);
    else fadd(yh, yl);
    st2(dst + off);
  }
}

/** dst[e] = x[e] + y[e]. */
export function addMany(x: usize, y: usize, dst: usize, n: i32): void {
  addOrSub(x, y, dst, n, false);
}

/** dst[e] = x[e] - y[e]. */
export function subMany(x: usize, y: usize, dst: usize, n: i32): void {
  addOrSub(x, y, dst, n, true);
}

/** dst[e] = x[e] * c for the one element c. */
export function scaleMany(x: usize, c: usize, dst: usize, n: i32): void {
  unpack(c);
  aToC();
  for (let e = 0; e < n; e++) {
    const off = <usize>e << 4;
    unpack(x + off);
    mulByC();
    pack(dst + off);
  }
}

/**
 * dst[e] = sum_j w[j] * rows[j][e] for k rows of m elements each, stored one after another at rows
 * (e.g. Lagrange interpolation of k parties' share vectors with weights w).
 */
export function lincombMany(rows: usize, w: usize, k: i32, m: i32, dst: usize): void {
  const stride = <usize>m << 4;
  for (let e = 0; e < m; e++) {
    const off = <usize>e << 4;
    let s0: u64 = 0;
    let s1: u64 = 0;
    let s2: u64 = 0;
    let s3: u64 = 0;
    let s4: u64 = 0;
    for (let j = 0; j < k; j++) {
      unpack(w + (<usize>j << 4));
      aToB();
      unpack(rows + <usize>j * stride + off);
      mulByB();
      // limbs below 2^27 each: sums of up to 64 terms stay far below 2^40
      s0 += a0; s1 += a1; s2 += a2; s3 += a3; s4 += a4;
    }
    a0 = s0; a1 = s1; a2 = s2; a3 = s3; a4 = s4;
    pack(dst + off);
  }
}

// ---- small integer combinations on 32-bit words (SIMD) ----
// An element loaded with loadEl is already an i32x4 of its four 32-bit words, least significant
// first, so a small weight times it is two extending products (i64x2.extmul_{low,high}_i32x4_u):
// no limbs, no unpack. A weight below 2^24 times a word stays below 2^56, and 64 such terms below
// 2^62, in each of the four word columns. A negative weight -u adds u * ~x: ~x = 2^128 - 1 - x and
// 2^128 = 2 (mod p), so -x = ~x - 1, and the sum of those u (N, below 2^30) is taken back once, by
// adding p - N's words to the columns (each still below 2^63).

/** 2^10 p as word columns (s0, s1 | s2, s3): a positive offset, 0 mod p, for signed column sums below 2^40. */
const P_2_10_LO = i64x2(0xffffffff << 10, 0xffffffff << 10);
const P_2_10_HI = i64x2(0xffffffff << 10, 0x7fffffff << 10);

/** The top bit of an element's 16 bytes cleared (wordwise, lane 3 of the words). */
const LOW127 = i32x4(-1, -1, -1, 0x7fffffff);

/**
 * (h, l) = the canonical value of the word columns s = [s0, s1] and t = [s2, s3] (s0 + s1 2^32 +
 * s2 2^64 + s3 2^96, each below 2^62) minus n (below 2^32), mod p.
 */
@inline function reduceWords(s: v128, t: v128, n: u64): void {
  const M32: u64 = 0xffffffff;
  // + p - n, as words: [2^32 - 1 - n, 2^32 - 1, 2^32 - 1, 2^31 - 1]
  let x = <u64>i64x2.extract_lane(s, 0) + (M32 - n);
  const r0 = x & M32;
  x = <u64>i64x2.extract_lane(s, 1) + M32 + (x >> 32);
  const r1 = x & M32;
  x = <u64>i64x2.extract_lane(t, 0) + M32 + (x >> 32);
  const r2 = x & M32;
  x = <u64>i64x2.extract_lane(t, 1) + 0x7fffffff + (x >> 32);
  let hi = (x << 32) | r2; // bits 64..127
  const lo = (r1 << 32) | r0;
  // bits 128 and up (x >> 32, below 2^31) weigh 2 each, bit 127 weighs 1
  const add = ((x >> 32) << 1) + (hi >> 63);
  hi &= HI_P;
  let lo2 = lo + add;
  hi += lo2 < lo ? 1 : 0;
  // below 2^127 + 2^34 now; bit 127 once more (the carry left lo2 below 2^34: no overflow)
  const top = hi >> 63;
  hi &= HI_P;
  lo2 += top;
  storeCanonical(hi, lo2);
}

// the word columns being summed, and the negative weights' sum (wordTerm's state)
let WS: v128 = i64x2.splat(0);
let WT: v128 = i64x2.splat(0);
let WN: u64 = 0;

/** Clears the word sums. */
@inline function wordStart(): void {
  WS = i64x2.splat(0);
  WT = i64x2.splat(0);
  WN = 0;
}

/** The word sums += wj * x for the element words x, |wj| < 2^24. */
@inline function wordTerm(x: v128, wj: i64): void {
  let u = wj;
  let y = x;
  if (wj < 0) {
    u = -wj;
    y = v128.not(x);
    WN += <u64>u;
  }
  const uv = i32x4.splat(<i32>u);
  WS = i64x2.add(WS, i64x2.extmul_low_i32x4_u(y, uv));
  WT = i64x2.add(WT, i64x2.extmul_high_i32x4_u(y, uv));
}

/** Stores the word sums' value at d, times c (limbs) with `scaled`. */
@inline function wordEnd(scaled: bool, d: usize): void {
  reduceWords(WS, WT, WN);
  if (scaled) {
    setA(h, l);
    mulByC();
    pack(d);
  } else {
    st2(d);
  }
}

/**
 * dst[e] = scale * sum_j w[j] * rows[j][e] for k rows of m elements (stored as lincombMany's) and
 * small signed integer weights w (k i64 values at w, |w| < 2^24, k <= 64): word sums (above), no
 * field product per term. With `scaled` the result is multiplied by the element at scale (one
 * product), so rational weights c_j / D are written as c_j with scale = D^-1. Lagrange weights at 0
 * over the points 1..n are integers, and those of GRR recombination are below 2^24 for n up to 26.
 */
export function lincombSmallMany(rows: usize, w: usize, k: i32, m: i32, scale: usize, scaled: bool, dst: usize): void {
  if (scaled) {
    unpack(scale);
    aToC();
  }
  for (let e = 0; e < m; e++) smallComb(rows, <usize>m << 4, w, k, <usize>e << 4, scaled, dst + (<usize>e << 4));
}

/**
 * nT linear combinations of the same k rows at once (a dealer's GRR rows, grr.ts): out row q is
 * scale_q * sum_j w[q*k + j] * rows[j], as lincombSmallMany with the weights of row q and the
 * element scale_q at scales + 16 q (with `scaled`; without, no product: the integer combination).
 * Element e of every row is read while it is in cache, and the rows are copied in once for all
 * outputs.
 */
export function lincombSmallRowsMany(rows: usize, w: usize, k: i32, m: i32, scales: usize, nT: i32, dst: usize, scaled: bool): void {
  const stride = <usize>m << 4;
  if (k == 3) {
    if (scaled) lincombSmallRows3(rows, w, m, scales, nT, dst, true);
    else lincombSmallRows3(rows, w, m, scales, nT, dst, false);
    return;
  }
  for (let e = 0; e < m; e++) {
    const off = <usize>e << 4;
    for (let q = 0; q < nT; q++) {
      if (scaled) {
        unpack(scales + (<usize>q << 4));
        aToC();
      }
      smallComb(rows, stride, w + (<usize>(q * k) << 3), k, off, scaled, dst + <usize>q * stride + off);
    }
  }
}

/**
 * lincombSmallRowsMany for k = 3 rows (GRR dealing at t = 2: h and two seeds): element e of each
 * row is loaded once for all nT outputs.
 */
@inline function lincombSmallRows3(rows: usize, w: usize, m: i32, scales: usize, nT: i32, dst: usize, scaled: bool): void {
  const stride = <usize>m << 4;
  for (let e = 0; e < m; e++) {
    const off = <usize>e << 4;
    const x = loadEl(rows + off);
    const y = loadEl(rows + stride + off);
    const z = loadEl(rows + 2 * stride + off);
    for (let q = 0; q < nT; q++) {
      const wq = w + (<usize>(q * 3) << 3);
      wordStart();
      wordTerm(x, load<i64>(wq));
      wordTerm(y, load<i64>(wq, 8));
      wordTerm(z, load<i64>(wq, 16));
      if (scaled) {
        unpack(scales + (<usize>q << 4));
        aToC();
      }
      wordEnd(scaled, dst + <usize>q * stride + off);
    }
  }
}

/**
 * PRSS sums in one pass: dst[e] = scale * sum_j w[j] * R_j[e], where R_j[e] is the raw 16-byte key
 * stream block at bases[j] + e * step with its top bit cleared (a uniform element below 2^127; p
 * itself is the residue 0 and is summed as such: the word sums take any 128-bit value). bases
 * holds k u32 byte offsets, w k i64 weights (|w| < 2^24, k <= 64, as lincombSmallMany). One subset's
 * stream of t values per element is t rows with the same step (Prss.zeroShares2t's layout), so no
 * copy regroups them.
 */
export function lincombRawMany(bases: usize, step: usize, w: usize, k: i32, m: i32, scale: usize, scaled: bool, dst: usize): void {
  if (scaled) {
    unpack(scale);
    aToC();
  }
  for (let e = 0; e < m; e++) {
    const off = <usize>e * step;
    wordStart();
    for (let j = 0; j < k; j++) {
      wordTerm(v128.and(loadEl(<usize>load<u32>(bases + (<usize>j << 2)) + off), LOW127), load<i64>(w + (<usize>j << 3)));
    }
    wordEnd(scaled, dst + (<usize>e << 4));
  }
}

/** One element of lincombSmallMany: element `off` of each of the k rows (stride apart), the scale in c when `scaled`, into d. */
@inline function smallComb(rows: usize, stride: usize, w: usize, k: i32, off: usize, scaled: bool, d: usize): void {
  wordStart();
  for (let j = 0; j < k; j++) wordTerm(loadEl(rows + <usize>j * stride + off), load<i64>(w + (<usize>j << 3)));
  wordEnd(scaled, d);
}

/** a = a^(p-2) = a^-1 (0 stays 0). p - 2 = 2^127 - 3: bits 126..2 and bit 0 set. */
@inline function invertA(): void {
  const x0 = a0;
  const x1 = a1;
  const x2 = a2;
  const x3 = a3;
  const x4 = a4;
  // r = x; for bits 125..0: r = r^2, times x if the bit is set (all but bit 1)
  for (let i = 125; i >= 0; i--) {
    sqrA();
    if (i != 1) mulBy(x0, x1, x2, x3, x4);
  }
}

/**
 * Random bits from the square-root trick, for n elements: r = shares of the random values, s =
 * the opened canonical roots, y = the opened squares. Checks s^2 = y (s = 1 where y = 0); on a
 * mismatch returns its index and writes nothing useful. Otherwise dst[e] = (r/s + 1) / 2 (r where
 * y = 0: r is then a sharing of 0) and returns -1. dst holds prefix products meanwhile (batch
 * inversion: one exponentiation for the whole vector).
 */
export function bitsFromRoots(r: usize, s: usize, y: usize, dst: usize, n: i32): i32 {
  // check, and dst[e] = s_0 * ... * s_(e-1) (the running product in a)
  a0 = 1; a1 = 0; a2 = 0; a3 = 0; a4 = 0;
  for (let e = 0; e < n; e++) {
    const off = <usize>e << 4;
    aToC();
    // s^2 against y (1 where y = 0), through dst[e] as scratch
    unpack(s + off);
    aToB();
    mulByB();
    pack(dst + off);
    ld2(dst + off);
    const sqh = h;
    const sql = l;
    ld2(y + off);
    if (h == 0 && l == 0) l = 1;
    if (sqh != h || sql != l) return e;
    a0 = c0; a1 = c1; a2 = c2; a3 = c3; a4 = c4;
    pack(dst + off);
    mulByB();
  }
  invertA(); // a = (s_0 ... s_(n-1))^-1, then inv = that times the s not yet passed
  for (let e = n - 1; e >= 0; e--) {
    const off = <usize>e << 4;
    aToC();
    // dst[e] = s_e^-1 = inv * prefix_e
    unpack(dst + off);
    mulByC();
    pack(dst + off);
    ld2(y + off);
    if (h == 0 && l == 0) {
      ld2(r + off);
      st2(dst + off);
    } else {
      // (r s^-1 + 1) / 2; halving u: (u + p) / 2 when u is odd (p is odd)
      unpack(dst + off);
      aToB();
      unpack(r + off);
      mulByB();
      pack(dst + off);
      ld2(dst + off);
      fadd(0, 1);
      if (l & 1) {
        const lo = l + LO_P;
        const hi = h + HI_P + (lo < l ? 1 : 0);
        l = (lo >> 1) | (hi << 63);
        h = hi >> 1;
      } else {
        l = (l >> 1) | (h << 63);
        h = h >> 1;
      }
      st2(dst + off);
    }
    unpack(s + off);
    mulByC(); // inv * s_e
  }
  return -1;
}

/**
 * The pair products of each nibble's four bits: x holds 4 bits per nibble, dst gets
 * [x0x1, x0x2, x0x3, x1x2, x1x3, x2x3] per nibble (shares of degree 2t, to be reshared).
 */
export function nibblePairs(x: usize, dst: usize, u: i32): void {
  for (let k = 0; k < u; k++) {
    const xb = x + (<usize>(4 * k) << 4);
    const db = dst + (<usize>(6 * k) << 4);
    let o = 0;
    for (let i = 0; i < 3; i++) {
      for (let j = i + 1; j < 4; j++) {
        mulAt(xb + (<usize>i << 4), xb + (<usize>j << 4), db + (<usize>o << 4));
        o++;
      }
    }
  }
}

/**
 * The higher products of each nibble: from its bits x (4 per nibble) and pair products p2 (6, as
 * nibblePairs), dst gets [x0x1x2, x0x1x3, x0x2x3, x1x2x3, x0x1x2x3] per nibble.
 */
export function nibbleHigher(x: usize, p2: usize, dst: usize, u: i32): void {
  for (let k = 0; k < u; k++) {
    const xb = x + (<usize>(4 * k) << 4);
    const pb = p2 + (<usize>(6 * k) << 4);
    const db = dst + (<usize>(5 * k) << 4);
    mulAt(pb, xb + 32, db); // 01 * 2
    mulAt(pb, xb + 48, db + 16); // 01 * 3
    mulAt(pb + 16, xb + 48, db + 32); // 02 * 3
    mulAt(pb + 48, xb + 48, db + 48); // 12 * 3
    mulAt(pb, pb + 80, db + 64); // 01 * 23
  }
}

/**
 * The stored form of each nibble (16 elements: [v > j] for j = 0..14, then v) from its bits, pair
 * and higher products, by the superset Moebius transform and suffix sums (see nibblesFrom in
 * preprocessing.ts, which this matches). Local: additions and subtractions only.
 */
export function nibbleUnary(x: usize, p2: usize, p3: usize, dst: usize, u: i32): void {
  for (let k = 0; k < u; k++) {
    const xb = x + (<usize>(4 * k) << 4);
    const pb = p2 + (<usize>(6 * k) << 4);
    const qb = p3 + (<usize>(5 * k) << 4);
    const db = dst + (<usize>(16 * k) << 4);
    // slot S-1 holds prod_S for the subsets S = 1..15 of the four bits
    memory.copy(db + (0 << 4), xb, 16); // 1 = {0}
    memory.copy(db + (1 << 4), xb + 16, 16); // 2 = {1}
    memory.copy(db + (2 << 4), pb, 16); // 3 = {0,1}
    memory.copy(db + (3 << 4), xb + 32, 16); // 4 = {2}
    memory.copy(db + (4 << 4), pb + 16, 16); // 5 = {0,2}
    memory.copy(db + (5 << 4), pb + 48, 16); // 6 = {1,2}
    memory.copy(db + (6 << 4), qb, 16); // 7 = {0,1,2}
    memory.copy(db + (7 << 4), xb + 48, 16); // 8 = {3}
    memory.copy(db + (8 << 4), pb + 32, 16); // 9 = {0,3}
    memory.copy(db + (9 << 4), pb + 64, 16); // 10 = {1,3}
    memory.copy(db + (10 << 4), qb + 16, 16); // 11 = {0,1,3}
    memory.copy(db + (11 << 4), pb + 80, 16); // 12 = {2,3}
    memory.copy(db + (12 << 4), qb + 32, 16); // 13 = {0,2,3}
    memory.copy(db + (13 << 4), qb + 48, 16); // 14 = {1,2,3}
    memory.copy(db + (14 << 4), qb + 64, 16); // 15 = {0,1,2,3}
    // [v == S] = sum over supersets T of S of (-1)^(|T|-|S|) prod_T
    for (let bit = 1; bit < 16; bit <<= 1) {
      for (let S = 1; S < 16; S++) {
        if ((S & bit) != 0) continue;
        ld2(db + (<usize>((S | bit) - 1) << 4));
        const th = h;
        const tl = l;
        ld2(db + (<usize>(S - 1) << 4));
        fsub(th, tl);
        st2(db + (<usize>(S - 1) << 4));
      }
    }
    // [v > j - 1] = sum_{k >= j} [v == k], stored at slot j - 1
    let gh: u64 = 0;
    let gl: u64 = 0;
    for (let j = 15; j >= 1; j--) {
      ld2(db + (<usize>(j - 1) << 4));
      fadd(gh, gl);
      gh = h;
      gl = l;
      st2(db + (<usize>(j - 1) << 4));
    }
    // v = x0 + 2 x1 + 4 x2 + 8 x3 (Horner)
    ld2(xb + 48);
    fadd(h, l);
    const t3h = h;
    const t3l = l;
    ld2(xb + 32);
    fadd(t3h, t3l);
    fadd(h, l);
    const t2h = h;
    const t2l = l;
    ld2(xb + 16);
    fadd(t2h, t2l);
    fadd(h, l);
    const t1h = h;
    const t1l = l;
    ld2(xb);
    fadd(t1h, t1l);
    st2(db + (15 << 4));
  }
}

/** Stores a's five limbs at p (40 bytes, native order): an intermediate kept in limbs. */
@inline function storeLimbs(p: usize): void {
  store<u64>(p, a0);
  store<u64>(p, a1, 8);
  store<u64>(p, a2, 16);
  store<u64>(p, a3, 24);
  store<u64>(p, a4, 32);
}

@inline function loadLimbsB(p: usize): void {
  b0 = load<u64>(p);
  b1 = load<u64>(p, 8);
  b2 = load<u64>(p, 16);
  b3 = load<u64>(p, 24);
  b4 = load<u64>(p, 32);
}

/** wk[T] = (the share at src) * (the public factor in limbs at pl slot T), packed. */
@inline function signTerm(src: usize, pl: usize, wk: usize, T: i32): void {
  unpack(src);
  loadLimbsB(pl + <usize>T * 40);
  mulByB();
  pack(wk + (<usize>T << 4));
}

/**
 * dst[e] = src[e]^-1, 0 where src[e] = 0, for n elements: batch inversion (prefix products, one
 * exponentiation for the vector, three products per element). The openers' inverse roots.
 */
export function invMany(src: usize, dst: usize, n: i32): void {
  a0 = 1; a1 = 0; a2 = 0; a3 = 0; a4 = 0;
  for (let e = 0; e < n; e++) {
    const off = <usize>e << 4;
    ld2(src + off);
    if (h == 0 && l == 0) continue;
    aToC();
    unpack(src + off);
    aToB();
    a0 = c0; a1 = c1; a2 = c2; a3 = c3; a4 = c4;
    pack(dst + off); // the product of the nonzero elements before e
    mulByB();
  }
  invertA();
  for (let e = n - 1; e >= 0; e--) {
    const off = <usize>e << 4;
    ld2(src + off);
    if (h == 0 && l == 0) {
      st2(dst + off);
      continue;
    }
    aToC();
    unpack(dst + off);
    mulByC();
    pack(dst + off);
    unpack(src + off);
    mulByC();
  }
}

/**
 * The stored form of each nibble (as nibbleUnary: [v > j] for j = 0..14, then v) from the signs of
 * the square-root trick, without products of the bits themselves (preprocessing.ts, round 1): r
 * holds the 4 PRSS values of each nibble, p2 and p3 their 6 pair and 5 higher products (degree-t
 * shares, in nibblePairs' and nibbleHigher's orders), q the 4 public inverse roots 1/s (all nonzero;
 * the caller takes another path otherwise), c the one element 16^-1. Bit i is x_i = (1 + b_i)/2
 * with the sign b_i = r_i/s_i, so a monomial b_T = r_T / s_T is a public multiple of a shared
 * product, and [v == j] = prod_i (1 +- b_i)/2 = 16^-1 sum_T (+-1) b_T: a Walsh-Hadamard transform
 * of the 16 monomials (b_{} = 1). scratch: 1568 bytes (one nibble's public factors in limbs and its transform).
 */
export function nibblesFromSigns(r: usize, p2: usize, p3: usize, q: usize, c: usize, scratch: usize, dst: usize, u: i32): void {
  // the public factors stay in limbs (40 bytes each) between products: no pack and unpack per step
  const sl = scratch; // 4 slots: the nibble's inverse roots
  const pl = sl + 160; // slot T: 16^-1 / s_T
  const wk = pl + 640; // slot T (16 bytes): 16^-1 b_T
  const wc = wk + 256; // slot T (32 bytes): the word columns of wk's slot T, then of the transform
  for (let k = 0; k < u; k++) {
    const sb = q + (<usize>(4 * k) << 4);
    const rb = r + (<usize>(4 * k) << 4);
    const pb = p2 + (<usize>(6 * k) << 4);
    const qb = p3 + (<usize>(5 * k) << 4);
    const db = dst + (<usize>(16 * k) << 4);
    for (let i = 0; i < 4; i++) {
      unpack(sb + (<usize>i << 4));
      storeLimbs(sl + <usize>i * 40);
      // the singletons' 16^-1 / s_i: 16^-1 = 2^123 (2^127 = 1), so a rotation of the 127 bits, no product
      ld2(sb + (<usize>i << 4));
      rotr4();
      setA(h, l);
      storeLimbs(pl + <usize>(1 << i) * 40);
    }
    // 16^-1 / s_T = (16^-1 / s_{T without its top bit}) / s_top, for T of two or more members
    for (let T = 3; T < 16; T++) {
      if ((T & (T - 1)) == 0) continue;
      const top = 31 - clz<i32>(T);
      loadLimbsA(pl + <usize>(T ^ (1 << top)) * 40);
      loadLimbsB(sl + <usize>top * 40);
      mulByB();
      storeLimbs(pl + <usize>T * 40);
    }
    memory.copy(wk, c, 16);
    signTerm(rb, pl, wk, 1); // {0}
    signTerm(rb + 16, pl, wk, 2); // {1}
    signTerm(rb + 32, pl, wk, 4); // {2}
    signTerm(rb + 48, pl, wk, 8); // {3}
    signTerm(pb, pl, wk, 3); // {0,1}
    signTerm(pb + 16, pl, wk, 5); // {0,2}
    signTerm(pb + 32, pl, wk, 9); // {0,3}
    signTerm(pb + 48, pl, wk, 6); // {1,2}
    signTerm(pb + 64, pl, wk, 10); // {1,3}
    signTerm(pb + 80, pl, wk, 12); // {2,3}
    signTerm(qb, pl, wk, 7); // {0,1,2}
    signTerm(qb + 16, pl, wk, 11); // {0,1,3}
    signTerm(qb + 32, pl, wk, 13); // {0,2,3}
    signTerm(qb + 48, pl, wk, 14); // {1,2,3}
    signTerm(qb + 64, pl, wk, 15); // {0,1,2,3}
    // v = x0 + 2 x1 + 4 x2 + 8 x3 with x_i = (1 + b_i)/2 and w_{2^i} = b_i / 16: v = 15/2 + 2^3 w_1 +
    // 2^4 w_2 + 2^5 w_4 + 2^6 w_8 (the Fourier expansion of v; the same linear combination of the
    // w_T as the sum of the 15 suffix sums below, so the same element), products by powers of two
    // being rotations of the 127 bits: four rotations and additions instead of 15 additions
    ld2(wk + 16);
    rotl(3);
    let vh = h;
    let vl = l;
    h = 0x4000000000000000; // 15/2 = 15 * 2^126 = 2^126 + 7 (mod p)
    l = 7;
    fadd(vh, vl);
    vh = h;
    vl = l;
    for (let i = 1; i < 4; i++) {
      ld2(wk + (<usize>(1 << i) << 4));
      rotl(3 + i);
      fadd(vh, vl);
      vh = h;
      vl = l;
    }
    // W[m] = sum_T (-1)^|T & m| w[T] (butterflies); [v == j] = W[15 - j]. On the elements' word
    // columns in signed 64-bit lanes, not canonical elements: each butterfly is four lane
    // additions, no carry or canonical fold, and each output is carried once (reduceWords). The
    // columns start below 2^32, stay below 2^36 in size after the four levels and 2^40 in the sums
    // below, and 2^10 p (columns of at least 2^41 - 2^10) added to each sum keeps them positive.
    for (let T = 0; T < 16; T++) {
      const x = loadEl(wk + (<usize>T << 4));
      v128.store(wc + (<usize>T << 5), i64x2.extend_low_i32x4_u(x));
      v128.store(wc + (<usize>T << 5), i64x2.extend_high_i32x4_u(x), 16);
    }
    for (let bit = 1; bit < 16; bit <<= 1) {
      for (let S = 0; S < 16; S++) {
        if ((S & bit) != 0) continue;
        const ua = wc + (<usize>S << 5);
        const wa = wc + (<usize>(S | bit) << 5);
        const u0 = v128.load(ua);
        const u1 = v128.load(ua, 16);
        const w0 = v128.load(wa);
        const w1 = v128.load(wa, 16);
        v128.store(ua, i64x2.add(u0, w0));
        v128.store(ua, i64x2.add(u1, w1), 16);
        v128.store(wa, i64x2.sub(u0, w0));
        v128.store(wa, i64x2.sub(u1, w1), 16);
      }
    }
    // [v > j - 1] = sum_{k >= j} [v == k] = W[0] + ... + W[15 - j], at slot j - 1
    let gs = P_2_10_LO;
    let gt = P_2_10_HI;
    for (let m = 0; m < 15; m++) {
      gs = i64x2.add(gs, v128.load(wc + (<usize>m << 5)));
      gt = i64x2.add(gt, v128.load(wc + (<usize>m << 5), 16));
      reduceWords(gs, gt, 0);
      st2(db + (<usize>(14 - m) << 4));
    }
    h = vh;
    l = vl;
    st2(db + (15 << 4));
  }
}

// ---- online phase: Beaver steps ----

/** a = the canonical (h, l) as limbs. */
@inline function limbsOfHL(): void {
  setA(h, l);
}


/**
 * What a round of Beaver products opens, for m products with items of `width` elements whose
 * factors' masks sit at positions 0 (a) and 1.. (b_k): out[k*m + i] = f_k[i] - item_i[k] for the
 * factor vectors f_0 = x (against a) and f_k (against b_k), k = 0..nf-1, stored one after another
 * at f. Triples: width 3, nf 2; closure items (closure.ts): their width, nf = the factors opened.
 */
export function beaverOpenings(f: usize, items: usize, out: usize, m: i32, width: i32, nf: i32): void {
  for (let k = 0; k < nf; k++) {
    for (let i = 0; i < m; i++) {
      const fo = f + ((<usize>(k * m + i)) << 4);
      const io = items + ((<usize>(i * width + k)) << 4);
      ld2(io);
      const yh = h;
      const yl = l;
      ld2(fo);
      fsub(yh, yl);
      st2(out + ((<usize>(k * m + i)) << 4));
    }
  }
}

/**
 * The products from the opened values (Beaver): for m items of `width` elements [a, b_1..b_p,
 * a b_1..a b_p] (p = (width - 1) / 2) and opened = [d | e_1 | .. | e_p] (m each), out[(k-1)*m + i] =
 * a b_k + d b_k + e_k (a + d), i.e. x * y_k with d = x - a, e_k = y_k - b_k.
 */
export function beaverProducts(opened: usize, items: usize, out: usize, m: i32, width: i32): void {
  const p = (width - 1) >> 1;
  for (let i = 0; i < m; i++) {
    const io = items + ((<usize>(i * width)) << 4);
    const d = opened + (<usize>i << 4);
    // c = a + d, b = d
    ld2(d);
    const dh = h;
    const dl = l;
    ld2(io);
    fadd(dh, dl);
    limbsOfHL();
    aToC();
    unpack(d);
    aToB();
    for (let k = 1; k <= p; k++) {
      const o = out + ((<usize>((k - 1) * m + i)) << 4);
      // e_k (a + d), kept at o, then + d b_k + a b_k
      unpack(opened + ((<usize>(k * m + i)) << 4));
      mulByC();
      pack(o);
      unpack(io + (<usize>k << 4));
      mulByB();
      addAt(o);
      addAt(io + (<usize>(p + k) << 4));
      pack(o);
    }
  }
}

// ---- online phase: product closures (fixed monomials of a group's factors in one round) ----

/** The five limbs of a at p (40 bytes, native order: scratch only). */
@inline function saveLimbs(p: usize): void {
  store<u64>(p, a0);
  store<u64>(p + 8, a1);
  store<u64>(p + 16, a2);
  store<u64>(p + 24, a3);
  store<u64>(p + 32, a4);
}

@inline function loadLimbsA(p: usize): void {
  a0 = load<u64>(p);
  a1 = load<u64>(p + 8);
  a2 = load<u64>(p + 16);
  a3 = load<u64>(p + 24);
  a4 = load<u64>(p + 32);
}

/** Limbwise *p += a (accumulators: terms below 2^27 per limb, so 2^13 of them stay below 2^40). */
@inline function accumulateA(p: usize): void {
  store<u64>(p, load<u64>(p) + a0);
  store<u64>(p + 8, load<u64>(p + 8) + a1);
  store<u64>(p + 16, load<u64>(p + 16) + a2);
  store<u64>(p + 24, load<u64>(p + 24) + a3);
  store<u64>(p + 32, load<u64>(p + 32) + a4);
}

/**
 * Sums of monomials in a group's factors f_k from the opened d_k = f_k - a_k (opened[k*m + i], k <
 * the program's factors) and the group's item of `width` elements (the masks a_k, then products of
 * subsets of them): prod_{k in S} f_k = sum_{T in S} (prod_{k in S\T} d_k) A_T, with A_{} = 1, for m
 * groups. The program (i32 at prog) is
 *   nc, then per coefficient c = 1..nc: (parent, factor), coef_c = coef_parent * d_factor, coef_0 = 1;
 *   nt, then per term: (output, coefficient, slot), acc_output += coef * (slot < 0 ? 1 : item[slot]).
 * out[o*m + i] = acc_o for o < nOut. scratch holds nc + 1 coefficients and nOut accumulators as
 * limbs (40 bytes each). A public constant adds to every share, hence the slot -1 terms.
 */
export function closureEval(opened: usize, items: usize, prog: usize, scratch: usize, out: usize, m: i32, width: i32, nOut: i32): void {
  const nc = load<i32>(prog);
  const terms = prog + (<usize>(1 + 2 * nc) << 2);
  const nt = load<i32>(terms);
  const acc = scratch + <usize>(nc + 1) * 40;
  for (let i = 0; i < m; i++) {
    a0 = 1; a1 = 0; a2 = 0; a3 = 0; a4 = 0;
    saveLimbs(scratch);
    for (let c = 1; c <= nc; c++) {
      const parent = load<i32>(prog + (<usize>(2 * c - 1) << 2));
      const factor = load<i32>(prog + (<usize>(2 * c) << 2));
      unpack(opened + ((<usize>(factor * m + i)) << 4));
      aToB();
      loadLimbsA(scratch + <usize>parent * 40);
      mulByB();
      saveLimbs(scratch + <usize>c * 40);
    }
    memory.fill(acc, 0, <usize>nOut * 40);
    for (let j = 0; j < nt; j++) {
      const tp = terms + (<usize>(1 + 3 * j) << 2);
      const o = load<i32>(tp);
      const cp = scratch + <usize>load<i32>(tp + 4) * 40;
      const slot = load<i32>(tp + 8);
      if (slot < 0) {
        loadLimbsA(cp);
      } else {
        loadLimbsA(cp);
        aToB();
        unpack(items + ((<usize>(i * width + slot)) << 4));
        mulByB();
      }
      accumulateA(acc + <usize>o * 40);
    }
    for (let o = 0; o < nOut; o++) {
      loadLimbsA(acc + <usize>o * 40);
      pack(out + ((<usize>(o * m + i)) << 4));
    }
  }
}
