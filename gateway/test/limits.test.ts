// Rate limits through REST with a manual clock (no timing): every tier's burst, per-second refill and
// per-minute budget with the four headers and Retry-After; the weighted trading-action budget
// (Orders/min) and the cancel budget (Cancels/min), apart; the per-symbol spacing; the system-wide caps (503 VENUE_AT_CAPACITY);
// and minute windows that survive a gateway restart.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ManualClock } from '../src/clock';
import { TIER_INFO, TIERS } from '../src/tiers';
import { createSimulatedOracle } from '../src/orders/oracle';
import { startRig, call, newAccount, bearer, type Rig, type Account, type Json } from './harness';

const START = Date.UTC(2026, 0, 5, 12, 0, 0); // a minute boundary

function limited(r: Json, limit: number, retryAfter: number): void {
  expect(r.status, r.raw).toBe(429);
  expect(r.body).toMatchObject({ code: 42900, error: 'rate_limited' });
  expect(r.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(r.headers['x-ratelimit-remaining']).toBe('0');
  expect(Number(r.headers['x-ratelimit-reset'])).toBeGreaterThan(START / 1000);
  expect(r.headers['retry-after']).toBe(String(retryAfter));
  expect(r.headers['x-request-id']).toBe(r.body.request_id);
}

const time = (rig: Rig, a: Account) => call(rig.gw, 'GET', '/api/v1/time', undefined, bearer(a));
const badOrder = (symbol = 'BTC-USDC-PERP') => ({ symbol, side: 'buy', type: 'limit', quantity: 0.001, price: 1, time_in_force: 'GTC' });

describe('rate limits', () => {
  let rig: Rig;
  let clock: ManualClock;
  const accts = new Map<string, Account>();
  beforeAll(async () => {
    clock = new ManualClock(START);
    rig = await startRig({
      clock, oracle: createSimulatedOracle(clock, { staleAfterMs: 1e12, walk: false }).oracle,
      publicLimits: { perMinute: 100_000, perSecond: 100_000, burst: 100_000 },
      venue: { systemCaps: { globalMilliPerSecond: 10_000_000, perSymbolMilliPerSecond: 3_000 } },
    });
    for (const t of TIERS) accts.set(t, await newAccount(rig, t, '100000'));
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('every tier: burst, then the per-second rate, with the minute budget in the headers', async () => {
    clock.advance(60_000);
    for (const tier of TIERS) {
      const { rest } = TIER_INFO[tier];
      const a = accts.get(tier)!;
      for (let i = 1; i <= rest.burst; i++) {
        const r = await time(rig, a);
        expect(r.status, `${tier} #${i}`).toBe(200);
        expect([r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining']]).toEqual([String(rest.perMinute), String(rest.perMinute - i)]);
        expect(r.headers['x-ratelimit-reset']).toBe(String(START / 1000 + 120));
      }
      limited(await time(rig, a), rest.burst, 1);
    }
    clock.advance(1_000); // one second: perSecond requests more, not one beyond
    for (const tier of TIERS) {
      const { rest } = TIER_INFO[tier];
      const a = accts.get(tier)!;
      for (let i = 0; i < rest.perSecond; i++) expect((await time(rig, a)).status, `${tier} refill #${i}`).toBe(200);
      limited(await time(rig, a), rest.burst, 1);
    }
  });

  it('Core and Select: the per-minute budget, then Retry-After until the window ends', async () => {
    clock.advance(60_000 - ((clock.nowMs() - START) % 60_000)); // next window
    for (const tier of ['Core', 'Select'] as const) {
      const { rest } = TIER_INFO[tier];
      const a = accts.get(tier)!;
      const t0 = clock.nowMs();
      let ok = 0;
      // pace at the per-second rate so the token bucket never binds
      while (ok < rest.perMinute) {
        const r = await time(rig, a);
        expect(r.status, `${tier} #${ok}`).toBe(200);
        ok++;
        if (ok % rest.perSecond === 0) clock.advance(1_000);
      }
      const r = await time(rig, a);
      const windowEnd = Math.ceil((Math.floor(t0 / 60_000) + 1) * 60);
      limited(r, rest.perMinute, windowEnd - Math.floor(clock.nowMs() / 1000));
      expect(r.headers['x-ratelimit-reset']).toBe(String(windowEnd));
      clock.advance(60_000 - (clock.nowMs() - t0)); // back to a fresh window for the next tier
    }
  });

  it('Cancels/min is its own budget: a spent Orders/min leaves cancels free, and 50 cancels do not touch placements (Core)', async () => {
    clock.advance(60_000 - ((clock.nowMs() - START) % 60_000));
    const core = accts.get('Core')!;
    // Orders/min: 10 for Core; refused placements (4xx) count, as every admitted action does
    for (let i = 0; i < 10; i++) {
      clock.advance(500);
      expect((await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(core))).status).toBe(400);
    }
    clock.advance(500);
    const spent = await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(core));
    limited(spent, 10, Number(spent.headers['x-ratelimit-reset']) - Math.floor(clock.nowMs() / 1000));
    expect(spent.body.message).toMatch(/10 weighted actions per minute/);
    // ... and cancelling is still possible (before this issue a cancel cost 0.2 of the spent Orders/min)
    for (let i = 0; i < 5; i++) {
      clock.advance(500);
      expect((await call(rig.gw, 'DELETE', `/api/v1/orders/${1000 + i}`, undefined, bearer(core))).status).toBe(404);
    }

    // next minute: 50 cancels (Core's Cancels/min), the 51st refused with that budget's headers
    clock.advance(60_000 - ((clock.nowMs() - START) % 60_000));
    for (let i = 0; i < 50; i++) {
      clock.advance(500);
      const r = await call(rig.gw, 'DELETE', `/api/v1/orders/${2000 + i}`, undefined, bearer(core));
      expect(r.status, `cancel #${i}: ${r.raw}`).toBe(404);
    }
    clock.advance(500);
    const r = await call(rig.gw, 'DELETE', '/api/v1/orders/3000', undefined, bearer(core));
    limited(r, 50, Number(r.headers['x-ratelimit-reset']) - Math.floor(clock.nowMs() / 1000));
    expect(r.body.message).toMatch(/Core tier's budget of 50 cancels per minute is spent/);
    clock.advance(500);
    expect((await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(core))).status).toBe(400); // placements untouched
  });

  it('every tier can cancel all the orders it may hold within one minute of its budgets', () => {
    for (const t of TIERS) {
      const i = TIER_INFO[t];
      expect(i.cancelsPerMinute, t).toBeGreaterThanOrEqual(i.maxOpenOrders);
      expect(i.rest.perMinute, t).toBeGreaterThanOrEqual(i.maxOpenOrders);
      expect(i.cancelsPerMinute, t).toBeGreaterThanOrEqual(i.ordersPerMinute); // every order placed in a minute can be cancelled in it
    }
  });

  it('spaces placements per symbol and account (1 ms) and caps a symbol venue-wide', async () => {
    clock.advance(60_000);
    const apex = accts.get('Apex')!;
    const prime = accts.get('Prime')!;
    expect((await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(apex))).status).toBe(400);
    const spaced = await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(apex)); // same millisecond
    limited(spaced, 1, 1);
    expect(spaced.body.message).toMatch(/at most one place per 1000 µs per symbol and account on BTC-USDC-PERP/);
    // the precise wait beside the whole-second Retry-After (ManualClock: the gap is a few ns short of 1 ms)
    expect([spaced.headers['retry-after-ms'], spaced.body.data]).toEqual(['1', { retry_after_ms: 1 }]);
    expect((await call(rig.gw, 'POST', '/api/v1/orders', badOrder('ETH-USDC-PERP'), bearer(apex))).status).toBe(400); // other symbol
    clock.advance(1);
    // this rig caps a symbol at 3 weighted actions per second: BTC has 1 so far
    expect((await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(apex))).status).toBe(400);
    expect((await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(prime))).status).toBe(400);
    const cap = await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(accts.get('Advanced')!));
    expect(cap.status, cap.raw).toBe(503);
    expect(cap.body).toMatchObject({ code: 1504, error: 'VENUE_AT_CAPACITY' });
    expect(cap.body.message).toMatch(/BTC-USDC-PERP is at its cap of 3 weighted actions per second; retry with exponential backoff from 1 s/);
    expect(cap.headers['retry-after']).toBe('1');
    expect(cap.headers['x-ratelimit-limit']).toBeDefined();
    clock.advance(1_000);
    expect((await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(accts.get('Advanced')!))).status).toBe(400);
    // mass quotes: not for Advanced
    const mq = await call(rig.gw, 'POST', '/api/v1/orders/mass-quote', { symbol: 'BTC-USDC-PERP', legs: [] }, bearer(accts.get('Advanced')!));
    expect(mq.status, mq.raw).toBe(403);
    expect(mq.body.error).toBe('tier_not_eligible');
  });

  it('minute windows survive a gateway restart', async () => {
    clock.advance(60_000 - ((clock.nowMs() - START) % 60_000));
    const core = accts.get('Core')!;
    for (let i = 0; i < 4; i++) expect((await time(rig, core)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      clock.advance(1_000);
      expect((await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(core))).status).toBe(400);
    }
    await rig.restart();
    clock.advance(1_000);
    const r = await time(rig, core);
    expect(r.status).toBe(200);
    expect(r.headers['x-ratelimit-remaining']).toBe(String(60 - 8)); // 4 + 3 before, this one
    for (let i = 0; i < 7; i++) {
      clock.advance(1_000);
      expect((await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(core))).status).toBe(400);
    }
    clock.advance(1_000);
    const last = await call(rig.gw, 'POST', '/api/v1/orders', badOrder(), bearer(core)); // 3 + 7 = 10 weighted: spent
    limited(last, 10, Number(last.headers['x-ratelimit-reset']) - Math.floor(clock.nowMs() / 1000));
  });
});
