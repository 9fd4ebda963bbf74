// Pure arithmetic of the risk monitor (gateway/src/risk-monitor): tier bands at their exact edges,
// tranche sizes of the original size, funding rounding, and the tranche accounting with a deficit.
import { describe, it, expect } from 'vitest';
import { instrumentBySymbol } from '@tenebra/config';
import { tierOf, recovered } from '../src/risk-monitor/health-tiers';
import { dueTranche, trancheSteps, applyTranche, emptyVaultPosition } from '../src/risk-monitor/liquidation-ladder';
import { fundingPaymentMicro, settleFunding } from '../src/risk-monitor/funding';
import { markPosition, marginRatioText } from '../src/risk-monitor/position-marks';
import type { AccountRec, PositionRec } from '../src/store/records';

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
