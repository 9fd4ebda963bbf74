// The WebAssembly field kernel (assembly/field-kernel.ts) behind a small vector API on encoded
// elements (16 bytes big-endian, as on the wire and in the reserve). Vectors are copied into the
// module's memory, computed there without BigInt, and copied out. No I/O.
//
// Used by committee preprocessing, whose every step it covers (products, GRR resharing and its
// recombination, the opened squares, square roots and bits, the nibbles' products and stored form),
// and by the online rounds (openings, Beaver steps, closure evaluations, comparison block indicators). One instance per
// process; calls are synchronous and never re-entered, so one scratch memory serves all of them.

import { randomFillSync } from 'node:crypto';
import { ELEMENT_BYTES, FieldError, P, copyElement, inv, mod, words, writeElement } from './field';
import { FIELD_KERNEL_WASM_BASE64 } from './kernel-wasm';

// The WebAssembly global, typed here: the engine's lib settings (ES2023, node types) do not declare it.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
  validate(bytes: Uint8Array): boolean;
};

interface KernelExports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  sqrtMany(src: number, dst: number, n: number): void;
  mulMany(x: number, y: number, dst: number, n: number): void;
  shareMany(secrets: number, coeffs: number, out: number, m: number, n: number, t: number): void;
  addMany(x: number, y: number, dst: number, n: number): void;
  scaleMany(x: number, c: number, dst: number, n: number): void;
  lincombMany(rows: number, w: number, k: number, m: number, dst: number): void;
  lincombSmallMany(rows: number, w: number, k: number, m: number, scale: number, scaled: number, dst: number): void;
  lincombSmallRowsMany(rows: number, w: number, k: number, m: number, scales: number, nT: number, dst: number, scaled: number): void;
  lincombRawMany(bases: number, step: number, w: number, k: number, m: number, scale: number, scaled: number, dst: number): void;
  bitsFromRoots(r: number, s: number, y: number, dst: number, n: number): number;
  nibblePairs(x: number, dst: number, u: number): void;
  nibbleHigher(x: number, p2: number, dst: number, u: number): void;
  nibbleUnary(x: number, p2: number, p3: number, dst: number, u: number): void;
  nibblesFromSigns(r: number, p2: number, p3: number, q: number, c: number, scratch: number, dst: number, u: number): void;
  invMany(src: number, dst: number, n: number): void;
  subMany(x: number, y: number, dst: number, n: number): void;
  beaverOpenings(f: number, items: number, out: number, m: number, width: number, nf: number): void;
  beaverProducts(opened: number, items: number, out: number, m: number, width: number): void;
  closureEval(opened: number, items: number, prog: number, scratch: number, out: number, m: number, width: number, nOut: number): void;
}

let kernel: KernelExports | undefined;

/** k(), for functions whose own locals are named k. */
const kernelExports = (): KernelExports => k();
const k_ = kernelExports;

/**
 * The smallest module using a 128-bit SIMD instruction (a function returning v128.const 0): the
 * kernel needs WebAssembly SIMD (byte order, the four-lane square roots, the word sums), on in V8
 * since Node 16; without it the kernel's module would not compile, so say why, once, up front.
 */
const SIMD_PROBE = Uint8Array.from([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 22, 1, 20, 0, 253, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11]);

function k(): KernelExports {
  if (!kernel) {
    if (!WebAssembly.validate(SIMD_PROBE)) throw new Error('field kernel: this runtime has no WebAssembly SIMD (v128); the kernel needs it (Node 16 or later)');
    const module = new WebAssembly.Module(Buffer.from(FIELD_KERNEL_WASM_BASE64, 'base64'));
    kernel = new WebAssembly.Instance(module, { env: { abort: () => { throw new Error('field kernel abort'); } } }).exports as unknown as KernelExports;
  }
  return kernel;
}

const PAGE = 65536;

/** The kernel's memory as bytes, at least `bytes` long (grown in whole pages; views are re-made after growth). */
function memory(bytes: number): Uint8Array {
  const mem = k().memory;
  if (mem.buffer.byteLength < bytes) mem.grow(Math.ceil((bytes - mem.buffer.byteLength) / PAGE));
  return new Uint8Array(mem.buffer);
}

function count(v: Uint8Array, what: string): number {
  if (v.length % ELEMENT_BYTES !== 0) throw new FieldError(`${what}: ${v.length} bytes is not a whole number of 16-byte elements`);
  return v.length / ELEMENT_BYTES;
}

/**
 * Buffers this module made for its outputs: canonical by construction (every store is a packed,
 * fully reduced element), so they are not scanned again when they come back as inputs, which most
 * preprocessing inputs do (a JavaScript pass per element per call, 2-4% of production CPU). Vectors
 * from the wire or built in JavaScript are still checked. A caller that writes into an output keeps
 * it canonical (none writes into one).
 */
const canonicalBuffers = new WeakSet<ArrayBufferLike>();

/**
 * Small outputs are carved out of shared slabs that hold kernel outputs only (so the mark, once per
 * slab, stays true of every byte in it: outputs, and zeros not yet handed out). A fresh ArrayBuffer
 * plus a WeakSet entry per output cost 2-4 us each (microbenchmark: 0.2 us carved), at the online
 * rounds' many short vectors (openings, late-share checks, protocol steps) a tenth of the engine's
 * time per round. At most SLAB_MAX bytes per carved output bounds what one long-lived small output
 * keeps alive; larger outputs (preprocessing's batches) keep their own buffers.
 */
const SLAB_BYTES = 32 * 1024;
const SLAB_MAX = 2048;
let slab = new Uint8Array(0);
let slabAt = 0;

/** A copy of mem[from, to) that assertCanonical trusts (an output of the kernel), 16-byte aligned. */
function output(mem: Uint8Array, from: number, to: number): Uint8Array {
  const len = to - from;
  if (len > SLAB_MAX) {
    const own = mem.slice(from, to);
    canonicalBuffers.add(own.buffer);
    return own;
  }
  if (slabAt + len > slab.length) {
    slab = new Uint8Array(SLAB_BYTES);
    slabAt = 0;
    canonicalBuffers.add(slab.buffer);
  }
  const out = slab.subarray(slabAt, slabAt + len);
  out.set(mem.subarray(from, to));
  slabAt = up(slabAt + len);
  return out;
}

/**
 * Marks v, canonical by construction elsewhere (PRSS pair streams, canonicalized once by prss.ts),
 * so assertCanonical does not scan it again; only a vector that owns its whole buffer is marked
 * (the mark is per buffer). Returns v.
 */
export function markCanonical(v: Uint8Array): Uint8Array {
  if (v.byteOffset === 0 && v.byteLength === v.buffer.byteLength) canonicalBuffers.add(v.buffer);
  return v;
}

/**
 * Throws unless every 16-byte big-endian element is below p: the top bit clear, and not p itself
 * (0x7f then fifteen 0xff). One byte test per element in the common case; none for the kernel's own
 * outputs (canonicalBuffers).
 */
function assertCanonical(v: Uint8Array, what: string): void {
  if (canonicalBuffers.has(v.buffer)) return;
  for (let o = 0; o < v.length; o += ELEMENT_BYTES) {
    const top = v[o]!;
    if (top < 0x7f) continue;
    let isP = top === 0x7f;
    for (let i = 1; isP && i < ELEMENT_BYTES; i++) isP = v[o + i] === 0xff;
    if (top > 0x7f || isP) throw new FieldError(`${what}: element ${o / ELEMENT_BYTES} is not a field element`);
  }
}

/** Elementwise x^(2^125): the canonical square root of each residue (the caller checks s^2 = x). */
export function sqrtEncoded(x: Uint8Array): Uint8Array {
  const m = sameCount('sqrt', x);
  return run([x], [x.length], ([px], [d]) => k().sqrtMany(px!, d!, m))[0]!;
}

/** Elementwise x * y. */
export function mulEncoded(x: Uint8Array, y: Uint8Array): Uint8Array {
  const m = sameCount('mul', x, y);
  return run([x, y], [x.length], ([px, py], [d]) => k().mulMany(px!, py!, d!, m))[0]!;
}

/**
 * Fresh degree-t Shamir sharings of the encoded secrets for parties 1..n: returns n encoded rows,
 * row i-1 being party i's shares. The coefficients are random from node:crypto, or the given
 * 16 * t bytes per secret (any bytes; a caller that must be able to recompute the same rows passes
 * a keyed pseudo-random stream, used for one set of secrets only).
 */
export function shareEncoded(secrets: Uint8Array, n: number, t: number, coefficients?: Uint8Array): Uint8Array[] {
  const m = sameCount('share', secrets);
  if (!Number.isInteger(n) || n < 1 || n > 64 || !Number.isInteger(t) || t < 1 || t >= n) throw new FieldError(`share: bad (n, t) = (${n}, ${t})`);
  const sb = secrets.length;
  const cb = sb * t;
  const ob = sb * n;
  if (coefficients !== undefined && coefficients.length !== cb) throw new FieldError(`share: ${coefficients.length} coefficient bytes for ${m} secrets of degree ${t}, expected ${cb}`);
  const mem = memory(sb + cb + ob);
  mem.set(secrets, 0);
  if (coefficients !== undefined) mem.set(coefficients, sb);
  else randomFillSync(mem, sb, cb);
  k().shareMany(0, sb, sb + cb, m, n, t);
  const rows: Uint8Array[] = [];
  for (let i = 0; i < n; i++) rows.push(output(mem, sb + cb + i * sb, sb + cb + (i + 1) * sb));
  // the coefficients must not outlive the call
  mem.fill(0, sb, sb + cb);
  return rows;
}

/** Rounds up to a 16-byte boundary: every region of run() starts on one (aligned element loads). */
function up(x: number): number {
  return (x + 15) & ~15;
}

/**
 * Copies the inputs into kernel memory one after another, calls fn with their offsets and the
 * offsets of output areas of the given byte sizes, and returns copies of the first `keep` outputs
 * (default all; the others are scratch areas).
 */
function run(inputs: readonly Uint8Array[], outSizes: readonly number[], fn: (ins: number[], outs: number[]) => void, keep = outSizes.length): Uint8Array[] {
  let total = 0;
  for (const v of inputs) total = up(total) + v.length;
  for (const o of outSizes) total = up(total) + o;
  const mem = memory(total);
  const ins: number[] = [];
  let at = 0;
  for (const v of inputs) {
    at = up(at);
    mem.set(v, at);
    ins.push(at);
    at += v.length;
  }
  const outs: number[] = [];
  for (const o of outSizes) {
    at = up(at);
    outs.push(at);
    at += o;
  }
  fn(ins, outs);
  // memory may have been re-made by a grow inside fn (it never grows there; re-read for safety)
  const after = new Uint8Array(k().memory.buffer);
  // the first `keep` areas only: the rest is the kernel's scratch, not copied out
  const res: Uint8Array[] = [];
  for (let i = 0; i < keep; i++) res.push(output(after, outs[i]!, outs[i]! + outSizes[i]!));
  return res;
}

function sameCount(what: string, ...vs: Uint8Array[]): number {
  const m = count(vs[0]!, what);
  for (const v of vs) {
    if (count(v, what) !== m) throw new FieldError(`${what}: vectors of ${m} and ${v.length / ELEMENT_BYTES} elements`);
    assertCanonical(v, what);
  }
  return m;
}

/** Elementwise x + y. */
export function addEncoded(x: Uint8Array, y: Uint8Array): Uint8Array {
  const m = sameCount('add', x, y);
  return run([x, y], [x.length], ([px, py], [d]) => k().addMany(px!, py!, d!, m))[0]!;
}

/** Elementwise x * c for one field element c. */
export function scaleEncoded(x: Uint8Array, c: bigint): Uint8Array {
  const m = sameCount('scale', x);
  const cb = new Uint8Array(ELEMENT_BYTES);
  writeElement(new DataView(cb.buffer), 0, c);
  assertCanonical(cb, 'scale');
  return run([x, cb], [x.length], ([px, pc], [d]) => k().scaleMany(px!, pc!, d!, m))[0]!;
}

/** Largest |weight| of lincombSmallEncoded (the kernel's limb sums need |w| < 2^24). */
export const SMALL_WEIGHT_LIMIT = 2 ** 24;

/** The weights as small signed integers (w or w - p below SMALL_WEIGHT_LIMIT), or undefined if one is not. */
const SMALL_WEIGHT_LIMIT_BIG = BigInt(SMALL_WEIGHT_LIMIT);
function smallWeights(w: readonly bigint[]): number[] | undefined {
  const out: number[] = [];
  const lim = SMALL_WEIGHT_LIMIT_BIG;
  for (const x of w) {
    if (x >= 0n && x < lim) out.push(Number(x));
    else if (x < P && P - x < lim) out.push(-Number(P - x));
    else return undefined;
  }
  return out;
}

/**
 * sum_j w_j rows_j elementwise (Lagrange interpolation of share vectors with weights w). Weights that
 * are small signed integers (Lagrange at 0 over 1..n, e.g. 5, -10, 10, -5, 1 for n = 5) take the
 * kernel's limb sums (lincombSmallEncoded), about three times cheaper than a product per term.
 */
export function lincombEncoded(rows: readonly Uint8Array[], w: readonly bigint[]): Uint8Array {
  if (rows.length === 0 || rows.length !== w.length) throw new FieldError(`lincomb: ${rows.length} rows and ${w.length} weights`);
  const small = rows.length <= 64 ? smallWeights(w) : undefined;
  if (small !== undefined) return lincombSmallEncoded(rows, small);
  const m = sameCount('lincomb', ...rows);
  const wb = new Uint8Array(w.length * ELEMENT_BYTES);
  const view = new DataView(wb.buffer);
  w.forEach((x, i) => writeElement(view, i * ELEMENT_BYTES, x));
  assertCanonical(wb, 'lincomb weights');
  return run([...rows, wb], [rows[0]!.length], (ins, [d]) => k().lincombMany(ins[0]!, ins[rows.length]!, rows.length, m, d!))[0]!;
}

/** The scale element 1 (encoded), shared: the kernel only reads it (and skips it at scale 1). */
const SCALE_ONE = (() => {
  const b = new Uint8Array(ELEMENT_BYTES);
  b[ELEMENT_BYTES - 1] = 1;
  return b;
})();

/**
 * scale * sum_j w_j rows_j elementwise for small signed integer weights (|w_j| < 2^24, at most 64
 * rows); scale (default 1) is one field element, so rational weights c_j / D are passed as c_j with
 * scale D^-1.
 */
export function lincombSmallEncoded(rows: readonly Uint8Array[], w: readonly number[], scale = 1n): Uint8Array {
  if (rows.length === 0 || rows.length !== w.length || rows.length > 64) throw new FieldError(`lincomb: ${rows.length} rows and ${w.length} weights`);
  const m = sameCount('lincomb', ...rows);
  const wb = new Uint8Array(w.length * 8);
  const view = new DataView(wb.buffer);
  for (let i = 0; i < w.length; i++) {
    const x = w[i]!;
    if (!Number.isInteger(x) || Math.abs(x) >= SMALL_WEIGHT_LIMIT) throw new FieldError(`lincomb: weight ${x} is not a small integer`);
    // the int64 little-endian as two int32 halves (|x| < 2^24): the bytes of setBigInt64, no BigInt per weight
    view.setInt32(i * 8, x, true);
    view.setInt32(i * 8 + 4, x < 0 ? -1 : 0, true);
  }
  const sb = scale === 1n ? SCALE_ONE : new Uint8Array(ELEMENT_BYTES);
  if (scale !== 1n) writeElement(new DataView(sb.buffer), 0, mod(scale));
  return run([...rows, wb, sb], [rows[0]!.length], (ins, [d]) =>
    k().lincombSmallMany(ins[0]!, ins[rows.length]!, rows.length, m, ins[rows.length + 1]!, scale === 1n ? 0 : 1, d!))[0]!;
}

/**
 * Several lincombSmallEncoded of the same rows at once: out[q] = scales[q] * sum_j w[q][j] rows_j
 * (a GRR dealer's rows, grr.ts). One copy of the rows into the kernel for all outputs.
 */
export function lincombSmallRowsEncoded(rows: readonly Uint8Array[], w: readonly (readonly number[])[], scales: readonly bigint[]): Uint8Array[] {
  const k = rows.length;
  if (k === 0 || k > 64 || w.length === 0 || w.length !== scales.length || w.some((r) => r.length !== k)) throw new FieldError(`lincomb: ${k} rows, ${w.length} weight rows, ${scales.length} scales`);
  const m = sameCount('lincomb', ...rows);
  const wb = new Uint8Array(w.length * k * 8);
  const view = new DataView(wb.buffer);
  w.forEach((r, q) => r.forEach((x, j) => {
    if (!Number.isInteger(x) || Math.abs(x) >= SMALL_WEIGHT_LIMIT) throw new FieldError(`lincomb: weight ${x} is not a small integer`);
    view.setBigInt64((q * k + j) * 8, BigInt(x), true);
  }));
  const sb = new Uint8Array(scales.length * ELEMENT_BYTES);
  const sv = new DataView(sb.buffer);
  scales.forEach((c, q) => writeElement(sv, q * ELEMENT_BYTES, mod(c)));
  const rb = rows[0]!.length;
  // all scales 1 (scaled GRR dealing, grr.ts): integer combinations, no product per output
  const scaled = scales.some((c) => mod(c) !== 1n) ? 1 : 0;
  const [out] = run([...rows, wb, sb], [rb * w.length], (ins, [d]) => kernelExports().lincombSmallRowsMany(ins[0]!, ins[k]!, k, m, ins[k + 1]!, w.length, d!, scaled));
  return w.map((_, q) => out!.subarray(q * rb, (q + 1) * rb));
}

/**
 * The GRR input of a preprocessing round, h = the local degree-2t products of one round, in order:
 * [xs[0] * ys[0] | xs[1] * ys[1] | ...] (elementwise) and the nibbles' products of the r values
 * (4 per nibble): their 6 pair products (round 0, nibblePairsEncoded), or with p2 (those pairs'
 * degree-t shares) their 5 higher products (round 1, nibbleHigherEncoded), after the others or,
 * with `first`, before them.
 */
export interface ProductsSpec {
  readonly xs: readonly Uint8Array[];
  readonly ys: readonly Uint8Array[];
  readonly nibbles?: { readonly r: Uint8Array; readonly p2?: Uint8Array; readonly first: boolean };
}

/**
 * Lays the spec's inputs out in kernel memory and computes h there: returns h's offset and element
 * count, and the first free offset after `rowsAfter` further vectors of h's length placed right
 * behind it (stride = h's length: lincombSmallRowsMany's row layout), so a dealing reads h in place.
 */
function productsInKernel(spec: ProductsSpec, rowsAfter: readonly Uint8Array[], extra: number): { mem: Uint8Array; h: number; m: number; free: number } {
  const { xs, ys, nibbles } = spec;
  if (xs.length !== ys.length) throw new FieldError(`products: ${xs.length} and ${ys.length} factor vectors`);
  let xb = 0;
  for (let i = 0; i < xs.length; i++) {
    if (xs[i]!.length !== ys[i]!.length) throw new FieldError(`products: factors of ${xs[i]!.length} and ${ys[i]!.length} bytes`);
    count(xs[i]!, 'products');
    assertCanonical(xs[i]!, 'products');
    assertCanonical(ys[i]!, 'products');
    xb += xs[i]!.length;
  }
  const P = xb / ELEMENT_BYTES;
  let U = 0;
  let N = 0;
  if (nibbles) {
    U = count(nibbles.r, 'nibble products') / 4;
    if (!Number.isInteger(U)) throw new FieldError('nibble products: not 4 values per nibble');
    assertCanonical(nibbles.r, 'nibble products');
    if (nibbles.p2 !== undefined) {
      if (count(nibbles.p2, 'nibble products') !== 6 * U) throw new FieldError('nibble products: 4 values and 6 pair products per nibble');
      assertCanonical(nibbles.p2, 'nibble products');
    }
    N = (nibbles.p2 === undefined ? 6 : 5) * U;
  }
  const m = P + N;
  const hb = m * ELEMENT_BYTES;
  for (const v of rowsAfter) if (v.length !== hb) throw new FieldError(`products: a row of ${v.length} bytes, expected ${hb}`);
  // layout: X | Y | r | p2 | h | rowsAfter... | extra (all lengths multiples of 16: aligned)
  const X = 0;
  const Y = X + xb;
  const R = Y + xb;
  const P2 = R + (nibbles?.r.length ?? 0);
  const H = P2 + (nibbles?.p2?.length ?? 0);
  const free = H + hb * (1 + rowsAfter.length);
  const mem = memory(up(free) + extra);
  let at = X;
  for (const v of xs) {
    mem.set(v, at);
    at += v.length;
  }
  for (const v of ys) {
    mem.set(v, at);
    at += v.length;
  }
  if (nibbles) {
    mem.set(nibbles.r, R);
    if (nibbles.p2 !== undefined) mem.set(nibbles.p2, P2);
  }
  rowsAfter.forEach((v, i) => mem.set(v, H + hb * (1 + i)));
  const productsAt = H + (nibbles?.first ? N * ELEMENT_BYTES : 0);
  const nibblesAt = nibbles?.first ? H : H + xb;
  if (P > 0) k_().mulMany(X, Y, productsAt, P);
  if (nibbles && U > 0) {
    if (nibbles.p2 === undefined) k_().nibblePairs(R, nibblesAt, U);
    else k_().nibbleHigher(R, P2, nibblesAt, U);
  }
  return { mem, h: H, m, free: up(free) };
}

/** h of the spec (ProductsSpec), one kernel pass and one output. */
export function productsEncoded(spec: ProductsSpec): Uint8Array {
  const { h, m } = productsInKernel(spec, [], 0);
  return output(new Uint8Array(k_().memory.buffer), h, h + m * ELEMENT_BYTES);
}

/**
 * lincombSmallRowsEncoded([h, ...rest], w, all scales 1) for h = productsEncoded(spec): a GRR
 * dealer's rows of one round (grr.ts, dealGrrProducts), with h computed and read in kernel memory:
 * no JavaScript concatenation of the factors, no copy of h out and back, no canonical scan of it.
 */
export function productsDealtEncoded(spec: ProductsSpec, rest: readonly Uint8Array[], w: readonly (readonly number[])[]): Uint8Array[] {
  const { mem, dst, hb } = productsDealtInKernel(spec, rest, w);
  const out = output(mem, dst, dst + w.length * hb);
  return w.map((_, q) => out.subarray(q * hb, (q + 1) * hb));
}

/**
 * productsDealtEncoded with the rows left in kernel memory: `use` gets every row as a view of the
 * kernel's memory, valid only until the next kernel call (for a caller that copies them on at once,
 * e.g. into messages: the peers' rows of a GRR round are never copied out), and the return value is
 * row `keep` as an output (the dealer's own row, kept). The same rows, bit for bit.
 */
export function productsDealtKeeping(spec: ProductsSpec, rest: readonly Uint8Array[], w: readonly (readonly number[])[], keep: number, use: (rows: readonly Uint8Array[]) => void): Uint8Array {
  if (!(keep >= 0 && keep < w.length)) throw new FieldError(`lincomb: row ${keep} of ${w.length} kept`);
  const { mem, dst, hb } = productsDealtInKernel(spec, rest, w);
  use(w.map((_, q) => mem.subarray(dst + q * hb, dst + (q + 1) * hb)));
  // use() must not have called the kernel (the views would be stale): re-read the memory anyway
  return output(new Uint8Array(k_().memory.buffer), dst + keep * hb, dst + (keep + 1) * hb);
}

/** Computes and deals h in kernel memory: the rows sit at dst, hb bytes each. */
function productsDealtInKernel(spec: ProductsSpec, rest: readonly Uint8Array[], w: readonly (readonly number[])[]): { mem: Uint8Array; dst: number; hb: number } {
  const kk = 1 + rest.length;
  if (kk > 64 || w.length === 0 || w.some((r) => r.length !== kk)) throw new FieldError(`lincomb: ${kk} rows, ${w.length} weight rows`);
  for (const v of rest) assertCanonical(v, 'lincomb');
  const nT = w.length;
  // an upper bound of h's bytes before the layout is known: the weights and outputs go after it
  const wBytes = up(nT * kk * 8);
  const probe = productsSize(spec);
  const { mem: mem0, h, m, free } = productsInKernel(spec, rest, wBytes + nT * probe);
  const hb = m * ELEMENT_BYTES;
  if (hb !== probe) throw new Error('internal: products size');
  const view = new DataView(mem0.buffer);
  w.forEach((r, q) => r.forEach((x, j) => {
    if (!Number.isInteger(x) || Math.abs(x) >= SMALL_WEIGHT_LIMIT) throw new FieldError(`lincomb: weight ${x} is not a small integer`);
    view.setInt32(free + (q * kk + j) * 8, x, true);
    view.setInt32(free + (q * kk + j) * 8 + 4, x < 0 ? -1 : 0, true);
  }));
  const dst = free + wBytes;
  if (m > 0) k_().lincombSmallRowsMany(h, free, kk, m, 0, nT, dst, 0);
  return { mem: new Uint8Array(k_().memory.buffer), dst, hb };
}

/** The elements of h for a spec (a GRR dealer seeds that many shares per seeded peer). */
export function productsCount(spec: ProductsSpec): number {
  return productsSize(spec) / ELEMENT_BYTES;
}

/** The bytes of h for a spec. */
function productsSize(spec: ProductsSpec): number {
  let b = 0;
  for (const v of spec.xs) b += v.length;
  const nib = spec.nibbles;
  if (nib) b += (nib.r.length / 4) * (nib.p2 === undefined ? 6 : 5);
  return b;
}

/**
 * PRSS sums straight from key streams: scale * sum_{s, l} w[s * per + l] * R_{s,l}[e] for e < m,
 * where stream s holds m * per raw 16-byte blocks and R_{s,l}[e] is its block e * per + l with the
 * top bit cleared (Prss.randomShares' and zeroShares2t's reading of a stream; p, probability 2^-127,
 * counts as the residue 0). The streams are copied into the kernel once and read in place: no
 * canonical pass, no check (any 127-bit value is a residue) and no regrouping of the per values.
 */
export function prssSumEncoded(streams: readonly Uint8Array[], per: number, m: number, w: readonly number[], scale = 1n): Uint8Array {
  const k = streams.length * per;
  if (streams.length === 0 || k > 64 || w.length !== k || !Number.isInteger(per) || per < 1) throw new FieldError(`prss sum: ${streams.length} streams of ${per} per element and ${w.length} weights`);
  const sb = m * per * ELEMENT_BYTES;
  for (const st of streams) if (st.length !== sb) throw new FieldError(`prss sum: a stream of ${st.length} bytes, expected ${sb}`);
  // layout: streams | bases (u32) | weights (i64) | scale | output, each on a 16-byte boundary
  const up = (x: number): number => (x + 15) & ~15;
  const basesAt = up(streams.length * sb);
  const wAt = up(basesAt + 4 * k);
  const scaleAt = up(wAt + 8 * k);
  const dst = scaleAt + ELEMENT_BYTES;
  const mem = memory(dst + m * ELEMENT_BYTES);
  streams.forEach((st, i) => mem.set(st, i * sb));
  const view = new DataView(mem.buffer);
  for (let i = 0; i < streams.length; i++) for (let l = 0; l < per; l++) view.setUint32(basesAt + 4 * (i * per + l), i * sb + l * ELEMENT_BYTES, true);
  w.forEach((x, j) => {
    if (!Number.isInteger(x) || Math.abs(x) >= SMALL_WEIGHT_LIMIT) throw new FieldError(`prss sum: weight ${x} is not a small integer`);
    view.setBigInt64(wAt + 8 * j, BigInt(x), true);
  });
  writeElement(view, scaleAt, mod(scale));
  k_().lincombRawMany(basesAt, per * ELEMENT_BYTES, wAt, k, m, scaleAt, scale === 1n ? 0 : 1, dst);
  return output(new Uint8Array(k_().memory.buffer), dst, dst + m * ELEMENT_BYTES);
}

/**
 * Bits from the square-root trick: r = this party's shares of the random values, s = the opened
 * roots, y = the opened squares. Returns the shares of (r/s + 1)/2 (r where y = 0), or the index
 * of the first root with s^2 != y (s must be 1 where y = 0).
 */
export function bitsFromRootsEncoded(r: Uint8Array, s: Uint8Array, y: Uint8Array): { bits: Uint8Array } | { badIndex: number } {
  const m = sameCount('bits', r, s, y);
  let bad = -1;
  const [bits] = run([r, s, y], [r.length], ([pr, ps, py], [d]) => {
    bad = k().bitsFromRoots(pr!, ps!, py!, d!, m);
  });
  return bad >= 0 ? { badIndex: bad } : { bits: bits! };
}

/** Per nibble (4 bits in x): the 6 pair products [01, 02, 03, 12, 13, 23]. */
export function nibblePairsEncoded(x: Uint8Array): Uint8Array {
  const u = count(x, 'nibble pairs') / 4;
  if (!Number.isInteger(u)) throw new FieldError('nibble pairs: not 4 bits per nibble');
  assertCanonical(x, 'nibble pairs');
  return run([x], [u * 6 * ELEMENT_BYTES], ([px], [d]) => k().nibblePairs(px!, d!, u))[0]!;
}

/** Per nibble: the 5 higher products [012, 013, 023, 123, 0123] from its bits and pair products. */
export function nibbleHigherEncoded(x: Uint8Array, p2: Uint8Array): Uint8Array {
  const u = count(x, 'nibble products') / 4;
  if (!Number.isInteger(u) || count(p2, 'nibble products') !== 6 * u) throw new FieldError('nibble products: 4 bits and 6 pair products per nibble');
  assertCanonical(x, 'nibble products');
  assertCanonical(p2, 'nibble products');
  return run([x, p2], [u * 5 * ELEMENT_BYTES], ([px, pp], [d]) => k().nibbleHigher(px!, pp!, d!, u))[0]!;
}

/** Per nibble: the stored form ([v > j] for j = 0..14, then v; 16 elements) from bits, pair and higher products. */
export function nibbleUnaryEncoded(x: Uint8Array, p2: Uint8Array, p3: Uint8Array): Uint8Array {
  const u = count(x, 'nibbles') / 4;
  if (!Number.isInteger(u) || count(p2, 'nibbles') !== 6 * u || count(p3, 'nibbles') !== 5 * u) throw new FieldError('nibbles: 4 bits, 6 pair and 5 higher products per nibble');
  for (const v of [x, p2, p3]) assertCanonical(v, 'nibbles');
  return run([x, p2, p3], [u * 16 * ELEMENT_BYTES], ([px, pp, pq], [d]) => k().nibbleUnary(px!, pp!, pq!, d!, u))[0]!;
}

/** 16^-1 mod p, encoded (nibblesFromSignsEncoded's transform carries it). */
let inv16: Uint8Array | undefined;

/** Elementwise x^-1, 0 for 0 (batch inversion in the kernel: three products per element and one exponentiation). */
export function invEncoded(x: Uint8Array): Uint8Array {
  const m = sameCount('inv', x);
  return run([x], [x.length], ([px], [d]) => k().invMany(px!, d!, m))[0]!;
}

/**
 * Per nibble: the stored form ([v > j] for j = 0..14, then v; 16 elements) from the signs of the
 * square-root trick: r = the 4 PRSS values per nibble, p2 / p3 = their 6 pair and 5 higher products
 * (shares of degree t), q = the 4 public inverse roots 1/s per nibble, every one nonzero (a zero
 * root means r = 0, probability 2^-127: the caller takes the BigInt path). Bit i is (1 + r_i q_i)/2.
 */
export function nibblesFromSignsEncoded(r: Uint8Array, p2: Uint8Array, p3: Uint8Array, q: Uint8Array): Uint8Array {
  const u = count(r, 'nibble signs') / 4;
  if (!Number.isInteger(u) || count(p2, 'nibble signs') !== 6 * u || count(p3, 'nibble signs') !== 5 * u || count(q, 'nibble signs') !== 4 * u) {
    throw new FieldError('nibble signs: 4 values, 6 pair and 5 higher products and 4 inverse roots per nibble');
  }
  for (const v of [r, p2, p3, q]) assertCanonical(v, 'nibble signs');
  for (let o = 0; o < q.length; o += ELEMENT_BYTES) {
    let zero = true;
    for (let i = 0; i < ELEMENT_BYTES && zero; i++) zero = q[o + i] === 0;
    if (zero) throw new FieldError(`nibble signs: inverse root ${o / ELEMENT_BYTES} is zero`);
  }
  if (inv16 === undefined) {
    inv16 = new Uint8Array(ELEMENT_BYTES);
    writeElement(new DataView(inv16.buffer), 0, inv(16n));
  }
  return run([r, p2, p3, q, inv16], [u * 16 * ELEMENT_BYTES, 98 * ELEMENT_BYTES], ([pr, pp, pq, ps, pc], [d, sc]) =>
    k().nibblesFromSigns(pr!, pp!, pq!, ps!, pc!, sc!, d!, u), 1)[0]!; // the scratch area is not copied out
}

/** Elementwise x - y. */
export function subEncoded(x: Uint8Array, y: Uint8Array): Uint8Array {
  const m = sameCount('sub', x, y);
  return run([x, y], [x.length], ([px, py], [d]) => k().subMany(px!, py!, d!, m))[0]!;
}

/**
 * Checks a Beaver step's vectors: m triples [a, b, ab] and 2 vectors of m (the factors, or the
 * opened values), all canonical.
 */
function beaverShapes(vectors: Uint8Array, items: Uint8Array, m: number): void {
  if (count(vectors, 'beaver') !== 2 * m || count(items, 'beaver') !== 3 * m) throw new FieldError(`beaver: 2 vectors of ${m} and ${m} triples expected`);
  assertCanonical(vectors, 'beaver');
  assertCanonical(items, 'beaver');
}

/** What m Beaver products open: [x - a | y - b] for the factors [x | y] (m each) and m triples. */
export function beaverOpeningsEncoded(factors: Uint8Array, items: Uint8Array, m: number): Uint8Array {
  beaverShapes(factors, items, m);
  return run([factors, items], [factors.length], ([pf, pi], [d]) => k().beaverOpenings(pf!, pi!, d!, m, 3, 2))[0]!;
}

/** The products x y (m) from the opened [d | e] and the triples. */
export function beaverProductsEncoded(opened: Uint8Array, items: Uint8Array, m: number): Uint8Array {
  beaverShapes(opened, items, m);
  return run([opened, items], [m * ELEMENT_BYTES], ([po, pi], [d]) => k().beaverProducts(po!, pi!, d!, m, 3))[0]!;
}

/** Checks p vectors of m elements against m closure items of `width`, all canonical. */
function closureShapes(vectors: Uint8Array, items: Uint8Array, m: number, width: number, p: number): void {
  if (!(p >= 1 && p <= width)) throw new FieldError(`closure: ${p} factors for items of ${width}`);
  if (count(vectors, 'closure') !== p * m || count(items, 'closure') !== width * m) throw new FieldError(`closure: ${p} vectors of ${m} and ${m} items of ${width} expected`);
  assertCanonical(vectors, 'closure');
  assertCanonical(items, 'closure');
}

/**
 * What m closure groups open: [f_0 - a_0 | ... | f_{p-1} - a_{p-1}] for the p factor vectors (m
 * each, concatenated) and m items of `width` elements whose first p are the masks (closure.ts).
 */
export function closureOpeningsEncoded(factors: Uint8Array, items: Uint8Array, m: number, width: number, p: number): Uint8Array {
  closureShapes(factors, items, m, width, p);
  return run([factors, items], [factors.length], ([pf, pi], [d]) => k().beaverOpenings(pf!, pi!, d!, m, width, p))[0]!;
}

/** A compiled closure evaluation (closure.ts): its program bytes and sizes. */
export interface ClosureProgramBytes {
  readonly bytes: Uint8Array;
  readonly p: number;
  readonly nOut: number;
  readonly coefficients: number;
  readonly shape: { readonly width: number };
}

/** The program's outputs [o0 | o1 | ...] (m each) from the opened factors [d_0 | ... | d_{p-1}] and the items. */
export function closureEvalEncoded(opened: Uint8Array, items: Uint8Array, m: number, prog: ClosureProgramBytes): Uint8Array {
  const width = prog.shape.width;
  closureShapes(opened, items, m, width, prog.p);
  const scratch = (prog.coefficients + 1 + prog.nOut) * 40;
  return run([opened, items, prog.bytes], [prog.nOut * m * ELEMENT_BYTES, scratch], ([po, pi, pp], [d, s]) =>
    k().closureEval(po!, pi!, pp!, s!, d!, m, width, prog.nOut), 1)[0]!;
}

/**
 * The comparison's block indicators: for block k, with public digit digits[k] (0..15) of the stored
 * nibble at element index base[k] of `nibbles` (16 elements each), lt = [r > c] and eq = [r = c] =
 * [r > c - 1] - [r > c]. Only the two elements read per block are gathered (a nibble is 16).
 */
export function blockIndicatorsEncoded(nibbles: Uint8Array, base: Uint32Array, digits: Uint8Array): { lt: Uint8Array; eq: Uint8Array } {
  const n = digits.length;
  const total = count(nibbles, 'blocks');
  if (base.length !== n) throw new FieldError(`blocks: ${base.length} nibble indices for ${n} digits`);
  const gt = new Uint8Array(n * ELEMENT_BYTES);
  const above = new Uint8Array(n * ELEMENT_BYTES);
  const s32 = words(nibbles);
  const g32 = words(gt);
  const a32 = words(above);
  for (let i = 0; i < n; i++) {
    const c = digits[i]!;
    const b = base[i]!;
    if (c > 15) throw new FieldError(`blocks: digit ${c} is not base 16`);
    if (b % 16 !== 0 || b + 16 > total) throw new FieldError(`blocks: nibble index ${b} outside the nibbles`);
    // [r > 15] = 0 (left zero); [r > -1] = 1
    if (c < 15) copyElement(s32, b + c, g32, i);
    if (c === 0) above[i * ELEMENT_BYTES + ELEMENT_BYTES - 1] = 1;
    else copyElement(s32, b + c - 1, a32, i);
  }
  return { lt: gt, eq: subEncoded(above, gt) };
}
