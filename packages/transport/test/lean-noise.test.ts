import { afterEach, describe, expect, it } from 'vitest';
import { createLibp2pTransport, generateIdentity, type Libp2pTransport, type PeerEntry } from '../src/index';
import { randomBytes } from 'node:crypto';
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';
import { NODE_CIPHER_FROM_BYTES, coalesceWrites, leanCrypto, quietLengthDecoder } from '../src/lean-noise';
import { freePorts, pattern, waitFor } from './helpers';

/** The parts of uint8arraylist's Uint8ArrayList that the hooks use. */
class Uint8ArrayList {
  readonly bufs: Uint8Array[];
  constructor(...bufs: Uint8Array[]) { this.bufs = bufs; }
  get byteLength(): number { return this.bufs.reduce((a, b) => a + b.byteLength, 0); }
  subarray(): Uint8Array { return Uint8Array.from(this.bufs.flatMap((b) => [...b])); }
  getUint16(i: number): number { const all = this.subarray(); return (all[i]! << 8) | all[i + 1]!; }
  [Symbol.iterator](): Iterator<Uint8Array> { return this.bufs[Symbol.iterator](); }
}

const started: Libp2pTransport[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((t) => t.stop()));
});

describe('lean noise', () => {
  it.each([['libsodium', leanCrypto()], ['the fallback switch', leanCrypto(NODE_CIPHER_FROM_BYTES, undefined)]])('encrypts to the bytes the library does on either side of the cipher switch, and each opens the other (%s)', (_name, lean) => {
    const k = randomBytes(32);
    const nonce = randomBytes(12);
    const ad = randomBytes(8);
    for (const size of [0, 1, 100, NODE_CIPHER_FROM_BYTES - 1, NODE_CIPHER_FROM_BYTES, 1000, 1199, 1200, 5000]) {
      const pt = randomBytes(size);
      const a = lean.chaCha20Poly1305Encrypt(pt, nonce, ad, k).subarray();
      const b = defaultCrypto.chaCha20Poly1305Encrypt(pt, nonce, ad, k).subarray();
      expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
      expect(Buffer.from(lean.chaCha20Poly1305Decrypt(b, nonce, ad, k).subarray()).equals(pt)).toBe(true);
      expect(Buffer.from(defaultCrypto.chaCha20Poly1305Decrypt(a, nonce, ad, k).subarray()).equals(pt)).toBe(true);
      const bad = Uint8Array.from(a);
      bad[0] = bad[0]! ^ 1;
      expect(() => lean.chaCha20Poly1305Decrypt(bad, nonce, ad, k)).toThrow();
    }
  });

  it('joins a multi-piece send into one piece with the same bytes', () => {
    const seen: Uint8Array[][] = [];
    const conn = { sendData(data: Uint8ArrayList) { seen.push([...data]); return { sentBytes: data.byteLength, canSendMore: true }; } };
    expect(coalesceWrites(conn)).toBe(true);
    const list = new Uint8ArrayList(Uint8Array.of(0, 3), Uint8Array.of(7, 8, 9));
    const r = conn.sendData(list) as { sentBytes: number };
    expect(r.sentBytes).toBe(5);
    expect(seen[0]!.length).toBe(1);
    expect([...seen[0]![0]!]).toEqual([0, 3, 7, 8, 9]);
    expect(coalesceWrites({})).toBe(false);
  });

  it('reads frame lengths without throwing on a drained buffer', () => {
    const stream = { decoder: { lengthDecoder: (): number => { throw new RangeError('Could not decode int16BE'); } } };
    expect(quietLengthDecoder(stream)).toBe(true);
    const read = stream.decoder.lengthDecoder as unknown as (b: Uint8ArrayList) => number;
    expect(read(new Uint8ArrayList())).toBe(0);
    expect(read(new Uint8ArrayList(Uint8Array.of(1)))).toBe(0);
    expect(read(new Uint8ArrayList(Uint8Array.of(1, 2, 3)))).toBe(0x0102);
    expect(read(new Uint8ArrayList(Uint8Array.of(0xfe, 0xdc), Uint8Array.of(3)))).toBe(0xfedc);
    // the length split across two pieces of the list
    expect(read(new Uint8ArrayList(Uint8Array.of(0xab), Uint8Array.of(0xcd, 9)))).toBe(0xabcd);
    expect(read(new Uint8ArrayList(new Uint8Array(0), Uint8Array.of(0x12, 0x34)))).toBe(0x1234);
    expect(quietLengthDecoder({})).toBe(false);
  });

  it('hooks the installed noise and tcp versions and carries small and multi-frame messages intact', async () => {
    const ids = await Promise.all([generateIdentity(), generateIdentity()]);
    const ports = await freePorts(2);
    const peers: PeerEntry[] = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: `/ip4/127.0.0.1/tcp/${ports[k]}` }));
    const logs: string[] = [];
    const got: Uint8Array[] = [];
    const ts = await Promise.all([1, 2].map((i) => createLibp2pTransport({ self: i, n: 2, privateKey: ids[i - 1]!.privateKey, listen: peers[i - 1]!.addr, peers, log: (m) => logs.push(m) })));
    started.push(...ts);
    ts[1]!.onMessage((_from, data) => got.push(data));
    await Promise.all(ts.map((t) => t.start()));
    await waitFor(() => ts[0]!.isUp(2) && ts[1]!.isUp(1), 'links up');
    // 1 B, a typical round, one just over a Noise frame (65,519 B of plaintext), and 300 KB.
    const sizes = [1, 600, 65_600, 300_000, 600];
    for (const s of sizes) ts[0]!.send(2, pattern(1, 2, s));
    await waitFor(() => got.length === sizes.length, 'all delivered');
    got.forEach((m, k) => expect(Buffer.compare(Buffer.from(m), Buffer.from(pattern(1, 2, sizes[k]!)))).toBe(0));
    expect(logs.filter((m) => m.startsWith('lean noise'))).toEqual([]);
  });
});
