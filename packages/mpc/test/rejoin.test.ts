// A party that restarts from a state older than a preprocessing batch it already took part in
// rejoins that batch from the peers' re-sent messages and computes phase A again. Its messages must
// come out exactly as the first time: the peers already combined the first ones into their items,
// so fresh randomness in the recomputed GRR rows would leave the party with shares that lie on no
// common polynomial with everyone else's (a silent wrong value wherever an opening uses them).
import { describe, expect, it } from 'vitest';
import { SimNetwork } from '@tenebra/transport';
import { createParty, type Party } from '../src/runtime';
import { deal, holdingRound } from './helpers';
import { LAST_PREP_ROUND } from '../src/preprocessing';

describe('rejoining a preprocessing batch after a restart', () => {
  it('recomputes the same phase-A messages, so the committed items are consistent at every party', async () => {
    const net = new SimNetwork({ n: 5, seed: 77, link: { latencyMs: 1, jitterMs: 0.5 } });
    const prep = { targetTriples: 40, targetBits: 64, batch: 40, background: false };
    let holding = true;
    const parties: Party[] = [];
    for (let i = 1; i <= 5; i++) {
      const tr = i === 2 ? holdingRound(net.transport(i), LAST_PREP_ROUND, () => holding) : net.transport(i);
      parties.push(createParty({ n: 5, t: 2, transport: tr, checkOpenings: true, preprocessing: prep }));
    }
    await net.settle(Promise.all(parties.map((p) => p.start())));
    // party 2's durable state from before batch 0
    const before = parties[1]!.exportState();
    void Promise.all(parties.map((p) => p.fill()));
    // the others stage batch 0 (party 2 sent its last round) and wait for party 2's ready
    await net.run({ until: () => [0, 2, 3, 4].every((i) => parties[i]!.status().preprocessing.inFlight === 0) && parties[1]!.status().preprocessing.inFlight === 0, maxTimeMs: 60_000 });
    await net.run({ maxTimeMs: 200 });
    expect(parties.map((p) => p.status().preprocessing.committedBatches)).toEqual([0, 0, 0, 0, 0]);
    net.crash(2);
    holding = false;
    const again = createParty({ n: 5, t: 2, transport: net.restart(2), state: before, checkOpenings: true, preprocessing: prep });
    await net.settle(again.start());
    const all = [parties[0]!, again, ...parties.slice(2)];
    await net.run({ until: () => all.every((p) => p.status().preprocessing.committedBatches === 1), maxTimeMs: 60_000 });
    // every triple of batch 0, checked against all five shares
    const xs = Array.from({ length: 40 }, (_, i) => BigInt(i + 3));
    const ys = Array.from({ length: 40 }, (_, i) => BigInt(1000 - i));
    const inputs = deal(5, 2, xs, ys);
    const outs = await net.settle(Promise.all(all.map((p) => p.runJob('products', async (ctx) => {
      const [x, y] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s));
      return ctx.open(await ctx.mul(x!, y!));
    }))));
    for (const o of outs) expect(o).toEqual(xs.map((x, i) => x * ys[i]!));
  }, 60_000);
});
