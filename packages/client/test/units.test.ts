// Pure pieces: exact JSON, decimals at the edge, the channel state machine.
import { describe, expect, it } from 'vitest';
import { ChannelTracker, OrderBook, RawNumber, parseJson, stringifyJson, subDecimal, toDecimal, rateLimitDelayMs, type Order } from '@tenebra/client';

describe('exact JSON', () => {
  it('keeps every non-safe-integer number as its literal', () => {
    const v = parseJson('{"a":65000.1,"b":1736899200123456789,"c":42,"d":-0.0001,"e":1e-7,"f":[1,2.50],"g":"x\\"y","h":null,"i":true}') as Record<string, unknown>;
    expect(v).toEqual({ a: '65000.1', b: '1736899200123456789', c: 42, d: '-0.0001', e: '1e-7', f: [1, '2.50'], g: 'x"y', h: null, i: true });
  });

  it('refuses malformed text and never touches the prototype', () => {
    for (const bad of ['{', '{"a":}', '[1,]', '01', '{"a":1}x', 'nul', '"abc']) expect(() => parseJson(bad), bad).toThrow(SyntaxError);
    const o = parseJson('{"__proto__":{"polluted":1}}') as Record<string, unknown>;
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.keys(o)).toEqual(['__proto__']);
    expect(() => parseJson('['.repeat(100) + ']'.repeat(100))).toThrow(/deeply/);
  });

  it('writes decimals and bigints verbatim', () => {
    expect(stringifyJson({ p: new RawNumber('65000.1'), t: 1736899200123456789n, s: 'a', u: undefined, n: null })).toBe('{"p":65000.1,"t":1736899200123456789,"s":"a","n":null}');
    expect(() => new RawNumber('1e5')).toThrow();
  });
});

describe('decimals at the edge', () => {
  it('gives canonical text for strings, numbers and bigints', () => {
    const cases: Array<[string | number | bigint, string]> = [
      ['65000.10', '65000.1'], [0.1, '0.1'], [1e-7, '0.0000001'], [1e21, '1000000000000000000000'], ['1.5e3', '1500'], ['2.5E-3', '0.0025'],
      [12345678901234567890n, '12345678901234567890'], ['-0.000', '0'], ['007.50', '7.5'], ['.5', '0.5'], [0.30000000000000004, '0.30000000000000004'],
    ];
    for (const [input, out] of cases) expect(toDecimal(input), String(input)).toBe(out);
    for (const bad of ['', 'abc', '1.2.3', Number.NaN, Number.POSITIVE_INFINITY, '0x10']) expect(() => toDecimal(bad as string)).toThrow(TypeError);
  });

  it('reads the wait of a 429 from Retry-After or X-RateLimit-Reset', () => {
    const now = 1_700_000_000_000;
    expect(rateLimitDelayMs(new Headers({ 'Retry-After': '3' }), now)).toBe(3000);
    expect(rateLimitDelayMs(new Headers({ 'Retry-After': new Date(now + 5000).toUTCString() }), now)).toBe(5000);
    expect(rateLimitDelayMs(new Headers({ 'X-RateLimit-Reset': String(now / 1000 + 7) }), now)).toBe(7000);
    expect(rateLimitDelayMs(new Headers({}), now)).toBeUndefined();
  });
});

describe('channel tracker', () => {
  it('buffers updates during the snapshot and applies them after snapshot_complete', () => {
    const t = new ChannelTracker<string>('orders');
    t.beginSubscribe();
    t.subscribed(1);
    expect(t.onFrame({ type: 'snapshot', seq: 1 }, 'o1')).toEqual([]);
    expect(t.onFrame({ type: 'update', seq: 2 }, 'u1')).toEqual([]);
    expect(t.onFrame({ type: 'update', seq: 3 }, 'u2')).toEqual([]);
    expect(t.onFrame({ type: 'snapshot', seq: 4, snapshot_complete: true }, 'o2')).toEqual([
      { kind: 'snapshot', items: ['o1', 'o2'] },
      { kind: 'update', item: 'u1', meta: { channel: 'orders', seq: 2 } },
      { kind: 'update', item: 'u2', meta: { channel: 'orders', seq: 3 } },
    ]);
    expect(t.onFrame({ type: 'update', seq: 5 }, 'u3')).toEqual([{ kind: 'update', item: 'u3', meta: { channel: 'orders', seq: 5 } }]);
    expect(t.phase).toBe('live');
  });

  it('reports a gap, drops duplicates, and drops the old series while unsubscribing', () => {
    const t = new ChannelTracker<string>('positions');
    t.beginSubscribe();
    t.onFrame({ type: 'snapshot', seq: 1, snapshot_complete: true }, undefined);
    expect(t.onFrame({ type: 'update', seq: 1 }, 'dup')[0]?.kind).toBe('dropped');
    expect(t.onFrame({ type: 'update', seq: 3 }, 'x')).toEqual([{ kind: 'gap', expected: 2, received: 3 }]);
    t.beginUnsubscribe();
    expect(t.onFrame({ type: 'update', seq: 4 }, 'old')[0]?.kind).toBe('dropped');
    t.beginSubscribe();
    expect(t.onFrame({ type: 'snapshot', seq: 1, snapshot_complete: true }, 'fresh')).toEqual([{ kind: 'snapshot', items: ['fresh'] }]);
  });

  it('bounds what it buffers', () => {
    const t = new ChannelTracker<number>('orders', 3);
    t.beginSubscribe();
    for (let s = 1; s <= 3; s++) expect(t.onFrame({ type: 'update', seq: s }, s)).toEqual([]);
    expect(t.onFrame({ type: 'update', seq: 4 }, 4)).toEqual([{ kind: 'overflow', limit: 3 }]);
  });
});

describe('reconciliation book', () => {
  const order = (over: Partial<Order>): Order => ({
    order_id: '1', client_order_id: null, symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', time_in_force: 'GTC', price: '3000', quantity: '2',
    filled_quantity: '0', remaining_quantity: '2', average_fill_price: null, last_fill_qty: null, last_fill_price: null, status: 'NEW',
    in_time_ns: '10', out_time_ns: '10', cancel_reason: null, reject_reason: null, ...over,
  });

  it('subtracts exact decimals', () => {
    expect(subDecimal('1.5', '0.25')).toBe('1.25');
    expect(subDecimal('2', '2')).toBe('0');
    expect(subDecimal('0.001', '0.01')).toBe('-0.009');
    expect(subDecimal('100000', '99866.278473')).toBe('133.721527');
  });

  it('reports only what the client did not see, each fill quantity once', () => {
    const b = new OrderBook();
    b.placed('1');
    b.saw(order({ status: 'PARTIALLY_FILLED', filled_quantity: '0.5', out_time_ns: '20' }));
    expect(b.recover(order({ status: 'PARTIALLY_FILLED', filled_quantity: '0.5' }))).toBeNull(); // nothing new
    expect(b.recover(order({ status: 'FILLED', filled_quantity: '2', last_fill_price: '3000' }))).toMatchObject({ message_type: 'filled', last_fill_qty: '1.5' });
    expect(b.recover(order({ status: 'FILLED', filled_quantity: '2' }))).toBeNull(); // reported once
    expect(b.liveIds).toEqual([]);
    b.placed('2');
    expect(b.recover(order({ order_id: '2', status: 'CANCELLED', cancel_reason: 'CANCEL_ON_DISCONNECT' }))).toMatchObject({ message_type: 'cancelled', last_fill_qty: null });
    // a snapshot does not overwrite what the client last saw (it would hide the change)
    b.placed('3');
    b.saw(order({ order_id: '3', status: 'PARTIALLY_FILLED', filled_quantity: '1' }), true);
    expect(b.recover(order({ order_id: '3', status: 'PARTIALLY_FILLED', filled_quantity: '1' }))).toMatchObject({ message_type: 'partial_fill', last_fill_qty: '1' });
    expect(b.resumeNs).toBe(20n);
    const f = { fill_id: '5-0-M', order_id: '1', client_order_id: null, symbol: 'ETH-USDC-PERP', side: 'sell' as const, price: '3000', quantity: '1.5', fee: '-0.45', liquidity: 'maker' as const, time_ns: '30' };
    expect([b.newFill(f), b.newFill(f)]).toEqual([true, false]);
    expect(b.resumeNs).toBe(30n);
  });
});
