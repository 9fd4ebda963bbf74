// Clearing's transaction gives way to requests' transactions queued behind it (ADR 0008, hadmit2):
// lmdb-js adds a txAsync to the last queued, not yet started transaction, so without this a
// placement queued while a clearing batch waits for the writer commits only after clearing's callback.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { JOB_END_KIND } from '@tenebra/wire';
import { GatewayDb } from '../src/store/db';
import { Clearing, CURSOR_KEY, type Decision } from '../src/results/clearing';
import { systemClock } from '../src/clock';
import type { InstrumentRegistry } from '../src/instruments';

const dirs: string[] = [];
const dbs: GatewayDb[] = [];
function freshDb(): GatewayDb {
  const dir = mkdtempSync(join(tmpdir(), 'tenebra-yield-'));
  dirs.push(dir);
  const db = new GatewayDb(dir);
  dbs.push(db);
  return db;
}
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
const jobEnds = (from: bigint, n: number): Decision[] => Array.from({ length: n }, (_, i) => ({ seq: from + BigInt(i), pub: { kind: JOB_END_KIND }, values: [] }));

describe('clearing gives way to admissions', () => {
  it('an admission queued while a clearing batch waits commits before the batch is applied, and the batch still commits whole', async () => {
    const db = freshDb();
    const clearing = new Clearing(db, {} as InstrumentRegistry, systemClock(), pino({ level: 'silent' }));
    let yields = 0;
    const batch = clearing.applyBatch(jobEnds(1n, 8), () => yields++);
    await turn(); // clearing's transaction is queued and has not started
    let cursorSeen: unknown;
    const admitted = db.txAsync(() => {
      cursorSeen = db.meta.get(CURSOR_KEY);
      db.meta.putSync('admitted', 1);
    });
    let batchDone = false;
    void batch.then(() => { batchDone = true; });
    await admitted;
    expect(cursorSeen).toBeUndefined(); // clearing's callback had not run when the admission's did
    expect(batchDone).toBe(false); // and the admission did not wait for the batch's commit
    await batch;
    expect(yields).toBeGreaterThanOrEqual(1);
    expect(db.meta.get(CURSOR_KEY)).toBe('9');
    expect(clearing.cursor()).toBe(9n);
  });

  it('gives way at most a bounded number of times, so admissions cannot starve clearing', async () => {
    const db = freshDb();
    let yields = 0;
    let ran = false;
    const bg = db.txAsyncBackground(() => { ran = true; db.meta.putSync('bg', 1); return 7; }, 2, () => yields++);
    // an admission in every turn, each queued while the background transaction waits
    let stop = false;
    const stream = (async () => {
      for (let i = 0; i < 50 && !stop; i++) {
        await turn();
        void db.txAsync(() => db.meta.putSync(`a${i}`, i));
      }
    })();
    expect(await bg).toBe(7);
    stop = true;
    await stream;
    expect(ran).toBe(true);
    expect(yields).toBeLessThanOrEqual(2);
  });

  it('a background transaction that throws writes nothing and rejects', async () => {
    const db = freshDb();
    await expect(db.txAsyncBackground(() => { db.meta.putSync('x', 1); throw new Error('boom'); })).rejects.toThrow('boom');
    expect(db.meta.get('x')).toBeUndefined();
  });
});
