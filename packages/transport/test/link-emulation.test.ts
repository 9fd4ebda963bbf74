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
});
