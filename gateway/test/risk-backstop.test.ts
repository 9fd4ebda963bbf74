// The risk monitor's backstop (docs/risk.md, "Bankruptcy"): what the halt and the socialized count
// do across a crash and an operator's resume, and funding payments a margin cannot cover. Same rig
// as risk-monitor.test.ts (real gateway, matching committee stand-in, manual clock, oracle that moves
// only when set, monitor timer off: every evaluation is an explicit tick()). Each describe has its
// own gateway, so the money-conservation check sees only its own scenario.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import pino from 'pino';
import { instrumentBySymbol, toUnits } from '@tenebra/config';
import { ManualClock } from '../src/clock';
import { createGateway } from '../src/gateway';
import type { RiskMonitorOptions } from '../src/risk-monitor/monitor';
import { positionKey, type GatewayDb } from '../src/store/db';
import { big } from '../src/store/records';
import { unrealizedPnlMicro } from '../src/risk-monitor/position-marks';
import { ADMIN_SECRET_HEADER } from '../src/http/routes-admin';
import { call, type Account } from './harness';
import { startOrderRig, account, post as postNow, settled, type OrderRig } from './order-rig';

const LINK = 'LINK-USDC-PERP';
const UNI = 'UNI-USDC-PERP';
const SUI = 'SUI-USDC-PERP';
const TICK: Record<string, string> = { [LINK]: '0.001', [UNI]: '0.001', [SUI]: '0.0001' };
const usdc = (text: string): bigint => toUnits(text, '0.000001')!;

/** One gateway with its manual clock, and the helpers every scenario uses on it. */
function venue(risk: Partial<RiskMonitorOptions>) {
  const clock = new ManualClock(Date.UTC(2026, 0, 6, 12, 0, 30));
  const v = {
    clock,
    rig: undefined as unknown as OrderRig,
    restarted: false,
    async start(): Promise<void> {
      v.rig = await startOrderRig({ clock, risk });
    },
    async close(): Promise<void> {
      if (v.restarted) await v.rig.gw.stop(); // rig.close() stops the gateway it started
      await v.rig?.close();
    },
    /** Stops the gateway and starts a new one on the same data folder, oracle and committee. */
    async restart(): Promise<void> {
      v.rig.committee.close();
      await v.rig.gw.stop();
      v.rig.gw = createGateway(v.rig.env.config, {
        resultGraceMs: 5, clock, oracle: v.rig.sim.oracle, risk,
        log: pino({ level: 'info' }, { write: (line: string) => { v.rig.logs.push(line); } }),
      });
      v.restarted = true;
      await v.rig.gw.start();
      await v.rig.committee.connect(v.rig.gw.urls.internalUrl);
    },
    setMark(symbol: string, price: string): void {
      v.rig.sim.market.set(symbol, toUnits(price, TICK[symbol]!)!);
      v.rig.sim.primary.publish();
      v.rig.sim.secondary.publish();
    },
    advance(ms: number): void {
      clock.advance(ms);
      v.rig.sim.primary.publish();
      v.rig.sim.secondary.publish();
    },
    tick: (): Promise<void> => v.rig.gw.risk.tick(),
    /** POST /orders 2 ms later on the manual clock (the venue spaces actions per account and symbol). */
    post(a: Account, body: Record<string, unknown>) {
      clock.advance(2);
      return postNow(v.rig, a, body);
    },
    /** maker rests `qty` at `price` on `side`, taker takes it whole (IOC); the mark is set to the price first. */
    async trade(symbol: string, maker: Account, taker: Account, makerSide: 'buy' | 'sell', qty: string, price: string): Promise<void> {
      v.setMark(symbol, price);
      expect((await v.post(maker, limit(symbol, makerSide, qty, price))).status).toBe(200);
      expect((await v.post(taker, limit(symbol, makerSide === 'buy' ? 'sell' : 'buy', qty, price, 'IOC'))).status).toBe(200);
      await settled(v.rig);
    },
    accounts<const L extends readonly number[]>(leverages: L): Promise<{ [K in keyof L]: Account }> {
      // Promise.all over a mapped tuple loses its length; the map keeps one account per entry
      return Promise.all(leverages.map((leverage) => account(v.rig, 'Apex', '100000', { leverage }))) as Promise<{ [K in keyof L]: Account }>;
    },
    /** The gateway's own store (the monitor holds it; lmdb reads are synchronous). */
    db: (): GatewayDb => (v.rig.gw.risk as unknown as { db: GatewayDb }).db,
    position: (userId: string, symbol: string) => v.db().positions.get(positionKey(userId, symbol)),
    socialized: (symbol: string) => v.db().meta.get(`risk:socialized:${symbol}`) as string | undefined,
    async statusOf(symbol: string): Promise<string> {
      const r = await call(v.rig.gw, 'GET', `/api/v1/instruments/${symbol}`);
      expect(r.status).toBe(200);
      return r.body.data.status;
    },
    logged: (text: string): string[] => v.rig.logs.filter((l) => l.includes(text)),
    async setStatus(symbol: string, status: string): Promise<void> {
      const r = await call(v.rig.gw, 'POST', `/admin/instruments/${symbol}/status`, { status }, { [ADMIN_SECRET_HEADER]: v.rig.env.adminSecret });
      expect(r.status).toBe(200);
    },
  };
  return v;
}

const limit = (symbol: string, side: string, quantity: string, price: string, tif = 'GTC') =>
  ({ symbol, side, type: 'limit', quantity, price, time_in_force: tif });

describe('the halt and the socialized count', () => {
  // socialized losses past 100 USDC in one market halt it
  const v = venue({ intervalMs: 0, fundingIntervalMs: 60_000, defaultFundingRatePips: 0n, fundingReleasePayers: 1, socializedLossHaltMicro: 100_000_000n });
  beforeAll(() => v.start());
  afterAll(() => v.close());

  it('a halt is durable with the deficit that caused it: a crash right after that transaction leaves the market halted at restart', async () => {
    v.setMark(LINK, '150');
    const [a, b, c, d, e] = await v.accounts([8, 8, 8, 8, 2]);
    await v.trade(LINK, b, a, 'sell', '10', '150'); // a long 10 @ 150 at 8x: margin 187.5
    await v.trade(LINK, c, b, 'sell', '10', '119'); // b flat again; c short at 119, at a loss at 120
    await v.trade(LINK, e, d, 'sell', '5', '110'); // d long at 110: can bear 50 at 120
    v.setMark(LINK, '120'); // a: loss 300 on 187.5 of margin, nobody to deleverage against
    const db = v.db();
    const fund = v.rig.gw.risk.fund;
    const uncoveredBefore = fund.state().uncovered;
    // The process dies as soon as the transaction that recorded the uncovered deficit commits:
    // nothing after it runs, and no later write reaches the store.
    const txAsync = db.txAsync.bind(db);
    const tx = db.tx.bind(db);
    let crashed = false;
    const dead = (): never => {
      throw new Error('simulated crash: the process is gone');
    };
    db.txAsync = async <T>(fn: () => T): Promise<T> => {
      if (crashed) dead();
      const r = await txAsync(fn);
      if (fund.state().uncovered > uncoveredBefore) {
        crashed = true;
        dead();
      }
      return r;
    };
    db.tx = <T>(fn: () => T): T => (crashed ? dead() : tx(fn));
    try {
      await v.tick();
    } finally {
      delete (db as Partial<GatewayDb>).txAsync; // the prototype's again
      delete (db as Partial<GatewayDb>).tx;
    }
    expect(crashed).toBe(true);
    await v.restart();
    expect(v.rig.gw.risk.fund.state().uncovered).toBeGreaterThan(uncoveredBefore);
    expect(v.position(a.user_id, LINK)!.size_steps).toBe('0');
    expect(await v.statusOf(LINK)).toBe('halted');
    const refused = await v.post(d, limit(LINK, 'sell', '1', '120'));
    expect([refused.status, refused.body.code]).toEqual([400, 1407]);
  });

  it('the count runs until the market trades again: losses socialized while halted add to it (and are logged), a resume starts it at 0', async () => {
    v.setMark(UNI, '150');
    const [a, g, h, b, c, d, e] = await v.accounts([8, 4, 3, 2, 2, 8, 1]);
    // a, g, h long 10 @ 150 at 8x, 4x, 3x (margin 187.5, 375, 500): bankrupt below 131.25, 112.5, 100
    expect((await v.post(b, limit(UNI, 'sell', '30', '150'))).status).toBe(200);
    for (const u of [a, g, h]) expect((await v.post(u, limit(UNI, 'buy', '10', '150', 'IOC'))).status).toBe(200);
    await settled(v.rig);
    await v.trade(UNI, c, b, 'sell', '30', '90'); // b buys back (flat); c short at 90: never in profit below
    await v.trade(UNI, e, d, 'sell', '40', '80'); // d long at 80 (margin 400): the one profitable position
    const dMargin = (): bigint => big(v.position(d.user_id, UNI)!.margin);

    // A. 120: a's deficit of 112.5 (less the fund) is socialized on d, past the 100 USDC threshold
    v.setMark(UNI, '120');
    const fund = v.rig.gw.risk.fund.state();
    let before = dMargin();
    await v.tick();
    expect(v.position(a.user_id, UNI)!.size_steps).toBe('0');
    const first = before - dMargin();
    expect(first).toBe(usdc('112.5') - fund.balance);
    expect(await v.statusOf(UNI)).toBe('halted');
    expect(v.socialized(UNI)).toBe(first.toString()); // not reset by the halt
    expect(v.logged('market halted pending manual intervention').filter((l) => l.includes(UNI)).length).toBe(1);

    // B. 105, still halted: g's deficit of 75 is socialized too; the count keeps it, the crossing is logged
    v.setMark(UNI, '105');
    before = dMargin();
    // g's ADL and socialization and h's tranche re-read the market by key: the evaluation's own scan
    // is the only one of the positions table (no funding interval ends here: the clock moved < 1 min)
    const positions = v.db().positions;
    const getRange = positions.getRange;
    let scans = 0;
    positions.getRange = ((...args: Parameters<typeof getRange>) => {
      scans += 1;
      return getRange.apply(positions, args);
    }) as typeof getRange;
    try {
      await v.tick();
    } finally {
      delete (positions as Partial<typeof positions>).getRange;
    }
    expect(scans).toBe(1);
    expect(v.position(g.user_id, UNI)!.size_steps).toBe('0');
    expect(before - dMargin()).toBe(usdc('75'));
    expect(v.socialized(UNI)).toBe((first + usdc('75')).toString());
    expect(v.logged('market already halted').filter((l) => l.includes(UNI) && l.includes(`"socialized_total":"${first + usdc('75')}"`)).length).toBe(1);
    expect(v.position(h.user_id, UNI)!.liquidation?.done).toBe(1); // h: 95%, T1 (1 UNI to the vault at 105, margin 455)

    // C. the operator resumes the market: the count starts again
    await v.setStatus(UNI, 'trading');
    expect(v.socialized(UNI) ?? '0').toBe('0');
    const placed = await v.post(d, limit(UNI, 'sell', '1', '150'));
    expect(placed.status, JSON.stringify(placed.body)).toBe(200);

    // D. 95: h's deficit of 40 (9 × 55 of loss on 455) is socialized; 40 alone is below the threshold
    v.setMark(UNI, '95');
    before = dMargin();
    await v.tick();
    expect(v.position(h.user_id, UNI)!.size_steps).toBe('0');
    expect(before - dMargin()).toBe(usdc('40'));
    expect(v.socialized(UNI)).toBe(usdc('40').toString());
    expect(await v.statusOf(UNI)).toBe('trading');
    expect(v.logged('market halted pending manual intervention').filter((l) => l.includes(UNI)).length).toBe(1);
  });
});

describe('funding beyond the margin', () => {
  // SUI pays 15% of notional per minute: more than an 8x long's margin (12.5%)
  const v = venue({ intervalMs: 0, fundingIntervalMs: 60_000, defaultFundingRatePips: 0n, fundingRatePips: { [SUI]: 150_000n }, fundingReleasePayers: 1, socializedLossHaltMicro: 100_000_000n });
  beforeAll(() => v.start());
  afterAll(() => v.close());

  /**
   * Σ balances + Σ position margins and unrealized PnL at the mark (the vault's too; unrealized PnL
   * sums to 0 over a market only before anything is realised) + the fund + the venue's fees net of
   * the fund's share of them. Exact here: a SUI tick × step is 10 micro-USDC.
   */
  function money(markText: string): { held: bigint; deposits: bigint } {
    const db = v.db();
    const mark = toUnits(markText, TICK[SUI]!)!;
    let held = 0n;
    for (const { value } of db.accounts.getRange()) held += big(value.balance);
    expect([...db.deposits.getRange()]).toEqual([]);
    for (const { value } of db.positions.getRange()) held += big(value.margin) + unrealizedPnlMicro(value, instrumentBySymbol(value.symbol)!, mark);
    const fund = v.rig.gw.risk.fund.state();
    const fees = (v.rig.gw.risk as unknown as { deps: { venueFees: () => bigint } }).deps.venueFees();
    held += fund.balance + fees - fund.fromFees;
    // every account of this gateway was opened with 100,000 USDC and nothing else was deposited
    return { held, deposits: BigInt(db.accounts.getCount()) * usdc('100000') };
  }

  it('the part a margin cannot pay goes to the insurance fund, then to the profitable positions: no micro-USDC is created', async () => {
    v.setMark(SUI, '2');
    const [l, l2, s] = await v.accounts([8, 2, 2]);
    expect((await v.post(s, limit(SUI, 'sell', '200', '2'))).status).toBe(200);
    for (const u of [l, l2]) expect((await v.post(u, limit(SUI, 'buy', '100', '2', 'IOC'))).status).toBe(200);
    await settled(v.rig);
    expect(v.position(l.user_id, SUI)!.margin).toBe(usdc('25').toString());
    v.setMark(SUI, '2.1'); // both longs 10 in profit
    await v.tick(); // first sight of the interval: nothing charged
    const start = money('2.1');
    expect(start.held).toBe(start.deposits);
    const fund = v.rig.gw.risk.fund.state();
    const l2Before = big(v.position(l2.user_id, SUI)!.margin);
    v.advance(60_000 - (v.clock.nowMs() % 60_000));
    await v.tick(); // 15% of 210: l owes 31.5 on 25 of margin; l2 pays 31.5; s receives 63
    expect(v.position(s.user_id, SUI)!.funding_accrued).toBe(usdc('63').toString());
    expect(v.position(l.user_id, SUI)!.funding_accrued).toBe((-usdc('25')).toString());
    const end = money('2.1');
    expect(end.held).toBe(end.deposits);
    const after = v.rig.gw.risk.fund.state();
    const absorbed = after.absorbed - fund.absorbed;
    expect(absorbed).toBe(fund.balance); // the fund first, all it had
    // the rest of the 6.5 is borne by l2 (profit 10 at 2.1), over its own 31.5
    expect(l2Before - big(v.position(l2.user_id, SUI)!.margin)).toBe(usdc('31.5') + usdc('6.5') - absorbed);
    expect(after.uncovered).toBe(fund.uncovered);
    expect(after.credited).toBeGreaterThanOrEqual(0n);
    expect(v.logged('funding payments exceeded the margin left').some((l) => l.includes(SUI))).toBe(true);
    expect(await v.statusOf(SUI)).toBe('trading');
  });
});
