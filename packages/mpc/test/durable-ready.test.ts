import { describe, expect, it } from 'vitest';
import { SimNetwork } from '@tenebra/transport';
import { createParty, type Party } from '../src';
import { decodeSnapshot } from '../src/state';

// A party whose host persists state (the committee node) sends ready for a preprocessing batch only
// once the state holding the staged batch is durable (PartyOptions.beforePrepVote): until then
// nobody can commit the batch, so a restart from that state never comes back without a batch it
// helped commit.

describe('ready after the staged batch is durable', () => {
  it('withholds ready until beforePrepVote resolves; the state it persists holds the staged batch', async () => {
    const net = new SimNetwork({ n: 5, seed: 31, link: { latencyMs: 1, jitterMs: 0.5 } });
    const seen: { batch: number; staged: number | undefined; othersCommittedAtCall: number[]; othersCommittedAtRelease: number[] }[] = [];
    const parties: Party[] = [];
    const committed = (): number[] => parties.slice(1).map((p) => p.status().preprocessing.committedBatches);
    for (let i = 1; i <= 5; i++) {
      parties.push(createParty({
        n: 5, t: 2, transport: net.transport(i),
        preprocessing: { targetTriples: 60, targetBits: 160, batch: 40, background: false },
        ...(i === 1
          ? {
            // the "write" takes 50 ms of simulated time; the state captured now must hold the batch staged
            beforePrepVote: (batch: number) => new Promise<void>((resolve) => {
              const entry = { batch, staged: decodeSnapshot(parties[0]!.exportState()).prep.staged?.id, othersCommittedAtCall: committed(), othersCommittedAtRelease: [] as number[] };
              seen.push(entry);
              net.transport(1).clock.setTimeout(() => {
                entry.othersCommittedAtRelease = committed();
                resolve();
              }, 50);
            }),
          }
          : {}),
      }));
    }
    await net.settle(Promise.all(parties.map((p) => p.start())));
    await net.settle(Promise.all(parties.map((p) => p.fill())));
    expect(seen.length).toBeGreaterThan(0);
    for (const s of seen) {
      expect(s.staged).toBe(s.batch);
      // while party 1's ready was withheld, nobody committed its batch
      expect(s.othersCommittedAtRelease).toEqual(s.othersCommittedAtCall);
    }
    const counts = parties.map((p) => p.status().preprocessing.committedBatches);
    expect(new Set(counts).size).toBe(1);
    expect(counts[0]).toBe(seen.length);
    // and the items are usable: a comparison over the filled reserve
    const out = await net.settle(Promise.all(parties.map((p) => p.runJob('cmp', async (ctx) => ctx.open(await ctx.lt(ctx.constant([3n, 9n]), ctx.constant([5n, 2n])))))));
    for (const o of out) expect(o).toEqual([1n, 0n]);
  }, 60_000);
});
