// A sample of `npm run chaos:real` (scripts/src/chaos-real/campaign.ts) in npm test: one run on one
// real cluster, orders flowing over REST and the WebSocket, a pair of nodes killed with kill -9 and
// restarted, then one or two nodes cut off through their link control (POST /control/links) and
// healed. Nothing acknowledged may be lost or wrong, and collateral must be conserved.
import { describe, expect, it } from 'vitest';
import { runCampaign } from '../src/chaos-real/campaign';

describe('chaos:real sample', () => {
  it('one run: a node pair killed and restarted, a partition cut and healed, nothing lost', async () => {
    const lines: string[] = [];
    const { results } = await runCampaign({
      runs: 1, seed: Number(process.env.CHAOS_SEED ?? 25), maxMinutes: 10, paceMs: 2_500, kills: ['nodes'], progressMs: 0,
      log: (l) => lines.push(l),
    });
    expect(results).toHaveLength(1);
    const r = results[0]!;
    expect(r.problems, lines.join('\n')).toEqual([]);
    expect(r.acked).toBeGreaterThan(5);
    expect({ lost: r.lost, wrong: r.wrong, unsettled: r.unsettled }).toEqual({ lost: 0, wrong: 0, unsettled: 0 });
    expect(r.driftMicro >= 0n && r.driftMicro <= r.driftTolerance, `drift ${r.driftMicro}`).toBe(true);
    expect(r.kill.nodes).toHaveLength(2);
    expect(r.partition.nodes.length).toBeGreaterThan(0);
  }, 600_000);
});
