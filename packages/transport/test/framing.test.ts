import { describe, expect, it } from 'vitest';
import { FRAME_HEADER_BYTES, FrameDecoder, FrameError, FrameKind, frameHeader, Prng } from '../src/index';

function encode(payload: Uint8Array): Uint8Array {
  const f = new Uint8Array(FRAME_HEADER_BYTES + payload.byteLength);
  f.set(frameHeader(FrameKind.DATA, payload.byteLength));
  f.set(payload, FRAME_HEADER_BYTES);
  return f;
}

describe('FrameDecoder', () => {
  it('recovers every frame from a stream split at random points', () => {
    const rng = new Prng(11);
    const payloads = Array.from({ length: 200 }, (_, i) => {
      const len = i % 17 === 0 ? 0 : rng.nextU32() % (i % 50 === 0 ? 100_000 : 300);
      return Uint8Array.from({ length: len }, () => rng.nextU32() & 0xff);
    });
    const wire = new Uint8Array(payloads.reduce((s, p) => s + p.byteLength + FRAME_HEADER_BYTES, 0));
    let off = 0;
    for (const p of payloads) { wire.set(encode(p), off); off += p.byteLength + FRAME_HEADER_BYTES; }
    const dec = new FrameDecoder(1 << 20);
    const got: Uint8Array[] = [];
    for (let pos = 0; pos < wire.byteLength;) {
      const step = 1 + (rng.nextU32() % 5000);
      for (const f of dec.push(wire.subarray(pos, pos + step))) got.push(f.payload);
      pos += step;
    }
    expect(got).toEqual(payloads);
    expect(dec.bufferedBytes).toBe(0);
  });

  it('rejects oversized frames and unknown kinds', () => {
    expect(() => new FrameDecoder(10).push(frameHeader(FrameKind.DATA, 11))).toThrow(FrameError);
    const bad = frameHeader(FrameKind.DATA, 1);
    bad[4] = 9;
    expect(() => new FrameDecoder(10).push(bad)).toThrow(/unknown frame kind/);
  });

  it('does not alias the input buffer', () => {
    const dec = new FrameDecoder(100);
    const wire = encode(Uint8Array.of(1, 2, 3));
    const [f] = dec.push(wire);
    wire[FRAME_HEADER_BYTES] = 99;
    expect(Array.from(f!.payload)).toEqual([1, 2, 3]);
  });
});
