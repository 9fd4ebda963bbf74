// Dealer-mode preprocessing is not private (@tenebra/config dealer.ts): a cluster run with it says
// so on every log line of every process (nodes, sequencer, gateway), its libraries' lines too.
import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEALER_LABEL, layout, readJson, type SequencerConfig } from '@tenebra/config';
import { startTestCluster, createAccount, Trader, waitFor } from './harness';

describe('a dealer-mode cluster of real processes', () => {
  it('labels every log line of every process while it starts, matches and stops', async () => {
    const tc = await startTestCluster({ preprocessing: 'dealer' });
    let stopped = false;
    try {
      expect(readJson<SequencerConfig>(layout(tc.dataDir).sequencerConfig).committeePreprocessing).toBe('dealer');
      const [a, b] = await Promise.all([createAccount(tc.dataDir), createAccount(tc.dataDir)]);
      const buyer = new Trader(tc.baseUrl, a!);
      const seller = new Trader(tc.baseUrl, b!);
      await Promise.all([buyer.login(), seller.login()]);
      expect((await seller.place({ symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: 1, price: 3000, time_in_force: 'GTC' })).status).toBe(200);
      const buy = await buyer.place({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 1, price: 3000, time_in_force: 'GTC' });
      expect(buy.status).toBe(200);
      await waitFor(async () => (await buyer.order(buy.body.data!.order_id)).status === 'FILLED', 30_000, 'the buy order to fill');
      await tc.cluster.stop(5_000);
      stopped = true;
      const logs = layout(tc.dataDir).logsDir;
      const files = readdirSync(logs);
      expect(files.sort()).toEqual(['gateway.log', 'node-1.log', 'node-2.log', 'node-3.log', 'node-4.log', 'node-5.log', 'sequencer.log']);
      const unlabelled: string[] = [];
      let lines = 0;
      for (const f of files) {
        for (const line of readFileSync(join(logs, f), 'utf8').split('\n').filter((l) => l.trim() !== '')) {
          lines += 1;
          let label: unknown;
          try {
            label = (JSON.parse(line) as { insecure?: unknown }).insecure;
          } catch {
            label = undefined;
          }
          if (label !== DEALER_LABEL) unlabelled.push(`${f}: ${line.slice(0, 160)}`);
        }
      }
      expect(lines).toBeGreaterThan(50);
      expect(unlabelled).toEqual([]);
    } finally {
      if (!stopped) await tc.cluster.stop(2_000);
      await tc.cleanup();
    }
  }, 150_000);
});
