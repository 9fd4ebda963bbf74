// Issue 26, item 12: one trader's order must never halt a market. An adversarial trader tries every
// probe of the issue to bankrupt itself into a halt (limit orders far from the mark, market sells
// without a cap, sells at 60-80% of the mark into other accounts' bids, a resting bid left behind by
// a falling mark) on a gateway priced as the process prices (each instrument's band), with the risk
// monitor evaluated by hand and a socialized-loss threshold of 1 micro-USDC: any deficit would halt.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { toUnits } from '@tenebra/config';
import { ManualClock } from '../src/clock';
import { positionKey, type GatewayDb } from '../src/store/db';
import { call, type Account } from './harness';
import { startOrderRig, account, post as postNow, getOrder, settled, type OrderRig } from './order-rig';
import { until } from './fakes';

const clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0));
const SOL = 'SOL-USDC-PERP'; // 10x, maintenance 5%: band 2.5%
const ETH = 'ETH-USDC-PERP'; // the same
let rig: OrderRig;

beforeAll(async () => {
  rig = await startOrderRig({ clock, priceBandBps: 'instrument', risk: { intervalMs: 0, defaultFundingRatePips: 0n, socializedLossHaltMicro: 1n } });
});
afterAll(async () => {
  await rig?.close();
});

function setMark(symbol: string, price: string): void {
  rig.sim.market.set(symbol, toUnits(price, '0.01')!);
  rig.sim.primary.publish();
  rig.sim.secondary.publish();
}

function post(a: Account, body: Record<string, unknown>) {
  clock.advance(2);
  return postNow(rig, a, body);
}

const limit = (side: string, quantity: string, price: string, tif = 'GTC', symbol = SOL) => ({ symbol, side, type: 'limit', quantity, price, time_in_force: tif });
const gwDb = (): GatewayDb => (rig.gw.risk as unknown as { db: GatewayDb }).db;
const refused = (r: { status: number; body: Record<string, any> }) => [r.status, r.body.code, r.body.error];

describe('an adversarial trader cannot bankrupt itself into a halt', () => {
  it('is refused or contained at every probe, and no market halts', async () => {
    setMark(SOL, '120');
    const honest = await account(rig, 'Apex', '100000', { leverage: 10 });
    const adversary = await account(rig, 'Apex', '100000', { leverage: 10 });
    // honest bids: one far below where the mark will be (placed while the mark was 120), one near it
    expect((await post(honest, limit('buy', '10', '120'))).status).toBe(200);
    setMark(SOL, '150');
    expect((await post(honest, limit('buy', '10', '149.5'))).status).toBe(200);
    await settled(rig);

    // 1. limit sells at 60-80% of the mark: outside SOL's band (146.25 to 153.75)
    for (const price of ['90', '105', '120']) {
      expect(refused(await post(adversary, limit('sell', '10', price, 'IOC')))).toEqual([400, 1402, 'INVALID_PRICE']);
    }
    // 2. a market sell capped at 70% of the mark (caps are not banded) books 30% at the mark the
    //    moment it fills: more than its 10% margin carries
    const capped = await post(adversary, { symbol: SOL, side: 'sell', type: 'market', quantity: '10', price: '105', time_in_force: 'IOC' });
    expect(refused(capped)).toEqual([400, 1410, 'MARGIN_INSUFFICIENT']);
    expect(capped.body.message).toMatch(/would lose 450 USDC at the mark 150/);
    // 3. a market sell without a cap carries the band's: it takes the bid at 149.5, never the one at 120
    const market = await post(adversary, { symbol: SOL, side: 'sell', type: 'market', quantity: '20', time_in_force: 'IOC' });
    expect(market.status, market.raw).toBe(200);
    await settled(rig);
    const m = await getOrder(rig, adversary, market.body.data.order_id);
    expect([m.status, m.filled_quantity, m.cancel_reason]).toEqual(['CANCELLED', 10, 'IOC_REMAINDER']);
    const short = gwDb().positions.get(positionKey(adversary.user_id, SOL))!;
    expect(short.size_steps).toBe('-1000'); // 10 SOL, sold at 149.5

    // 4. a bid at the mark, then the mark falls 20%: the bid would now fill 20% above the mark
    //    (twice its margin); the monitor's next evaluation cancels it before anyone can sell into it.
    //    (ETH, where nobody holds a position the fall would bankrupt by itself.)
    setMark(ETH, '2400');
    expect((await post(honest, limit('buy', '1', '2400', 'GTC', ETH))).status).toBe(200);
    setMark(ETH, '3000');
    const bid = await post(adversary, limit('buy', '3', '3000', 'GTC', ETH));
    expect(bid.status, bid.raw).toBe(200);
    await settled(rig);
    setMark(ETH, '2400');
    await rig.gw.risk.tick();
    await until(async () => (await getOrder(rig, adversary, bid.body.data.order_id)).status === 'CANCELLED', 5_000);
    expect((await getOrder(rig, adversary, bid.body.data.order_id)).cancel_reason).toBe('SYSTEM_CANCEL');
    const seller = await account(rig, 'Apex', '100000', { leverage: 10 });
    const sell = await post(seller, limit('sell', '3', '2390', 'IOC', ETH));
    expect(sell.status, sell.raw).toBe(200);
    await settled(rig);
    expect((await getOrder(rig, seller, sell.body.data.order_id)).filled_quantity).toBe(1); // the honest bid at 2400 only

    // 5. after all of it: no market halted, nothing uncovered, nobody in liquidation
    await rig.gw.risk.tick();
    const statuses = (await call(rig.gw, 'GET', '/api/v1/instruments')).body.data.instruments.map((i: { status: string }) => i.status);
    expect(new Set(statuses)).toEqual(new Set(['trading']));
    expect([rig.gw.risk.fund.state().absorbed, rig.gw.risk.fund.state().uncovered]).toEqual([0n, 0n]); // no deficit at all
    for (const a of [honest, adversary, seller]) expect(gwDb().accounts.get(a.user_id)!.in_liquidation ?? false).toBe(false);
  });
});

describe('the resting-order sweep re-checks a loss-side order whenever the mark moves away from it', () => {
  it('a bid found clear at one mark is still cancelled when the mark falls further (not skipped as already checked)', async () => {
    setMark(ETH, '3000');
    const trader = await account(rig, 'Apex', '100000', { leverage: 10 });
    const bid = await post(trader, limit('buy', '3', '3000', 'GTC', ETH));
    expect(bid.status, bid.raw).toBe(200);
    await settled(rig);
    const status = async () => (await getOrder(rig, trader, bid.body.data.order_id)).status;
    // 2990: the bid would fill 30 USDC above the mark, well inside its 900 USDC margin: kept
    setMark(ETH, '2990');
    await rig.gw.risk.tick();
    // nearer its price again: still clear (what the sweep may skip without a store read)
    setMark(ETH, '2995');
    await rig.gw.risk.tick();
    await settled(rig);
    expect(await status()).toBe('NEW');
    // 2750 (inside the price window): a fill would lose 750 of 900 USDC, below 110% of maintenance
    setMark(ETH, '2750');
    await rig.gw.risk.tick();
    await until(async () => (await status()) === 'CANCELLED', 5_000);
    expect((await getOrder(rig, trader, bid.body.data.order_id)).cancel_reason).toBe('SYSTEM_CANCEL');
  });
});
