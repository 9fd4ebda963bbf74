// PriceWindows keeps each book's span instead of walking every live price on each admission
// (orders/price-window.ts). The kept span must decide every admission exactly as a fresh walk over
// the book's live prices would: a seeded random run of placements, price changes, endings and
// prunes against a reference that recomputes the span from scratch each time.
import { describe, it, expect } from 'vitest';
import { INSTRUMENTS, priceWindowTicks } from '@tenebra/config';
import { PriceWindows } from '../src/orders/price-window';
import type { GatewayDb } from '../src/store/db';
import type { OrderRec } from '../src/store/records';
import { ApiError } from '../src/errors';

const inst = INSTRUMENTS.find((i) => i.symbol === 'ETH-USDC-PERP')!;
const W = priceWindowTicks(inst);

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('the kept span of a book decides admissions as a fresh walk would', () => {
  it.each([1, 2, 3, 4, 5])('seed %i: 3,000 random operations', (seed) => {
    const rand = rng(seed);
    // the store as the windows read it: status and prices per order
    const store = new Map<string, Pick<OrderRec, 'order_id' | 'symbol' | 'status' | 'price_ticks' | 'book_ticks' | 'pending_modify'>>();
    const db = {
      orders: {
        get: (id: string) => store.get(id),
        getRange: () => [...store.values()].map((value) => ({ key: value.order_id, value })),
      },
    } as unknown as GatewayDb;
    const windows = new PriceWindows(db, () => 0);
    // the reference: every price the windows must count, per order
    const live = new Map<string, bigint[]>();
    const base = 1_000_000n;
    let next = 0;
    let refused = 0;
    for (let step = 0; step < 3000; step++) {
      const r = rand();
      if (r < 0.6 || live.size === 0) {
        // a new order, somewhere around the window's width from the base
        const id = `o${next++}`;
        const p = base + BigInt(Math.floor((rand() - 0.5) * 1.6 * Number(W)));
        const prices = [...live.values()].flat();
        const fits = prices.length === 0 || (() => {
          const lo = prices.reduce((a, b) => (b < a ? b : a), p);
          const hi = prices.reduce((a, b) => (b > a ? b : a), p);
          return hi - lo < W;
        })();
        let ok = true;
        try {
          windows.admit(inst, id, p);
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          ok = false;
        }
        // a refusal may follow a prune the reference does not model only when the store says ended:
        // here every order the reference holds is live in the store, so the answers must agree
        expect(ok, `step ${step}: price ${p}`).toBe(fits);
        if (ok) {
          live.set(id, [p]);
          store.set(id, { order_id: id, symbol: inst.symbol, status: 'NEW', price_ticks: p.toString(), book_ticks: p.toString(), pending_modify: null });
        } else refused++;
      } else if (r < 0.9) {
        // an order ends: the store knows at once; the windows only at their next prune
        const ids = [...live.keys()];
        const id = ids[Math.floor(rand() * ids.length)]!;
        store.set(id, { ...store.get(id)!, status: 'FILLED' });
        live.delete(id);
        windows.prune(inst.symbol);
      } else {
        // an explicit prune with nothing changed must leave the span as it was
        windows.prune(inst.symbol);
      }
      const prices = [...live.values()].flat();
      const span = windows.span(inst.symbol);
      if (prices.length === 0) expect(span).toBeNull();
      else {
        expect(span?.lo).toBe(prices.reduce((a, b) => (b < a ? b : a)));
        expect(span?.hi).toBe(prices.reduce((a, b) => (b > a ? b : a)));
      }
    }
    expect(refused, 'the run exercised refusals').toBeGreaterThan(10);
  });

  it('a price change widens the span by its new price until the modify is settled by a prune', () => {
    const store = new Map<string, Pick<OrderRec, 'order_id' | 'symbol' | 'status' | 'price_ticks' | 'book_ticks' | 'pending_modify'>>();
    const db = { orders: { get: (id: string) => store.get(id), getRange: () => [] } } as unknown as GatewayDb;
    const windows = new PriceWindows(db, () => 0);
    windows.admit(inst, 'a', 1000n);
    store.set('a', { order_id: 'a', symbol: inst.symbol, status: 'NEW', price_ticks: '1000', book_ticks: '1000', pending_modify: null });
    windows.admit(inst, 'b', 1200n);
    store.set('b', { order_id: 'b', symbol: inst.symbol, status: 'NEW', price_ticks: '1200', book_ticks: '1200', pending_modify: null });
    windows.admit(inst, 'a', 1500n); // a's new price, pending
    expect(windows.span(inst.symbol)).toEqual({ lo: 1000n, hi: 1500n });
    store.set('a', { ...store.get('a')!, price_ticks: '1500', book_ticks: '1500' }); // applied
    windows.prune(inst.symbol);
    expect(windows.span(inst.symbol)).toEqual({ lo: 1200n, hi: 1500n });
  });
});
