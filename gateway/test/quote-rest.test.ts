// The spec's quote-rest rule (issue 26, item 6): 1 ms between price improvements per symbol, per
// account and side, refused with 429 rate_limited and an integer retry_after_ms hint.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ManualClock } from '../src/clock';
import { QuoteRest } from '../src/orders/quote-rest';
import { ApiError } from '../src/errors';
import { call, bearer, type Account } from './harness';
import { startOrderRig, account, post, type OrderRig } from './order-rig';

describe('QuoteRest', () => {
  const refusal = (f: () => void): unknown => {
    try {
      f();
    } catch (e) {
      if (e instanceof ApiError) return [e.kind.http, e.kind.error, e.data];
      throw e;
    }
    return null;
  };
  it('refuses an improvement less than 1 ms after the previous quote of the side, with the time left rounded up to a ms', () => {
    const q = new QuoteRest();
    q.record('u', 'S', 'buy', 100n, 1_000_000_000n);
    q.record('u', 'S', 'sell', 110n, 1_000_000_000n);
    expect(refusal(() => q.check('u', 'S', 'buy', 101n, 1_000_400_000n))).toEqual([429, 'rate_limited', { retry_after_ms: 1 }]);
    expect(refusal(() => q.check('u', 'S', 'sell', 109n, 1_000_999_999n))).toEqual([429, 'rate_limited', { retry_after_ms: 1 }]);
    expect(refusal(() => q.check('u', 'S', 'buy', 101n, 1_001_000_000n))).toBeNull(); // rested 1 ms
    expect(refusal(() => q.check('u', 'S', 'buy', 99n, 1_000_000_000n))).toBeNull(); // backing off is no improvement
    expect(refusal(() => q.check('u', 'S', 'sell', 111n, 1_000_000_000n))).toBeNull();
    expect(refusal(() => q.check('v', 'S', 'buy', 101n, 1_000_000_000n))).toBeNull(); // another account
    expect(refusal(() => q.check('u', 'T', 'buy', 101n, 1_000_000_000n))).toBeNull(); // another symbol
    const slow = new QuoteRest(5_000_000n);
    slow.record('u', 'S', 'buy', 100n, 0n);
    expect(refusal(() => slow.check('u', 'S', 'buy', 101n, 1_500_000n))).toEqual([429, 'rate_limited', { retry_after_ms: 4 }]);
  });
});

describe('quote rest over REST', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0));
  let rig: OrderRig;
  let mm: Account;
  beforeAll(async () => {
    rig = await startOrderRig({ clock });
    mm = await account(rig);
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('a bid placed, then improved by a modify in the same millisecond: 429 with retry_after_ms; a millisecond later it goes', async () => {
    const bid = await post(rig, mm, { symbol: 'SUI-USDC-PERP', side: 'buy', type: 'limit', quantity: 100, price: 2.99, time_in_force: 'GTC' });
    expect(bid.status, bid.raw).toBe(200);
    const id = bid.body.data.order_id as string;
    const early = await call(rig.gw, 'PATCH', `/api/v1/orders/${id}`, { price: 3 }, bearer(mm));
    expect([early.status, early.body.error, early.body.data]).toEqual([429, 'rate_limited', { retry_after_ms: 1 }]);
    expect(early.body.message).toMatch(/quote rest/);
    expect(early.headers['retry-after']).toBe('1');
    expect(early.headers['x-ratelimit-remaining']).toBe('0');
    clock.advance(1);
    const later = await call(rig.gw, 'PATCH', `/api/v1/orders/${id}`, { price: 3 }, bearer(mm));
    expect(later.status, later.raw).toBe(200);
  });
});
