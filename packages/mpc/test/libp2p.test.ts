// Five OS processes, one party each, over real libp2p (TCP + Noise + Yamux) on 127.0.0.1.
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generateIdentity, type PeerEntry } from '@tenebra/transport';
import * as F from '../src/field';
import { shareSecret } from '../src/shamir';

const FIXTURE = fileURLToPath(new URL('./fixtures/party.ts', import.meta.url));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

async function freePorts(k: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: k }, () => new Promise<import('node:net').Server>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => resolve(s));
  })));
  const ports = servers.map((s) => (s.address() as import('node:net').AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

describe('MPC across 5 OS processes over libp2p', () => {
  it('committee preprocessing, multiplications and comparisons give the plaintext results', async () => {
    const n = 5;
    const t = 2;
    const xs = [3n, -5n, (1n << 48n) - 1n, 0n, 17n];
    const ys = [4n, -5n, -((1n << 48n) - 1n), 0n, -17n];
    const sx = shareSecret(xs.map(F.fromSigned), n, t);
    const sy = shareSecret(ys.map(F.fromSigned), n, t);
    const ids = await Promise.all(Array.from({ length: n }, () => generateIdentity()));
    const ports = await freePorts(n);
    const peers: PeerEntry[] = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: `/ip4/127.0.0.1/tcp/${ports[k]}` }));
    const stderr: string[] = [];
    const results = new Map<number, string[]>();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out; results from ${[...results.keys()]}; stderr: ${stderr.join('').slice(-2000)}`)), 50_000);
      ids.forEach((id, k) => {
        const child = fork(FIXTURE, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
        children.push(child);
        child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
        child.on('message', (m: { type: string; self?: number; values?: string[]; error?: string }) => {
          if (m.type === 'error') { clearTimeout(timer); reject(new Error(`party ${k + 1}: ${m.error}`)); return; }
          if (m.type === 'result') {
            results.set(m.self!, m.values!);
            if (results.size === n) { clearTimeout(timer); resolve(); }
          }
        });
        child.send({ type: 'config', config: { self: k + 1, n, t, privateKeyHex: Buffer.from(id.privateKey).toString('hex'), peers, x: sx[k]!.map(String), y: sy[k]!.map(String) } });
      });
    });
    const want = [...xs.map((x, i) => x * ys[i]!), ...xs.map((x, i) => (x < ys[i]! ? 1n : 0n)), ...xs.map((x, i) => (x === ys[i]! ? 1n : 0n))];
    for (let i = 1; i <= n; i++) expect(results.get(i)!.map((v) => F.toSigned(BigInt(v)))).toEqual(want);
    const exits = children.map((c) => new Promise<number | null>((r) => c.once('exit', (code) => r(code))));
    for (const c of children) c.send({ type: 'exit' });
    expect(await Promise.all(exits)).toEqual([0, 0, 0, 0, 0]);
  });
});
