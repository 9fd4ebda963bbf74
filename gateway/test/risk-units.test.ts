// Pure arithmetic of the risk monitor (gateway/src/risk-monitor): tier bands at their exact edges,
// tranche sizes of the original size, funding rounding, and the tranche accounting with a deficit.
import { describe, it, expect } from 'vitest';
import { instrumentBySymbol, toUnits } from '@tenebra/config';
import { liquidationPrice } from '../src/positions/view';
import { tierOf, recovered } from '../src/risk-monitor/health-tiers';
import { dueTranche, trancheSteps, applyTranche, emptyVaultPosition, tradeAt } from '../src/risk-monitor/liquidation-ladder';
import { fundingPaymentMicro, settleFunding } from '../src/risk-monitor/funding';
import { markPosition, marginRatioText } from '../src/risk-monitor/position-marks';
import { adlCandidates, bankruptcyPriceTicks, bearLoss, socializeLoss } from '../src/risk-monitor/deleveraging';
import { big, type AccountRec, type PositionRec } from '../src/store/records';
import { reducePosition } from '../src/positions/reduce';

const ETH = instrumentBySymbol('ETH-USDC-PERP')!;

describe('health tiers', () => {
  it('bands closed at their top: 150 / 120 / 110 / 100 (T1) / 80 (T3)', () => {
    const at = (pct: bigint) => tierOf(pct * 1_000n, 100_000n); // equity pct% of a maintenance of 100,000
    expect([at(151n), at(150n), at(121n), at(120n), at(111n), at(110n), at(100n), at(99n), at(81n), at(80n), at(0n), at(-5n)])
      .toEqual(['Healthy', 'Warning150', 'Warning150', 'Critical120', 'Critical120', 'T1', 'T1', 'T2', 'T2', 'T3', 'T3', 'T3']);
    expect(tierOf(150_000_001n, 100_000_000n)).toBe('Healthy');
    expect(tierOf(0n, 0n)).toBe('Healthy'); // flat
    expect([recovered(130n, 100n), recovered(131n, 100n)]).toEqual([false, true]);
  });
});

describe('ladder', () => {
  it('tranches are cumulative 10 / 40 / 100% of the original size, rounded up, the last takes the rest', () => {
    const ladder = (done: number, transferred: bigint) => ({ original_steps: '1005', side: 'long' as const, done, transferred_steps: String(transferred), resume_at_ms: 0 });
    expect(trancheSteps(null, 0, 1005n)).toBe(101n); // ceil(100.5)
    expect(trancheSteps(ladder(1, 101n), 1, 904n)).toBe(301n); // ceil(402) − 101
    expect(trancheSteps(ladder(2, 402n), 2, 603n)).toBe(603n);
    expect(trancheSteps(ladder(1, 101n), 1, 200n)).toBe(200n); // never more than the position holds
  });

  it('a tranche needs its tier (or worse), the previous tranche and the end of the pause', () => {
    const l = { original_steps: '10', side: 'long' as const, done: 1, transferred_steps: '1', resume_at_ms: 1_000 };
    expect(dueTranche(null, 'Critical120', 0)).toBeNull();
    expect(dueTranche(null, 'T3', 0)).toBe(0); // T1 first, whatever the depth
    expect(dueTranche(l, 'T2', 999)).toBeNull();
    expect(dueTranche(l, 'T1', 1_000)).toBeNull();
    expect(dueTranche(l, 'T3', 1_000)).toBe(1);
    expect(dueTranche({ ...l, done: 3 }, 'T3', 5_000)).toBeNull();
  });

  it('the final tranche returns what margin is left to the balance, or reports the deficit', () => {
    const pos: PositionRec = {
      user_id: 'u', symbol: ETH.symbol, size_steps: '600', basis_ts: String(600n * 300_000n), margin: '50000000', realized_pnl: '0', fees_paid: '0', leverage: 10, updated_ns: '0',
      liquidation: { original_steps: '1000', side: 'long', done: 2, transferred_steps: '400', resume_at_ms: 0 },
    };
    const acct = { user_id: 'u', balance: '1000000' } as AccountRec;
    const ok = applyTranche(pos, emptyVaultPosition(ETH.symbol, 0n), acct, ETH, 2, 292_000n, 0, 1n); // −48 USDC on 0.6
    expect([ok.steps, ok.pnlMicro, ok.deficitMicro, ok.account.balance, ok.position.margin]).toEqual([600n, -48_000_000n, 0n, '3000000', '0']);
    expect(ok.vault).toMatchObject({ size_steps: '600', basis_ts: String(600n * 292_000n) });
    const bad = applyTranche(pos, emptyVaultPosition(ETH.symbol, 0n), acct, ETH, 2, 280_000n, 0, 1n); // −120 on 50 of margin
    expect([bad.deficitMicro, bad.account.balance, bad.position.realized_pnl]).toEqual([70_000_000n, '1000000', '-50000000']);
  });

  it('the vault closes by the common rule (proportional basis, PnL floored) and keeps the proceeds in its margin; a flip opens the rest', () => {
    const vault = { ...emptyVaultPosition(ETH.symbol, 0n), size_steps: '-7', basis_ts: String(7n * 100_003n), margin: '-5', realized_pnl: '-5' };
    // buys 3 of its short 7 at 1000.00: basis out floor(700021 × 3 / 7) = 300009, PnL 9 tick-steps = 90 micro-USDC
    expect(tradeAt(vault, ETH, 3n, 100_000n, 2n)).toMatchObject({ size_steps: '-4', basis_ts: '400012', margin: '85', realized_pnl: '85', updated_ns: '2' });
    // buys 10: closes the 7 (PnL 21 tick-steps) and opens 3 long at 1000.00
    expect(tradeAt(vault, ETH, 10n, 100_000n, 2n)).toMatchObject({ size_steps: '3', basis_ts: '300000', margin: '205', realized_pnl: '205' });
    expect(tradeAt(vault, ETH, -2n, 100_000n, 2n)).toMatchObject({ size_steps: '-9', basis_ts: String(700_021n + 200_000n), margin: '-5' });
    // a tranche of 0 steps (ceil(2 × 40%) = 1 already moved by T1) moves nothing
    const two = { ...emptyVaultPosition(ETH.symbol, 0n), user_id: 'u', size_steps: '1', basis_ts: '100000', margin: '7', liquidation: { original_steps: '2', side: 'long' as const, done: 1, transferred_steps: '1', resume_at_ms: 0 } };
    const t = applyTranche(two, vault, { user_id: 'u', balance: '0' } as AccountRec, ETH, 1, 90_000n, 0, 3n);
    expect([t.steps, t.position.size_steps, t.position.margin, t.vault.size_steps, t.vault.margin]).toEqual([0n, '1', '7', '-7', '-5']);
  });
});

describe('marks and funding', () => {
  it('unrealized PnL and maintenance margin in exact micro-USDC; maintenance rounds up', () => {
    const p = { user_id: 'u', symbol: ETH.symbol, size_steps: '-3', basis_ts: String(3n * 300_001n), margin: '91', realized_pnl: '0', fees_paid: '0', leverage: 10, updated_ns: '0' } as PositionRec;
    const m = markPosition(p, ETH, 300_002n); // short 0.003 loses 0.03 USDC = 30 micro
    expect([m.unrealizedMicro, m.maintenanceMicro, m.equityMicro]).toEqual([-30n, 450_003n, 61n]); // 0.003 × 3000.02 × 5%
    expect(marginRatioText(m)).toBe('0.0001');
    const one = markPosition({ ...p, size_steps: '1', basis_ts: '300001' }, ETH, 300_001n);
    expect(one.maintenanceMicro).toBe(150_001n); // 0.001 × 3000.01 × 5% = 0.1500005, rounded up
  });

  it('payers pay ceil, receivers get floor; a payment beyond the margin stops at 0', () => {
    expect(fundingPaymentMicro(3n, 650_001n, 100n, instrumentBySymbol('BTC-USDC-PERP')!)).toBe(-19_501n);
    expect(fundingPaymentMicro(-3n, 650_001n, 100n, instrumentBySymbol('BTC-USDC-PERP')!)).toBe(19_500n);
    expect(fundingPaymentMicro(-3n, 650_001n, -100n, instrumentBySymbol('BTC-USDC-PERP')!)).toBe(-19_501n);
    const p = { margin: '100', funding_accrued: '5', realized_pnl: '0' } as PositionRec;
    expect(settleFunding(p, -150n, 1n)).toMatchObject({ settledMicro: -100n, deficitMicro: 50n, position: { margin: '0', funding_accrued: '-95', realized_pnl: '-100' } });
  });
});

describe('bankruptcy backstop (deleveraging.ts)', () => {
  // ETH: tick 0.01, step 0.001, so 1 tick × 1 step = 10 micro-USDC
  const pos = (user: string, size: bigint, basisTs: bigint, margin: bigint, extra: Partial<PositionRec> = {}): { key: string; value: PositionRec } => ({
    key: `${user}\nETH-USDC-PERP`,
    value: { user_id: user, symbol: 'ETH-USDC-PERP', size_steps: String(size), basis_ts: String(basisTs), margin: String(margin), realized_pnl: '0', fees_paid: '0', leverage: 10, updated_ns: '0', ...extra },
  });

  it('bankruptcy price: where closing loses the whole margin, rounded against the position, never below one tick', () => {
    // long 1 ETH (1000 steps) from 2000.00 (200000 ticks), margin 200 USDC: (200000 × 1000 × 10 − 200e6) / (1000 × 10) = 180000
    expect(bankruptcyPriceTicks(pos('a', 1000n, 200_000_000n, 200_000_000n).value, ETH)).toBe(180_000n);
    // one micro-USDC less margin: the exact price is a hair above 180000, rounded down (loss at least the margin)
    expect(bankruptcyPriceTicks(pos('a', 1000n, 200_000_000n, 199_999_999n).value, ETH)).toBe(180_000n);
    // short: the lowest price with the loss at least the margin, rounded up
    expect(bankruptcyPriceTicks(pos('a', -1000n, 200_000_000n, 200_000_000n).value, ETH)).toBe(220_000n);
    expect(bankruptcyPriceTicks(pos('a', -1000n, 200_000_000n, 200_000_001n).value, ETH)).toBe(220_001n);
    // closing there never leaves the bankrupt anything, and takes under one tick × size beyond its margin
    for (const [size, margin] of [[1000n, 199_999_999n], [1000n, 150_000_005n], [-1000n, 200_000_001n], [-700n, 33_333_333n], [3n, 55n]] as const) {
      const basis = (size < 0n ? -size : size) * 200_000n;
      const p = pos('a', size, basis, margin).value;
      const acct = { user_id: 'a', balance: '0' } as AccountRec;
      reducePosition(ETH, acct, { ...p }, size < 0n ? -size : size, bankruptcyPriceTicks(p, ETH), 1n);
      const beyond = -big(acct.balance); // margin + PnL came back: ≤ 0, and above −(tick × size)
      expect(beyond).toBeGreaterThanOrEqual(0n);
      expect(beyond).toBeLessThan((size < 0n ? -size : size) * 10n);
    }
    // a long whose margin covers more than its notional cannot go bankrupt above zero
    expect(bankruptcyPriceTicks(pos('a', 1000n, 200_000_000n, 3_000_000_000n).value, ETH)).toBe(1n);
  });

  it('ADL candidates: opposite side only, in profit at the mark and not at a loss at the bankruptcy price, ranked by profit × leverage', () => {
    const book = [
      pos('lowlev', -1000n, 200_000_000n, 1_000_000_000n), // short from 2000, 2x margin
      pos('highlev', -1000n, 200_000_000n, 200_000_000n), // same profit, 10x
      pos('nomargin', -500n, 100_000_000n, 0n), // margin 0: first
      pos('late', -1000n, 185_000_000n, 200_000_000n), // short from 1850: in profit at 1800, at a loss at 1900
      pos('loser', -1000n, 170_000_000n, 200_000_000n), // short from 1700: in loss at the mark
      pos('samside', 1000n, 150_000_000n, 200_000_000n), // a long, like the bankrupt
      pos('laddered', -1000n, 200_000_000n, 200_000_000n, { liquidation: { original_steps: '1000', side: 'short', done: 1, transferred_steps: '100', resume_at_ms: 0 } }),
      pos('bankrupt', 1000n, 200_000_000n, 10_000_000n),
    ];
    const ranked = adlCandidates(book, 1n, ETH, 180_000n, 190_000n, new Set(['bankrupt']));
    expect(ranked.map((c) => c.position.user_id)).toEqual(['nomargin', 'highlev', 'lowlev']);
  });

  it('socialized loss: shares in proportion to what each can bear (profit, at most its margin), exact to the micro-USDC', () => {
    const book = [
      pos('a', 1000n, 170_000_000n, 500_000_000n), // profit at 1800: 100 USDC
      pos('b', 1000n, 175_000_000n, 20_000_000n), // profit 50, margin 20: bears at most 20
      pos('c', -1000n, 190_000_000n, 500_000_000n), // short in profit: 100
      pos('d', -1000n, 170_000_000n, 500_000_000n), // in loss: nothing
      pos('vault', 1000n, 100_000_000n, 0n),
    ];
    const r = socializeLoss(book, ETH, 180_000n, 100_000_001n, new Set(['vault']));
    const by = Object.fromEntries(r.shares.map((s) => [s.position.user_id, s.micro]));
    expect(r.uncovered).toBe(0n);
    expect(by.a! + by.b! + by.c!).toBe(100_000_001n);
    expect(by).toEqual({ a: 45_454_546n, b: 9_090_909n, c: 45_454_546n }); // 220 of capacity: 100/220, 20/220, 100/220
    expect(bearLoss(book[0]!.value, by.a!, 7n)).toMatchObject({ margin: String(500_000_000n - by.a!), realized_pnl: String(-by.a!), updated_ns: '7' });
    // more than all of them can bear: each gives its capacity, the rest is uncovered
    const all = socializeLoss(book, ETH, 180_000n, 300_000_000n, new Set(['vault']));
    expect(Object.fromEntries(all.shares.map((s) => [s.position.user_id, s.micro]))).toEqual({ a: 100_000_000n, b: 20_000_000n, c: 100_000_000n });
    expect(all.uncovered).toBe(80_000_000n);
    expect(socializeLoss([], ETH, 180_000n, 5n, new Set()).uncovered).toBe(5n);
  });
});

describe('the published liquidation price is where the first tranche fires (issue 26, item 7)', () => {
  // a position one tick on the safe side of its liquidation price is Critical120 (or better); at the
  // last tick at or past it, T1: the ladder and the price agree, long and short, across instruments
  const cases: [string, bigint, bigint, bigint][] = [
    // symbol, signed size (steps), entry (ticks), margin (micro-USDC)
    ['ETH-USDC-PERP', 1000n, 300_000n, 300_000_000n], // 1 ETH at 3000, 10x
    ['ETH-USDC-PERP', -1000n, 300_000n, 600_000_000n], // short 1 ETH at 3000, 5x
    ['SOL-USDC-PERP', 1000n, 15_000n, 150_000_000n], // 10 SOL at 150
    ['DOGE-USDC-PERP', -5000n, 15_000n, 150_000_000n], // short 5000 DOGE at 0.15, 5x (maintenance 10%)
    ['BTC-USDC-PERP', 7n, 650_000n, 45_500_000n], // 0.007 BTC at 65000, 10x
  ];
  for (const [symbol, size, entry, margin] of cases) {
    it(`${symbol} ${size > 0n ? 'long' : 'short'}`, () => {
      const inst = instrumentBySymbol(symbol)!;
      const p: PositionRec = {
        user_id: 'u', symbol, size_steps: size.toString(), basis_ts: ((size < 0n ? -size : size) * entry).toString(), margin: margin.toString(),
        realized_pnl: '0', fees_paid: '0', leverage: 10, updated_ns: '0',
      };
      const liq = liquidationPrice(p, inst);
      const ticks = toUnits(liq.includes('.') ? liq.slice(0, liq.indexOf('.') + inst.tick_size.split('.')[1]!.length + 1) : liq, inst.tick_size)!; // truncated to the tick grid
      const tier = (markTicks: bigint) => { const m = markPosition(p, inst, markTicks); return tierOf(m.equityMicro, m.maintenanceMicro); };
      if (size > 0n) {
        // a long is liquidated when the mark falls to the price: the tick at or below it is T1, the next one above is not
        expect(tier(ticks)).toBe('T1');
        expect(tier(ticks + 1n)).toBe('Critical120');
      } else {
        const past = toUnits(liq, inst.tick_size) === null ? ticks + 1n : ticks; // the first tick at or above it
        expect(tier(past)).toBe('T1');
        expect(tier(past - 1n)).toBe('Critical120');
      }
    });
  }
});
