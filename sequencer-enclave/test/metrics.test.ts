// The sequencer's Prometheus series follow what it journals and who is connected.
import { afterAll, describe, expect, it } from 'vitest';
import { SequencerClient, SequencerFeed } from '@tenebra/wire';
import { parseExposition, processRegistry, sumOf } from '@tenebra/metrics';
import { expectedMeasurement, startSequencer } from '../src/index';
import { cleanupDirs, fixture, memoryLog, opaqueOp, silent, until } from './helpers';

afterAll(cleanupDirs);

describe('sequencer metrics', () => {
  it('count journaled ops and group commits, and show the last seq, subscribers and submitters', async () => {
    const f = fixture(3);
    const registry = processRegistry('sequencer', 0);
    const s = await startSequencer(f.config, f.platform.privateKey, silent, registry);
    const scrape = async () => parseExposition(await registry.metrics());
    const opts = { url: s.url, platformPublicKey: f.platform.publicKey, expectedMeasurement: expectedMeasurement(f.config), log: memoryLog(), backoffMaxMs: 200 };
    const gateway = new SequencerClient();
    const feed = new SequencerFeed();
    try {
      let m = await scrape();
      expect(sumOf(m, 'tenebra_sequencer_ops_journaled_total', { role: 'sequencer', index: '0' })).toBe(0);
      expect(sumOf(m, 'tenebra_sequencer_submitters')).toBe(0);

      await gateway.connect({ ...opts, authKey: f.gatewayLink.privateKey });
      const got: unknown[] = [];
      await feed.connect({ ...opts, authKey: f.nodeLinks[0]!.privateKey, node: 1, fromSeq: 1n, onOp: async (op) => { got.push(op); } });
      // 40 submits in one turn: one or a few intake groups
      await Promise.all(Array.from({ length: 40 }, (_, k) => gateway.submit(opaqueOp(3, k))));
      await gateway.submit(opaqueOp(3, 1000));
      await until(() => got.length === 41, 10_000, 'the feed to deliver');

      m = await scrape();
      expect(sumOf(m, 'tenebra_sequencer_ops_journaled_total')).toBe(41);
      expect(sumOf(m, 'tenebra_sequencer_group_commit_ops_sum')).toBe(41);
      const groups = sumOf(m, 'tenebra_sequencer_group_commit_ops_count');
      expect(groups).toBeGreaterThanOrEqual(2); // the lone last submit is a group of its own
      expect(groups).toBeLessThan(41);
      expect(sumOf(m, 'tenebra_sequencer_group_commit_seconds_count')).toBe(groups);
      expect(sumOf(m, 'tenebra_sequencer_group_commit_seconds_sum')).toBeGreaterThan(0);
      expect(sumOf(m, 'tenebra_sequencer_last_seq')).toBe(41);
      expect(sumOf(m, 'tenebra_sequencer_subscribers')).toBe(1);
      expect(sumOf(m, 'tenebra_sequencer_submitters')).toBe(1);
      expect(m.some((x) => x.name === 'process_cpu_user_seconds_total')).toBe(true);

      await feed.close();
      await gateway.close();
      // the server hears of the closes a moment later
      for (let i = 0; i < 50; i++) {
        m = await scrape();
        if (sumOf(m, 'tenebra_sequencer_subscribers') + sumOf(m, 'tenebra_sequencer_submitters') === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(sumOf(m, 'tenebra_sequencer_subscribers')).toBe(0);
      expect(sumOf(m, 'tenebra_sequencer_submitters')).toBe(0);
    } finally {
      await feed.close();
      await gateway.close();
      await s.close();
    }
  });
});
