// A book persisted mid-stream and recovered (plaintext, and MPC shares through sharesOf/fromShares)
// continues exactly as if it had never stopped.
import { describe, expect, it } from 'vitest';
import type { Sec } from '@tenebra/mpc';
import { Book } from '../src/book';
import { Exchange } from '../src/exchange';
import type { ExchangeSnapshotPub } from '../src/exchange';
import { TranscriptRecorder } from '../src/leaks';
import { MpcBackend } from '../src/mpc-backend';
import { PlaintextBackend } from '../src/plaintext';
import { generateStream, mapOp } from '../src/stream';
import { bookRows, plainResult, runPlain } from './harness';
import { IdealJobContext } from './ideal-context';

const ops = generateStream({ seed: 31, orders: 2400, symbols: 3, accounts: 6, features: 'all' });
const cut = 1300;

describe('book snapshots', () => {
  it('plaintext: snapshot → JSON → restore → continue equals the uninterrupted run', async () => {
    const whole = await runPlain(ops);
    const first = await runPlain(ops.slice(0, cut));
    const snap = first.exchange.toSnapshot();
    const pub = JSON.parse(JSON.stringify(snap.pub)) as ExchangeSnapshotPub; // must survive JSON
    const rec = new TranscriptRecorder();
    const restored = Exchange.fromSnapshot(new PlaintextBackend({ recorder: rec }), pub, snap.secrets);
    const rest = [];
    for (const op of ops.slice(cut)) rest.push(plainResult(await restored.apply(op), (v) => v));
    expect([...first.results, ...rest]).toEqual(whole.results);
    expect([...first.transcript.records, ...rec.records]).toEqual(whole.transcript.records);
    for (const s of whole.exchange.symbols()) expect(bookRows(restored.book(s), (v) => v)).toEqual(bookRows(whole.exchange.book(s), (v) => v));
    expect(restored.toSnapshot()).toEqual(whole.exchange.toSnapshot());
  });

  it('MPC: secrets persisted as shares and recovered with fromShares give the same continuation', async () => {
    const whole = await runPlain(ops);
    const ctx = new IdealJobContext();
    const arith = new MpcBackend(ctx);
    const ex = new Exchange<Sec>(arith);
    for (const op of ops.slice(0, cut)) await ex.apply(mapOp(op, (v) => ctx.fromShares([v])));
    const snap = ex.toSnapshot();
    const stored = arith.sharesOf(snap.secrets); // what a node writes to disk
    const ctx2 = new IdealJobContext();
    const arith2 = new MpcBackend(ctx2);
    const restored = Exchange.fromSnapshot(arith2, JSON.parse(JSON.stringify(snap.pub)) as ExchangeSnapshotPub, arith2.fromShares(stored));
    const rest = [];
    for (const op of ops.slice(cut)) rest.push(plainResult(await restored.apply(mapOp(op, (v) => ctx2.fromShares([v]))), IdealJobContext.value));
    expect(rest).toEqual(whole.results.slice(cut));
    const final = restored.toSnapshot();
    const want = whole.exchange.toSnapshot();
    expect(final.pub).toEqual(want.pub);
    expect(final.secrets.map(IdealJobContext.value)).toEqual(want.secrets);
  });

  it('secret order is deterministic and checked against the structure', () => {
    const b = new Book<bigint>('X');
    b.noteSeq(1n);
    b.insertAt({ orderId: 'a', seq: 1n, side: 'buy', type: 'limit', tif: 'GTC', expiresAtNs: null, price: 10n, qty: 2n, owner: 7n }, 0);
    b.noteSeq(2n);
    b.insertAt({ orderId: 'b', seq: 2n, side: 'sell', type: 'peg', tif: 'GTT', expiresAtNs: 99n, price: 11n, qty: 3n, owner: null }, 0);
    const snap = b.toSnapshot();
    expect(snap.secrets).toEqual([10n, 2n, 7n, 11n, 3n]);
    expect(() => Book.fromSnapshot(snap.pub, snap.secrets.slice(1))).toThrow(/extra secrets|too few/);
    expect(() => Book.fromSnapshot(snap.pub, [...snap.secrets, 1n])).toThrow(/extra secrets/);
    const back = Book.fromSnapshot(snap.pub, snap.secrets);
    expect(back.toSnapshot()).toEqual(snap);
    expect(back.expire(99n)).toEqual(['b']);
  });
});

describe('books in the MPC store (ideal JobContext test double)', () => {
  it('jobs of 40 ops save touched books; a node rebuilt from the store continues identically; a failed job leaves the store as it was', async () => {
    const { saveBook, loadBook, storedBookSymbols } = await import('../src/mpc-store');
    const whole = await runPlain(ops);
    const ctx = new IdealJobContext();
    const ex = new Exchange<Sec>(new MpcBackend(ctx));
    const jobs = 20;
    for (let j = 0; j < jobs; j += 1) {
      const arith = new MpcBackend(ctx); // one backend per job
      for (const op of ops.slice(j * 40, (j + 1) * 40)) await ex.apply(mapOp(op, (v) => ctx.fromShares([v])), arith);
      for (const s of ex.takeDirty()) saveBook(ctx, ex.book(s)!);
      ctx.commit();
    }
    // A job whose writes are aborted: the store keeps the state after job `jobs - 1`.
    for (const s of ex.symbols()) ex.book(s)!.expire(1n << 80n);
    for (const s of ex.symbols()) saveBook(ctx, ex.book(s)!);
    ctx.abort();

    const fresh = new Exchange<Sec>(new MpcBackend(ctx));
    for (const s of storedBookSymbols(ctx)) fresh.restoreBook(loadBook(ctx, s)!);
    const rest = [];
    for (const op of ops.slice(jobs * 40)) rest.push(plainResult(await fresh.apply(mapOp(op, (v) => ctx.fromShares([v]))), IdealJobContext.value));
    expect(rest).toEqual(whole.results.slice(jobs * 40));
    expect(fresh.symbols().sort()).toEqual(whole.exchange.symbols().sort());
    for (const s of whole.exchange.symbols()) {
      expect(bookRows(fresh.book(s), IdealJobContext.value)).toEqual(bookRows(whole.exchange.book(s), (v) => v));
    }
  });
});
