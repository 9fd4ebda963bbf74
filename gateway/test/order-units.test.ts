// Pure pieces of the order path: the oracle's failover and staleness, the supported-combination
// matrix (kept equal to matching's own), the leverage and position-limit arithmetic.
import { describe, it, expect } from 'vitest';
import { checkPlace, type PlaceOp, type OrderType, type TimeInForce } from '@tenebra/matching';
import { INSTRUMENTS } from '@tenebra/config';
import { ManualClock } from '../src/clock';
import { createSimulatedOracle, SimulatedMarket } from '../src/orders/oracle';
import { validateOrder } from '../src/orders/validate';
import { checkLeverage, checkPositionLimit, positionLimitSteps } from '../src/orders/risk';
import { ApiError } from '../src/errors';
import type { InstrumentRegistry } from '../src/instruments';
import type { AccountRec, PositionRec } from '../src/store/records';

const registry = { get: (s: string) => INSTRUMENTS.find((i) => i.symbol === s) } as unknown as InstrumentRegistry;
const eth = INSTRUMENTS.find((i) => i.symbol === 'ETH-USDC-PERP')!;

describe('price oracle', () => {
  it('serves the primary while fresh, fails over to the secondary, and fails closed when both are stale or missing', () => {
    const clock = new ManualClock(1_000_000);
    const sim = createSimulatedOracle(clock, { walk: false, staleAfterMs: 3_000 });
    expect(sim.oracle.reference('ETH-USDC-PERP')).toMatchObject({ ok: true, source: 'primary', quote: { mid: 300_000n, bid: 299_940n, ask: 300_060n } });
    sim.primary.halt();
    clock.advance(2_000);
    sim.secondary.publish();
    expect(sim.oracle.reference('ETH-USDC-PERP')).toMatchObject({ ok: true, source: 'primary' }); // 2 s old: still fresh
    clock.advance(1_500);
    expect(sim.oracle.reference('ETH-USDC-PERP')).toMatchObject({ ok: true, source: 'secondary' });
    clock.advance(3_000);
    const stale = sim.oracle.reference('ETH-USDC-PERP');
    expect(stale).toMatchObject({ ok: false, reason: 'stale' });
    expect(sim.oracle.markTicks('ETH-USDC-PERP')).toBeNull();
    sim.primary.resume();
    expect(sim.oracle.reference('ETH-USDC-PERP')).toMatchObject({ ok: true, source: 'primary' });
    expect(sim.oracle.reference('FOO-USDC-PERP')).toMatchObject({ ok: false, reason: 'missing' });
  });

  it('walks every reference price by a few bps per step around its fair value, seeded', () => {
    const a = new SimulatedMarket(INSTRUMENTS, { seed: 7 });
    const b = new SimulatedMarket(INSTRUMENTS, { seed: 7 });
    for (let i = 0; i < 1000; i++) {
      a.step();
      b.step();
    }
    expect(a.quote('BTC-USDC-PERP')).toEqual(b.quote('BTC-USDC-PERP'));
    for (const inst of INSTRUMENTS) {
      const q = a.quote(inst.symbol)!;
      expect(q.bid < q.mid && q.mid < q.ask).toBe(true);
    }
    const mid = a.quote('BTC-USDC-PERP')!.mid;
    expect(mid > 637_000n && mid < 663_000n).toBe(true); // mean-reverting: within 2% of 65,000 after 1,000 steps
  });
});

describe('supported combinations', () => {
  it('the gateway refuses exactly what matching does not support, with its codes', () => {
    const nowNs = 1_700_000_000_000_000_000n;
    for (const type of ['limit', 'market', 'peg'] as OrderType[]) {
      for (const tif of ['GTC', 'GTT', 'IOC', 'FOK'] as TimeInForce[]) {
        for (const aon of [false, true]) {
          for (const minFill of [false, true]) {
            const body: Record<string, unknown> = { symbol: 'ETH-USDC-PERP', side: 'buy', type, quantity: 1, time_in_force: tif };
            if (type === 'limit') body.price = 3000;
            if (type === 'peg') body.peg_reference = 'mid';
            if (tif === 'GTT') body.expiry_time = (nowNs + 1_000_000_000n).toString();
            if (aon) body.aon = true;
            if (minFill) body.min_fill_size = 0.5;
            const op: PlaceOp<bigint> = {
              kind: 'place', symbol: 'ETH-USDC-PERP', orderId: 'x', seq: 1n, side: 'buy', type, tif, price: type === 'market' ? null : 300_000n,
              qty: 1000n, aon, minFill: minFill ? 500n : null, ...(tif === 'GTT' ? { expiresAtNs: nowNs + 1_000_000_000n } : {}),
            };
            const want = checkPlace(op);
            let got: ApiError | null = null;
            try {
              validateOrder(body, registry, 0n, nowNs);
            } catch (e) {
              got = e as ApiError;
            }
            const label = `${type} ${tif} aon=${aon} min_fill=${minFill}`;
            if (want === null) expect(got, label).toBeNull();
            else {
              expect(got?.kind.code, label).toBe(1405);
              expect(got?.message, label).toContain(want.code);
            }
          }
        }
      }
    }
  });
});

describe('risk arithmetic', () => {
  const acct = (open: Record<string, string> = {}) => ({ open_qty: open } as unknown as AccountRec);
  const pos = (size: bigint, basisTs: bigint, margin: bigint) => ({ size_steps: String(size), basis_ts: String(basisTs), margin: String(margin) } as unknown as PositionRec);

  it('position limit: 10 × max_qty on each side, counting the position and live orders of that side', () => {
    expect(positionLimitSteps(eth)).toBe(50_000_000n); // 50,000 ETH in steps of 0.001
    expect(() => checkPositionLimit(eth, acct({ 'ETH-USDC-PERP|buy': '49000000' }), pos(0n, 0n, 0n), 'buy', 1_000_000n)).not.toThrow();
    expect(() => checkPositionLimit(eth, acct({ 'ETH-USDC-PERP|buy': '49000000' }), pos(1n, 0n, 0n), 'buy', 1_000_000n)).toThrow(/POSITION_LIMIT_EXCEEDED/);
    expect(() => checkPositionLimit(eth, acct(), pos(50_000_000n, 0n, 0n), 'sell', 50_000_000n)).not.toThrow(); // a short side from a long position
  });

  it('leverage: adding to a position is refused once the mark puts it more than 10% above max leverage', () => {
    // long 1 ETH at 3000 (basis 1000 steps × 300000 ticks), margin 300 USDC (10x)
    const long = pos(1000n, 300_000_000n, 300_000_000n);
    expect(() => checkLeverage(eth, long, 'buy', 1000n, 300_000n, 300_000n, 10)).not.toThrow(); // at the mark: 10x
    // mark 2950: exposure 2950 + 2950, equity 300 - 50 + 295 = 545 -> 10.83x (within the 10% tolerance)
    expect(() => checkLeverage(eth, long, 'buy', 1000n, 295_000n, 295_000n, 10)).not.toThrow();
    // mark 2900: exposure 5800, equity 300 - 100 + 290 = 490 -> 11.84x
    expect(() => checkLeverage(eth, long, 'buy', 1000n, 290_000n, 290_000n, 10)).toThrow(/MARGIN_INSUFFICIENT: .* 11\.83x/);
    expect(() => checkLeverage(eth, long, 'sell', 1000n, 200_000n, 200_000n, 10)).not.toThrow(); // reducing
    expect(() => checkLeverage(eth, long, 'sell', 3000n, 300_000n, 300_000n, 10)).not.toThrow(); // a flip opens 2 ETH at 10x
    expect(() => checkLeverage(eth, undefined, 'buy', 1000n, 300_000n, 100_000n, 10)).not.toThrow(); // flat: the order's own leverage
  });
});
