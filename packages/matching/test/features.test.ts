// Issue-4 order semantics on the plaintext backend: market, FOK, GTT, aon, min_fill_size,
// self-trade prevention, modify, peg, and the support matrix; each with the reveals it makes.
import { describe, expect, it } from 'vitest';
import { checkPlace } from '../src/validate';
import type { OrderType, PlaceOp, TimeInForce } from '../src/types';
import { Scenario, SYM } from './helpers';

async function askLadder(s: Scenario, levels: [bigint, bigint, bigint?][]): Promise<void> {
  for (const [price, qty, owner] of levels) await s.place('sell', price, qty, owner !== undefined ? { owner } : {});
  s.leaks();
}

describe('support matrix', () => {
  const op = (type: OrderType, tif: TimeInForce, extra: Partial<PlaceOp<bigint>> = {}): PlaceOp<bigint> => ({
    kind: 'place', symbol: SYM, orderId: 'a', seq: 1n, side: 'buy', type, tif, price: type === 'market' ? null : 10n, qty: 1n,
    ...(tif === 'GTT' ? { expiresAtNs: 5n } : {}), ...extra,
  });
  it('accepts and rejects exactly the documented combinations', () => {
    const ok: string[] = [];
    for (const type of ['limit', 'peg', 'market'] as const) {
      for (const tif of ['GTC', 'GTT', 'IOC', 'FOK'] as const) {
        for (const flag of ['plain', 'aon', 'minFill'] as const) {
          const extra = flag === 'aon' ? { aon: true } : flag === 'minFill' ? { minFill: 1n } : {};
          if (checkPlace(op(type, tif, extra)) === null) ok.push(`${type}/${tif}/${flag}`);
        }
      }
    }
    expect(ok).toEqual([
      'limit/GTC/plain', 'limit/GTT/plain', 'limit/IOC/plain', 'limit/IOC/aon', 'limit/IOC/minFill', 'limit/FOK/plain', 'limit/FOK/aon',
      'peg/GTC/plain', 'peg/GTT/plain', 'peg/IOC/plain', 'peg/IOC/aon', 'peg/IOC/minFill', 'peg/FOK/plain', 'peg/FOK/aon',
      'market/IOC/plain', 'market/IOC/aon', 'market/IOC/minFill', 'market/FOK/plain', 'market/FOK/aon',
    ]);
    expect(checkPlace(op('limit', 'GTC', { price: null }))?.code).toBe('PRICE_REQUIRED');
    expect(checkPlace(op('limit', 'GTT', { expiresAtNs: null }))?.code).toBe('EXPIRY_REQUIRED');
    expect(checkPlace(op('limit', 'IOC', { expiresAtNs: 9n }))?.code).toBe('EXPIRY_NOT_GTT');
  });

  it('an unsupported placement is rejected with a typed reason and touches nothing', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 1n]]);
    const r = await s.raw({ kind: 'place', symbol: SYM, orderId: 'm', seq: 10n, side: 'buy', type: 'market', tif: 'GTC', price: null, qty: 1n });
    expect(r.outcome).toMatchObject({ reject: { reason: 'UNSUPPORTED_ORDER', code: 'MARKET_TIF' }, fills: [] });
    s.seq = 10n;
    const r2 = await s.place('buy', 100n, 1n, { aon: true });
    expect(r2.reject).toBe('AON_TIF');
    expect(s.leaks()).toEqual([]);
    expect(s.rows()).toEqual(['sell o1 px=100 qty=1']);
  });
});

describe('market orders', () => {
  it('without a cap: no cross test, sweeps levels, remainder IOC_REMAINDER', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 2n], [150n, 2n]]);
    const r = await s.place('buy', null, 5n, { type: 'market', tif: 'IOC' });
    expect(r.fills).toEqual([{ maker: 'o1', qty: 2n, price: 100n }, { maker: 'o2', qty: 2n, price: 150n }]);
    expect(r.cancelReason).toBe('IOC_REMAINDER');
    expect(s.leaks()).toEqual(['maker-exhausted=1', 'taker-exhausted=0', 'maker-exhausted=1', 'taker-exhausted=0']);
  });
  it('with a cap: acts as an IOC limit at the cap', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 2n], [150n, 2n]]);
    const r = await s.place('buy', 120n, 5n, { type: 'market', tif: 'IOC' });
    expect(r.fills).toEqual([{ maker: 'o1', qty: 2n, price: 100n }]);
    expect(s.leaks()).toEqual(['cross=1', 'maker-exhausted=1', 'taker-exhausted=0', 'cross=0']);
    expect(s.rows()).toEqual(['sell o2 px=150 qty=2']);
  });
});

describe('FOK and all-or-none', () => {
  it('insufficient crossing liquidity: one yes/no reveal, nothing fills, book unchanged', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 2n], [101n, 2n], [110n, 50n]]);
    const r = await s.place('buy', 105n, 5n, { tif: 'FOK' });
    expect(r).toMatchObject({ fills: [], cancelReason: 'FOK_NOT_FILLED', rested: false });
    expect(s.leaks()).toEqual(['fok-liquidity=0']);
    expect(s.rows()).toHaveLength(3);
  });
  it('sufficient liquidity across levels fills completely', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 2n], [101n, 2n], [110n, 50n]]);
    const r = await s.place('buy', 101n, 4n, { tif: 'FOK' });
    expect(r.fills).toEqual([{ maker: 'o1', qty: 2n, price: 100n }, { maker: 'o2', qty: 2n, price: 101n }]);
    expect(r.takerFilled).toBe(true);
    expect(s.leaks()).toEqual(['fok-liquidity=1', 'cross=1', 'maker-exhausted=1', 'taker-exhausted=0', 'cross=1', 'maker-exhausted=1', 'taker-exhausted=1']);
  });
  it('empty opposite side: FOK_NOT_FILLED with no reveal at all', async () => {
    const s = new Scenario();
    expect((await s.place('buy', 100n, 1n, { tif: 'FOK' })).cancelReason).toBe('FOK_NOT_FILLED');
    expect(s.leaks()).toEqual([]);
  });
  it("the taker's own resting orders do not count as liquidity, and are cancelled when met", async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 5n, 7n], [101n, 2n, 8n]]);
    expect((await s.place('buy', 101n, 3n, { tif: 'FOK', owner: 7n })).cancelReason).toBe('FOK_NOT_FILLED');
    expect(s.leaks()).toEqual(['fok-liquidity=0']);
    const r = await s.place('buy', 101n, 2n, { tif: 'FOK', owner: 7n });
    expect(r.selfTradeCancelled).toEqual(['o1']);
    expect(r.fills).toEqual([{ maker: 'o2', qty: 2n, price: 101n }]);
    expect(s.leaks()).toEqual(['fok-liquidity=1', 'cross=1', 'self-trade=1', 'cross=1', 'self-trade=0', 'maker-exhausted=1', 'taker-exhausted=1']);
  });
  it('aon with IOC is all-or-nothing; its unfilled order is an IOC remainder', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 2n]]);
    expect((await s.place('buy', 100n, 3n, { tif: 'IOC', aon: true })).cancelReason).toBe('IOC_REMAINDER');
    expect(s.leaks()).toEqual(['fok-liquidity=0']);
    expect((await s.place('buy', 100n, 2n, { tif: 'IOC', aon: true })).takerFilled).toBe(true);
  });
  it('market FOK without a cap counts the whole opposite side', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 2n], [900n, 2n]]);
    const r = await s.place('buy', null, 4n, { type: 'market', tif: 'FOK' });
    expect(r.fills.map((f) => f.price)).toEqual([100n, 900n]);
  });
});

describe('min_fill_size: a minimum per execution (spec)', () => {
  it('passes over makers below the minimum (they keep their place), fills the others, and stops once the remainder is below it', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 2n], [101n, 5n], [101n, 1n], [102n, 4n]]);
    const r = await s.place('buy', 102n, 10n, { tif: 'IOC', minFill: 3n });
    // 2 @ 100 skipped; 5 @ 101 filled (remainder 5); 1 @ 101 skipped; 4 @ 102 filled (remainder 1 < 3: stop)
    expect(r.fills.map((f) => [f.qty, f.price])).toEqual([[5n, 101n], [4n, 102n]]);
    expect(r.cancelReason).toBe('IOC_REMAINDER');
    expect(s.leaks()).toEqual([
      'cross=1', 'min-fill-maker=0',
      'cross=1', 'min-fill-maker=1', 'maker-exhausted=1', 'taker-exhausted=0', 'min-fill-remainder=1',
      'cross=1', 'min-fill-maker=0',
      'cross=1', 'min-fill-maker=1', 'maker-exhausted=1', 'taker-exhausted=0', 'min-fill-remainder=0',
    ]);
    // the skipped makers still rest, in their places: a plain buy takes them first
    const after = await s.place('buy', 101n, 3n, { tif: 'IOC' });
    expect(after.fills.map((f) => [f.qty, f.price])).toEqual([[2n, 100n], [1n, 101n]]);
  });

  it('nothing reaches the minimum: the IOC is cancelled unfilled; a minimum is refused with FOK and aon (MIN_FILL_AON)', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 2n], [101n, 2n]]);
    const no = await s.place('buy', 101n, 10n, { tif: 'IOC', minFill: 3n });
    expect(no).toMatchObject({ fills: [], cancelReason: 'IOC_REMAINDER' });
    expect(s.leaks()).toEqual(['cross=1', 'min-fill-maker=0', 'cross=1', 'min-fill-maker=0']);
    for (const extra of [{ tif: 'FOK' as const }, { tif: 'IOC' as const, aon: true }]) {
      const r = await s.place('buy', 101n, 4n, { ...extra, minFill: 2n });
      expect(r).toMatchObject({ reject: 'MIN_FILL_AON', fills: [] });
    }
  });
});

describe('self-trade prevention', () => {
  it('cancels the resting order, keeps matching the next; reveals only the self-trade bit per crossing maker', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 1n, 1n], [100n, 1n, 2n], [101n, 1n, 1n]]);
    const r = await s.place('buy', 101n, 3n, { owner: 1n });
    expect(r.selfTradeCancelled).toEqual(['o1', 'o3']);
    expect(r.fills).toEqual([{ maker: 'o2', qty: 1n, price: 100n }]);
    expect(r.rested).toBe(true);
    expect(s.leaks()).toEqual(['cross=1', 'self-trade=1', 'cross=1', 'self-trade=0', 'maker-exhausted=1', 'taker-exhausted=0', 'cross=1', 'self-trade=1']);
    expect(s.rows()).toEqual(['buy o4 px=101 qty=2']);
  });
  it('orders without an owner are never checked', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 1n, 1n]]);
    await s.place('buy', 100n, 1n);
    expect(s.leaks()).toEqual(['cross=1', 'maker-exhausted=1', 'taker-exhausted=1']);
  });
});

describe('GTT', () => {
  it('expire cancels due orders in (expiry, seq) order across books; sequenced time expires before an op', async () => {
    const s = new Scenario();
    await s.place('buy', 90n, 1n, { tif: 'GTT', expiresAtNs: 200n }); // o1
    await s.place('buy', 91n, 1n, { tif: 'GTT', expiresAtNs: 100n }); // o2
    await s.place('buy', 92n, 1n); // o3 GTC
    await s.op({ kind: 'place', symbol: 'ETH-USDC-PERP', orderId: 'e1', seq: 50n, side: 'sell', type: 'limit', tif: 'GTT', price: 5n, qty: 1n, expiresAtNs: 150n });
    s.seq = 50n;
    const e = await s.raw({ kind: 'expire', nowNs: 150n });
    expect(e.outcome).toEqual({ kind: 'expire', nowNs: 150n, expired: [{ symbol: SYM, orderId: 'o2' }, { symbol: 'ETH-USDC-PERP', orderId: 'e1' }] });
    const r = await s.place('sell', 99n, 1n, { nowNs: 250n }); // o1 expires first
    expect(r.expired).toEqual(['o1']);
    expect(s.rows()).toEqual(['sell o51 px=99 qty=1', 'buy o3 px=92 qty=1'].reverse());
  });
  it('a GTT order already due at its sequenced time never trades (no reveals)', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 1n]]);
    s.seq += 1n;
    await s.op({ kind: 'expire', nowNs: 500n });
    const r = await s.place('buy', 100n, 1n, { tif: 'GTT', expiresAtNs: 500n });
    expect(r).toMatchObject({ fills: [], cancelReason: 'GTT_EXPIRED', rested: false });
    expect(s.leaks()).toEqual([]);
  });
});

describe('modify', () => {
  it('reduce keeps priority; the reduction is clamped to <= 0 on shares', async () => {
    const s = new Scenario();
    await s.place('sell', 100n, 5n); // o1
    await s.place('sell', 100n, 5n); // o2
    s.leaks();
    s.seq += 1n;
    expect(await s.op({ kind: 'modify', symbol: SYM, orderId: 'o1', seq: s.seq, mode: 'reduce', qtyDelta: -3n })).toMatchObject({ found: true, exhausted: false });
    s.seq += 1n;
    await s.op({ kind: 'modify', symbol: SYM, orderId: 'o1', seq: s.seq, mode: 'reduce', qtyDelta: 40n }); // a bogus increase does nothing
    expect(s.rows()).toEqual(['sell o1 px=100 qty=2', 'sell o2 px=100 qty=5']);
    expect(s.leaks()).toEqual(['modify-exhausted=0', 'modify-exhausted=0']);
  });
  it('a reduce to nothing removes the order (modify-exhausted=1)', async () => {
    const s = new Scenario();
    await s.place('sell', 100n, 5n);
    s.seq += 1n;
    const r = await s.op({ kind: 'modify', symbol: SYM, orderId: 'o1', seq: s.seq, mode: 'reduce', qtyDelta: -5n });
    expect(r).toMatchObject({ found: true, exhausted: true });
    expect(s.rows()).toEqual([]);
  });
  it('replace loses priority, and a price change can cross', async () => {
    const s = new Scenario();
    await s.place('sell', 100n, 5n); // o1
    await s.place('sell', 100n, 5n); // o2
    await s.place('buy', 90n, 3n); // o3
    s.seq += 1n;
    await s.op({ kind: 'modify', symbol: SYM, orderId: 'o1', seq: s.seq, mode: 'replace', qtyDelta: 1n }); // o1 now 6, behind o2
    expect(s.rows()).toEqual(['buy o3 px=90 qty=3', 'sell o2 px=100 qty=5', 'sell o1 px=100 qty=6']);
    s.seq += 1n;
    const r = await s.op({ kind: 'modify', symbol: SYM, orderId: 'o3', seq: s.seq, mode: 'replace', qtyDelta: 5n, price: 100n });
    expect(r.fills).toEqual([{ maker: 'o2', qty: 5n, price: 100n }, { maker: 'o1', qty: 3n, price: 100n }]);
    expect(r.takerFilled).toBe(true);
    expect(s.rows()).toEqual(['sell o1 px=100 qty=3']);
  });
  it('unknown order: not found; reduce with a price: unsupported', async () => {
    const s = new Scenario();
    s.seq += 1n;
    expect(await s.op({ kind: 'modify', symbol: SYM, orderId: 'zz', seq: s.seq, mode: 'reduce', qtyDelta: -1n })).toMatchObject({ found: false });
    s.seq += 1n;
    expect((await s.op({ kind: 'modify', symbol: SYM, orderId: 'zz', seq: s.seq, mode: 'reduce', qtyDelta: -1n, price: 5n })).reject).toBe('REDUCE_WITH_PRICE');
  });
});

describe('peg', () => {
  it('matches and rests like a limit at the driver-supplied price', async () => {
    const s = new Scenario();
    await askLadder(s, [[100n, 1n]]);
    const r = await s.place('buy', 100n, 3n, { type: 'peg' });
    expect(r.fills).toEqual([{ maker: 'o1', qty: 1n, price: 100n }]);
    expect(s.ex.book(SYM)?.bids[0]?.type).toBe('peg');
  });
});
