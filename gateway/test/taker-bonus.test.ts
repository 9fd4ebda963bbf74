// Taker bonuses (spec fee table; docs/api.md "Taker bonuses"): the instant bonus per tier, the hourly
// split's conservation, the hourly ledger across a restart and without double payment, and both
// bonuses end to end through real fills on a gateway with a manual clock.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { GatewayDb } from '../src/store/db';
import { ManualClock } from '../src/clock';
import { GatewayEvents, type BonusEvent } from '../src/events';
import { TIER_INFO, TIERS } from '../src/tiers';
import { HOUR_MS, hourOf, instantBonus, splitHourly, type MakerLiquidity } from '../src/bonus/arithmetic';
import { HourlyAccrual, lastPaidWindow } from '../src/bonus/store';
import { HourlyBonus } from '../src/bonus/hourly';
import { VENUE_FEES_KEY } from '../src/results/clearing';
import type { AccountRec } from '../src/store/records';
import { call, bearer, type Account } from './harness';
import { startOrderRig, account, post, settled, relogin, type OrderRig } from './order-rig';

describe('instant taker bonus arithmetic', () => {
  it('is floor(taker fee × the maker tier share), per tier', () => {
    const fee = 1_000_003n; // micro-USDC
    const expected: Record<string, bigint> = { Core: 50_000n, Select: 75_000n, Advanced: 100_000n, Prime: 125_000n, Apex: 200_000n };
    for (const t of TIERS) expect(instantBonus(fee, TIER_INFO[t].instantTakerBonusBps), t).toBe(expected[t]);
    // the floor: 0.05 × 19 = 0.95 micro pays nothing, the venue keeps it
    expect(instantBonus(19n, TIER_INFO.Core.instantTakerBonusBps)).toBe(0n);
    expect(instantBonus(20n, TIER_INFO.Core.instantTakerBonusBps)).toBe(1n);
    expect(instantBonus(39n, TIER_INFO.Apex.instantTakerBonusBps)).toBe(7n); // 7.8
    expect(instantBonus(0n, 2000)).toBe(0n);
    expect(instantBonus(-5n, 2000)).toBe(0n);
  });
});

describe('hourly taker bonus split', () => {
  it('pays each maker floor(fees × notional share × its tier share); paid + remainder = pool, exactly', () => {
    let x = 12345;
    const rnd = (n: number): number => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x % n;
    };
    for (let round = 0; round < 200; round++) {
      const makers: MakerLiquidity[] = [];
      const count = 1 + rnd(12);
      for (let i = 0; i < count; i++) {
        const notional = BigInt(1 + rnd(50_000_000));
        const bps = TIER_INFO[TIERS[rnd(5)]!].hourlyTakerBonusBps;
        makers.push({ user_id: `u${i}`, notional, weighted: notional * BigInt(bps) });
      }
      const fees = BigInt(rnd(10_000_000));
      const s = splitHourly(fees, makers);
      const paid = s.payouts.reduce((a, p) => a + p.amount, 0n);
      expect(paid + s.remainder).toBe(s.pool);
      expect(s.remainder >= 0n && s.remainder < BigInt(count)).toBe(true);
      expect(s.pool <= fees).toBe(true);
      const total = makers.reduce((a, m) => a + m.notional, 0n);
      const weighted = makers.reduce((a, m) => a + m.weighted, 0n);
      expect(s.pool).toBe(fees === 0n ? 0n : (fees * weighted) / (total * 10_000n));
      for (const p of s.payouts) {
        const m = makers.find((k) => k.user_id === p.user_id)!;
        expect(p.amount).toBe((fees * m.weighted) / (total * 10_000n));
      }
    }
  });

  it('one tier: the pool is that tier share of the fees, split by notional', () => {
    const bps = BigInt(TIER_INFO.Select.hourlyTakerBonusBps); // 10%
    const s = splitHourly(1_000n, [
      { user_id: 'a', notional: 1n, weighted: bps }, { user_id: 'b', notional: 1n, weighted: bps }, { user_id: 'c', notional: 1n, weighted: bps },
    ]);
    expect(s.pool).toBe(100n);
    expect(s.payouts.map((p) => p.amount)).toEqual([33n, 33n, 33n]);
    expect(s.remainder).toBe(1n);
  });
});

describe('hourly taker bonus ledger', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tenebra-bonus-'));
  const log = pino({ level: 'silent' });
  const t0 = Date.UTC(2026, 0, 5, 10, 15, 0);
  const clock = new ManualClock(t0);
  const users = ['0xaa', '0xbb'];
  let db = new GatewayDb(dir);
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const acct = (user_id: string): AccountRec => ({
    user_id, user_uuid: '0'.repeat(32), tier: 'Core', leverage: 1, scopes: ['trade', 'read'], api_key: user_id, secret_hash: '', pass_hash: '',
    balance: '1000000', reserved: '0', open_orders: 0, open_by_symbol: {}, deposited: '1000000', created_at: new Date(t0).toISOString(),
  });
  const accrue = (fee: bigint, maker: string, notional: bigint, bps: number): Promise<void> => db.txAsync(() => {
    const a = new HourlyAccrual(db);
    a.add(a.windowAt(clock.nowMs()), fee, maker, notional, bps);
    a.flush();
  });
  const balance = (u: string): bigint => BigInt(db.accounts.get(u)!.balance);

  it('keeps accruals across a restart mid-window, pays the window once, never twice', async () => {
    await db.txAsync(() => {
      for (const u of users) db.accounts.putSync(u, acct(u));
      db.meta.putSync(VENUE_FEES_KEY, '100000');
    });
    await accrue(30_001n, '0xaa', 1_000_000n, 500);
    // restart mid-window: a new store handle on the same folder
    await db.close();
    db = new GatewayDb(dir);
    clock.advance(20 * 60_000);
    await accrue(30_000n, '0xbb', 2_000_000n, 2500);
    await accrue(10_000n, '0xaa', 1_000_000n, 500);

    const events: BonusEvent[] = [];
    const ev = new GatewayEvents();
    ev.on('bonus', (e) => events.push(e));
    const hourly = new HourlyBonus(db, clock, ev, log);
    expect(await hourly.payDue()).toEqual([]); // the hour has not ended
    expect(hourly.accruing('0xaa')).toEqual([{ window_start_ms: hourOf(t0) * HOUR_MS, notional: 2_000_000n, window_notional: 4_000_000n, window_taker_fees: 70_001n }]);

    clock.advance(HOUR_MS);
    const [paid, again] = await Promise.all([hourly.payDue(), hourly.payDue()]);
    expect(again).toEqual([]);
    expect(paid).toHaveLength(1);
    const w = paid[0]!;
    // aa: 70,001 × 2,000,000 × 500 / (4,000,000 × 10,000) = 1,750.025 → 1,750; bb: × 2,000,000 × 2,500 → 8,750.125 → 8,750
    expect(w).toMatchObject({ window: hourOf(t0), taker_fees: '70001', notional: '4000000', pool: '10500', paid: '10500', remainder: '0', makers: 2 });
    expect(BigInt(w.paid) + BigInt(w.remainder)).toBe(BigInt(w.pool));
    expect(balance('0xaa')).toBe(1_001_750n);
    expect(balance('0xbb')).toBe(1_008_750n);
    expect(db.accounts.get('0xaa')!.bonus_hourly).toBe('1750');
    expect(db.meta.get(VENUE_FEES_KEY)).toBe(String(100_000 - 10_500)); // paid out of the venue's fee income
    expect(events.map((e) => [e.user_id, e.amount])).toEqual([['0xaa', 1750n], ['0xbb', 8750n]]);
    expect(hourly.payouts('0xbb')).toMatchObject([{ window: hourOf(t0), amount: '8750', notional: '2000000', window_notional: '4000000' }]);

    // after a restart nothing is paid again
    await db.close();
    db = new GatewayDb(dir);
    const hourly2 = new HourlyBonus(db, clock, ev, log);
    expect(await hourly2.payDue()).toEqual([]);
    expect(balance('0xaa')).toBe(1_001_750n);
    expect(events).toHaveLength(2);
    expect(lastPaidWindow(db)).toBe(hourOf(t0));

    // a fill applied with the clock stepped back into the paid hour counts in the next window
    const back = new ManualClock(t0);
    await db.txAsync(() => {
      const a = new HourlyAccrual(db);
      expect(a.windowAt(back.nowMs())).toBe(hourOf(t0) + 1);
    });
  });

  it('keeps the rounding remainder with the venue', async () => {
    const w0 = hourOf(clock.nowMs());
    for (const u of ['0xaa', '0xbb']) await accrue(0n, u, 1n, 500);
    await accrue(101n, '0xaa', 1n, 500); // 3 notional: aa 2, bb 1; fees 101; pool floor(101 × 5%) = 5
    const before = BigInt(db.meta.get(VENUE_FEES_KEY) as string);
    const b0 = balance('0xaa') + balance('0xbb');
    clock.advance(HOUR_MS);
    const [w] = await new HourlyBonus(db, clock, new GatewayEvents(), log).payDue();
    // aa: 101 × 2 × 500 / 30,000 = 3.37 → 3; bb: 1.68 → 1; remainder 1
    expect(w).toMatchObject({ window: w0, pool: '5', paid: '4', remainder: '1' });
    expect(balance('0xaa') + balance('0xbb') - b0).toBe(4n);
    expect(BigInt(db.meta.get(VENUE_FEES_KEY) as string)).toBe(before - 4n);
  });
});

describe('taker bonuses through real fills', () => {
  let rig: OrderRig;
  let clock: ManualClock;
  let core: Account;
  let prime: Account;
  let taker: Account;
  const UNI = (side: string, quantity: number, price: number, tif = 'GTC') => ({ symbol: 'UNI-USDC-PERP', side, type: 'limit', quantity, price, time_in_force: tif });
  const get = async (a: Account, path: string): Promise<Record<string, any>> => {
    const r = await call(rig.gw, 'GET', `/api/v1${path}`, undefined, bearer(a));
    expect(r.status, r.raw).toBe(200);
    return r.body.data;
  };

  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 10, 0));
    rig = await startOrderRig({ clock, bonus: { checkIntervalMs: 3_600_000 } });
    [core, prime, taker] = await Promise.all([account(rig, 'Core', '100000', { leverage: 2 }), account(rig, 'Prime', '100000', { leverage: 2 }), account(rig, 'Apex', '100000', { leverage: 2 })]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('credits the maker the instant bonus at the fill, and the hourly share when the hour ends', async () => {
    const equity0 = Number((await get(core, '/account')).equity);
    await post(rig, core, UNI('sell', 10, 8));
    await post(rig, prime, UNI('sell', 12, 8.001)); // Prime's minimum notional is 90
    await settled(rig);
    await post(rig, taker, UNI('buy', 22, 8.001, 'IOC'));
    await settled(rig);
    // taker (Apex, 2 bps): 80 USDC → 16,000 micro; 96.012 USDC → 19,202.4 → 19,203 (charges round up)
    // instant: Core 5% of 16,000 = 800; Prime 12.5% of 19,203 = 2,400.375 → 2,400
    expect(await get(core, '/account/bonuses')).toMatchObject({ instant_total: 0.0008, hourly_total: 0, payouts: [] });
    expect((await get(prime, '/account/vip')).bonuses_received).toEqual({ instant: 0.0024, hourly: 0 });
    // the Core maker paid 2 bps (16,000) and got 800 back
    expect(Number((await get(core, '/account')).equity)).toBeCloseTo(equity0 - 0.016 + 0.0008, 6);
    // the maker's fill notification carries the bonus of that fill; the taker's carries 0
    const notes = rig.gw.sse.notifications;
    const fills = (u: string) => notes.since(u, `${notes.epoch}.0`)!.filter((n) => n.event === 'fill').map((n) => (n.data.instant_bonus as { text: string }).text);
    expect(fills(core.user_id)).toEqual(['0.0008']);
    expect(fills(prime.user_id)).toEqual(['0.0024']);
    expect(fills(taker.user_id).every((b) => b === '0')).toBe(true);
    const acc = (await get(core, '/account/bonuses')).accruing;
    expect(acc).toEqual([{ window_start: '2026-01-05T12:00:00.000Z', window_end: '2026-01-05T13:00:00.000Z', maker_notional: 80, window_maker_notional: 176.012, window_taker_fees: 0.035203 }]);

    clock.advance(HOUR_MS);
    const [w] = await rig.gw.bonus.payDue();
    // fees 35,203; N = 176,012,000; Core 80,000,000 × 500, Prime 96,012,000 × 1,500
    const F = 35_203n;
    const N = 176_012_000n;
    const coreHourly = (F * 80_000_000n * 500n) / (N * 10_000n);
    const primeHourly = (F * 96_012_000n * 1500n) / (N * 10_000n);
    const pool = (F * (80_000_000n * 500n + 96_012_000n * 1500n)) / (N * 10_000n);
    expect(w).toMatchObject({ taker_fees: '35203', pool: String(pool), paid: String(coreHourly + primeHourly), remainder: String(pool - coreHourly - primeHourly) });
    await relogin(rig, core);
    await relogin(rig, prime);
    const mine = await get(core, '/account/bonuses');
    expect(mine.hourly_total).toBe(Number(coreHourly) / 1e6);
    expect(mine.payouts).toMatchObject([{ window_start: '2026-01-05T12:00:00.000Z', amount: Number(coreHourly) / 1e6, maker_notional: 80 }]);
    expect(mine.accruing).toEqual([]);
    expect((await get(prime, '/account/vip')).bonuses_received).toEqual({ instant: 0.0024, hourly: Number(primeHourly) / 1e6 });
    expect(await rig.gw.bonus.payDue()).toEqual([]);
    // and a `bonus` notification announced it
    const paidNote = notes.since(core.user_id, `${notes.epoch}.0`)!.find((n) => n.event === 'bonus')!;
    expect(paidNote.data).toMatchObject({ kind: 'hourly', window_start: '2026-01-05T12:00:00.000Z', window_end: '2026-01-05T13:00:00.000Z' });
    expect((paidNote.data.amount as { text: string }).text).toBe(String(Number(coreHourly) / 1e6));
  });
});
