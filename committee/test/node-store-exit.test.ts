// A committee node exits on a fatal error (a stale node, so that its supervisor restarts it) at any
// moment, including while a state write is in flight. With the write as an lmdb transaction(callback)
// the exit never returned: the write thread (a libuv pool thread) held the transaction waiting for
// the callback to run on the main thread, and process.exit joins the pool threads (seen in CI: the
// frozen-node test's node 5 logged "this node is stale" and then hung with its port open). The store
// now queues its writes with batch(), which the write thread runs alone. A node stale right after
// share recovery, while its recovered state was being written, still never ended after exit (the
// committee-restarts cluster test, 11-25; this fixture does not reproduce that), so a node's fatal error now ends it like kill -9
// (crash() of @tenebra/config) and never calls exit.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeStore } from '../src/node-store';

const FIXTURE = join(__dirname, 'fixtures', 'exit-mid-write.ts');

function runChild(dir: string, turns: number, how: 'exit' | 'fatal' = 'exit'): Promise<number | string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dir, String(turns), how], { stdio: ['ignore', 'pipe', 'ignore'] });
    // 'hung' is judged from the moment the child queues its write (it says so on stdout), not from
    // its spawn: under load 30-40 its start-up alone took longer than the 15 s
    const hung = (): void => {
      child.kill('SIGKILL');
      resolve('hung');
    };
    let timer = setTimeout(hung, 180_000);
    child.stdout!.on('data', (d: Buffer) => {
      if (!d.toString().includes('writing')) return;
      clearTimeout(timer);
      timer = setTimeout(hung, 15_000);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal ?? 'signal');
    });
  });
}

describe('node store: exiting while a write is in flight', () => {
  it('process.exit returns at every moment of a queued write, and the store opens afterwards', async () => {
    for (const turns of [0, 1, 2]) {
      const dir = mkdtempSync(join(tmpdir(), 'tenebra-exit-'));
      try {
        expect(await runChild(dir, turns), `exit after ${turns} event turns`).toBe(3);
        const store = new NodeStore(dir); // the write either landed whole or not at all
        const seq = store.lastSeq();
        expect([0n, 1n]).toContain(seq);
        if (seq === 1n) expect(store.chunk('c1')?.length).toBe(100_000);
        await store.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }, 600_000);

  it("a node's fatal error ends the process like kill -9 at every moment of a queued write, and the store opens afterwards", async () => {
    for (const turns of [0, 1, 2]) {
      const dir = mkdtempSync(join(tmpdir(), 'tenebra-exit-'));
      try {
        expect(await runChild(dir, turns, 'fatal'), `fatal after ${turns} event turns`).toBe('SIGKILL');
        const store = new NodeStore(dir);
        expect([0n, 1n]).toContain(store.lastSeq());
        await store.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }, 600_000);
});
