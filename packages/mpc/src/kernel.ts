// The WebAssembly field kernel (assembly/field-kernel.ts) behind a small vector API on encoded
// elements (16 bytes big-endian, as on the wire and in the reserve). Vectors are copied into the
// module's memory, computed there without BigInt, and copied out. No I/O.
//
// Used where a BigInt loop allocates most: square roots in preprocessing (125 squarings each) and
// the GRR resharing of products. One instance per process; calls are synchronous and never
// re-entered, so one scratch memory serves all of them.

import { randomFillSync } from 'node:crypto';
import { ELEMENT_BYTES, FieldError, assertEncodedAt } from './field';
import { FIELD_KERNEL_WASM_BASE64 } from './kernel-wasm';

// The WebAssembly global, typed here: the engine's lib settings (ES2023, node types) do not declare it.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
};

interface KernelExports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  sqrtMany(src: number, dst: number, n: number): void;
  mulMany(x: number, y: number, dst: number, n: number): void;
  shareMany(secrets: number, coeffs: number, out: number, m: number, n: number, t: number): void;
}

let kernel: KernelExports | undefined;

function k(): KernelExports {
  if (!kernel) {
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

function assertCanonical(v: Uint8Array, what: string): void {
  const view = new DataView(v.buffer, v.byteOffset, v.byteLength);
  for (let o = 0; o < v.length; o += ELEMENT_BYTES) {
    try {
      assertEncodedAt(view, o);
    } catch {
      throw new FieldError(`${what}: element ${o / ELEMENT_BYTES} is not a field element`);
    }
  }
}

/** Elementwise x^(2^125): the canonical square root of each residue (the caller checks s^2 = x). */
export function sqrtEncoded(x: Uint8Array): Uint8Array {
  const m = count(x, 'sqrt');
  assertCanonical(x, 'sqrt');
  const mem = memory(2 * x.length);
  mem.set(x, 0);
  k().sqrtMany(0, x.length, m);
  return mem.slice(x.length, 2 * x.length);
}

/** Elementwise x * y. */
export function mulEncoded(x: Uint8Array, y: Uint8Array): Uint8Array {
  const m = count(x, 'mul');
  if (count(y, 'mul') !== m) throw new FieldError(`mul: vectors of ${m} and ${y.length / ELEMENT_BYTES} elements`);
  assertCanonical(x, 'mul');
  assertCanonical(y, 'mul');
  const mem = memory(3 * x.length);
  mem.set(x, 0);
  mem.set(y, x.length);
  k().mulMany(0, x.length, 2 * x.length, m);
  return mem.slice(2 * x.length, 3 * x.length);
}

/**
 * Fresh degree-t Shamir sharings of the encoded secrets for parties 1..n, with random coefficients
 * from node:crypto: returns n encoded rows, row i-1 being party i's shares.
 */
export function shareEncoded(secrets: Uint8Array, n: number, t: number): Uint8Array[] {
  const m = count(secrets, 'share');
  if (!Number.isInteger(n) || n < 1 || n > 64 || !Number.isInteger(t) || t < 1 || t >= n) throw new FieldError(`share: bad (n, t) = (${n}, ${t})`);
  assertCanonical(secrets, 'share');
  const sb = secrets.length;
  const cb = sb * t;
  const ob = sb * n;
  const mem = memory(sb + cb + ob);
  mem.set(secrets, 0);
  randomFillSync(mem, sb, cb);
  k().shareMany(0, sb, sb + cb, m, n, t);
  const rows: Uint8Array[] = [];
  for (let i = 0; i < n; i++) rows.push(mem.slice(sb + cb + i * sb, sb + cb + (i + 1) * sb));
  // the coefficients must not outlive the call
  mem.fill(0, sb, sb + cb);
  return rows;
}
