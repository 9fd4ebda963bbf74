// Exchange: per-symbol sequencing, bounded queues, unknown symbols, poisoned books.
import { describe, expect, it } from 'vitest';
import type { Arith } from '../src/backend';
import { Exchange, QueueFullError } from '../src/exchange';
import { PlaintextBackend } from '../src/plaintext';
import { Book } from '../src/book';
import { CountingRecorder } from '../src/leaks';
import type { PlaceOp } from '../src/types';

const order = (symbol: string, seq: bigint, side: 'buy' | 'sell', price: bigint, qty: bigint): PlaceOp<bigint> => ({
  kind: 'place', symbol, orderId: `${symbol}-${seq}`, seq, side, type: 'limit', tif: 'GTC', price, qty,
});

describe('Exchange', () => {
  it('operations on one symbol complete in submission order even when submitted at once', async () => {
    const ex = new Exchange(new PlaintextBackend());
    const done: string[] = [];
    const ps = [order('A', 1n, 'sell', 10n, 1n), order('A', 2n, 'sell', 9n, 1n), order('A', 3n, 'buy', 10n, 2n), order('B', 4n, 'buy', 1n, 1n)].map((op) =>
      ex.apply(op).then((r) => {
        done.push(op.orderId);
        return r;
      }),
    );
    const rs = await Promise.all(ps);
    expect(rs[2]!.outcome).toMatchObject({ fills: ['A-2', 'A-1'], takerFilled: true });
    expect(done.filter((d) => d.startsWith('A'))).toEqual(['A-1', 'A-2', 'A-3']);
  });

  it('per-operation matching options override the exchange\'s: same results, the overriding rank search', async () => {
    const run = async (override?: { searchArity: number }) => {
      const rec = new CountingRecorder();
      const ex = new Exchange(new PlaintextBackend({ recorder: rec }), { searchArity: 4 });
      const out = [];
      // 40 bids at distinct prices, then each new bid rests somewhere inside the side
      for (let i = 0; i < 60; i++) out.push((await ex.apply(order('A', BigInt(i + 1), 'buy', BigInt(1000 + ((i * 37) % 97)), 1n), undefined, override)).outcome);
      return { out, ranks: rec.counts.get('insert-rank')?.total ?? 0, book: ex.book('A')!.toSnapshot() };
    };
    const four = await run();
    const two = await run({ searchArity: 2 });
    expect(two.out).toEqual(four.out);
    expect(two.book).toEqual(four.book);
    expect(two.ranks).toBeLessThan(four.ranks); // binary search: fewer comparisons, more steps
  });

  it('unknown symbols are rejected when a symbol list is given', async () => {
    const ex = new Exchange(new PlaintextBackend(), { symbols: ['A'] });
    const r = await ex.apply(order('Z', 1n, 'buy', 1n, 1n));
    expect(r.outcome).toMatchObject({ reject: { reason: 'UNKNOWN_SYMBOL' } });
    expect(ex.symbols()).toEqual(['A']);
  });

  it('a full queue throws QueueFullError instead of growing', async () => {
    const ex = new Exchange(new PlaintextBackend(), { maxPendingPerSymbol: 3 });
    const ps = [1n, 2n, 3n].map((s) => ex.apply(order('A', s, 'buy', 1n, 1n)));
    await expect(ex.apply(order('A', 4n, 'buy', 1n, 1n))).rejects.toBeInstanceOf(QueueFullError);
    await Promise.all(ps);
    await expect(ex.apply(order('A', 5n, 'buy', 1n, 1n))).resolves.toBeDefined();
  });

  it('an engine failure mid-operation poisons only that book', async () => {
    const base = new PlaintextBackend();
    let fail = false;
    const flaky: Arith<bigint> = Object.assign(Object.create(base) as PlaintextBackend, {
      le: (a: bigint, b: bigint) => (fail ? Promise.reject(new Error('quorum lost')) : base.le(a, b)),
    });
    const ex = new Exchange<bigint>(flaky);
    await ex.apply(order('A', 1n, 'sell', 10n, 1n));
    await ex.apply(order('B', 2n, 'sell', 10n, 1n));
    fail = true;
    await expect(ex.apply(order('A', 3n, 'buy', 10n, 1n))).rejects.toThrow(/quorum lost/);
    fail = false;
    await expect(ex.apply(order('A', 4n, 'buy', 10n, 1n))).rejects.toThrow(/unusable/);
    await expect(ex.apply(order('B', 5n, 'buy', 10n, 1n))).resolves.toMatchObject({ outcome: { fills: ['B-2'] } });
  });

  it('arith can be overridden per operation (one MPC job per batch)', async () => {
    const a = new PlaintextBackend();
    const b = new PlaintextBackend();
    const ex = new Exchange(a);
    await ex.apply(order('A', 1n, 'sell', 10n, 1n));
    await ex.apply(order('A', 2n, 'buy', 10n, 1n), b);
    expect((a.recorder as unknown as { records: unknown[] }).records).toHaveLength(0);
    expect((b.recorder as unknown as { records: unknown[] }).records).toHaveLength(3);
  });

  it('an expire that removes nothing still marks the book whose clock it moved: a book reloaded from what was saved decides a later GTT alike (seeded chaos, seed 8)', async () => {
    // the committee saves only the books takeDirty() names; a node that reloads its books (after a
    // restart or a failed job) must then see the same clock as one that kept them in memory
    const ex = new Exchange(new PlaintextBackend(), { symbols: ['A'] });
    await ex.apply({ ...order('A', 1n, 'sell', 10n, 1n), nowNs: 40n });
    ex.takeDirty();
    const saved = new Map<string, ReturnType<Book<bigint>['toSnapshot']>>([['A', ex.book('A')!.toSnapshot()]]);
    await ex.apply({ kind: 'expire', nowNs: 46n, seq: 2n });
    for (const s of ex.takeDirty()) saved.set(s, ex.book(s)!.toSnapshot());
    const snap = saved.get('A')!;
    expect(snap.pub.clockNs).toBe('46');
    const reloaded = new Exchange(new PlaintextBackend(), { symbols: ['A'] });
    reloaded.restoreBook(Book.fromSnapshot(snap.pub, snap.secrets));
    // a GTT whose expiry is already past the book's clock: expired at once in both
    const gtt: PlaceOp<bigint> = { ...order('A', 3n, 'buy', 10n, 1n), nowNs: 47n, tif: 'GTT', expiresAtNs: 45n };
    const [a, b] = [await ex.apply(gtt), await reloaded.apply(gtt)];
    expect(b.outcome).toEqual(a.outcome);
    expect(reloaded.book('A')!.toSnapshot()).toEqual(ex.book('A')!.toSnapshot());
  });
});
