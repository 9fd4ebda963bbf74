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

  it('declines objects that are not the expected stack, and leaves a connection it cannot read alone', () => {
    expect(layersOf(undefined)).toBeUndefined();
    expect(layersOf({ muxer: { streams: [], status: 'open', onData() {} } })).toBeUndefined();
    expect(directSender({}, {})).toBeUndefined();
    expect(readDirectConnection({ muxer: null })).toBe(false);
  });
});
