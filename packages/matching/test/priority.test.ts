// Price-time priority edge cases on the plaintext backend, with the exact reveals each one makes.
import { describe, expect, it } from 'vitest';
import { Scenario } from './helpers';

describe('price-time priority', () => {
  it('empty book: a crossing-priced order rests without any cross test', async () => {
    const s = new Scenario();
    const r = await s.place('buy', 100n, 5n);
    expect(r).toMatchObject({ fills: [], rested: true, takerFilled: false, cancelReason: null });
    expect(s.leaks()).toEqual([]); // empty opposite side, empty own side: nothing to reveal
    expect(s.rows()).toEqual(['buy o1 px=100 qty=5']);
  });

  it('equal prices keep time order: a later order rests behind, and the earlier fills first', async () => {
    const s = new Scenario();
    await s.place('sell', 101n, 3n); // o1
    await s.place('sell', 101n, 4n); // o2
    await s.place('sell', 100n, 2n); // o3 best
    await s.place('sell', 101n, 1n); // o4 behind o1, o2
    expect(s.rows()).toEqual(['sell o3 px=100 qty=2', 'sell o1 px=101 qty=3', 'sell o2 px=101 qty=4', 'sell o4 px=101 qty=1']);
    s.leaks();
    const r = await s.place('buy', 101n, 6n);
    expect(r.fills).toEqual([
      { maker: 'o3', qty: 2n, price: 100n },
      { maker: 'o1', qty: 3n, price: 101n },
      { maker: 'o2', qty: 1n, price: 101n },
    ]);
    expect(r.takerFilled).toBe(true);
    expect(s.rows()).toEqual(['sell o2 px=101 qty=3', 'sell o4 px=101 qty=1']);
    expect(s.leaks()).toEqual([
      'cross=1', 'maker-exhausted=1', 'taker-exhausted=0',
      'cross=1', 'maker-exhausted=1', 'taker-exhausted=0',
      'cross=1', 'maker-exhausted=0', 'taker-exhausted=1',
    ]);
  });

  it('equal-price bids: binary search (searchArity 2) puts the newcomer behind every equal bid', async () => {
    const s = new Scenario({ searchArity: 2 });
    for (const p of [105n, 103n, 103n, 103n, 101n]) await s.place('buy', p, 1n);
    s.leaks();
    await s.place('buy', 103n, 9n); // o6
    expect(s.rows().map((r) => r.split(' ')[1])).toEqual(['o1', 'o2', 'o3', 'o4', 'o6', 'o5']);
    // No asks: no cross test. Binary search over 5 bids: mid 2 (103: behind), mid 4 (101: ahead), mid 3 (103: behind).
    expect(s.leaks()).toEqual(['insert-rank=1', 'insert-rank=0', 'insert-rank=1']);
  });

  it('equal-price bids, default 4-ary search: head and two pivots per step, bits opened together', async () => {
    const s = new Scenario();
    for (const p of [105n, 103n, 103n, 103n, 101n]) await s.place('buy', p, 1n);
    s.leaks();
    await s.place('buy', 103n, 9n); // o6
    expect(s.rows().map((r) => r.split(' ')[1])).toEqual(['o1', 'o2', 'o3', 'o4', 'o6', 'o5']);
    // Step 1 pivots 0 (105), 2 (103), 3 (103): behind all three; step 2 over rank 4..5: pivot 4 (101) ahead.
    expect(s.leaks()).toEqual(['insert-rank=1', 'insert-rank=1', 'insert-rank=1', 'insert-rank=0']);
  });

  it('exact fill: both exhausted, maker removed, nothing rests', async () => {
    const s = new Scenario();
    await s.place('buy', 100n, 7n);
    s.leaks();
    const r = await s.place('sell', 99n, 7n);
    expect(r.fills).toEqual([{ maker: 'o1', qty: 7n, price: 100n }]); // at the maker's price
    expect(r).toMatchObject({ takerFilled: true, rested: false });
    expect(s.rows()).toEqual([]);
    expect(s.leaks()).toEqual(['cross=1', 'maker-exhausted=1', 'taker-exhausted=1']);
  });

  it('partial fill of the last maker leaves its remainder at the front with its priority', async () => {
    const s = new Scenario();
    await s.place('sell', 100n, 5n); // o1
    await s.place('sell', 100n, 5n); // o2
    const r = await s.place('buy', 100n, 7n);
    expect(r.fills).toEqual([
      { maker: 'o1', qty: 5n, price: 100n },
      { maker: 'o2', qty: 2n, price: 100n },
    ]);
    expect(s.rows()).toEqual(['sell o2 px=100 qty=3']);
    await s.place('sell', 100n, 1n); // o4 behind o2
    const r2 = await s.place('buy', 100n, 3n);
    expect(r2.fills).toEqual([{ maker: 'o2', qty: 3n, price: 100n }]);
    expect(s.rows()).toEqual(['sell o4 px=100 qty=1']);
  });

  it('crossing many levels, then the remainder rests at its limit', async () => {
    const s = new Scenario();
    for (let i = 0n; i < 10n; i += 1n) await s.place('sell', 100n + i, 1n);
    s.leaks();
    const r = await s.place('buy', 105n, 20n);
    expect(r.fills.map((f) => f.price)).toEqual([100n, 101n, 102n, 103n, 104n, 105n]);
    expect(r).toMatchObject({ rested: true, takerFilled: false });
    expect(s.rows()[0]).toBe('buy o11 px=105 qty=14');
    const l = s.leaks();
    expect(l.filter((x) => x === 'cross=1')).toHaveLength(6);
    expect(l.filter((x) => x === 'cross=0')).toHaveLength(1); // stops at 106
    expect(l.at(-1)).toBe('cross=0'); // own side empty: no insert-rank reveal
  });

  it('IOC remainder is cancelled, never rests', async () => {
    const s = new Scenario();
    await s.place('sell', 100n, 2n);
    const r = await s.place('buy', 101n, 5n, { tif: 'IOC' });
    expect(r).toMatchObject({ rested: false, takerFilled: false, cancelReason: 'IOC_REMAINDER' });
    expect(r.fills).toEqual([{ maker: 'o1', qty: 2n, price: 100n }]);
    expect(s.rows()).toEqual([]);
    const r2 = await s.place('buy', 101n, 5n, { tif: 'IOC' });
    expect(r2).toMatchObject({ fills: [], cancelReason: 'IOC_REMAINDER' });
  });

  it('non-crossing IOC reveals one cross bit and nothing else', async () => {
    const s = new Scenario();
    await s.place('sell', 100n, 2n);
    s.leaks();
    await s.place('buy', 99n, 5n, { tif: 'IOC' });
    expect(s.leaks()).toEqual(['cross=0']);
  });

  it('cancel: live order found, unknown and already-filled not found', async () => {
    const s = new Scenario();
    await s.place('sell', 100n, 2n); // o1
    await s.place('sell', 101n, 2n); // o2
    await s.place('buy', 100n, 2n); // o3 fills o1
    expect(await s.cancel('o1')).toMatchObject({ found: false });
    expect(await s.cancel('nope')).toMatchObject({ found: false });
    expect(await s.cancel('o2')).toMatchObject({ found: true });
    expect(await s.cancel('o2')).toMatchObject({ found: false });
    expect(s.rows()).toEqual([]);
  });

  it('duplicate order id while live is rejected; after it left, the id may be reused', async () => {
    const s = new Scenario();
    await s.op({ kind: 'place', symbol: 'BTC-USDC-PERP', orderId: 'x', seq: 1n, side: 'buy', type: 'limit', tif: 'GTC', price: 10n, qty: 1n });
    const dup = await s.op({ kind: 'place', symbol: 'BTC-USDC-PERP', orderId: 'x', seq: 2n, side: 'sell', type: 'limit', tif: 'GTC', price: 10n, qty: 1n });
    expect(dup.reject).toBe('DUPLICATE_ORDER_ID');
    expect(s.rows()).toEqual(['buy x px=10 qty=1']);
  });

  it('a misordered sequence number is a fatal invariant error for the book', async () => {
    const s = new Scenario();
    s.seq = 10n;
    await s.place('buy', 10n, 1n);
    s.seq = 3n;
    await expect(s.place('buy', 10n, 1n)).rejects.toThrow(/does not exceed/);
    await expect(s.place('buy', 10n, 1n)).rejects.toThrow(/unusable after an earlier failure/);
  });

  it('values at or beyond 2^48 are refused by the plaintext backend, as by the engine', async () => {
    const s = new Scenario();
    await s.place('sell', 1n << 47n, 1n);
    await expect(s.place('buy', 1n << 48n, 1n)).rejects.toThrow(/outside/);
  });
});
