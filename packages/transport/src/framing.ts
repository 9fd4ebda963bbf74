// Length-prefixed frames over a byte stream (libp2p streams do not keep message boundaries).
// Wire format of one frame: u32 big-endian payload length | u8 kind | payload.

export const FRAME_HEADER_BYTES = 5;

/** Frame kinds. DATA carries one Transport message; PING keeps an idle stream busy. */
export const FrameKind = { DATA: 0, PING: 1 } as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

/** Returns the 5-byte header for a payload of `length` bytes. */
export function frameHeader(kind: FrameKind, length: number): Uint8Array {
  const h = new Uint8Array(FRAME_HEADER_BYTES);
  writeFrameHeader(h, kind, length);
  return h;
}

/** Writes the 5-byte header at the start of `out` (no header array or DataView per message). */
export function writeFrameHeader(out: Uint8Array, kind: FrameKind, length: number): void {
  if (!Number.isInteger(length) || length < 0 || length > 0xffffffff) throw new RangeError(`frame length ${length} out of range`);
  out[0] = length >>> 24;
  out[1] = (length >>> 16) & 0xff;
  out[2] = (length >>> 8) & 0xff;
  out[3] = length & 0xff;
  out[4] = kind;
}

/** Error raised when a peer sends a malformed or oversized frame; the stream should be dropped. */
export class FrameError extends Error {
  override readonly name = 'FrameError';
}

/**
 * Incremental decoder: push() byte chunks in any split, get whole frames out in order.
 * Holds at most one partial frame (bounded by maxPayloadBytes + header).
 */
export class FrameDecoder {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private header: { kind: FrameKind; length: number } | undefined;

  /** maxPayloadBytes: frames announcing a larger payload raise FrameError. */
  constructor(private readonly maxPayloadBytes: number) {}

  /** Bytes held while waiting for the rest of a frame. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** Feeds bytes; returns every frame completed by them. Throws FrameError on a bad frame. */
  push(chunk: Uint8Array): Array<{ kind: FrameKind; payload: Uint8Array }> {
    if (chunk.byteLength > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.byteLength;
    }
    const out: Array<{ kind: FrameKind; payload: Uint8Array }> = [];
    for (;;) {
      if (this.header === undefined) {
        if (this.buffered < FRAME_HEADER_BYTES) return out;
        let length: number;
        let kind: number;
        const first = this.chunks[0]!;
        if (first.byteLength >= FRAME_HEADER_BYTES) {
          // the usual case: read the header in place (no 5-byte copy and DataView per frame)
          length = first[0]! * 2 ** 24 + ((first[1]! << 16) | (first[2]! << 8) | first[3]!);
          kind = first[4]!;
          if (first.byteLength === FRAME_HEADER_BYTES) this.chunks.shift();
          else this.chunks[0] = first.subarray(FRAME_HEADER_BYTES);
          this.buffered -= FRAME_HEADER_BYTES;
        } else {
          const h = this.take(FRAME_HEADER_BYTES);
          length = new DataView(h.buffer, h.byteOffset, h.byteLength).getUint32(0, false);
          kind = h[4]!;
        }
        if (kind !== FrameKind.DATA && kind !== FrameKind.PING) throw new FrameError(`unknown frame kind ${kind}`);
        if (length > this.maxPayloadBytes) throw new FrameError(`frame of ${length} bytes exceeds limit ${this.maxPayloadBytes}`);
        this.header = { kind: kind as FrameKind, length };
      }
      if (this.buffered < this.header.length) return out;
      out.push({ kind: this.header.kind, payload: this.take(this.header.length) });
      this.header = undefined;
    }
  }

  /** Removes exactly n buffered bytes (n <= buffered) as one contiguous array. */
  private take(n: number): Uint8Array {
    const first = this.chunks[0];
    if (first !== undefined && first.byteLength >= n) {
      // Copy out, so the payload handed to the application never aliases a receive buffer.
      const res = first.slice(0, n);
      if (first.byteLength === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      this.buffered -= n;
      return res;
    }
    const res = new Uint8Array(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0]!;
      const need = n - off;
      if (c.byteLength <= need) {
        res.set(c, off);
        off += c.byteLength;
        this.chunks.shift();
      } else {
        res.set(c.subarray(0, need), off);
        this.chunks[0] = c.subarray(need);
        off += need;
      }
    }
    this.buffered -= n;
    return res;
  }
}
