// Public statistics through REST: the delayed as_of, every query parameter, alias, default and clamp,
// hourly and daily buckets at hour and day boundaries, by_asset, cumulative, decimal strings, the
// error envelope for bad parameters; computed from real fills (one rig) and from committed order and
// position events placed at chosen times (another rig).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ManualClock } from '../src/clock';
import { createSimulatedOracle } from '../src/orders/oracle';
import type { OrderRec, PositionRec } from '../src/store/records';
import { startRig, call, newAccount, bearer, summary, type Rig, type Account, type Json } from './harness';
import { until } from './fakes';

const T = (iso: string): number => Date.parse(iso);
const LIMITS = { publicLimits: { perMinute: 100_000, perSecond: 100_000, burst: 100_000 } };

function stats(r: Json): Record<string, any> {
  expect(r.status, r.raw).toBe(200);
  for (const h of ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(r.headers[h], h).toBeDefined();
  // the bare statistics object, which also carries the envelope members (docs/api.md)
  expect(r.body.code).toBe(0);
  expect(r.body.request_id).toBe(r.headers['x-request-id']);
  const { code: _c, data, timestamp: _t, request_id: _r, ...bare } = r.body;
  expect(bare).toEqual(data);
  return data;
}

function expectError(r: Json, message: RegExp): void {
  expect(r.status, r.raw).toBe(400);
  expect(r.body).toMatchObject({ code: 40000, error: 'invalid_request' });
  expect(r.body.message).toMatch(/^invalid_request: /);
  expect(r.body.message).toMatch(message);
  expect(r.body.data).toBeUndefined();
  expect(r.headers['x-ratelimit-limit']).toBeDefined();
}

const overview = (rig: Rig, q = '') => call(rig.gw, 'GET', `/api/v1/stats/platform/overview${q}`);
const series = (rig: Rig, q: string) => call(rig.gw, 'GET', `/api/v1/stats/platform/series${q}`);

/** Every numeric value of the objects is a decimal string. */
function allDecimalStrings(v: unknown, path = ''): void {
  if (typeof v === 'number') throw new Error(`${path} is a JSON number`);
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (!['as_of', 't', 'metric', 'granularity'].includes(k)) allDecimalStrings(x, `${path}.${k}`);
  if (typeof v === 'string' && !['as_of', 't', 'metric', 'granularity'].includes(path.split('.').at(-1)!)) expect(v, path).toMatch(/^-?\d+(\.\d+)?$/);
}

describe('statistics from real fills', () => {
  let rig: Rig;
  let clock: ManualClock;
  let m: Account;
  let t: Account;
  beforeAll(async () => {
    clock = new ManualClock(T('2026-03-10T12:00:00Z'));
    // reference prices never go stale on this manual clock (it jumps by minutes)
    rig = await startRig({ clock, ...LIMITS, oracle: createSimulatedOracle(clock, { staleAfterMs: 1e12, walk: false }).oracle, venue: { settlementIntervalMs: 3_600_000, statsReleaseFills: 1 } });
    [m, t] = await Promise.all([newAccount(rig, 'Apex', '1000000', { leverage: 5 }), newAccount(rig, 'Apex', '1000000', { leverage: 5 })]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('counts each fill once, in USDC, only once it is older than the 600 s public delay', async () => {
    const place = async (a: Account, body: Record<string, unknown>) => expect((await call(rig.gw, 'POST', '/api/v1/orders', body, bearer(a))).status).toBe(200);
    await place(m, { symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: 2, price: 3000, time_in_force: 'GTC' });
    await place(t, { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 2, price: 3000, time_in_force: 'GTC' });
    await place(m, { symbol: 'BTC-USDC-PERP', side: 'sell', type: 'limit', quantity: 0.5, price: 65000, time_in_force: 'GTC' });
    await place(t, { symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.5, price: 65000, time_in_force: 'GTC' });
    await until(() => rig.gw.resultsCursor === BigInt(rig.seq.journal.length + 1), 10_000, 'fills');
    await rig.gw.venue.ledger.idle();

    let o = stats(await overview(rig));
    expect(o).toMatchObject({ as_of: '2026-03-10T11:50:00.000Z', volume_24h: '0', all_time_volume: '0', all_time_users: '0' });
    clock.advance(10 * 60_000); // 12:10: as_of 12:00, the fills' slot (12:00..12:10) is not public yet
    expect(stats(await overview(rig)).volume_24h).toBe('0');
    clock.advance(10 * 60_000); // 12:20: as_of 12:10
    o = stats(await overview(rig));
    expect(o).toEqual({
      as_of: '2026-03-10T12:10:00.000Z', volume_24h: '38500', volume: { value: '38500' }, open_interest: { value: '38500' },
      funding: { value: '0' }, users: { value: '2' }, all_time_volume: '38500', all_time_users: '2', monthly_active_users: '2', quarterly_active_users: '2',
    });
    allDecimalStrings(o);
    const s = stats(await series(rig, '?metric=volume&range=1d&assets=ETH,BTC,SOL'));
    expect([s.metric, s.granularity, s.points.length]).toEqual(['volume', 'hour', 25]);
    expect(s.points.at(-1)).toEqual({ t: '2026-03-10T12:00:00.000Z', total: '38500', by_asset: { ETH: '6000', BTC: '32500', SOL: '0' } });
    expect(s.points.slice(0, -1).every((p: any) => p.total === '0')).toBe(true);
    expect(s.cumulative.at(-1)).toEqual({ t: '2026-03-10T12:00:00.000Z', total: '38500' });
    allDecimalStrings(s);
    // positions are long 2 ETH and 0.5 BTC at the last trade prices
    const oi = stats(await series(rig, '?metric=oi&range=d&assets=ETH,BTC'));
    expect(oi.points.at(-1)).toEqual({ t: '2026-03-10T12:00:00.000Z', total: '38500', by_asset: { ETH: '6000', BTC: '32500' } });
    expect(oi.cumulative).toBeUndefined();
    const users = stats(await series(rig, '?metric=users&range=1d&assets=ETH'));
    expect(users.points.at(-1)).toEqual({ t: '2026-03-10T12:00:00.000Z', total: '2', by_asset: { ETH: '2' } });
    expect(users.cumulative.at(-1).total).toBe('2');
  });

  it('recovers fills whose events were lost in a crash, exactly once, at the next start', async () => {
    expect((await rig.gw.venue.settlement.closeBatch())!.commitments).toHaveLength(2); // settle what is known so far
    expect(rig.gw.venue.settlement.pendingCount).toBe(0);
    // the ledger and settlement stop hearing about fills (as if the process died right after clearing committed)
    rig.gw.events.removeAllListeners('order');
    rig.gw.events.removeAllListeners('position');
    const relogin = async (a: Account): Promise<Account> => {
      const r = await call(rig.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: a.api_key, client_secret: a.api_secret, passphrase: a.passphrase });
      return { ...a, token: r.body.access_token };
    };
    [m, t] = [await relogin(m), await relogin(t)]; // the clock moved past the first tokens' 900 s
    const place = async (a: Account, body: Record<string, unknown>) => {
      const r = await call(rig.gw, 'POST', '/api/v1/orders', body, bearer(a));
      expect(r.status, r.raw).toBe(200);
    };
    await place(m, { symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: 1, price: 3001, time_in_force: 'GTC' });
    await place(t, { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 1, price: 3001, time_in_force: 'GTC' });
    await until(() => rig.gw.resultsCursor === BigInt(rig.seq.journal.length + 1), 10_000, 'fills');
    expect(rig.gw.venue.settlement.pendingCount).toBe(0);
    await rig.restart();
    expect(rig.logged('fill ledger reconciled')).toHaveLength(1);
    expect(rig.gw.venue.settlement.pendingCount).toBe(2); // both accounts' ETH positions changed unseen
    clock.advance(20 * 60_000);
    expect(stats(await overview(rig)).all_time_volume).toBe('41501'); // 38500 + 3001, counted once
    await rig.restart();
    expect(rig.logged('fill ledger reconciled')).toHaveLength(1); // nothing left to recover
    expect(stats(await overview(rig)).all_time_volume).toBe('41501');
  });
});

/** Committed order and position events as clearing emits them, at chosen times (no matching). */
function syntheticEvents(rig: () => Rig): {
  fill(buyer: string, seller: string, symbol: string, qtySteps: bigint, priceTicks: bigint, at: string): void;
  oneSide(user: string, side: 'buy' | 'sell', symbol: string, qtySteps: bigint, priceTicks: bigint, at: string): void;
  position(user: string, symbol: string, sizeSteps: bigint): void;
} {
  let n = 0;
  const events = {
    /** Both sides of one fill of qtySteps at priceTicks on symbol, filled at `at`. */
    fill(buyer: string, seller: string, symbol: string, qtySteps: bigint, priceTicks: bigint, at: string) {
      events.oneSide(buyer, 'buy', symbol, qtySteps, priceTicks, at);
      events.oneSide(seller, 'sell', symbol, qtySteps, priceTicks, at);
    },
    /** One order's fill (a taker sweeping several makers fills once against their several fills). */
    oneSide(user: string, side: 'buy' | 'sell', symbol: string, qtySteps: bigint, priceTicks: bigint, at: string) {
      {
        const order = {
          order_id: `synthetic-${++n}`, user_id: user, client_order_id: null, symbol, side, type: 'limit', time_in_force: 'GTC',
          price_ticks: priceTicks.toString(), qty_steps: qtySteps.toString(), filled_steps: qtySteps.toString(), notional_ts: (qtySteps * priceTicks).toString(),
          last_fill_steps: qtySteps.toString(), last_fill_ticks: priceTicks.toString(), status: 'FILLED', cancel_reason: null, reject_reason: null,
          in_time_ns: (BigInt(T(at)) * 1_000_000n).toString(), out_time_ns: (BigInt(T(at)) * 1_000_000n).toString(),
          leverage: 5, fee_pips: '0', reserved: '0', journaled: true, seq: null, placed: true,
        } as unknown as OrderRec;
        rig().gw.events.emit('order', { message_type: 'filled', order });
      }
    },
    position(user: string, symbol: string, sizeSteps: bigint) {
      const p: PositionRec = { user_id: user, symbol, size_steps: sizeSteps.toString(), basis_ts: '0', margin: '0', realized_pnl: '0', fees_paid: '0', leverage: 5, updated_ns: '0' };
      rig().gw.events.emit('position', { update_reason: 'fill', position: p });
    },
  };
  return events;
}

describe('statistics windows and parameters', () => {
  let rig: Rig;
  let clock: ManualClock;
  const START = T('2026-01-01T00:00:00Z');
  const { fill, position } = syntheticEvents(() => rig);

  const at = async (iso: string) => {
    clock.advance(T(iso) - clock.nowMs());
  };

  beforeAll(async () => {
    clock = new ManualClock(START);
    rig = await startRig({ clock, ...LIMITS, venue: { statsReleaseFills: 1 } });
    // SOL: tick 0.01, step 0.01 -> notional of (q steps, p ticks) = q × p / 10,000 USDC
    fill('0xu1', '0xu2', 'SOL-USDC-PERP', 100n, 10_000n, '2026-01-20T23:59:59.999Z'); // 100 USDC, last ms of Jan 20
    fill('0xu3', '0xu2', 'SOL-USDC-PERP', 200n, 10_000n, '2026-01-21T00:00:00.000Z'); // 200 USDC, first ms of Jan 21
    fill('0xu4', '0xu5', 'ETH-USDC-PERP', 1000n, 300_000n, '2025-11-25T10:00:00Z'); // 3000 USDC, 60 days before Jan 24
    fill('0xu4', '0xu1', 'ETH-USDC-PERP', 2000n, 300_000n, '2026-01-22T13:05:00Z'); // 6000 USDC
    await rig.gw.venue.ledger.idle();
    // open interest: 0xu1 goes long 10 SOL at 00:30 on Jan 21, cuts to 6 at 02:30; last SOL trade at 100
    await at('2026-01-21T00:30:00Z');
    position('0xu1', 'SOL-USDC-PERP', 1000n);
    position('0xu2', 'SOL-USDC-PERP', -1000n);
    await rig.gw.venue.ledger.idle();
    await at('2026-01-21T02:30:00Z');
    position('0xu1', 'SOL-USDC-PERP', 600n);
    await rig.gw.venue.ledger.idle();
    await at('2026-01-23T13:15:00Z'); // as_of 13:00 on Jan 23
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('gives change_24h and change_30d when the previous period traded', async () => {
    const o = stats(await overview(rig));
    // last 24 h: 6000 (Jan 22 13:05); the 24 h before: 0 -> no change_24h; last 30 days 6300 vs 3000 before
    expect(o.volume_24h).toBe('6000');
    expect(o.volume.change_24h).toBeUndefined();
    expect(o.volume.change_30d).toBe('110');
    await at('2026-01-24T00:10:00Z'); // as_of 2026-01-24T00:00:00Z from here on
  });

  it('puts a fill at 23:59:59.999 and one at 00:00:00.000 into different days', async () => {
    const s = stats(await series(rig, '?metric=volume&from=2026-01-19T00:00:00Z&to=2026-01-23T00:00:00Z&assets=SOL'));
    expect(s.granularity).toBe('day');
    expect(s.points).toEqual([
      { t: '2026-01-19T00:00:00.000Z', total: '0', by_asset: { SOL: '0' } },
      { t: '2026-01-20T00:00:00.000Z', total: '100', by_asset: { SOL: '100' } },
      { t: '2026-01-21T00:00:00.000Z', total: '200', by_asset: { SOL: '200' } },
      { t: '2026-01-22T00:00:00.000Z', total: '6000', by_asset: { SOL: '0' } },
    ]);
    // cumulative starts from everything before the window (the November fill)
    expect(s.cumulative.map((c: any) => c.total)).toEqual(['3000', '3100', '3300', '9300']);
    // a `to` on a boundary ends there; one millisecond later covers that 10-minute slot
    const upTo = stats(await series(rig, '?metric=volume&from=2026-01-18T00:00:00Z&to=2026-01-21T00:00:00Z'));
    expect(upTo.points.map((p: any) => p.total)).toEqual(['0', '0', '100']);
    const past = stats(await series(rig, '?metric=volume&from=2026-01-18T00:00:00Z&to=2026-01-21T00:00:00.001Z'));
    expect(past.points.map((p: any) => [p.t, p.total])).toEqual([['2026-01-18T00:00:00.000Z', '0'], ['2026-01-19T00:00:00.000Z', '0'], ['2026-01-20T00:00:00.000Z', '100'], ['2026-01-21T00:00:00.000Z', '200']]);
  });

  it('uses hourly buckets for windows of two days or less, at hour boundaries', async () => {
    const s = stats(await series(rig, '?metric=volume&from=2026-01-20T22:00:00Z&to=2026-01-21T02:00:00Z'));
    expect(s.granularity).toBe('hour');
    expect(s.points.map((p: any) => [p.t.slice(11, 16), p.total])).toEqual([['22:00', '0'], ['23:00', '100'], ['00:00', '200'], ['01:00', '0']]);
    expect(stats(await series(rig, '?metric=volume&from=2026-01-20T00:00:00Z&to=2026-01-22T00:00:00Z')).granularity).toBe('hour');
    expect(stats(await series(rig, '?metric=volume&from=2026-01-20T00:00:00Z&to=2026-01-22T00:00:00.001Z')).granularity).toBe('day');
    // offsets are honoured (+01:00, and a '+' that arrived as a space)
    const off = stats(await series(rig, `?metric=volume&from=${encodeURIComponent('2026-01-21T00:00:00+01:00')}&to=2026-01-21T01:10:00 01:00`));
    expect(off.points.map((p: any) => [p.t.slice(11, 16), p.total])).toEqual([['23:00', '100'], ['00:00', '200']]);
  });

  it('counts distinct users per bucket and asset, all-time users, and monthly / quarterly actives', async () => {
    const s = stats(await series(rig, '?metric=users&from=2026-01-20T00:00:00Z&to=2026-01-23T00:00:00Z&assets=SOL,ETH'));
    expect(s.points.map((p: any) => [p.total, p.by_asset])).toEqual([[ '2', { SOL: '2', ETH: '0' }], ['2', { SOL: '2', ETH: '0' }], ['2', { SOL: '0', ETH: '2' }]]);
    expect(s.cumulative.map((c: any) => c.total)).toEqual(['4', '5', '5']); // u4, u5 in November; u1, u2 on Jan 20; u3 on Jan 21
    const o = stats(await overview(rig));
    expect(o).toMatchObject({
      as_of: '2026-01-24T00:00:00.000Z', all_time_users: '5', monthly_active_users: '4', quarterly_active_users: '5', users: { value: '4' },
      all_time_volume: '9300', volume: { value: '6300' }, volume_24h: '0',
    });
    // u4 traded on Jan 22 as well: the 30-day window holds u1, u2, u3, u4; the 90-day one also u5
    expect(stats(await overview(rig, '?range=3m')).users.value).toBe('5');
  });

  it('reports open interest at each bucket end and percent changes against the previous period', async () => {
    const s = stats(await series(rig, '?metric=oi&from=2026-01-21T00:00:00Z&to=2026-01-21T04:00:00Z&assets=SOL'));
    // SOL's last trade was 100 (the Jan 21 fill): 10 SOL long -> 1000, then 6 -> 600
    expect(s.points.map((p: any) => [p.t.slice(11, 16), p.total, p.by_asset.SOL])).toEqual([['00:00', '1000', '1000'], ['01:00', '1000', '1000'], ['02:00', '600', '600'], ['03:00', '600', '600']]);
    const o = stats(await overview(rig, '?to=2026-01-22T14:00:00Z'));
    expect(o.open_interest.value).toBe('600');
    expect(o.volume_24h).toBe('0'); // volume_24h is through as_of, whatever the window
    const o2 = stats(await overview(rig, '?from=2026-01-21T00:00:00Z&to=2026-01-21T00:10:00Z'));
    expect(o2.volume.value).toBe('200');
    expect(o2.open_interest.change_24h).toBeUndefined(); // no open interest 24 h earlier
    const f = stats(await series(rig, '?metric=funding&range=w'));
    expect(f.points.every((p: any) => p.total === '0')).toBe(true);
    expect(f.cumulative).toBeUndefined();
  });

  it('reads every range alias and defaults to 1m', async () => {
    const span = async (q: string) => {
      const s = stats(await series(rig, `?metric=volume${q}`));
      return [s.granularity, s.points.length];
    };
    expect(await span('')).toEqual(['day', 30]); // as_of is a midnight: whole days
    expect(await span('&range=m')).toEqual(['day', 30]);
    expect(await span('&range=1d')).toEqual(['hour', 24]);
    expect(await span('&range=d')).toEqual(['hour', 24]);
    expect(await span('&range=7d')).toEqual(['day', 7]);
    expect(await span('&range=w')).toEqual(['day', 7]);
    expect(await span('&range=3m')).toEqual(['day', 90]);
    expect(await span('&range=1y')).toEqual(['day', 365]);
    expect(await span('&range=y')).toEqual(['day', 365]);
    // from given: range ignored; to beyond as_of: clamped
    expect(await span('&range=1y&from=2026-01-23T00:00:00Z&to=2030-01-01T00:00:00Z')).toEqual(['hour', 24]);
    // spec: "when given, range is ignored": neither an unknown nor a repeated range is looked at then
    expect(await span('&range=2w&from=2026-01-23T00:00:00Z')).toEqual(['hour', 24]);
    expect(await span('&range=&from=2026-01-23T00:00:00Z')).toEqual(['hour', 24]);
    expect(await span('&range=1d&range=1y&from=2026-01-17T00:00:00Z')).toEqual(['day', 7]);
    expect(stats(await overview(rig, '?range=bogus&from=2026-01-23T00:00:00Z')).as_of).toBe('2026-01-24T00:00:00.000Z');
  });

  it('answers every bad parameter with the error envelope and a message naming it', async () => {
    expectError(await series(rig, ''), /'metric' is required/);
    expectError(await series(rig, '?metric='), /'metric' is required/);
    expectError(await series(rig, '?metric=price'), /metric 'price' is not one of volume, oi, funding, users/);
    expectError(await series(rig, '?metric=volume&metric=oi'), /'metric' appears more than once/);
    expectError(await series(rig, '?metric=volume&assets=BTC,,ETH'), /no empty items/);
    expectError(await series(rig, '?metric=volume&assets=btc'), /unknown asset 'btc'/);
    expectError(await series(rig, '?metric=volume&assets=BTC-USDC-PERP'), /unknown asset/);
    expectError(await series(rig, '?metric=volume&asset=BTC'), /unknown query parameter 'asset'; it accepts metric, range, from, to, assets/);
    expectError(await overview(rig, '?metric=volume'), /unknown query parameter 'metric'; it accepts range, from, to/);
    expectError(await overview(rig, '?range=2w'), /range '2w' is not one of/);
    expectError(await overview(rig, '?range='), /range '' is not one of/);
    expectError(await overview(rig, '?from=2026-01-01'.replace('01-01', '13-01')), /from '2026-13-01' is not an RFC 3339 date-time/);
    expectError(await overview(rig, '?to=tomorrow'), /to 'tomorrow' is not an RFC 3339/);
    expectError(await overview(rig, '?from=2026-01-10T00:00:00Z&to=2026-01-09T00:00:00Z'), /from must be before to/);
    expectError(await overview(rig, '?from=2026-02-01T00:00:00Z'), /from must be before to \(to is clamped to as_of 2026-01-24T00:00:00.000Z\)/);
    expectError(await overview(rig, '?from=2024-01-23T23:59:59Z'), /at most 2 years/);
    expect(stats(await overview(rig, '?from=2024-01-24T00:00:00Z')).as_of).toBe('2026-01-24T00:00:00.000Z');
    expectError(await overview(rig, '?from=2026-01-01T00:00:00Z&from=2026-01-02T00:00:00Z'), /'from' appears more than once/);
  });
  it('30-day volume ages out at UTC midnight: the tier falls back to the assigned one', async () => {
    const acct = await newAccount(rig, 'Core', '100');
    // 6M USDC of BTC (tick 0.1, step 0.001): 100 BTC at 60,000 on Jan 24, and on Dec 25 (just outside [Dec 26, Jan 24])
    fill(acct.user_id, '0xother', 'BTC-USDC-PERP', 100_000n, 600_000n, '2026-01-24T00:05:00Z');
    fill(acct.user_id, '0xother', 'BTC-USDC-PERP', 100_000n, 600_000n, '2025-12-25T23:59:00Z');
    await rig.gw.venue.ledger.idle();
    const vip = async () => (await call(rig.gw, 'GET', '/api/v1/account/vip', undefined, bearer(acct))).body.data;
    expect(await vip()).toMatchObject({ tier: 'Select', volume_30d: 6000000 });
    await at('2026-02-22T23:59:00Z'); // Jan 24 is still inside [Jan 24, Feb 22]
    expect(await rig.gw.venue.vip.sweep()).toBe(0);
    await at('2026-02-23T00:00:30Z');
    expect(await rig.gw.venue.vip.sweep()).toBe(1); // the stored tier follows without any request
    expect((await summary(rig, acct.user_id)).tier).toBe('Core');
    const login = await call(rig.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: acct.api_key, client_secret: acct.api_secret, passphrase: acct.passphrase });
    acct.token = login.body.access_token; // a month later: a fresh token
    expect(await vip()).toMatchObject({ tier: 'Core', volume_30d: 0, assigned_tier: 'Core' });
  });
});

describe('the release rule: public aggregates of at least five trades (default)', () => {
  let rig: Rig;
  let clock: ManualClock;
  const { fill, position } = syntheticEvents(() => rig);
  const at = (iso: string): void => clock.advance(T(iso) - clock.nowMs());
  const window = async (from: string, to: string) => stats(await overview(rig, `?from=${from}&to=${to}`));
  /** trade i (0-based): 0xbuyer buys 1 SOL (100 steps) at 100 + i USDC (10,000 + 100 i ticks) from 0xseller<i>, going long */
  const trade = (i: number, when: string): void => {
    fill('0xbuyer', `0xseller${i}`, 'SOL-USDC-PERP', 100n, 10_000n + 100n * BigInt(i), when);
    position('0xbuyer', 'SOL-USDC-PERP', 100n * BigInt(i + 1));
    position(`0xseller${i}`, 'SOL-USDC-PERP', -100n);
  };

  beforeAll(async () => {
    clock = new ManualClock(T('2026-02-01T00:00:00Z'));
    rig = await startRig({ clock, ...LIMITS }); // the gateway's default release rule
    at('2026-02-01T00:05:00Z');
    for (let i = 0; i < 4; i++) trade(i, '2026-02-01T00:05:00Z');
    await rig.gw.venue.ledger.idle();
    at('2026-02-01T00:25:00Z');
    trade(4, '2026-02-01T00:25:00Z'); // the tenth fill: trades 0-4 are published, in the 00:20 slot
    await rig.gw.venue.ledger.idle();
    at('2026-02-01T00:45:00Z');
    for (let i = 5; i < 10; i++) trade(i, '2026-02-01T00:45:00Z'); // trades 5-9, and the tenth long change
    await rig.gw.venue.ledger.idle();
    at('2026-02-01T01:35:00Z'); // as_of 01:20
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('publishes no volume of fewer than five trades, then the pool whole in the slot that completes it', async () => {
    // four trades at 00:05, nothing of them public before 00:20; their traders are counted at once
    expect(await window('2026-02-01T00:00:00Z', '2026-02-01T00:20:00Z')).toMatchObject({ volume: { value: '0' }, users: { value: '5' } });
    // 100 + 101 + 102 + 103 + 104 USDC, all in the 00:20 slot; then 105 + ... + 109 in the 00:40 one
    expect((await window('2026-02-01T00:20:00Z', '2026-02-01T00:30:00Z')).volume.value).toBe('510');
    expect((await window('2026-02-01T00:40:00Z', '2026-02-01T00:50:00Z')).volume.value).toBe('535');
    expect(stats(await overview(rig)).all_time_volume).toBe('1045');
    const s = stats(await series(rig, '?metric=volume&from=2026-02-01T00:00:00Z&to=2026-02-01T01:00:00Z&assets=SOL'));
    expect(s.points).toEqual([{ t: '2026-02-01T00:00:00.000Z', total: '1045', by_asset: { SOL: '1045' } }]);
  });

  it('moves open interest only after ten changes of the long side, valued at the pool price, not a trade price', async () => {
    // nine long changes by 00:45's flush minus one: nothing public; at the tenth, 10 SOL at the
    // volume-weighted price of trades 5-9 (107 USDC), never the last trade's 109
    expect((await window('2026-02-01T00:00:00Z', '2026-02-01T00:40:00Z')).open_interest.value).toBe('0');
    expect((await window('2026-02-01T00:00:00Z', '2026-02-01T00:50:00Z')).open_interest.value).toBe('1070');
  });

  it('keeps what is not published yet in the store, and publishes nothing of one more trade', async () => {
    expect(rig.gw.venue.ledger.store.pending('SOL')).toEqual({ f: 0, ts2: '0', q: '0', pc: 0 });
    at('2026-02-01T01:45:00Z');
    trade(10, '2026-02-01T01:45:00Z');
    await rig.gw.venue.ledger.idle();
    expect(rig.gw.venue.ledger.store.pending('SOL')).toEqual({ f: 2, ts2: (2n * 100n * 11_000n).toString(), q: '200', pc: 1, mx: (100n * 11_000n).toString() });
    at('2026-02-01T03:05:00Z'); // as_of 02:50: the 01:40 slot is past the delay
    const o = stats(await overview(rig));
    expect([o.all_time_volume, o.open_interest.value, o.all_time_users]).toEqual(['1045', '1070', '12']);
  });
});

describe('the dominance rule: a released pool is never mostly one trade (default: at most 50%)', () => {
  let rig: Rig;
  let clock: ManualClock;
  const { fill } = syntheticEvents(() => rig);
  const volume = async (): Promise<string> => stats(await overview(rig)).all_time_volume;
  // ETH: tick 0.01, step 0.001: 1 ETH (1,000 steps) at 2,000 USDC (200,000 ticks)
  const eth = (i: number, ethQty: bigint, when: string): void => fill(`0xb${i}`, `0xs${i}`, 'ETH-USDC-PERP', 1_000n * ethQty, 200_000n, when);

  beforeAll(async () => {
    clock = new ManualClock(T('2026-03-01T00:00:00Z'));
    rig = await startRig({ clock, ...LIMITS }); // the default release and dominance rules
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('five trades of which one is 71% of the volume stay pending; more volume releases them all', async () => {
    clock.advance(T('2026-03-01T00:05:00Z') - clock.nowMs());
    for (let i = 0; i < 4; i++) eth(i, 1n, '2026-03-01T00:05:00Z');
    eth(4, 10n, '2026-03-01T00:05:00Z'); // 20,000 of 28,000 USDC
    await rig.gw.venue.ledger.idle();
    expect(rig.gw.venue.ledger.store.pending('ETH')).toMatchObject({ f: 10, mx: (10_000n * 200_000n).toString() });
    eth(5, 5n, '2026-03-01T00:05:00Z'); // 20,000 of 38,000: still more than half
    await rig.gw.venue.ledger.idle();
    expect(rig.gw.venue.ledger.store.pending('ETH')).toMatchObject({ f: 12 });
    eth(6, 5n, '2026-03-01T00:05:00Z'); // its first side takes the big trade under half: the pool is released
    await rig.gw.venue.ledger.idle();
    expect(rig.gw.venue.ledger.store.pending('ETH')).toEqual({ f: 1, ts2: (5_000n * 200_000n).toString(), q: '5000', pc: 0, mx: (5_000n * 200_000n).toString() });
    clock.advance(T('2026-03-01T01:00:00Z') - clock.nowMs());
    expect(await volume()).toBe('43000'); // (28,000 + 10,000) both sides + 10,000 one side, halved
  });
});

describe('the dominance rule set to 100% is off, also at a pool boundary', () => {
  let rig: Rig;
  let clock: ManualClock;
  const { fill, oneSide } = syntheticEvents(() => rig);

  beforeAll(async () => {
    clock = new ManualClock(T('2026-04-01T00:00:00Z'));
    rig = await startRig({ clock, ...LIMITS, venue: { statsDominancePercent: 100 } });
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('releases a pool cut between a taker fill and its second maker, where the taker fill is most of it', async () => {
    const when = '2026-04-01T00:05:00Z';
    clock.advance(T(when) - clock.nowMs());
    for (let i = 0; i < 4; i++) fill(`0xb${i}`, `0xs${i}`, 'ETH-USDC-PERP', 1n, 200_000n, when); // 8 fills of 2 USDC
    oneSide('0xtaker', 'buy', 'ETH-USDC-PERP', 2_000n, 200_000n, when); // fill 9: 4,000 USDC against two makers
    oneSide('0xm1', 'sell', 'ETH-USDC-PERP', 1_000n, 200_000n, when); // fill 10 cuts the pool; the other maker is in the next
    await rig.gw.venue.ledger.idle();
    // ts2 = 16 + 4,000 + 2,000 = 6,016 USDC, traded notional 3,008: the taker fill is 133% of it
    expect(rig.gw.venue.ledger.store.pending('ETH')).toMatchObject({ f: 0 });
  });
});
