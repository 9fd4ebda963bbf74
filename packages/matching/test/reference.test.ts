// The algorithm (on the plaintext backend) against the independent naive reference matcher: every
// operation's result, the final books and every order's state must agree exactly.
import { describe, expect, it } from 'vitest';
import { generateStream } from '../src/stream';
import type { Op } from '../src/types';
import { bookRows, OrderTracker, runPlain } from './harness';
import { ReferenceMatcher } from './reference';

async function agree(ops: Op<bigint>[], concurrent: boolean, maxDepth?: number): Promise<{ fills: number; rested: number }> {
  const ref = new ReferenceMatcher(maxDepth);
  const refResults = ops.map((op) => ref.apply(op));
  const run = await runPlain(ops, { concurrent, ...(maxDepth !== undefined ? { maxDepth } : {}) });
  for (let i = 0; i < ops.length; i += 1) {
    // Compare one at a time so a failure names the first diverging operation.
    expect({ i, op: ops[i], r: run.results[i] }).toEqual({ i, op: ops[i], r: refResults[i] });
  }
  const symbols = new Set([...ref.books.keys(), ...run.exchange.symbols()]);
  for (const s of symbols) {
    const book = run.exchange.book(s);
    book?.checkInvariants();
    expect(bookRows(book, run.value)).toEqual(ref.rows(s));
  }
  const tracker = new OrderTracker();
  ops.forEach((op, i) => tracker.apply(op, run.results[i]!));
  expect(tracker.states).toEqual(ref.states);
  return {
    fills: refResults.reduce((n, r) => n + r.fills.length, 0),
    rested: [...symbols].reduce((n, s) => n + ref.rows(s).length, 0),
  };
}

describe('algorithm agrees with the naive reference', () => {
  it('issue-3 streams (limit GTC/IOC, cancel): 12 seeds × 3,000 ops, 3 symbols', async () => {
    let fills = 0;
    for (let seed = 1; seed <= 12; seed += 1) {
      const ops = generateStream({ seed, orders: 3000, symbols: 3, accounts: 30 });
      fills += (await agree(ops, seed % 2 === 0)).fills;
    }
    expect(fills).toBeGreaterThan(5000); // the streams really trade
  });

  it('full streams (market, FOK, GTT, peg, aon, min_fill, modify, expire, STP): 10 seeds × 2,500 ops', async () => {
    for (let seed = 100; seed < 110; seed += 1) {
      const ops = generateStream({ seed, orders: 2500, symbols: 2, accounts: 8, features: 'all' });
      const kinds = new Set(ops.map((o) => o.kind));
      expect(kinds).toEqual(new Set(['place', 'cancel', 'modify', 'expire']));
      await agree(ops, seed % 2 === 1);
    }
  });

  it('tight prices and tiny sizes (many equal prices, many exact fills)', async () => {
    for (let seed = 200; seed < 206; seed += 1) {
      const ops = generateStream({ seed, orders: 2000, symbols: 1, spreadTicks: 3, maxQty: 4, features: seed % 2 ? 'all' : 'limit' });
      await agree(ops, false);
    }
  });

  it('a small depth cap rejects resting orders once the book is full', async () => {
    const ops = generateStream({ seed: 7, orders: 1500, symbols: 1, spreadTicks: 200 });
    const r = await agree(ops, false, 40);
    expect(r.rested).toBeLessThanOrEqual(40);
  });
});
