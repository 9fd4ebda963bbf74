import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createLibp2pTransport, generateIdentity, type PeerEntry } from '../src/index';
import { freePorts, pattern, waitFor } from './helpers';

const FIXTURE = fileURLToPath(new URL('./fixtures/party.ts', import.meta.url));

interface Report { type: string; from?: number; ok?: boolean; peer?: number; up?: boolean; error?: string }

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

describe('libp2p across OS processes', () => {
  it('3 child processes exchange messages all-to-all', async () => {
    const n = 3;
    const bytes = 100_000;
    const ids = await Promise.all(Array.from({ length: n }, () => generateIdentity()));
    const ports = await freePorts(n);
    const peers: PeerEntry[] = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: `/ip4/127.0.0.1/tcp/${ports[k]}` }));
    const reports: Report[][] = ids.map(() => []);
    const stderr: string[] = [];

    const done = new Promise<void>((resolve, reject) => {
      // Start-up (tsx compiling libp2p in each child) takes seconds on an idle host and far longer
      // on a loaded one: it gets its own bound, and the exchange its 20 s from the last child started.
      const fail = (what: string) => () => reject(new Error(`${what}; reports=${JSON.stringify(reports)} stderr=${stderr.join('')}`));
      let timer = setTimeout(fail('the children did not all start within 120 s'), 120_000);
      let exchanging = false;
      const check = (): void => {
        for (const r of reports) if (r.some((m) => m.type === 'error')) { clearTimeout(timer); reject(new Error(JSON.stringify(r))); return; }
        if (!exchanging && reports.every((r) => r.some((m) => m.type === 'started'))) {
          exchanging = true;
          clearTimeout(timer);
          timer = setTimeout(fail('cross-process exchange timed out 20 s after the last child started'), 20_000);
        }
        if (reports.every((r) => r.filter((m) => m.type === 'received').length === n - 1)) { clearTimeout(timer); resolve(); }
      };
      ids.forEach((id, k) => {
        const child = fork(FIXTURE, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
        children.push(child);
        child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
        child.on('message', (m: Report) => { reports[k]!.push(m); check(); });
        child.on('exit', (code) => { if (code !== 0 && code !== null) reject(new Error(`party ${k + 1} exited with ${code}: ${stderr.join('')}`)); });
        child.send({ type: 'config', config: { self: k + 1, n, privateKeyHex: Buffer.from(id.privateKey).toString('hex'), peers, bytes } });
      });
    });
    await done;

    for (let i = 1; i <= n; i++) {
      const got = reports[i - 1]!.filter((m) => m.type === 'received');
      expect(got.map((m) => m.from).sort()).toEqual([1, 2, 3].filter((j) => j !== i));
      expect(got.every((m) => m.ok === true)).toBe(true);
      expect(reports[i - 1]!.filter((m) => m.type === 'peer' && m.up).length).toBeGreaterThanOrEqual(n - 1);
    }
    // Orderly exit: every child stops its transport and exits 0.
    const exits = children.map((c) => new Promise<number | null>((r) => c.once('exit', (code) => r(code))));
    for (const c of children) c.send({ type: 'exit' });
    expect(await Promise.all(exits)).toEqual([0, 0, 0]);
  }, 180_000);
});

describe('a peer that stops reading', () => {
  it('has its stream reset after writeStallMs, and is redialled and written to once it reads again', async () => {
    const ids = await Promise.all([0, 1].map(() => generateIdentity()));
    const ports = await freePorts(2);
    const peers: PeerEntry[] = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: `/ip4/127.0.0.1/tcp/${ports[k]}` }));
    const reports: Report[] = [];
    const child = fork(FIXTURE, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    children.push(child);
    child.on('message', (m: Report) => reports.push(m));
    child.send({ type: 'config', config: { self: 2, n: 2, privateKeyHex: Buffer.from(ids[1]!.privateKey).toString('hex'), peers, bytes: 1000 } });

    const logs: string[] = [];
    const me = await createLibp2pTransport({
      self: 1, n: 2, privateKey: ids[0]!.privateKey, listen: peers[0]!.addr, peers, writeStallMs: 1000, dialTimeoutMs: 1000, redialMaxMs: 200,
      log: (msg) => logs.push(msg),
    });
    const ups: boolean[] = [];
    me.onPeer((_, up) => ups.push(up));
    await me.start();
    try {
      // the child's start-up (tsx) is slow on a loaded host; what is tested comes after
      await waitFor(() => me.isUp(2), 'the child to be up', 120_000);
      me.send(2, pattern(1, 2, 1000));
      await waitFor(() => reports.some((r) => r.type === 'received' && r.ok), 'the child to hear us', 20_000);
      // Stopped, the child reads nothing: the stream's window and the socket buffers fill and our
      // writer waits for a 'drain' that cannot come while it is stopped.
      child.kill('SIGSTOP');
      for (let i = 0; i < 16; i++) me.send(2, new Uint8Array(1 << 20));
      await waitFor(() => me.peerStats(2).stalledResets >= 1 && !me.isUp(2), 'the stalled stream to be reset', 10_000);
      expect(logs.some((l) => /made no progress for \d+ ms with \d+ messages queued/.test(l))).toBe(true);
      child.kill('SIGCONT');
      await waitFor(() => me.isUp(2), 'the child to be redialled', 20_000);
      const before = reports.filter((r) => r.type === 'received' && r.ok).length;
      me.send(2, pattern(1, 2, 1000));
      await waitFor(() => reports.filter((r) => r.type === 'received' && r.ok).length > before, 'a message after the redial', 20_000);
      expect(ups).toEqual([true, false, true]);
    } finally {
      child.kill('SIGCONT');
      await me.stop();
      child.kill('SIGKILL');
    }
  }, 240_000);
});
