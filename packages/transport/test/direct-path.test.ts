import { afterEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createLibp2pTransport, generateIdentity, type Libp2pTransport, type PeerEntry } from '../src/index';
import { directReads, directSender, layersOf, readDirectConnection } from '../src/direct-path';
import { freePorts, waitFor } from './helpers';

const started: Libp2pTransport[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((t) => t.stop()));
});

/** Two transports; `direct[i]` sets party i+1's directPath. Each records what it received, in order. */
async function pair(direct: [boolean, boolean]) {
  const ids = await Promise.all([generateIdentity(), generateIdentity()]);
  const ports = await freePorts(2);
  const peers: PeerEntry[] = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: `/ip4/127.0.0.1/tcp/${ports[k]}` }));
  const got: Uint8Array[][] = [[], []];
  const ts: Libp2pTransport[] = [];
  for (const i of [1, 2]) {
    const t = await createLibp2pTransport({ self: i, n: 2, privateKey: ids[i - 1]!.privateKey, listen: peers[i - 1]!.addr, peers, directPath: direct[i - 1] });
    t.onMessage((_from, data) => got[i - 1]!.push(data));
    started.push(t);
    ts.push(t);
  }
  await Promise.all(ts.map((t) => t.start()));
  await waitFor(() => ts[0]!.isUp(2) && ts[1]!.isUp(1), 'links up');
  return { ts, got };
}

/** Sizes around the limits: tiny, a round's message, Noise's cipher switch, one full Noise message, several. */
const SIZES = [1, 37, 300, 639, 640, 4096, 16_384, 65_507 - 5, 65_507 - 4, 200_000];

/** Sends every size from a to b, some in one turn, some one turn apart; resolves when b has them all. */
async function exchange(ts: Libp2pTransport[], got: Uint8Array[][], from: 1 | 2, rounds: number): Promise<Uint8Array[]> {
  const to = from === 1 ? 2 : 1;
  const sent: Uint8Array[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const size of SIZES) {
      const m = randomBytes(size);
      sent.push(m);
      ts[from - 1]!.send(to, m);
      if ((r + size) % 3 === 0) await new Promise((res) => setImmediate(res));
    }
  }
  await waitFor(() => got[to - 1]!.length === sent.length, `all ${sent.length} delivered`);
  return sent;
}

describe('direct path', () => {
  it('finds the Yamux, Noise and TCP layers of the installed libp2p and carries every size intact, in order', async () => {
    const reads0 = { ...directReads };
    const { ts, got } = await pair([true, true]);
    const sent = await exchange(ts, got, 1, 20);
    expect(got[1]!.map((m) => Buffer.from(m).toString('hex'))).toEqual(sent.map((m) => Buffer.from(m).toString('hex')));
    const s = ts[0]!.peerStats(2);
    // the stack was recognised: most pieces went direct (the first ones may precede the stream's ACK)
    expect(s.sentDirect ?? 0).toBeGreaterThan(s.sentWrites / 2);
    expect(directReads.tcp - reads0.tcp).toBeGreaterThan(0);
    expect(directReads.noise - reads0.noise).toBeGreaterThan(0);
    expect(directReads.stream - reads0.stream).toBeGreaterThan(0);
    // and back the other way on the same pair
    const back = await exchange(ts, got, 2, 3);
    expect(got[0]!.map((m) => Buffer.from(m).toString('hex'))).toEqual(back.map((m) => Buffer.from(m).toString('hex')));
  });

  it('speaks the library\'s wire format: a direct sender and a library-only receiver understand each other both ways', async () => {
    const { ts, got } = await pair([true, false]);
    const ab = await exchange(ts, got, 1, 5);
    const ba = await exchange(ts, got, 2, 5);
    expect(got[1]!.map((m) => Buffer.from(m).toString('hex'))).toEqual(ab.map((m) => Buffer.from(m).toString('hex')));
    expect(got[0]!.map((m) => Buffer.from(m).toString('hex'))).toEqual(ba.map((m) => Buffer.from(m).toString('hex')));
    expect(ts[0]!.peerStats(2).sentDirect ?? 0).toBeGreaterThan(0);
    expect(ts[1]!.peerStats(1).sentDirect).toBe(0);
  });

  it('keeps order and loses nothing when the socket pushes back (writes beyond its buffer wait for drain)', async () => {
    const { ts, got } = await pair([true, true]);
    // 3,000 x 8 KB in one turn: far beyond the socket's high-water mark, so writes return false
    const sent: Uint8Array[] = [];
    for (let k = 0; k < 3000; k++) {
      const m = randomBytes(8192);
      m.writeUInt32BE(k, 0);
      sent.push(m);
      ts[0]!.send(2, m);
    }
    await waitFor(() => got[1]!.length === sent.length, 'all 3000 delivered', 30_000);
    expect(got[1]!.every((m, k) => Buffer.from(m).readUInt32BE(0) === k && Buffer.from(m).equals(sent[k]!))).toBe(true);
    expect(ts[0]!.peerStats(2).droppedOutbound).toBe(0);
  });

  it('writes the library\'s frame, charges the window, marks drain on a full socket, and declines when a layer is busy', () => {
    const ms = <T extends object>(extra: T) => ({
      status: 'open', writeStatus: 'writable', readStatus: 'readable', remoteWriteStatus: 'writable', writableNeedsDrain: false,
      sendingData: false, writeBuffer: { byteLength: 0 }, readBuffer: { byteLength: 0 }, listenerCount: () => 1, onData() {}, abort() {}, ...extra,
    });
    const written: Uint8Array[] = [];
    let socketFull = false;
    const tcp = ms({ socket: { destroyed: false, write: (b: Uint8Array) => { written.push(Uint8Array.from(b)); return !socketFull; } } });
    // a stand-in cipher: ciphertext = plaintext reversed + 16 tag bytes of 0xee (what matters is where it goes)
    const noise = ms({ handshake: { encrypt: (pt: Uint8Array) => Uint8Array.from([...pt].reverse().concat(Array(16).fill(0xee))) }, decoder: { decode: () => [] }, decrypt: () => undefined, stream: tcp });
    let otherDrains = 0;
    const other = ms({ onMuxerNeedsDrain: () => { otherDrains++; } });
    const stream = ms({ streamId: 0x01020304, state: 3, sendWindowCapacity: 1000, maxMessageSize: 988, onMuxerNeedsDrain: () => { stream.writableNeedsDrain = true; } });
    const muxer = { status: 'open', streams: [stream, other], maConn: noise, onData() {}, abort() {} };
    const send = directSender(stream, { muxer })!;
    expect(send).toBeDefined();
    expect(send(Uint8Array.of(9, 8, 7))).toBe(true);
    const pt = [0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 3, 9, 8, 7]; // version, type Data, flags 0, stream id, length, data
    expect([...written[0]!]).toEqual([0, 15 + 16, ...pt.reverse(), ...Array(16).fill(0xee)]);
    expect(stream.sendWindowCapacity).toBe(997);
    // the socket reports a full buffer: every layer waits for drain, as after the library's own write
    socketFull = true;
    expect(send(Uint8Array.of(1))).toBe(true);
    expect([tcp.writableNeedsDrain, noise.writableNeedsDrain, stream.writableNeedsDrain, otherDrains]).toEqual([true, true, true, 1]);
    // and from then on the library's path is used, until drain clears the flags
    expect(send(Uint8Array.of(1))).toBe(false);
    tcp.writableNeedsDrain = false; noise.writableNeedsDrain = false; stream.writableNeedsDrain = false;
    socketFull = false;
    noise.writeBuffer.byteLength = 5; // the library holds bytes at the Noise layer: never overtake them
    expect(send(Uint8Array.of(1))).toBe(false);
    noise.writeBuffer.byteLength = 0;
    expect(send(new Uint8Array(997))).toBe(false); // beyond the send window (996 left)
    stream.state = 1; // not yet established (the library would add flags)
    expect(send(Uint8Array.of(1))).toBe(false);
    stream.state = 3;
    expect(send(Uint8Array.of(1))).toBe(true);
    expect(written.length).toBe(3);
  });

  it('declines objects that are not the expected stack, and leaves a connection it cannot read alone', () => {
    expect(layersOf(undefined)).toBeUndefined();
    expect(layersOf({ muxer: { streams: [], status: 'open', onData() {} } })).toBeUndefined();
    expect(directSender({}, {})).toBeUndefined();
    expect(readDirectConnection({ muxer: null })).toBe(false);
  });
});
