// The public funding statistic's release rule: an asset's funding paid is published only once at
// least five distinct accounts have paid into it, so no published amount is one position's payment.
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayDb } from '../src/store/db';
import { DEFAULT_FUNDING_RELEASE_PAYERS, fundingPaidBetween, recordFundingPaid } from '../src/risk-monitor/funding-ledger';
import { SLOT_MS } from '../src/stats/window';

describe('funding paid: release rule', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tenebra-funding-'));
  const db = new GatewayDb(dir);
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const slot = (k: number): number => k * SLOT_MS + 1_000;
  const paid = (from: number, to: number) => fundingPaidBetween(db, from, to);

  it('holds one payer over many intervals, and publishes the pool whole with the fifth distinct payer', () => {
    expect(DEFAULT_FUNDING_RELEASE_PAYERS).toBe(5);
    db.tx(() => {
      // the same account pays every interval: never published on its own
      for (let k = 0; k < 6; k++) recordFundingPaid(db, slot(k), 'BTC', 100n, ['0xa']);
      recordFundingPaid(db, slot(6), 'BTC', 50n, ['0xb', '0xc']);
      recordFundingPaid(db, slot(6), 'ETH', 7n, ['0xa', '0xb', '0xc', '0xd', '0xe']); // five payers at once: published
    });
    expect(paid(0, 10).perAsset.get('BTC')).toBeUndefined();
    expect(paid(0, 10).perAsset.get('ETH')).toBe(7n);
    db.tx(() => recordFundingPaid(db, slot(8), 'BTC', 30n, ['0xa', '0xd', '0xe']));
    // 600 + 50 + 30, all in the slot of the accrual that brought the fifth payer
    expect(paid(8, 9).perAsset.get('BTC')).toBe(680n);
    expect(paid(0, 8).perAsset.get('BTC')).toBeUndefined();
    // the pool starts again empty
    db.tx(() => recordFundingPaid(db, slot(9), 'BTC', 10n, ['0xa', '0xb', '0xc', '0xd']));
    expect(paid(0, 20).total).toBe(687n);
  });

  it('publishes every accrual at once with releasePayers = 1, and ignores accruals that paid nothing', () => {
    db.tx(() => {
      recordFundingPaid(db, slot(20), 'SOL', 5n, ['0xa'], 1);
      recordFundingPaid(db, slot(21), 'SOL', 0n, [], 1);
    });
    expect(paid(20, 22).perAsset.get('SOL')).toBe(5n);
  });
});
