// A fatal error in the gateway process (an uncaught exception) while a store transaction is queued:
// with Node's default handling the process never ended (lmdb's write thread and exit() waited for
// each other; without the handler this fixture hung in 5 runs of 5 at one event turn), so a
// supervisor could not restart it. crashOnUncaught ends it like kill -9, and the
// store opens afterwards with the transaction applied whole or not at all.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayDb } from '../src/store/db';

const FIXTURE = join(__dirname, 'fixtures', 'fatal-mid-write.ts');

function runChild(dir: string, turns: number, guarded: boolean): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dir, String(turns), guarded ? '1' : '0'], { stdio: 'ignore' });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve('hung');
    }, 10_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ?? `code ${code}`);
    });
  });
}

describe('gateway process: a fatal error while a store write is queued', () => {
  it('crashOnUncaught ends the process at every moment of the write, and the store opens whole', async () => {
    for (const turns of [0, 1, 2]) {
      const dir = mkdtempSync(join(tmpdir(), 'tenebra-fatal-'));
      try {
        expect(await runChild(dir, turns, true), `crash after ${turns} event turns`).toBe('SIGKILL');
        const db = new GatewayDb(dir);
        const written = [0, 1999].map((i) => db.meta.get(`k${i}`));
        expect([[undefined, undefined], ['x'.repeat(100), 'x'.repeat(100)]]).toContainEqual(written);
        await db.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }, 60_000);
});
