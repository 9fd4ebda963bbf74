// The committee compares a book's prices at the width of its price window (ADR 0024): the gateway
// must keep every two live prices of a book less than 2^bandBits ticks apart. The rig's committee
// stand-in runs the plaintext backend at the committee's widths, which refuses any comparison of two
// prices further apart, so an admission that broke the window would stall the rig's matching.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { INSTRUMENTS, bookWidthsOf, priceWindowTicks, toUnits, fromUnits } from '@tenebra/config';
import { ManualClock } from '../src/clock';
import { REFERENCE_PRICES } from '../src/orders/oracle';
import { instrumentBandBps } from '../src/orders/fill-loss';
import { windowKeepTicks } from '../src/orders/price-window';
import { call, bearer, type Account } from './harness';
import { startOrderRig, account, post as postNow, getOrder, settled, spaced, type OrderRig } from './order-rig';
import { until } from './fakes';

const clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0));
const ETH = 'ETH-USDC-PERP'; // window 2^16 ticks = 655.36 USDC
let rig: OrderRig;

beforeAll(async () => {
  rig = await startOrderRig({ clock, risk: { intervalMs: 0, defaultFundingRatePips: 0n } });
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
const limit = (side: string, quantity: string, price: string, tif = 'GTC') => ({ symbol: ETH, side, type: 'limit', quantity, price, time_in_force: tif });
async function cancel(a: Account, id: string) {
  clock.advance(2);
  await spaced();
  return call(rig.gw, 'DELETE', `/api/v1/orders/${id}`, undefined, bearer(a));
}
async function patch(a: Account, id: string, body: Record<string, unknown>) {
  clock.advance(2);
  await spaced();
  return call(rig.gw, 'PATCH', `/api/v1/orders/${id}`, body, bearer(a));
}

describe('the catalogue: every window holds 8 x the limit band at the listing reference price', () => {
  it.each(INSTRUMENTS.map((i) => [i.symbol, i] as const))('%s', (_, inst) => {
    const ref = toUnits(REFERENCE_PRICES[inst.base_asset]!, inst.tick_size)!;
    const need = (8n * BigInt(instrumentBandBps(inst)) * ref) / 10_000n;
    const { bandBits, priceBits } = bookWidthsOf(inst);
    expect(bandBits % 4, 'whole nibbles').toBe(0);
    expect(bandBits).toBeLessThanOrEqual(priceBits);
    expect(priceWindowTicks(inst) >= need || bandBits === priceBits, `${inst.symbol}: ${need} ticks needed`).toBe(true);
  });
});

describe('admission keeps the span of a book\'s live prices below its window', () => {
  it('refuses the first price that would widen the span to 2^16 ticks, and admits it once the far order ended', async () => {
    setMark(ETH, '3300');
    const a = await account(rig, 'Apex', '10000000', { leverage: 1 });
    const b = await account(rig, 'Apex', '10000000', { leverage: 1 });
    const bid = await post(a, limit('buy', '1', '3000'));
    expect(bid.status, bid.raw).toBe(200);
    // 3000 + 655.35: span 65,535 ticks, the widest the committee compares
    const edge = await post(b, limit('sell', '1', '3655.35'));
    expect(edge.status, edge.raw).toBe(200);
    const over = await post(b, limit('sell', '1', '3655.36'));
    expect([over.status, over.body.code, over.body.error]).toEqual([400, 1402, 'INVALID_PRICE']);
    expect(over.body.message).toMatch(/price window/);
    // below the bid side too: 3655.35 - 655.36 = 2999.99 is one tick too far from the ask
    const low = await post(a, limit('buy', '1', '2999.99'));
    expect([low.status, low.body.error]).toEqual([400, 'INVALID_PRICE']);
    // a market order's cap is a price the committee compares: the same rule
    const cap = await post(a, { symbol: ETH, side: 'buy', type: 'market', quantity: '1', price: '3655.36', time_in_force: 'IOC' });
    expect([cap.status, cap.body.error]).toEqual([400, 'INVALID_PRICE']);
    await settled(rig);
    expect((await getOrder(rig, a, bid.body.data.order_id)).status).toBe('NEW');
    expect((await getOrder(rig, b, edge.body.data.order_id)).status).toBe('NEW');

    // once the bid at 3000 has ended, the span is the ask's alone and 3655.36 fits
    expect((await cancel(a, bid.body.data.order_id)).status).toBe(200);
    await settled(rig);
    const now = await post(b, limit('sell', '1', '3655.36'));
    expect(now.status, now.raw).toBe(200);
    // a modify to a price outside the window is refused and leaves the order as it was
    const far = await patch(b, edge.body.data.order_id, { price: '4310.71' });
    expect([far.status, far.body.error]).toEqual([400, 'INVALID_PRICE']);
    const near = await patch(b, edge.body.data.order_id, { price: '3660' });
    expect(near.status, near.raw).toBe(200);
    await settled(rig);
    expect((await getOrder(rig, b, edge.body.data.order_id)).price).toBe(3660);
    // clean up for the next case
    for (const id of [edge.body.data.order_id, now.body.data.order_id]) expect((await cancel(b, id)).status).toBe(200);
    await settled(rig);
  });

  it('a resting order the mark leaves outside the window is cancelled (SYSTEM_CANCEL), and the band around the new mark fits again', async () => {
    setMark(ETH, '3000');
    const a = await account(rig, 'Apex', '10000000', { leverage: 1 });
    const b = await account(rig, 'Apex', '10000000', { leverage: 1 });
    // an ask above the mark books no loss as the mark rises: only the window can end it
    const ask = await post(a, limit('sell', '1', '3000'));
    const bid = await post(b, limit('buy', '1', '2990'));
    expect([ask.status, bid.status]).toEqual([200, 200]);
    await settled(rig);
    const inst = INSTRUMENTS.find((i) => i.symbol === ETH)!;
    // the mark moves to 3230: both orders stay inside the window half less the band
    setMark(ETH, '3230');
    const keep = windowKeepTicks(inst, (323_000n * BigInt(instrumentBandBps(inst))) / 10_000n);
    expect(323_000n - 299_000n <= keep).toBe(true);
    await rig.gw.risk.tick();
    await settled(rig);
    expect((await getOrder(rig, a, ask.body.data.order_id)).status).toBe('NEW');
    // the mark moves to 3300: the bid at 2990 (31,000 ticks away) is beyond keep and is cancelled
    setMark(ETH, '3300');
    const keep2 = windowKeepTicks(inst, (330_000n * BigInt(instrumentBandBps(inst))) / 10_000n);
    expect(330_000n - 299_000n > keep2, `keep ${fromUnits(keep2, '0.01')}`).toBe(true);
    await rig.gw.risk.tick();
    await until(async () => (await getOrder(rig, b, bid.body.data.order_id)).status === 'CANCELLED', 5_000);
    const gone = await getOrder(rig, b, bid.body.data.order_id);
    expect(gone.cancel_reason).toBe('SYSTEM_CANCEL');
    await until(async () => (await getOrder(rig, a, ask.body.data.order_id)).status === 'CANCELLED', 5_000);
    await settled(rig);
    // the top of the band around 3300 (3382.50) is admitted: nothing left behind widens the span
    const top = await post(b, limit('buy', '1', '3382.5'));
    expect(top.status, top.raw).toBe(200);
    await settled(rig);
  });
});
