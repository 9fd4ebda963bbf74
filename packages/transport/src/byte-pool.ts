/**
 * Small byte arrays carved out of 64 KB slabs, for buffers made once per message or per round
 * (frames, message envelopes, gathered share vectors). `new Uint8Array(600)` gets its own
 * zero-filled backing store: ~480 ns against ~80 ns for a view of a slab on this VM, and one backing
 * store fewer for the GC to track. A bump allocator: nothing is ever handed out twice, so no two
 * arrays share bytes and every array starts zero, as a new one does (a slab is zeroed once when
 * made). A kept array keeps its whole slab alive, so arrays kept long (a job's archived envelopes)
 * take a pool of their own, where they lie next to each other instead of pinning the slabs of the
 * short-lived ones. The arrays are plain Uint8Arrays (slice() copies), but `.buffer` is the slab: a
 * user of `.buffer` must pass `byteOffset` and `byteLength` (as everyone in the packages does).
 */
const SLAB_BYTES = 64 * 1024;
/** Larger requests get their own buffer (as before): a slab holds at least 16 of the largest. */
export const POOLED_MAX_BYTES = 4096;

export class BytePool {
  private slab = new ArrayBuffer(SLAB_BYTES);
  private at = 0;

  /** A zeroed Uint8Array of n bytes, as `new Uint8Array(n)`, but a view of a slab when n is small. */
  alloc(n: number): Uint8Array {
    if (n > POOLED_MAX_BYTES) return new Uint8Array(n);
    if (this.at + n > SLAB_BYTES) {
      this.slab = new ArrayBuffer(SLAB_BYTES);
      this.at = 0;
    }
    const out = new Uint8Array(this.slab, this.at, n);
    this.at += (n + 15) & ~15; // 16-byte aligned: Uint32Array / BigUint64 views of field elements stay aligned
    return out;
  }
}

const shared = new BytePool();

/** From the shared pool, for arrays that live about as long as the message or round they serve. */
export function allocBytes(n: number): Uint8Array {
  return shared.alloc(n);
}
