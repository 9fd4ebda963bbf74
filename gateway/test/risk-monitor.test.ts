// The mark-to-market and liquidation monitor (gateway/src/risk-monitor, docs/risk.md) on a real gateway
// with the matching committee stand-in, a manual clock and an oracle that moves only when told. The
// monitor's timer is off (intervalMs 0): each evaluation is an explicit tick(), so every step is exact.
// Each scenario trades its own symbol between fresh accounts, so the scenarios do not touch each other.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { toUnits } from '@tenebra/config';
import { ManualClock } from '../src/clock';
import type { MarginAlertEvent, PositionEvent } from '../src/events';
import { positionKey, type GatewayDb } from '../src/store/db';
import { LIQUIDATION_VAULT_ID } from '../src/risk-monitor/liquidation-ladder';
import { call, bearer, type Account } from './harness';
import { big, str } from '../src/store/records';
import { ADMIN_SECRET_HEADER } from '../src/http/routes-admin';
import { until } from './fakes';
import { startOrderRig, account, post as postNow, getOrder, settled, type OrderRig } from './order-rig';
import { RawWs } from './ws-helpers';
import pino from 'pino';
import { createGateway } from '../src/gateway';

const clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0));
let rig: OrderRig;
const alerts: MarginAlertEvent[] = [];
const positionEvents: PositionEvent[] = [];
const sockets: RawWs[] = [];

// socialized losses past 200 USDC in one market halt it (the bankruptcy scenarios)
const RISK = { intervalMs: 0, fundingIntervalMs: 60_000, defaultFundingRatePips: 0n, fundingRatePips: { 'BTC-USDC-PERP': 100n }, fundingReleasePayers: 1, socializedLossHaltMicro: 200_000_000n };
let restarted = false;

const SOL = 'SOL-USDC-PERP';
const ETH = 'ETH-USDC-PERP';
const BNB = 'BNB-USDC-PERP';
const BTC = 'BTC-USDC-PERP';
const AVAX = 'AVAX-USDC-PERP';
const LINK = 'LINK-USDC-PERP';
const AAVE = 'AAVE-USDC-PERP';
const XRP = 'XRP-USDC-PERP';
const APT = 'APT-USDC-PERP';
const DOT = 'DOT-USDC-PERP';
const NEAR = 'NEAR-USDC-PERP';
const UNI = 'UNI-USDC-PERP';
const TICK: Record<string, string> = { [AAVE]: '0.01', [SOL]: '0.01', [ETH]: '0.01', [BNB]: '0.01', [BTC]: '0.1', [AVAX]: '0.001', [LINK]: '0.001', [XRP]: '0.0001', [APT]: '0.001', [DOT]: '0.001', [NEAR]: '0.001', [UNI]: '0.001' };

beforeAll(async () => {
  // funding only on BTC (its own scenario), every minute, 100 pips (0.01%) per interval
  rig = await startOrderRig({ clock, risk: RISK });
  rig.gw.events.on('margin_alert', (e) => alerts.push(e));
  rig.gw.events.on('position', (e) => positionEvents.push(e));
});
afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  if (restarted) await rig.gw.stop(); // rig.close() stops the gateway it started
  await rig?.close();
});

/** Sets a symbol's reference mid (USDC text) and publishes it on both feeds (fresh now). */
function setMark(symbol: string, price: string): void {
  rig.sim.market.set(symbol, toUnits(price, TICK[symbol]!)!);
  rig.sim.primary.publish();
  rig.sim.secondary.publish();
}

/** Moves the manual clock and republishes (the feeds stamp quotes with the manual clock). */
function advance(ms: number): void {
  clock.advance(ms);
  rig.sim.primary.publish();
  rig.sim.secondary.publish();
}

const tick = (): Promise<void> => rig.gw.risk.tick();

/** POST /orders 2 ms later on the manual clock (the venue spaces actions per account and symbol by 1 ms). */
function post(r: OrderRig, a: Account, body: Record<string, unknown>) {
  clock.advance(2);
  return postNow(r, a, body);
}

/** Moves the clock to just before (by `early` ms) the end of the position's current pause. */
function toPauseEnd(userId: string, symbol: string, early: number): void {
  const resume = readPosition(userId, symbol)!.liquidation!.resume_at_ms;
  advance(resume - early - clock.nowMs());
}

const limit = (symbol: string, side: string, quantity: string, price: string, tif = 'GTC') =>
  ({ symbol, side, type: 'limit', quantity, price, time_in_force: tif });

/** long opens `qty` at `price` against short (both leverage 10 unless capped by the instrument). */
async function openPair(symbol: string, qty: string, price: string): Promise<{ long: Account; short: Account }> {
  setMark(symbol, price);
  const [long, short] = await Promise.all([account(rig, 'Apex', '100000', { leverage: 10 }), account(rig, 'Apex', '100000', { leverage: 10 })]);
  expect((await post(rig, short, limit(symbol, 'sell', qty, price))).status).toBe(200);
  expect((await post(rig, long, limit(symbol, 'buy', qty, price, 'IOC'))).status).toBe(200);
  await settled(rig);
  return { long, short };
}

async function positions(a: Account): Promise<Record<string, any>[]> {
  const r = await call(rig.gw, 'GET', '/api/v1/positions', undefined, bearer(a));
  expect(r.status).toBe(200);
  return r.body.data.positions;
}

async function position(a: Account, symbol: string): Promise<Record<string, any> | undefined> {
  return (await positions(a)).find((p) => p.symbol === symbol);
}

/** The gateway's own store, read only (the monitor holds it; lmdb reads are synchronous). */
const gwDb = (): GatewayDb => (rig.gw.risk as unknown as { db: GatewayDb }).db;

function readPosition(userId: string, symbol: string) {
  return gwDb().positions.get(positionKey(userId, symbol));
}

const alertsOf = (userId: string, symbol: string): string[] => alerts.filter((e) => e.user_id === userId && e.symbol === symbol).map((e) => e.tier);
/**
 * The position's update reasons, those of settlement left out: the settlement service closes a batch
 * on its own wall-clock timer (every 2 s, not the manual clock) and re-announces each settled
 * position, current state, as 'settlement' whenever that batch lands. Under load one landed after
 * the funding update and failed the check that funding came last (2026-12-02, two workers).
 */
const reasonsOf = (userId: string, symbol: string): string[] =>
  positionEvents.filter((e) => e.position.user_id === userId && e.position.symbol === symbol && e.update_reason !== 'settlement').map((e) => e.update_reason);

describe('mark-to-market', () => {
  it('marks open positions at the oracle mid: mark_price, unrealized PnL exact, account equity includes it', async () => {
    const { long, short } = await openPair(SOL, '10', '150');
    await tick();
    let p = (await position(long, SOL))!;
    expect(p).toMatchObject({ side: 'long', size: 10, entry_price: 150, mark_price: 150, unrealized_pnl: 0, margin: 150, funding_accrued: 0 });
    setMark(SOL, '151.37');
    await tick();
    p = (await position(long, SOL))!;
    expect(p).toMatchObject({ mark_price: 151.37, unrealized_pnl: 13.7 });
    // where the first tranche fires (110%): (size×entry − collateral) / (size × (1 − 1.1 × mmr)) = 1350 / 9.45
    expect(p.liquidation_price).toBe(142.857143);
    expect(await position(short, SOL)).toMatchObject({ side: 'short', mark_price: 151.37, unrealized_pnl: -13.7 });
    setMark(SOL, '149.99');
    await tick();
    expect(await position(long, SOL)).toMatchObject({ mark_price: 149.99, unrealized_pnl: -0.1 });
    const acct = (await call(rig.gw, 'GET', '/api/v1/account', undefined, bearer(long))).body.data;
    expect(acct.unrealized_pnl).toBe(-0.1);
    // equity = cash balance + position margin + unrealized PnL, to the micro-USDC
    expect(Math.round((acct.balance + acct.position_margin - 0.1) * 1e6)).toBe(Math.round(acct.equity * 1e6));
    expect(reasonsOf(long.user_id, SOL).filter((r) => r === 'mark_price').length).toBeGreaterThanOrEqual(3);
  });

  it('does not mark a position whose stored change is not announced yet, and marks one that nobody announces a tick later (ADR 0026)', async () => {
    const SUI = 'SUI-USDC-PERP';
    TICK[SUI] = '0.0001';
    const { long } = await openPair(SUI, '100', '2');
    await tick();
    const key = positionKey(long.user_id, SUI);
    const from = positionEvents.length;
    const marks = () => positionEvents.slice(from).filter((e) => e.position.user_id === long.user_id && e.position.symbol === SUI && e.update_reason === 'mark_price');
    // as a commit whose events are not out yet: the stored state moved, nothing was announced
    const rec = readPosition(long.user_id, SUI)!;
    await gwDb().positions.put(key, { ...rec, updated_ns: String(BigInt(rec.updated_ns) + 1n) });
    setMark(SUI, '2.01');
    await tick();
    expect(marks()).toHaveLength(0);
    await tick(); // a whole tick and still nobody announced it: marked now, not never
    expect(marks()).toHaveLength(1);
    // announced states are marked at once
    setMark(SUI, '2.02');
    await tick();
    expect(marks()).toHaveLength(2);
    expect(marks()[1]!.position.updated_ns).toBe(String(BigInt(rec.updated_ns) + 1n));
  });

  it('the positions channel carries mark_price updates with the new mark and PnL', async () => {
    const { long } = await openPair(BNB, '1', '600');
    await tick();
    const tok = await call(rig.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: long.api_key, client_secret: long.api_secret, passphrase: long.passphrase });
    const c = await RawWs.open(rig.gw.urls.wsUrl);
    sockets.push(c);
    expect((await c.login(tok.body.access_token)).f.code).toBe(0);
    expect((await c.setup()).f.code).toBe(0);
    await c.request('subscribe', { channel: 'positions' });
    await c.waitFor((r) => r.f.channel === 'positions' && r.f.snapshot_complete);
    const snap = c.pushes('positions').map((r) => (r.plain as any).position_update).find((u) => u?.symbol === BNB);
    expect(snap).toMatchObject({ mark_price: '600', unrealized_pnl: '0' });
    advance(1_000); // past the per-position throttle window
    setMark(BNB, '612.5');
    await tick();
    const u = await c.waitFor((r) => r.f.type === 'update' && (r.plain as any)?.position_update?.update_reason === 'mark_price' && (r.plain as any).position_update.symbol === BNB, 'mark_price update');
    expect((u.plain as any).position_update).toMatchObject({ mark_price: '612.5', unrealized_pnl: '12.5', entry_price: '600' });
  });

  it('a tick with nothing due reads no position again after its scan (the quick path), and still marks and alerts', async () => {
    const { long } = await openPair(UNI, '10', '10');
    await tick();
    const db = gwDb();
    const get = db.positions.get.bind(db.positions);
    let reads = 0;
    db.positions.get = ((key: string) => {
      reads++;
      return get(key);
    }) as typeof db.positions.get;
    const before = positionEvents.length;
    try {
      setMark(UNI, '10.5');
      await tick();
    } finally {
      db.positions.get = get;
    }
    expect(reads).toBe(0);
    expect(positionEvents.slice(before).some((e) => e.update_reason === 'mark_price' && e.position.user_id === long.user_id && e.position.symbol === UNI)).toBe(true);
    expect(await position(long, UNI)).toMatchObject({ mark_price: 10.5, unrealized_pnl: 5 });
  });

  it('a stale mark changes nothing: no marking, no alert, no liquidation; the last mark stays', async () => {
    const { long } = await openPair(AVAX, '10', '30');
    await tick();
    const before = alerts.length;
    const events = positionEvents.length;
    rig.sim.primary.halt();
    rig.sim.secondary.halt();
    try {
      rig.sim.market.set(AVAX, toUnits('20', TICK[AVAX]!)!); // would be a T3 liquidation if it were seen
      clock.advance(5_000); // both feeds' quotes are now older than 3 s
      await tick();
      expect(alerts.length).toBe(before);
      expect(positionEvents.slice(events).filter((e) => e.position.symbol === AVAX)).toHaveLength(0);
      expect(await position(long, AVAX)).toMatchObject({ size: 10, mark_price: 30, unrealized_pnl: 0 });
      expect(readPosition(long.user_id, AVAX)?.liquidation ?? null).toBeNull();
      expect(rig.logs.some((l) => l.includes('mark price stale or missing') && l.includes(AVAX))).toBe(true);
    } finally {
      rig.sim.market.set(AVAX, toUnits('30', TICK[AVAX]!)!);
      rig.sim.primary.resume();
      rig.sim.secondary.resume();
    }
    await tick();
    expect(await position(long, AVAX)).toMatchObject({ size: 10, mark_price: 30 });
    expect(rig.logs.some((l) => l.includes('mark price fresh again'))).toBe(true);
  });
});

describe('health tiers and the liquidation ladder', () => {
  // ETH: long 1 @ 3000 at 10x: margin 300, maintenance 5% of size × mark.
  // ratio = (300 + P − 3000) / (0.05 P)
  let long: Account;
  let resting: string;
  let t1At = 0;

  it('tier transitions raise margin alerts: Warning150, Critical120 (no cancels there), Healthy clears', async () => {
    ({ long } = await openPair(ETH, '1', '3000'));
    const r = await post(rig, long, limit(ETH, 'buy', '0.1', '2800')); // rests below (inside ETH's price window around the mark, ADR 0024)
    expect(r.status).toBe(200);
    resting = r.body.data.order_id;
    await settled(rig);
    await tick();
    expect(alertsOf(long.user_id, ETH)).toEqual([]);
    setMark(ETH, '2900'); // 200 / 145 = 137.9%
    await tick();
    expect(alertsOf(long.user_id, ETH)).toEqual(['Warning150']);
    expect(alerts.at(-1)).toMatchObject({ tier: 'Warning150', margin_ratio: '1.3793', mark_price: '2900', liquidation_price: '2857.142857' });
    setMark(ETH, '2865'); // 165 / 143.25 = 115.2%
    await tick();
    expect(alertsOf(long.user_id, ETH)).toEqual(['Warning150', 'Critical120']);
    expect((await getOrder(rig, long, resting)).status).toBe('NEW'); // Critical120 cancels nothing (docs/risk.md)
    setMark(ETH, '3000');
    await tick();
    expect(alertsOf(long.user_id, ETH)).toEqual(['Warning150', 'Critical120', 'Healthy']);
  });

  it('T1: 10% of the size to the vault at the mark, lockout (1411) and LIQUIDATION cancels', async () => {
    setMark(ETH, '2850'); // 150 / 142.5 = 105.3%: T1
    t1At = clock.nowMs();
    await tick();
    const p = readPosition(long.user_id, ETH)!;
    expect(p.size_steps).toBe('900'); // 0.9 ETH left
    // the transferred 0.1 realised (2850 − 3000) × 0.1 = −15 into the margin: 300 − 15
    expect(p.margin).toBe('285000000');
    expect(p.realized_pnl).toBe('-15000000');
    expect(p.liquidation).toMatchObject({ original_steps: '1000', side: 'long', done: 1, transferred_steps: '100' });
    const vault = readPosition(LIQUIDATION_VAULT_ID, ETH)!;
    expect(vault).toMatchObject({ size_steps: '100', basis_ts: String(100 * 285_000) });
    expect(alertsOf(long.user_id, ETH).at(-1)).toBe('T1');
    expect(reasonsOf(long.user_id, ETH)).toContain('liquidation');
    // ratio after T1: 150 / 128.25 = 117%, still reported T1 while the ladder lasts
    expect(await position(long, ETH)).toMatchObject({ size: 0.9, margin: 285, unrealized_pnl: -135, mark_price: 2850 });
    const o = await until(async () => {
      const x = await getOrder(rig, long, resting);
      return x.status === 'CANCELLED' ? x : null;
    }, 10_000, 'LIQUIDATION cancel');
    expect(o.cancel_reason).toBe('LIQUIDATION');
    const refused = await post(rig, long, limit(ETH, 'buy', '0.1', '2000'));
    expect([refused.status, refused.body.code, refused.body.error]).toEqual([400, 1411, 'ACCOUNT_IN_LIQUIDATION']);
  });

  it('T2 waits for the 2 s pause, then 30% of the ORIGINAL size (cumulative 40%)', async () => {
    setMark(ETH, '2810'); // (285 − 171) / 126.45 = 90.2%: T2
    await tick();
    expect(readPosition(long.user_id, ETH)!.size_steps).toBe('900'); // paused
    expect(readPosition(long.user_id, ETH)!.liquidation!.resume_at_ms - t1At).toBe(2_000);
    toPauseEnd(long.user_id, ETH, 1);
    await tick();
    expect(readPosition(long.user_id, ETH)!.size_steps).toBe('900');
    advance(1);
    await tick();
    const p = readPosition(long.user_id, ETH)!;
    expect(p.size_steps).toBe('600'); // 1 − 0.4
    expect(p.margin).toBe('228000000'); // 285 + 0.3 × (2810 − 3000)
    expect(p.liquidation).toMatchObject({ done: 2, transferred_steps: '400' });
    expect(readPosition(LIQUIDATION_VAULT_ID, ETH)!.size_steps).toBe('400');
    expect(alertsOf(long.user_id, ETH).at(-1)).toBe('T2');
  });

  it('T3 waits for the 3 s pause, then the rest (cumulative 100%); the lockout lifts 5 s later', async () => {
    setMark(ETH, '2700'); // (228 − 180) / 81 = 59%: T3
    const t2At = clock.nowMs();
    expect(readPosition(long.user_id, ETH)!.liquidation!.resume_at_ms - t2At).toBe(3_000);
    toPauseEnd(long.user_id, ETH, 1);
    await tick();
    expect(readPosition(long.user_id, ETH)!.size_steps).toBe('600');
    advance(1);
    const balanceBefore = BigInt(gwDb().accounts.get(long.user_id)!.balance);
    await tick();
    const p = readPosition(long.user_id, ETH)!;
    expect(p.size_steps).toBe('0');
    expect(p.margin).toBe('0');
    // the margin left (228 − 0.6 × 300 = 48 USDC) went back to the balance, as on a close
    const db = gwDb();
    expect(BigInt(db.accounts.get(long.user_id)!.balance) - balanceBefore).toBe(48_000_000n);
    expect(readPosition(LIQUIDATION_VAULT_ID, ETH)!.size_steps).toBe('1000');
    expect(reasonsOf(long.user_id, ETH).slice(-2)).toEqual(['liquidation', 'closed']);
    expect(await position(long, ETH)).toBeUndefined();
    expect(alertsOf(long.user_id, ETH).at(-1)).toBe('T3');
    // still locked during the 5 s pause after T3
    expect(db.accounts.get(long.user_id)!.in_liquidation).toBe(true);
    expect(p.liquidation!.resume_at_ms - clock.nowMs()).toBe(5_000);
    toPauseEnd(long.user_id, ETH, 1);
    await tick();
    expect(db.accounts.get(long.user_id)!.in_liquidation).toBe(true);
    advance(1);
    await tick();
    expect(db.accounts.get(long.user_id)!.in_liquidation).toBe(false);
    expect(alertsOf(long.user_id, ETH).at(-1)).toBe('Healthy');
    expect((await post(rig, long, limit(ETH, 'buy', '0.1', '2000'))).status).toBe(200);
  });
});

describe('recovery', () => {
  it('after T1 the ladder lasts until the ratio is above 130% (hysteresis): then the lockout lifts, no more tranches', async () => {
    // LINK long 100 @ 15 at 8x (the instrument's maximum): margin 187.5, maintenance 5%
    const { long } = await openPair(LINK, '100', '15');
    const margin = Number(readPosition(long.user_id, LINK)!.margin) / 1e6;
    expect(margin).toBe(187.5);
    // ratio = (187.5 + 100 (P − 15)) / (5 P)
    setMark(LINK, '13.9'); // 77.5 / 69.5 = 111.5%: Critical120
    await tick();
    expect(alertsOf(long.user_id, LINK)).toEqual(['Critical120']);
    setMark(LINK, '13.85'); // 72.5 / 69.25 = 104.7%: T1
    await tick();
    let p = readPosition(long.user_id, LINK)!;
    expect(p.size_steps).toBe('900'); // 90 LINK (step 0.1)
    expect(p.liquidation?.done).toBe(1);
    // margin 187.5 − 11.5 = 176 on 90 LINK; at 14.05: (176 − 85.5) / 63.225 = 143%: above 130%, recovered
    setMark(LINK, '14.05');
    advance(2_000);
    await tick();
    p = readPosition(long.user_id, LINK)!;
    expect(p.liquidation ?? null).toBeNull();
    expect(p.size_steps).toBe('900');
    const db = gwDb();
    expect(db.accounts.get(long.user_id)!.in_liquidation).toBe(false);
    expect(alertsOf(long.user_id, LINK).at(-1)).toBe('Warning150');
  });

  it('between 110% and 130% after a tranche the position stays in liquidation (no early recovery)', async () => {
    const { long } = await openPair(LINK, '100', '15');
    setMark(LINK, '13.85');
    await tick();
    expect(readPosition(long.user_id, LINK)!.liquidation?.done).toBe(1);
    setMark(LINK, '13.95'); // (176 − 94.5) / 62.775 = 129.8%: not above 130%
    advance(2_000);
    await tick();
    const db = gwDb();
    expect(readPosition(long.user_id, LINK)!.liquidation?.done).toBe(1);
    expect(db.accounts.get(long.user_id)!.in_liquidation).toBe(true);
    expect(alertsOf(long.user_id, LINK).at(-1)).toBe('T1');
    setMark(LINK, '13.96'); // (176 − 93.6) / 62.82 = 131.2%: recovered
    await tick();
    expect(readPosition(long.user_id, LINK)!.liquidation ?? null).toBeNull();
    expect(db.accounts.get(long.user_id)!.in_liquidation).toBe(false);
  });
});

describe('funding', () => {
  it('settles size × mark × rate every interval: payers round up, receivers down, the residual to the insurance fund', async () => {
    // BTC long/short 0.003 @ 65000.1 (tick 0.1): notional 195.0003 USDC, 100 pips = 0.0195 0003 USDC
    const { long, short } = await openPair(BTC, '0.003', '65000.1');
    const fundBefore = rig.gw.risk.fund.state();
    await tick(); // first sight of the interval: nothing charged
    expect(readPosition(long.user_id, BTC)!.funding_accrued ?? '0').toBe('0');
    const now = clock.nowMs();
    advance(60_000 - (now % 60_000)); // the next funding boundary
    await tick();
    const l = readPosition(long.user_id, BTC)!;
    const s = readPosition(short.user_id, BTC)!;
    expect(l.funding_accrued).toBe('-19501'); // ceil(19500.03)
    expect(s.funding_accrued).toBe('19500'); // floor
    expect(reasonsOf(long.user_id, BTC).at(-1)).toBe('funding');
    expect(rig.gw.risk.fund.state().credited - fundBefore.credited).toBe(1n);
    expect(await position(long, BTC)).toMatchObject({ funding_accrued: -0.019501 });
    // margin carries it: 19.50003 (initial margin at 10x, rounded up) − 0.019501
    expect(l.margin).toBe(String(19_500_030n - 19_501n));
    await tick(); // same interval: not charged twice
    expect(readPosition(long.user_id, BTC)!.funding_accrued).toBe('-19501');
    // the public statistics report funding paid (the payers' side) once as_of (now − 10 min) passed it
    advance(20 * 60_000);
    const overview = await call(rig.gw, 'GET', '/api/v1/stats/platform/overview?range=1d');
    expect(overview.body.data.funding).toEqual({ value: '0.019501' });
    const series = await call(rig.gw, 'GET', '/api/v1/stats/platform/series?metric=funding&range=1d&assets=BTC,ETH');
    const points = series.body.data.points as { total: string; by_asset: Record<string, string> }[];
    expect(points.filter((x) => x.total !== '0')).toEqual([expect.objectContaining({ total: '0.019501', by_asset: { BTC: '0.019501', ETH: '0' } })]);
  });
});

/** maker rests `qty` at `price` on `side`, taker takes it whole (IOC); the mark is set to the price first. */
async function trade(symbol: string, maker: Account, taker: Account, makerSide: 'buy' | 'sell', qty: string, price: string): Promise<void> {
  setMark(symbol, price);
  expect((await post(rig, maker, limit(symbol, makerSide, qty, price))).status).toBe(200);
  expect((await post(rig, taker, limit(symbol, makerSide === 'buy' ? 'sell' : 'buy', qty, price, 'IOC'))).status).toBe(200);
  await settled(rig);
}

const usdc = (text: string): bigint => toUnits(text, '0.000001')!;

/** One fresh account per leverage, in order. */
async function accountsAt<const L extends readonly number[]>(leverages: L): Promise<{ [K in keyof L]: Account }> {
  // Promise.all over a mapped tuple loses its length; the map keeps one account per entry
  return (await Promise.all(leverages.map((leverage) => account(rig, 'Apex', '100000', { leverage })))) as { [K in keyof L]: Account };
}

/** The instrument's status as GET /instruments/{symbol} shows it. */
async function statusOf(symbol: string): Promise<string> {
  const r = await call(rig.gw, 'GET', `/api/v1/instruments/${symbol}`);
  expect(r.status).toBe(200);
  return r.body.data.status;
}
const logged = (text: string): string[] => rig.logs.filter((l) => l.includes(text));

describe('bankruptcy: auto-deleveraging, insurance fund, socialized loss, halt', () => {
  it('a bankrupt position is closed at its bankruptcy price against the profitable opposite position: it gets nothing back, the tick rounding is the only deficit', async () => {
    const { long, short } = await openPair(SOL, '10', '150');
    setMark(SOL, '142.6'); // T1: 1 SOL to the vault; the margin keeps its loss: 150 − 7.4 = 142.6
    await tick();
    expect(readPosition(long.user_id, SOL)!.liquidation?.done).toBe(1);
    setMark(SOL, '120'); // equity 142.6 − 9 × 30 < 0: no tranche can restore it
    advance(2_000);
    const fund = rig.gw.risk.fund.state();
    const shortBefore = readPosition(short.user_id, SOL)!;
    const shortEvents = reasonsOf(short.user_id, SOL).length;
    const balanceBefore = gwDb().accounts.get(long.user_id)!.balance;
    const logsBefore = rig.logs.length;
    await tick();
    const lines = rig.logs.slice(logsBefore).map((l) => JSON.parse(l) as Record<string, any>);
    const p = readPosition(long.user_id, SOL)!;
    expect(p.size_steps).toBe('0');
    expect(p.margin).toBe('0');
    expect(gwDb().accounts.get(long.user_id)!.balance).toBe(balanceBefore); // nothing of the margin comes back
    // bankruptcy price (1350 − 142.6) / 9 = 134.1556, rounded DOWN to the tick (against the long):
    // a short (both SOL pairs are bankrupt here, so either) closes 9 at 134.15 and gains 142.65,
    // 0.05 beyond the long's 142.6: the only deficit
    const adl = lines.find((l) => l.user_id === long.user_id && l.msg.includes('auto-deleveraged'))!;
    expect(adl).toMatchObject({ bankruptcy_ticks: '13415', to_vault: '0', deficit: '50000', counterparties: [{ steps: '900', pnl: '142650000' }] });
    const s = readPosition(short.user_id, SOL)!;
    expect(s.size_steps).toBe('-100'); // 9 of its 10 SOL closed
    // the deficits of this evaluation go to the fund first, then to the profitable positions (the
    // short's last SOL among them); none is left uncovered
    expect(rig.gw.risk.fund.state().uncovered).toBe(fund.uncovered);
    const shortShare = lines.filter((l) => l.symbol === SOL && l.socialized)
      .flatMap((l) => l.socialized as { user_id: string; micro: string }[]).filter((x) => x.user_id === short.user_id)
      .reduce((t, x) => t + BigInt(x.micro), 0n);
    expect(big(s.realized_pnl) - big(shortBefore.realized_pnl)).toBe(usdc('142.65') - shortShare); // 9 × (150 − 134.15): less than at the mark (270)
    expect(reasonsOf(long.user_id, SOL).slice(-2)).toEqual(['liquidation', 'closed']);
    expect(reasonsOf(short.user_id, SOL).slice(shortEvents)).toContain('liquidation'); // (its mark_price may follow in the same evaluation)
    expect(await statusOf(SOL)).toBe('trading');
  });

  it('a position that turns bankrupt during a ladder pause is deleveraged at once, not at the end of the pause', async () => {
    const { long, short } = await openPair(NEAR, '10', '150'); // 8x (NEAR's maximum): margin 187.5
    setMark(NEAR, '138.5'); // 104.7%: T1, 1 NEAR to the vault, margin 176; then a 2 s pause
    await tick();
    expect(readPosition(long.user_id, NEAR)!.liquidation?.done).toBe(1);
    setMark(NEAR, '120'); // equity 176 − 9 × 30 < 0
    advance(100); // well inside the pause
    await tick();
    expect(readPosition(long.user_id, NEAR)!.size_steps).toBe('0');
    expect(readPosition(short.user_id, NEAR)!.size_steps).toBe('-10'); // 9 of its 10 NEAR taken
    // (1350 − 176) / 9 = 130.4444, rounded down to the tick (against the long)
    expect(logged('auto-deleveraged').some((l) => l.includes(NEAR) && l.includes('"bankruptcy_ticks":"130444"'))).toBe(true);
  });

  it('counterparties are taken by profit and leverage: the 10x short before the 2x one with the same profit', async () => {
    // prices halved from 150 (ADR 0014: XRP's price ceiling is 104.8575): the ladder depends on ratios only
    setMark(XRP, '75');
    const [long, tenX, twoX] = await Promise.all([
      account(rig, 'Apex', '100000', { leverage: 10 }), account(rig, 'Apex', '100000', { leverage: 10 }), account(rig, 'Apex', '100000', { leverage: 2 }),
    ]);
    expect((await post(rig, tenX, limit(XRP, 'sell', '5', '75'))).status).toBe(200);
    expect((await post(rig, twoX, limit(XRP, 'sell', '5', '75'))).status).toBe(200);
    expect((await post(rig, long, limit(XRP, 'buy', '10', '75', 'IOC'))).status).toBe(200);
    await settled(rig);
    setMark(XRP, '71.3');
    await tick(); // T1: 1 to the vault
    setMark(XRP, '60');
    advance(2_000);
    await tick(); // bankrupt: 9 to deleverage
    expect(readPosition(long.user_id, XRP)!.size_steps).toBe('0');
    expect(readPosition(tenX.user_id, XRP)!.size_steps).toBe('0');
    expect(readPosition(twoX.user_id, XRP)!.size_steps).toBe('-1');
  });

  it('with no opposite position in profit: the vault takes it at the mark, the fund absorbs what it can, the profitable positions bear the rest; past the threshold the market halts until an operator resumes it', async () => {
    setMark(APT, '150');
    // e (short at 110) at 2x, so that it stays healthy at 120 and only a and f are liquidated
    const [a, f, b, c, d, e] = await accountsAt([8, 8, 8, 8, 8, 2]);
    expect((await post(rig, b, limit(APT, 'sell', '20', '150'))).status).toBe(200);
    expect((await post(rig, a, limit(APT, 'buy', '10', '150', 'IOC'))).status).toBe(200);
    expect((await post(rig, f, limit(APT, 'buy', '10', '150', 'IOC'))).status).toBe(200);
    await settled(rig);
    await trade(APT, c, b, 'sell', '20', '119'); // b buys back: c is short at 119, in loss at 120
    await trade(APT, e, d, 'sell', '40', '110'); // d long at 110: 400 of profit at 120; e short, in loss
    setMark(APT, '120'); // a and f: margin 187.5, loss 300 each
    const fund = rig.gw.risk.fund.state();
    const dBefore = readPosition(d.user_id, APT)!;
    await tick();
    for (const u of [a, f]) expect(readPosition(u.user_id, APT)!.size_steps).toBe('0');
    expect(big(readPosition(LIQUIDATION_VAULT_ID, APT)!.size_steps)).toBe(200n); // 2 × 10 APT at the mark
    const after = rig.gw.risk.fund.state();
    expect(after.absorbed - fund.absorbed).toBe(fund.balance); // tier 1 first, all of it
    expect(after.uncovered).toBe(fund.uncovered);
    const borne = big(dBefore.margin) - big(readPosition(d.user_id, APT)!.margin);
    expect(borne).toBe(2n * usdc('112.5') - fund.balance); // the rest of both deficits, on d
    expect(big(dBefore.realized_pnl) - big(readPosition(d.user_id, APT)!.realized_pnl)).toBe(borne);
    expect(logged('socialized over the profitable positions').filter((l) => l.includes(APT)).length).toBe(2);
    // the first deficit left the market below the 200 USDC threshold, the second took it past
    expect(logged('market halted pending manual intervention').filter((l) => l.includes(APT)).length).toBe(1);
    expect(await statusOf(APT)).toBe('halted');
    expect(gwDb().meta.get(`risk:socialized:${APT}`)).toBe(str(borne)); // the count runs on while halted
    const refused = await post(rig, d, limit(APT, 'sell', '1', '120'));
    expect([refused.status, refused.body.code]).toEqual([400, 1407]);
    const admin = { [ADMIN_SECRET_HEADER]: rig.env.adminSecret };
    expect((await call(rig.gw, 'POST', `/admin/instruments/${APT}/status`, { status: 'trading' }, admin)).status).toBe(200);
    expect(gwDb().meta.get(`risk:socialized:${APT}`)).toBeUndefined(); // trading again: the count starts at 0
    expect((await post(rig, d, limit(APT, 'sell', '1', '120'))).status).toBe(200);
  });

  it('a deficit neither the fund nor the profitable positions can bear is recorded as uncovered and halts the market at once', async () => {
    setMark(DOT, '150');
    const [a, b, c, d, e] = await accountsAt([8, 8, 8, 8, 2]);
    await trade(DOT, b, a, 'sell', '10', '150');
    await trade(DOT, c, b, 'sell', '10', '119');
    await trade(DOT, e, d, 'sell', '5', '110'); // d can bear 50 at 120
    setMark(DOT, '120');
    const fund = rig.gw.risk.fund.state();
    await tick();
    const after = rig.gw.risk.fund.state();
    expect(readPosition(a.user_id, DOT)!.size_steps).toBe('0');
    expect(after.uncovered - fund.uncovered).toBe(usdc('112.5') - fund.balance - usdc('50'));
    expect(readPosition(d.user_id, DOT)!.margin).toBe(str(usdc('68.75') - usdc('50')));
    expect(logged('liquidation deficit NOT covered').some((l) => l.includes('"level":50') && l.includes(DOT))).toBe(true);
    expect(await statusOf(DOT)).toBe('halted');
  });
});

describe('restart', () => {
  it('the ladder (original size, tranches done, pause) and the lockout survive a gateway restart', async () => {
    // AAVE long 1 @ 250 at 8x: margin 31.25; at 231: 12.25 / 11.55 = 106%: T1
    const { long } = await openPair(AAVE, '1', '250');
    setMark(AAVE, '231');
    await tick();
    expect(readPosition(long.user_id, AAVE)).toMatchObject({ size_steps: '90', margin: '29350000', liquidation: { original_steps: '100', done: 1 } });
    // restart on the same data folder, oracle and committee
    rig.committee.close();
    await rig.gw.stop();
    rig.gw = createGateway(rig.env.config, {
      resultGraceMs: 5, clock, oracle: rig.sim.oracle, risk: RISK,
      log: pino({ level: 'info' }, { write: (line: string) => { rig.logs.push(line); } }),
    });
    restarted = true;
    rig.gw.events.on('margin_alert', (e) => alerts.push(e));
    rig.gw.events.on('position', (e) => positionEvents.push(e));
    await rig.gw.start();
    await rig.committee.connect(rig.gw.urls.internalUrl);
    const refused = await post(rig, long, limit(AAVE, 'buy', '1', '200'));
    expect([refused.status, refused.body.code]).toEqual([400, 1411]);
    setMark(AAVE, '228'); // (29.35 − 19.8) / 10.26 = 93%: T2
    toPauseEnd(long.user_id, AAVE, 0);
    await tick();
    // T2 takes the original size's 40% less the 10% done: 0.3 (from 0.9 left, not 40% of 0.9)
    expect(readPosition(long.user_id, AAVE)).toMatchObject({ size_steps: '60', liquidation: { original_steps: '100', done: 2, transferred_steps: '40' } });
    expect(alertsOf(long.user_id, AAVE).at(-1)).toBe('T2');
  });
});
