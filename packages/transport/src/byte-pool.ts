/**
 * Small byte arrays carved out of shared 64 KB slabs, for buffers made once per message or per
 * round (frames, message envelopes, gathered share vectors).
 * `new Uint8Array(600)` gets its own zero-filled backing store: ~480 ns against ~80 ns for a view
 * of a slab on this VM, and one backing store fewer for the GC to track. A bump allocator: nothing
 * is ever handed out twice, so no two arrays share bytes and every array starts zero, as a new one
 * does (a slab is zeroed once when made); a long-lived array keeps its slab (64 KB) alive. The arrays are plain Uint8Arrays (slice() copies), but `.buffer` is the slab: a user of
 * `.buffer` must pass `byteOffset` and `byteLength` (as everyone in the packages does).
 */
const SLAB_BYTES = 64 * 1024;
/** Larger requests get their own buffer (as before): a slab holds at least 16 of the largest. */
export const POOLED_MAX_BYTES = 4096;

let slab = new ArrayBuffer(SLAB_BYTES);
let at = 0;

/** A zeroed Uint8Array of n bytes, as `new Uint8Array(n)`, but a view of a shared slab when n is small. */
export function allocBytes(n: number): Uint8Array {
  if (n > POOLED_MAX_BYTES) return new Uint8Array(n);
  if (at + n > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    at = 0;
  }
  const out = new Uint8Array(slab, at, n);
  at += (n + 15) & ~15; // 16-byte aligned: Uint32Array / BigUint64 views of field elements stay aligned
  return out;
}
