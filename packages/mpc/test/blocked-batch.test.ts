// The commit protocol's blocking case, pinned down: every live party staged a batch and sent ready,
// the one party whose ready is missing is down, and an operation needs the batch. Nobody live may
// decide it (the absent party may have committed it, or may never have staged it), so the operation
// waits, and says so: status().preprocessing.blocked and a 'prep-blocked' log event name the batch
// and the missing parties (docs/decisions/0009-preprocessing-termination.md). When that party comes
// back from its own state it re-sends ready, the batch commits, and the operation completes with
// correct values.
import { describe, expect, it } from 'vitest';
import { SimNetwork } from '@tenebra/transport';
import { createParty, type Party } from '../src/runtime';
import { deal } from './helpers';

describe('a batch only an absent party can decide', () => {
  it('blocks the operation visibly, then completes it correctly once that party returns', async () => {
    const net = new SimNetwork({ n: 5, seed: 91, link: { latencyMs: 1, jitterMs: 0.5 } });
    const prep = { targetTriples: 40, targetBits: 64, batch: 40, background: false };
    const logs: Record<string, unknown>[] = [];
    let staged5: Uint8Array | undefined;
    const parties: Party[] = [];
    for (let i = 1; i <= 5; i++) {
      parties.push(createParty({
        n: 5, t: 2, transport: net.transport(i), preprocessing: prep,
        log: (e) => logs.push(e as Record<string, unknown>),
        // party 5 "writes" its state with the staged batch, then dies before sending ready
        ...(i === 5 ? { beforePrepReady: () => new Promise<void>(() => { staged5 = parties[4]!.exportState(); }) } : {}),
      }));
    }
    await net.settle(Promise.all(parties.map((p) => p.start())));
    void Promise.all(parties.map((p) => p.fill()));
    await net.run({ until: () => staged5 !== undefined && parties.slice(0, 4).every((p) => p.status().preprocessing.inFlight === 0), maxTimeMs: 60_000 });
    await net.run({ maxTimeMs: 100 });
    net.crash(5);
    const live = parties.slice(0, 4);
    const xs = [7n, 11n, 3n];
    const ys = [5n, 0n, 9n];
    const inputs = deal(5, 2, xs, ys);
    const jobs = live.map((p) => p.runJob('needs-batch-0', async (ctx) => {
      const [x, y] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s));
      return ctx.open(await ctx.mul(x!, y!));
    }));
    let done = 0;
    for (const j of jobs) void j.then(() => done++, () => done++);
    await net.run({ maxTimeMs: 5_000 });
    expect(done).toBe(0);
    for (const p of live) {
      expect(p.status().preprocessing.blocked).toEqual({ batch: 0, missingReadies: [5], down: [5] });
    }
    expect(logs.filter((e) => e.ev === 'prep-blocked' && e.batch === 0).length).toBe(4);
    // party 5 returns from the state it wrote: it re-sends ready, everyone commits batch 0
    const again = createParty({ n: 5, t: 2, transport: net.restart(5), state: staged5!, preprocessing: prep });
    await net.settle(again.start());
    const outs = await net.settle(Promise.all(jobs));
    for (const o of outs) expect(o).toEqual([35n, 0n, 27n]);
    for (const p of live) expect(p.status().preprocessing.blocked).toBeUndefined();
  }, 60_000);
});
