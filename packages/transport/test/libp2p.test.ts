import { afterEach, describe, expect, it } from 'vitest';
import {
  createLibp2pTransport, generateIdentity, peerIdFromPrivateKey, type Libp2pTransport, type PeerEntry,
} from '../src/index';
import { freePorts, pattern, waitFor } from './helpers';

type Got = Array<{ from: number; data: Uint8Array }>;

const started: Libp2pTransport[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((t) => t.stop()));
});

async function cluster(n: number) {
  const ids = await Promise.all(Array.from({ length: n }, () => generateIdentity()));
  const ports = await freePorts(n);
  const peers: PeerEntry[] = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: `/ip4/127.0.0.1/tcp/${ports[k]}` }));
  const got: Got[] = ids.map(() => []);
  const events: string[][] = ids.map(() => []);
  const make = async (i: number, opts: { redialAfterDropMs?: number } = {}): Promise<Libp2pTransport> => {
    const t = await createLibp2pTransport({ self: i, n, privateKey: ids[i - 1]!.privateKey, listen: peers[i - 1]!.addr, peers, ...opts });
    t.onMessage((from, data) => got[i - 1]!.push({ from, data }));
    t.onPeer((p, up) => events[i - 1]!.push(`${p}:${up ? 'up' : 'down'}`));
    started.push(t);
    return t;
  };
  return { ids, peers, got, events, make };
}

describe('libp2p transport', () => {
  it('identity: peer id round-trips from the persisted private key', async () => {
    const id = await generateIdentity();
    expect(await peerIdFromPrivateKey(id.privateKey)).toBe(id.peerId);
    expect(id.peerId.startsWith('12D3KooW')).toBe(true);
  });

  it('rejects a peer list whose own entry does not match the key', async () => {
    const a = await generateIdentity();
    const b = await generateIdentity();
    const peers = [{ index: 1, peerId: b.peerId, addr: '/ip4/127.0.0.1/tcp/1' }, { index: 2, peerId: a.peerId, addr: '/ip4/127.0.0.1/tcp/2' }];
    await expect(createLibp2pTransport({ self: 1, n: 2, privateKey: a.privateKey, listen: '/ip4/127.0.0.1/tcp/0', peers })).rejects.toThrow(/private key gives/);
  });

  it('many small messages, one event-loop turn apart, pass several yamux windows (window updates sent lazily)', async () => {
    const c = await cluster(2);
    const ts = [await c.make(1), await c.make(2)];
    await Promise.all(ts.map((t) => t.start()));
    await waitFor(() => ts[0]!.isUp(2) && ts[1]!.isUp(1), 'links up');
    // 3000 x 600 B = 1.8 MB, about 7 initial receive windows of 256 KB: stalls if updates stopped.
    for (let k = 0; k < 3000; k++) {
      ts[0]!.send(2, pattern(1, 2, 600));
      if (k % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await waitFor(() => c.got[1]!.length === 3000, 'all 3000 delivered');
    expect(c.got[1]!.every((m) => m.data.byteLength === 600)).toBe(true);
  });

  it('3 parties exchange messages (incl. 200 KB), survive a stop/restart, and resume', async () => {
    const c = await cluster(3);
    const ts = [await c.make(1), await c.make(2), await c.make(3)];
    await Promise.all(ts.map((t) => t.start()));
    // Sent before links are up: queued, then flushed when the stream opens.
    for (const t of ts) for (let j = 1; j <= 3; j++) if (j !== t.self) {
      t.send(j, pattern(t.self, j, 100));
      t.send(j, pattern(t.self, j, 200_000));
    }
    await waitFor(() => c.got.every((g) => g.length === 4), 'all-to-all delivery');
    for (let i = 1; i <= 3; i++) {
      for (const m of c.got[i - 1]!) {
        expect(m.data.byteLength === 100 || m.data.byteLength === 200_000).toBe(true);
        expect(Buffer.from(m.data).equals(Buffer.from(pattern(m.from, i, m.data.byteLength)))).toBe(true);
      }
      expect(new Set(c.got[i - 1]!.map((m) => m.from))).toEqual(new Set([1, 2, 3].filter((j) => j !== i)));
    }
    expect(ts[0]!.isUp(2) && ts[0]!.isUp(3) && ts[1]!.isUp(1)).toBe(true);
    expect(ts[0]!.peerStats(2).sentMessages).toBe(2);

    // Self-send is delivered locally.
    ts[0]!.send(1, Uint8Array.of(42));
    await waitFor(() => c.got[0]!.some((m) => m.from === 1), 'self delivery');

    // Stop party 2: the others see it go down.
    await ts[1]!.stop();
    await waitFor(() => c.events[0]!.includes('2:down') && c.events[2]!.includes('2:down'), 'down events');
    expect(ts[0]!.isUp(2)).toBe(false);
    // Sending to a down peer never throws; the message waits in the bounded queue.
    ts[0]!.send(2, pattern(1, 2, 10));

    // Restart party 2 with the same identity and address.
    for (const g of c.got) g.length = 0;
    const t2 = await c.make(2);
    await t2.start();
    await waitFor(() => c.events[0]!.filter((e) => e === '2:up').length === 2 && c.events[2]!.filter((e) => e === '2:up').length === 2, 'up events after restart');
    await waitFor(() => t2.isUp(1) && t2.isUp(3), 'restarted party sees peers');
    t2.send(1, pattern(2, 1, 70_000));
    ts[2]!.send(2, pattern(3, 2, 5));
    await waitFor(() => c.got[0]!.some((m) => m.from === 2 && m.data.byteLength === 70_000), 'traffic from restarted party');
    await waitFor(() => c.got[1]!.some((m) => m.from === 3), 'traffic to restarted party');
    // The message queued while 2 was down was delivered to the new incarnation.
    await waitFor(() => c.got[1]!.some((m) => m.from === 1 && m.data.byteLength === 10), 'queued message flushed');
  });

  it('after a peer drops, holds off redialling until the hold-off ends or the peer dials back', async () => {
    const c = await cluster(2);
    // a hold-off far longer than the test waits: only the peer's own dial can bring the link back
    const t1 = await c.make(1, { redialAfterDropMs: 60_000 });
    const t2 = await c.make(2);
    await Promise.all([t1.start(), t2.start()]);
    await waitFor(() => t1.isUp(2) && t2.isUp(1), 'links up');
    const dialsBefore = t1.peerStats(2).dialAttempts;
    expect(dialsBefore).toBeGreaterThanOrEqual(1);
    await t2.stop();
    await waitFor(() => c.events[0]!.includes('2:down'), 'down event');
    // with the defaults' 50 ms backoff this window would hold several refused dials
    await new Promise((r) => setTimeout(r, 500));
    expect(t1.peerStats(2).dialAttempts).toBe(dialsBefore);
    expect(t1.isUp(2)).toBe(false);
    // the peer comes back and dials us: that wakes our dial loop long before the hold-off ends
    const t2b = await c.make(2);
    await t2b.start();
    await waitFor(() => t1.isUp(2) && t2b.isUp(1), 'link back up, both ways', 15_000);
    expect(t1.peerStats(2).dialAttempts).toBe(dialsBefore + 1);
    t1.send(2, pattern(1, 2, 64));
    await waitFor(() => c.got[1]!.some((m) => m.from === 1 && m.data.byteLength === 64), 'traffic after the redial');
  });

  it('refuses connections from peer ids not in its list', async () => {
    const c = await cluster(2);
    const t1 = await c.make(1);
    await t1.start();
    // An intruder that lists party 1's real identity and address, but is not in party 1's list.
    const intruder = await generateIdentity();
    const [port] = await freePorts(1);
    const peers: PeerEntry[] = [c.peers[0]!, { index: 2, peerId: intruder.peerId, addr: `/ip4/127.0.0.1/tcp/${port}` }];
    const bad = await createLibp2pTransport({ self: 2, n: 2, privateKey: intruder.privateKey, listen: peers[1]!.addr, peers, redialMinMs: 20, redialMaxMs: 40 });
    started.push(bad);
    await bad.start();
    bad.send(1, Uint8Array.of(1, 2, 3));
    // Give it many redial attempts; none may succeed.
    await new Promise((r) => setTimeout(r, 600));
    expect(bad.isUp(1)).toBe(false);
    expect(bad.peerStats(1).connects).toBe(0);
    expect(c.got[0]!.length).toBe(0);
  });
});
