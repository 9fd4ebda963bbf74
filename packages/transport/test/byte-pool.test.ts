import { describe, expect, it } from 'vitest';
import { allocBytes, BytePool, POOLED_MAX_BYTES } from '../src/byte-pool';

describe('allocBytes', () => {
  it('hands out zeroed, 16-byte aligned arrays that never share bytes, across slabs', () => {
    const made: Uint8Array[] = [];
    // enough to cross several 64 KB slabs; sizes from 1 byte to past the pooled limit
    for (let i = 0; i < 3000; i++) {
      const n = 1 + ((i * 977) % (POOLED_MAX_BYTES + 200));
      const a = allocBytes(n);
      expect(a.byteLength).toBe(n);
      expect(a.byteOffset % 16).toBe(0);
      expect(a.every((b) => b === 0)).toBe(true);
      a.fill(i & 0xff);
      made.push(a);
    }
    // every array still holds only its own fill: no two overlap
    made.forEach((a, i) => expect(a.every((b) => b === (i & 0xff))).toBe(true));
  });

  it('slice() of a pooled array is a copy', () => {
    const a = allocBytes(32);
    a[0] = 7;
    const c = a.slice();
    c[0] = 9;
    expect(a[0]).toBe(7);
    expect(c.buffer).not.toBe(a.buffer);
  });
});

describe('BytePool', () => {
  it('a pool of its own carves from its own slabs', () => {
    const own = new BytePool();
    const a = own.alloc(64);
    const b = own.alloc(64);
    const c = allocBytes(64);
    expect(b.buffer).toBe(a.buffer);
    expect(b.byteOffset).toBe(a.byteOffset + 64);
    expect(c.buffer).not.toBe(a.buffer);
    expect(own.alloc(POOLED_MAX_BYTES + 1).byteOffset).toBe(0); // large: its own buffer
  });
});
