// The live view's price index (ws/live-orders.ts), which the resting-order guard's sweep reads
// instead of visiting every live order (orders/resting-guard.ts). For any mark and window margin,
// the orders it returns, put in its (account, order) order, must be exactly those a visit of every
// live order (allLiveOrders()) would reach past the sweep's skip tests, in that visit's order: a
// seeded random run of placements, fills, price changes, endings and re-placements against that scan;
// and the guard itself, whose cancels and their log lines must come in that visit's order.
import { describe, it, expect } from 'vitest';
import { LiveState, type IndexedOrder } from '../src/ws/live-orders';
import { ordersToCheck } from '../src/orders/resting-guard';
import type { GatewayDb } from '../src/store/db';
import type { OrderRec, OrderStatus } from '../src/store/records';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const SYMBOLS = ['BTC-USDC-PERP', 'ETH-USDC-PERP', 'SOL-USDC-PERP'];

function order(id: number, user: number, symbol: string, side: 'buy' | 'sell', price: string | null, status: OrderStatus, filled = '0'): OrderRec {
  return {
    order_id: `o${id}`, user_id: `u${user}`, client_order_id: null, symbol, side, type: 'limit', time_in_force: 'GTC',
    price_ticks: price, qty_steps: '10', filled_steps: filled, notional_ts: '0', last_fill_steps: null, last_fill_ticks: null,
    status, cancel_reason: null, reject_reason: null, in_time_ns: String(id), out_time_ns: '0', leverage: 1, fee_pips: '0',
    reserved: '0', journaled: true, seq: null, placed: true,
  };
}

/** What the sweep acts on in a symbol with this mark and margin, by a visit of every live order (the sweep before the index). */
function scanned(live: LiveState, marks: Map<string, { mark: bigint; keep: bigint } | 'delisted'>): OrderRec[] {
  const out: OrderRec[] = [];
  for (const o of live.allLiveOrders()) {
    const m = marks.get(o.symbol);
    if (m === undefined) continue;
    if (m === 'delisted') {
      out.push(o);
      continue;
    }
    if (o.price_ticks === null) continue;
    const px = BigInt(o.price_ticks);
    if (px - m.mark > m.keep || m.mark - px > m.keep) out.push(o);
    else if (o.side === 'buy' ? px > m.mark : px < m.mark) out.push(o);
  }
  return out;
}

/** The same from the index, as the sweep gathers it (and orders it). */
function indexed(live: LiveState, marks: Map<string, { mark: bigint; keep: bigint } | 'delisted'>): OrderRec[] {
  const visit: IndexedOrder[] = [];
  for (const [symbol, book] of live.symbolOrders()) {
    const m = marks.get(symbol);
    if (m === undefined) continue;
    ordersToCheck(book, m === 'delisted' ? null : m, visit);
  }
  visit.sort((a, b) => a.user - b.user || a.seq - b.seq);
  return visit.map((e) => e.rec);
}

describe('the live price index gives the sweep the orders a visit of every live order would act on, in its order', () => {
  it.each([1, 2, 3, 4, 5, 6])('seed %i: 4,000 random operations', (seed) => {
    const rand = rng(seed);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)]!;
    const live = new LiveState({} as GatewayDb);
    const current = new Map<number, OrderRec>(); // what the view was last told, by id
    let nextId = 0;
    const price = (): string | null => (rand() < 0.05 ? null : String(990 + Math.floor(rand() * 20)));
    for (let step = 0; step < 4_000; step++) {
      const r = rand();
      const known = [...current.keys()];
      if (r < 0.35 || known.length === 0) {
        const o = order(nextId++, Math.floor(rand() * 12), pick(SYMBOLS), rand() < 0.5 ? 'buy' : 'sell', price(), 'NEW');
        current.set(Number(o.order_id.slice(1)), o);
        if (rand() < 0.3) live.addPlaced(o);
        else live.trackOrder(o);
      } else {
        const id = pick(known);
        const was = current.get(id)!;
        let o: OrderRec;
        if (r < 0.55) o = { ...was, status: 'PARTIALLY_FILLED', filled_steps: String(Number(was.filled_steps) + 1) }; // a fill: same price
        else if (r < 0.65) o = { ...was, price_ticks: price() }; // a modify or re-peg
        else if (r < 0.68) o = { ...was }; // addPlaced of a known order: no change
        else if (r < 0.9) o = { ...was, status: rand() < 0.5 ? 'FILLED' : 'CANCELLED' };
        else o = { ...was, status: 'NEW' }; // an ended order's late live event (back in, last in its account)
        if (r >= 0.65 && r < 0.68) live.addPlaced(o);
        else live.trackOrder(o);
        if (r >= 0.65 && r < 0.68) continue;
        current.set(id, o);
      }
      if (step % 40 === 0) {
        const marks = new Map<string, { mark: bigint; keep: bigint } | 'delisted'>();
        for (const s of SYMBOLS) {
          const q = rand();
          if (q < 0.1) continue; // no fresh mark: not checked
          if (q < 0.15) marks.set(s, 'delisted');
          else marks.set(s, { mark: BigInt(985 + Math.floor(rand() * 30)), keep: BigInt(Math.floor(rand() * 12) - (rand() < 0.05 ? 3 : 0)) });
        }
        const got = indexed(live, marks);
        const want = scanned(live, marks);
        expect(got.map((o) => o.order_id)).toEqual(want.map((o) => o.order_id));
        expect(got.every((o, i) => o === want[i])).toBe(true); // the view's own objects (the guard keys its cache by them)
        // every live order is in the index once, and its symbol's count is right
        let n = 0;
        for (const [, book] of live.symbolOrders()) n += book.size;
        expect(n).toBe([...live.allLiveOrders()].length);
      }
    }
  });
});

describe('the resting-order guard cancels in the order a visit of every live order would', () => {
  it('window and delisted cancels across accounts and books come in the live view order, with their log lines', async () => {
    const { RestingOrderGuard } = await import('../src/orders/resting-guard');
    const { INSTRUMENTS } = await import('@tenebra/config');
    const { windowKeepTicks } = await import('../src/orders/price-window');
    const { instrumentBandBps } = await import('../src/orders/fill-loss');
    const rand = rng(7);
    const [a, b, c] = INSTRUMENTS;
    const delisted = c!.symbol;
    const mid = 1_000_000n;
    const keep = (i: typeof a) => windowKeepTicks(i!, (mid * BigInt(instrumentBandBps(i!))) / 10_000n);
    const live = new LiveState({} as GatewayDb);
    const store = new Map<string, OrderRec>();
    for (let k = 0; k < 600; k++) {
      const inst = [a, b, c][Math.floor(rand() * 3)]!;
      const side = rand() < 0.5 ? 'buy' : 'sell';
      // a tenth beyond the window's margin on either side; the rest well inside it, on the safe side
      const far = rand() < 0.1;
      const off = far ? keep(inst) + 1n + BigInt(Math.floor(rand() * 5)) : 1n + BigInt(Math.floor(rand() * 20));
      const px = far ? (rand() < 0.5 ? mid - off : mid + off) : side === 'buy' ? mid - off : mid + off;
      const o = order(k, Math.floor(rand() * 9), inst.symbol, side, rand() < 0.03 ? null : px.toString(), 'NEW');
      store.set(o.order_id, o);
      live.trackOrder(o);
      if (rand() < 0.2) { // some end, some come back: the view's order is not the placement order
        const ids = [...store.keys()];
        const id = ids[Math.floor(rand() * ids.length)]!;
        const was = store.get(id)!;
        live.trackOrder({ ...was, status: 'CANCELLED' });
        if (rand() < 0.5) live.trackOrder(was);
        else store.delete(id);
      }
    }
    const cancelled: string[] = [];
    const lines: string[] = [];
    const log = { info: (o: { order_id: string }) => lines.push(o.order_id), warn: (o: { order_id: string }) => lines.push(o.order_id) };
    const guard = new RestingOrderGuard({
      db: { orders: { get: (id: string) => store.get(id) }, positions: { get: () => undefined }, accounts: { get: (u: string) => ({ user_id: u }) } },
      registry: { get: (s: string) => { const i = INSTRUMENTS.find((x) => x.symbol === s); return i && s === delisted ? { ...i, status: 'delisted' } : i; } },
      oracle: { reference: () => ({ ok: true, quote: { mid } }) },
      log,
      livePosition: () => undefined,
      live,
      cancel: (_acct: unknown, id: string) => {
        cancelled.push(id);
        return Promise.resolve();
      },
    } as unknown as ConstructorParameters<typeof RestingOrderGuard>[0]);
    // what a visit of every live order acts on, in its order
    const want = [...live.allLiveOrders()].filter((o) => {
      if (o.symbol === delisted) return true;
      if (o.price_ticks === null) return false;
      const px = BigInt(o.price_ticks);
      const inst = INSTRUMENTS.find((x) => x.symbol === o.symbol)!;
      return px - mid > keep(inst) || mid - px > keep(inst);
    }).map((o) => o.order_id);
    expect(want.length).toBeGreaterThan(100);
    expect(guard.sweep()).toBe(want.length);
    expect(cancelled).toEqual(want);
    expect(lines).toEqual(want); // one line per cancel, in the same order
    expect(guard.sweep()).toBe(0); // in flight: not asked again
  });
});

describe("the resting-order guard's clear cache", () => {
  it('a re-marked position (a new object, same size, basis and margin) leaves a clear order alone; a changed margin gets it checked again and cancelled', async () => {
    const { RestingOrderGuard } = await import('../src/orders/resting-guard');
    const { INSTRUMENTS } = await import('@tenebra/config');
    const inst = INSTRUMENTS[0]!;
    const mid = 1_000_000n;
    const live = new LiveState({} as GatewayDb);
    // a bid 2 ticks above the mark (the loss side), 1 step, backed by a large margin: clear
    const o = { ...order(1, 1, inst.symbol, 'buy', (mid + 2n).toString(), 'NEW'), qty_steps: '1' }; // it only closes part of the short below
    live.trackOrder(o);
    const pos = (margin: string) => ({ user_id: 'u1', symbol: inst.symbol, size_steps: '-5', basis_ts: (5n * mid).toString(), margin, realized_pnl: '0', fees_paid: '0', leverage: 1, updated_ns: '1' });
    let current = pos('100000000000');
    let storeReads = 0;
    let cancels = 0;
    let mark = mid;
    const guard = new RestingOrderGuard({
      db: { orders: { get: () => { storeReads++; return o; } }, positions: { get: () => current }, accounts: { get: (u: string) => ({ user_id: u }) } },
      registry: { get: () => inst },
      oracle: { reference: () => ({ ok: true, quote: { mid: mark } }) },
      log: { info: () => {}, warn: () => {} },
      livePosition: () => current,
      live,
      cancel: () => { cancels++; return Promise.resolve(); },
    } as unknown as ConstructorParameters<typeof RestingOrderGuard>[0]);
    expect(guard.sweep()).toBe(0);
    // the mark moves a tick toward the bid and the view gets an equal position object: the clear result holds
    mark = mid + 1n;
    current = pos('100000000000');
    expect(guard.sweep()).toBe(0);
    expect(storeReads).toBe(0);
    // the margin drops to nothing: the cached clear result must not hold; the breach is confirmed from the store and cancelled
    mark = mid;
    current = pos('0');
    expect(guard.sweep()).toBe(1);
    expect(storeReads).toBeGreaterThan(0);
    expect(cancels).toBe(1);
  });
});
