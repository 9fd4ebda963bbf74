// The committee links over Unix domain sockets (unix-links.ts, docs/decisions/0041-unix-socket-links.md):
// the same transport (Noise, Yamux, the direct path, link emulation, cuts) on `/unix/<path>`
// addresses, and a party killed with SIGKILL, whose socket file stays behind, coming back on it.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  MAX_UNIX_SOCKET_PATH_BYTES, createLibp2pTransport, generateIdentity, prepareUnixListen, unixSocketMultiaddr, unixSocketPathOf,
  type Libp2pTransport, type PeerEntry,
} from '../src/index';
import { directReads } from '../src/direct-path';
import { pattern, waitFor } from './helpers';

const FIXTURE = fileURLToPath(new URL('./fixtures/party.ts', import.meta.url));

const dirs: string[] = [];
const started: Libp2pTransport[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((t) => t.stop()));
});
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function socketDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tenebra-unix-'));
  dirs.push(d);
  return d;
}

async function unixCluster(n: number, opts: { linkEmulation?: { latencyMs: number; jitterMs?: number } } = {}) {
  const dir = socketDir();
  const ids = await Promise.all(Array.from({ length: n }, () => generateIdentity()));
  const peers: PeerEntry[] = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: unixSocketMultiaddr(join(dir, `p${k + 1}.sock`)) }));
  const got: Array<Array<{ from: number; data: Uint8Array }>> = ids.map(() => []);
  const make = async (i: number): Promise<Libp2pTransport> => {
    const t = await createLibp2pTransport({ self: i, n, privateKey: ids[i - 1]!.privateKey, listen: peers[i - 1]!.addr, peers, redialMaxMs: 200, ...opts });
    t.onMessage((from, data) => got[i - 1]!.push({ from, data }));
    started.push(t);
    return t;
  };
  return { dir, ids, peers, got, make };
}

describe('unix socket addresses', () => {
  it('round-trip between a path and its multiaddr, with or without a peer id, and refuse what the OS would not take as given', () => {
    const addr = unixSocketMultiaddr('/tmp/tenebra x/node-1.sock');
    expect(addr).toBe('/unix/%2Ftmp%2Ftenebra%20x%2Fnode-1.sock');
    expect(unixSocketPathOf(addr)).toBe('/tmp/tenebra x/node-1.sock');
    expect(unixSocketPathOf(`${addr}/p2p/12D3KooWHZDeEmomynUcDESn4YpSv7o83dviFDLa9JfrFQm4my3g`)).toBe('/tmp/tenebra x/node-1.sock');
    expect(unixSocketPathOf('/ip4/127.0.0.1/tcp/7001')).toBeUndefined();
    expect(() => unixSocketMultiaddr('sockets/node-1.sock')).toThrow(/absolute/);
    // Node truncates a longer sun_path silently (it would listen on another file than peers dial)
    const longest = `/tmp/${'x'.repeat(MAX_UNIX_SOCKET_PATH_BYTES - 5)}`;
    expect(Buffer.byteLength(longest)).toBe(107);
    expect(unixSocketPathOf(unixSocketMultiaddr(longest))).toBe(longest);
    expect(() => unixSocketMultiaddr(`${longest}y`)).toThrow(/108 bytes is over the 107-byte limit/);
  });

  it('a socket file nobody listens on is removed before listening; a live one, or a path too long, refuses the start', async () => {
    const dir = socketDir();
    const stale = join(dir, 'stale.sock');
    // a process killed with SIGKILL leaves its socket file: make one the same way
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(stale)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    await new Promise<void>((res) => child.stdout!.once('data', () => res()));
    child.kill('SIGKILL');
    await new Promise((res) => child.once('exit', res));
    expect(lstatSync(stale).isSocket()).toBe(true);
    await prepareUnixListen(stale);
    expect(existsSync(stale)).toBe(false);
    // a missing folder is made
    await prepareUnixListen(join(dir, 'sub', 'a.sock'));
    expect(lstatSync(join(dir, 'sub')).isDirectory()).toBe(true);
    // a live socket stays, and the start is refused (as a TCP port in use would be)
    const live = join(dir, 'live.sock');
    const server = createServer();
    await new Promise<void>((res) => server.listen(live, res));
    try {
      await expect(prepareUnixListen(live)).rejects.toThrow(/another process listens/);
      const c = await unixCluster(2);
      const id = c.ids[0]!;
      const peers = [{ ...c.peers[0]!, addr: unixSocketMultiaddr(live) }, c.peers[1]!];
      const t = await createLibp2pTransport({ self: 1, n: 2, privateKey: id.privateKey, listen: peers[0]!.addr, peers });
      await expect(t.start()).rejects.toThrow(/another process listens/);
    } finally {
      await new Promise((res) => server.close(res));
    }
    // something that is not a socket is not ours to remove
    const file = join(dir, 'file.sock');
    writeFileSync(file, 'x');
    await prepareUnixListen(file);
    expect(existsSync(file)).toBe(true);
    await expect(prepareUnixListen(`/tmp/${'x'.repeat(200)}.sock`)).rejects.toThrow(/107-byte limit/);
  });

  it("a socket folder that is not this user's own private directory refuses the start, naming the folder", async () => {
    const dir = socketDir();
    // writable by everyone (a folder another local user made first under the temp directory)
    const open = join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    await expect(prepareUnixListen(join(open, 'a.sock'))).rejects.toThrow(/unix socket folder .*open is writable by its group or by everyone \(mode 777\)/);
    chmodSync(open, 0o720);
    await expect(prepareUnixListen(join(open, 'a.sock'))).rejects.toThrow(/writable by its group/);
    // a symlink to a folder elsewhere
    const real = join(dir, 'real');
    mkdirSync(real, { mode: 0o700 });
    const link = join(dir, 'link');
    symlinkSync(real, link);
    await expect(prepareUnixListen(join(link, 'a.sock'))).rejects.toThrow(/link is not a directory/);
    // someone else's folder (only root can make one to test with)
    if (process.getuid?.() === 0) {
      const theirs = join(dir, 'theirs');
      mkdirSync(theirs, { mode: 0o700 });
      chownSync(theirs, 12345, 12345);
      await expect(prepareUnixListen(join(theirs, 'a.sock'))).rejects.toThrow(/belongs to uid 12345/);
    }
    // this user's own 0700 folder is fine
    await prepareUnixListen(join(real, 'a.sock'));
  });
});

describe('libp2p transport over unix sockets', () => {
  it('3 parties exchange messages (incl. 200 KB) on the direct path, survive a stop/restart, and resume', async () => {
    const c = await unixCluster(3);
    const ts = [await c.make(1), await c.make(2), await c.make(3)];
    const before = { ...directReads };
    await Promise.all(ts.map((t) => t.start()));
    expect(ts[0]!.listenAddrs()).toEqual([`${c.peers[0]!.addr}/p2p/${c.ids[0]!.peerId}`]);
    for (const t of ts) for (let j = 1; j <= 3; j++) if (j !== t.self) {
      t.send(j, pattern(t.self, j, 100));
      t.send(j, pattern(t.self, j, 200_000));
    }
    await waitFor(() => c.got.every((g) => g.length === 4), 'all-to-all delivery');
    for (let i = 1; i <= 3; i++) {
      for (const m of c.got[i - 1]!) expect(Buffer.from(m.data).equals(Buffer.from(pattern(m.from, i, m.data.byteLength)))).toBe(true);
    }
    // the direct path (ADR 0034) applies over a pipe as over TCP: writes and reads skip the layers
    const s = ts[0]!.peerStats(2);
    expect(s.sentDirect).toBeGreaterThan(0);
    expect(directReads.tcp).toBeGreaterThan(before.tcp);
    expect(directReads.noise).toBeGreaterThan(before.noise);

    await ts[1]!.stop();
    await waitFor(() => !ts[0]!.isUp(2) && !ts[2]!.isUp(2), 'party 2 down');
    ts[0]!.send(2, pattern(1, 2, 10)); // waits in the queue
    for (const g of c.got) g.length = 0;
    const t2 = await c.make(2);
    await t2.start();
    await waitFor(() => t2.isUp(1) && t2.isUp(3) && ts[0]!.isUp(2) && ts[2]!.isUp(2), 'party 2 back');
    t2.send(1, pattern(2, 1, 70_000));
    await waitFor(() => c.got[0]!.some((m) => m.from === 2 && m.data.byteLength === 70_000), 'traffic from the restarted party');
    await waitFor(() => c.got[1]!.some((m) => m.from === 1 && m.data.byteLength === 10), 'the queued message flushed');
  });

  it('emulated latency and cut links apply as over TCP', async () => {
    const c = await unixCluster(2, { linkEmulation: { latencyMs: 25, jitterMs: 5 } });
    const ts = [await c.make(1), await c.make(2)];
    ts[1]!.onMessage((from, data) => { if (data[0] === 0) ts[1]!.send(from, Uint8Array.of(200)); });
    await Promise.all(ts.map((t) => t.start()));
    await waitFor(() => ts[0]!.isUp(2) && ts[1]!.isUp(1), 'links up');
    const t0 = performance.now();
    ts[0]!.send(2, Uint8Array.of(0));
    await waitFor(() => c.got[0]!.length === 1, 'pong');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(2 * 20 - 1); // two one-way trips of at least 25 − 5 ms
    ts[0]!.setLinks({ latencyMs: 0, jitterMs: 0, blockedPeers: [2] });
    await waitFor(() => !ts[0]!.isUp(2) && !ts[1]!.isUp(1), 'the cut seen on both sides');
    ts[0]!.setLinks({ blockedPeers: [] });
    await waitFor(() => ts[0]!.isUp(2) && ts[1]!.isUp(1), 'healed', 15_000);
    ts[0]!.send(2, Uint8Array.of(7));
    await waitFor(() => c.got[1]!.some((m) => m.data[0] === 7), 'traffic after the heal');
  });

  it('a party process killed with SIGKILL leaves its socket file; its next incarnation listens on it and the links come back', async () => {
    const c = await unixCluster(3);
    const ts = [await c.make(1), await c.make(2)];
    const bytes = 50_000;
    // each time party 3 comes up, 1 and 2 send it their pattern (the fixture checks the bytes)
    for (const t of ts) t.onPeer((p, up) => { if (p === 3 && up) t.send(3, pattern(t.self, 3, bytes)); });
    await Promise.all(ts.map((t) => t.start()));
    const path3 = unixSocketPathOf(c.peers[2]!.addr)!;
    const life = (): { child: ChildProcess; received: Promise<number[]> } => {
      const child = fork(FIXTURE, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      children.push(child);
      const received = new Promise<number[]>((resolve, reject) => {
        const from: number[] = [];
        child.on('message', (m: { type: string; from?: number; ok?: boolean; error?: string }) => {
          if (m.type === 'error') reject(new Error(m.error));
          if (m.type === 'received') {
            if (!m.ok) reject(new Error(`party 3 got bad bytes from ${m.from}`));
            from.push(m.from!);
            if (from.length === 2) resolve(from.sort());
          }
        });
      });
      child.send({ type: 'config', config: { self: 3, n: 3, privateKeyHex: Buffer.from(c.ids[2]!.privateKey).toString('hex'), peers: c.peers, bytes } });
      return { child, received };
    };
    const first = life();
    expect(await first.received).toEqual([1, 2]);
    await waitFor(() => c.got[0]!.some((m) => m.from === 3) && c.got[1]!.some((m) => m.from === 3), 'party 3 heard', 60_000);
    first.child.kill('SIGKILL');
    await new Promise((res) => first.child.once('exit', res));
    await waitFor(() => !ts[0]!.isUp(3) && !ts[1]!.isUp(3), 'party 3 seen down');
    expect(lstatSync(path3).isSocket()).toBe(true); // left behind: nothing unlinked it
    for (const g of c.got) g.length = 0;
    const second = life();
    expect(await second.received).toEqual([1, 2]);
    await waitFor(() => c.got[0]!.some((m) => m.from === 3) && c.got[1]!.some((m) => m.from === 3), 'the new party 3 heard', 60_000);
    for (const [k, g] of c.got.entries()) for (const m of g) expect(Buffer.from(m.data).equals(Buffer.from(pattern(3, k + 1, bytes)))).toBe(true);
    second.child.kill('SIGKILL');
  }, 240_000);
});
