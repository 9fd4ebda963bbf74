// Emulated WAN links: latency, jitter and bandwidth hold messages back per sending peer, in order;
// bad settings are refused; over real libp2p links a ping-pong takes at least two latencies.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  LinkEmulator, checkLinkEmulation, createLibp2pTransport, generateIdentity, type Libp2pTransport, type PeerEntry,
} from '../src/index';
import { freePorts, waitFor } from './helpers';

function rig(spec: ConstructorParameters<typeof LinkEmulator>[0], random = () => 0.5) {
  let t = 0;
  const got: Array<{ from: number; at: number; tag: number }> = [];
  const em = new LinkEmulator(spec, (from, data) => got.push({ from, at: t, tag: data[0]! }), () => t, random);
  const advance = async (ms: number): Promise<void> => {
    t += ms;
    await vi.advanceTimersByTimeAsync(ms);
  };
  return { em, got, advance, at: () => t };
}

describe('LinkEmulator', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('delays every message by the latency, per peer, in arrival order', async () => {
    vi.useFakeTimers();
    const r = rig({ latencyMs: 40 });
    r.em.push(2, Uint8Array.of(1));
    await r.advance(10);
    r.em.push(3, Uint8Array.of(2));
    r.em.push(2, Uint8Array.of(3));
    await r.advance(29);
    expect(r.got).toEqual([]);
    await r.advance(1);
    expect(r.got).toEqual([{ from: 2, at: 40, tag: 1 }]);
    await r.advance(10);
    expect(r.got.slice(1)).toEqual([{ from: 3, at: 50, tag: 2 }, { from: 2, at: 50, tag: 3 }]);
    expect(r.em.held).toBe(0);
  });

  it('jitter varies the delay within ± jitter but never reorders a peer\'s messages', async () => {
    vi.useFakeTimers();
    const draws = [1, 0, 0.5]; // +10, -10, 0 ms around 20 ms
    const r = rig({ latencyMs: 20, jitterMs: 10 }, () => draws.shift()!);
    r.em.push(2, Uint8Array.of(1)); // due 30
    r.em.push(2, Uint8Array.of(2)); // would be due 10: held behind the first
    r.em.push(4, Uint8Array.of(3)); // another peer: due 20
    await r.advance(20);
    expect(r.got.map((g) => [g.tag, g.at])).toEqual([[3, 20]]);
    await r.advance(10);
    expect(r.got.map((g) => [g.tag, g.at])).toEqual([[3, 20], [1, 30], [2, 30]]);
  });

  it('bandwidth adds each message\'s transmission time, one message at a time per link', async () => {
    vi.useFakeTimers();
    const r = rig({ latencyMs: 5, bandwidthMbps: 8 }); // 8 Mbit/s = 1 byte per microsecond: 10,000 B take 10 ms
    r.em.push(2, new Uint8Array(10_000).fill(1));
    r.em.push(2, new Uint8Array(10_000).fill(2));
    await r.advance(15);
    expect(r.got.map((g) => [g.tag, g.at])).toEqual([[1, 15]]);
    await r.advance(10);
    expect(r.got.map((g) => [g.tag, g.at])).toEqual([[1, 15], [2, 25]]);
  });

  it('stop() drops what is held and delivers nothing more', async () => {
    vi.useFakeTimers();
    const r = rig({ latencyMs: 10 });
    r.em.push(2, Uint8Array.of(1));
    r.em.stop();
    r.em.push(2, Uint8Array.of(2));
    await r.advance(50);
    expect(r.got).toEqual([]);
  });

  it('update() applies to messages read from then on; held ones keep their due time and order', async () => {
    vi.useFakeTimers();
    const r = rig({ latencyMs: 40 });
    r.em.push(2, Uint8Array.of(1)); // due 40
    r.em.update({ latencyMs: 10 });
    r.em.push(2, Uint8Array.of(2)); // would be due 10: never before the one ahead of it
    r.em.push(3, Uint8Array.of(3)); // due 10
    expect(r.em.settings).toEqual({ latencyMs: 10, jitterMs: 0 });
    await r.advance(10);
    expect(r.got.map((g) => [g.tag, g.at])).toEqual([[3, 10]]);
    await r.advance(30);
    expect(r.got.map((g) => [g.tag, g.at])).toEqual([[3, 10], [1, 40], [2, 40]]);
    r.em.update({ latencyMs: 0 });
    r.em.push(2, Uint8Array.of(4)); // nothing held and nothing to add: delivered at once
    expect(r.got.at(-1)).toEqual({ from: 2, at: 40, tag: 4 });
    expect(() => r.em.update({ latencyMs: 5, jitterMs: 6 })).toThrow(/may not exceed/);
    expect(r.em.settings).toEqual({ latencyMs: 0, jitterMs: 0 }); // a refused update changes nothing
  });

  it('with the settings turned off at run time, a message still waits for the ones held ahead of it', async () => {
    vi.useFakeTimers();
    const r = rig({ latencyMs: 20 });
    r.em.push(2, Uint8Array.of(1));
    r.em.update({});
    r.em.push(2, Uint8Array.of(2));
    expect(r.got).toEqual([]);
    await r.advance(20);
    expect(r.got.map((g) => [g.tag, g.at])).toEqual([[1, 20], [2, 20]]);
  });

  it('dropFrom() loses what one peer had in flight, and only that peer', async () => {
    vi.useFakeTimers();
    const r = rig({ latencyMs: 10 });
    r.em.push(2, Uint8Array.of(1));
    r.em.push(3, Uint8Array.of(2));
    r.em.dropFrom(2);
    expect(r.em.held).toBe(1);
    await r.advance(10);
    expect(r.got.map((g) => g.tag)).toEqual([2]);
    r.em.push(2, Uint8Array.of(3)); // the lane works again afterwards
    await r.advance(10);
    expect(r.got.map((g) => g.tag)).toEqual([2, 3]);
  });

  it('refuses settings no link can have', () => {
    expect(checkLinkEmulation(undefined)).toBe(false);
    expect(checkLinkEmulation({ latencyMs: 0 })).toBe(false);
    expect(checkLinkEmulation({ latencyMs: 1 })).toBe(true);
    expect(checkLinkEmulation({ bandwidthMbps: 100 })).toBe(true);
    expect(() => checkLinkEmulation({ latencyMs: -1 })).toThrow(/latencyMs must be a number of ms from 0/);
    expect(() => checkLinkEmulation({ latencyMs: Number.NaN })).toThrow(/latencyMs/);
    expect(() => checkLinkEmulation({ latencyMs: 5, jitterMs: 6 })).toThrow(/may not exceed latencyMs/);
    expect(() => checkLinkEmulation({ bandwidthMbps: 0 })).toThrow(/bandwidthMbps must be a positive number/);
    expect(() => checkLinkEmulation({ latencyMs: 120_000 })).toThrow(/from 0 to 60000/);
  });
});

describe('libp2p transport with emulated links', () => {
  const started: Libp2pTransport[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((t) => t.stop()));
  });

  it('a ping-pong between two parties takes at least two one-way latencies, and messages arrive whole and in order', async () => {
    const ids = await Promise.all([generateIdentity(), generateIdentity()]);
    const ports = await freePorts(2);
    const peers: PeerEntry[] = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: `/ip4/127.0.0.1/tcp/${ports[k]}` }));
    const ts = await Promise.all(ids.map((id, k) => createLibp2pTransport({
      self: k + 1, n: 2, privateKey: id.privateKey, listen: peers[k]!.addr, peers, linkEmulation: { latencyMs: 25, jitterMs: 5 },
    })));
    started.push(...ts);
    const at2: number[] = [];
    ts[1]!.onMessage((from, data) => {
      at2.push(data[0]!);
      if (data[0] === 0) ts[1]!.send(from, Uint8Array.of(200)); // pong
    });
    let pongAt = 0;
    ts[0]!.onMessage(() => {
      pongAt = performance.now();
    });
    await Promise.all(ts.map((t) => t.start()));
    await waitFor(() => ts[0]!.isUp(2) && ts[1]!.isUp(1), 'links up');
    const t0 = performance.now();
    for (let k = 0; k < 50; k++) ts[0]!.send(2, Uint8Array.of(k));
    await waitFor(() => pongAt > 0 && at2.length === 50, 'pong and all 50 pings');
    expect(pongAt - t0).toBeGreaterThanOrEqual(2 * 20 - 1); // two one-way trips of at least 25 − 5 ms
    expect(at2).toEqual(Array.from({ length: 50 }, (_, k) => k));
  });

  async function pair(): Promise<Libp2pTransport[]> {
    const ids = await Promise.all([generateIdentity(), generateIdentity()]);
    const ports = await freePorts(2);
    const peers: PeerEntry[] = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: `/ip4/127.0.0.1/tcp/${ports[k]}` }));
    const ts = await Promise.all(ids.map((id, k) => createLibp2pTransport({
      self: k + 1, n: 2, privateKey: id.privateKey, listen: peers[k]!.addr, peers, redialMaxMs: 200,
    })));
    started.push(...ts);
    await Promise.all(ts.map((t) => t.start()));
    await waitFor(() => ts[0]!.isUp(2) && ts[1]!.isUp(1), 'links up');
    return ts;
  }

  it('setLinks() adds latency at run time to a link started without emulation, and takes it off again', async () => {
    const ts = await pair();
    const rtt = async (): Promise<number> => {
      let back = 0;
      ts[0]!.onMessage(() => {
        back = performance.now();
      });
      const t0 = performance.now();
      ts[0]!.send(2, Uint8Array.of(1));
      await waitFor(() => back > 0, 'pong');
      return back - t0;
    };
    ts[1]!.onMessage((from) => ts[1]!.send(from, Uint8Array.of(2)));
    expect(ts[0]!.setLinks({ latencyMs: 60 })).toEqual({ latencyMs: 60, jitterMs: 0, blockedPeers: [] });
    expect(await rtt()).toBeGreaterThanOrEqual(59); // only party 1 delays what it reads
    expect(ts[0]!.setLinks({ latencyMs: 0, bandwidthMbps: 100 })).toEqual({ latencyMs: 0, jitterMs: 0, bandwidthMbps: 100, blockedPeers: [] });
    expect(ts[0]!.setLinks({ bandwidthMbps: null })).toEqual({ latencyMs: 0, jitterMs: 0, blockedPeers: [] });
    expect(await rtt()).toBeLessThan(59);
  });

  it('setLinks() refuses a bad update whole: nothing changes', async () => {
    const ts = await pair();
    for (const bad of [{ blockedPeers: [1] }, { blockedPeers: [3] }, { blockedPeers: [2, 2] }, { blockedPeers: [1.5] }, { latencyMs: 5, jitterMs: 9, blockedPeers: [2] }, { latencyMs: -1 }]) {
      expect(() => ts[0]!.setLinks(bad)).toThrow(RangeError);
    }
    expect(ts[0]!.linkSettings()).toEqual({ latencyMs: 0, jitterMs: 0, blockedPeers: [] });
    expect(ts[0]!.isUp(2)).toBe(true);
  });

  it('a blocked peer is cut off both ways (down on both sides, nothing delivered) until healed, then the link comes back', async () => {
    const ts = await pair();
    const at1: number[] = [];
    const at2: number[] = [];
    ts[0]!.onMessage((_f, d) => at1.push(d[0]!));
    ts[1]!.onMessage((_f, d) => at2.push(d[0]!));
    const downs: string[] = [];
    ts[0]!.onPeer((p, up) => downs.push(`1 sees ${p} ${up ? 'up' : 'down'}`));
    ts[1]!.onPeer((p, up) => downs.push(`2 sees ${p} ${up ? 'up' : 'down'}`));
    expect(ts[0]!.setLinks({ blockedPeers: [2] }).blockedPeers).toEqual([2]);
    expect(ts[0]!.isUp(2)).toBe(false);
    // party 2 was told nothing: it finds out as from a dead peer, when the connection drops
    await waitFor(() => !ts[1]!.isUp(1), 'party 2 to see party 1 down');
    ts[1]!.send(1, Uint8Array.of(7));
    ts[0]!.send(2, Uint8Array.of(8));
    // party 2 keeps redialling (every 200 ms here): the cut party refuses it
    await new Promise((r) => setTimeout(r, 700));
    expect(ts[0]!.isUp(2) || ts[1]!.isUp(1)).toBe(false);
    expect([at1, at2]).toEqual([[], []]);
    ts[0]!.setLinks({ blockedPeers: [] });
    await waitFor(() => ts[0]!.isUp(2) && ts[1]!.isUp(1), 'the healed link up on both sides');
    // what each side queued for the other while the link was down goes out on the new stream, as after a restart
    await waitFor(() => at1.includes(7) && at2.includes(8), 'the messages queued during the cut');
    ts[1]!.send(1, Uint8Array.of(9));
    await waitFor(() => at1.includes(9), 'a message after healing');
    expect(downs.slice(0, 2).sort()).toEqual(['1 sees 2 down', '2 sees 1 down']);
    expect(downs.slice(2).sort()).toEqual(['1 sees 2 up', '2 sees 1 up']);
  });
});
