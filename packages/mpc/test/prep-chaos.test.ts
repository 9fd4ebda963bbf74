// Seeded chaos on preprocessing itself: two parties die while the committee makes batch after batch,
// at random moments (mostly phase A), right after one of them staged a batch (its ready is held back
// by a slow durable write, so the others stage and wait for it), or right after it proposed a value
// on a classic ballot (the coordinator dies mid-ballot). Every vote waits a random 0-3 ms for its
// "durable write". Afterwards:
// - the three live parties decide every batch (none stays in flight) and agree on the log;
// - an operation on their reserve opens correctly, with every live share checked (checkOpenings),
//   which a party holding different items would fail;
// - the dead two come back with their memory gone, recover, the five refill the reserve to its
//   target by background production alone, and make and use new batches with every share checked.
import { describe, expect, it } from 'vitest';
import { Prng, SimNetwork } from '@tenebra/transport';
import { createParty, type Party } from '../src/runtime';
import { productsAndComparisons } from './helpers';

const prep = { targetTriples: 400, targetBits: 640, batch: 40 };

function status(p: Party): string {
  const s = p.status().preprocessing;
  return `${s.resolvedBatches}/${s.committedBatches}/${s.inFlight ?? '-'}`;
}

/** A job of products and comparisons on `team`; checks the opened values. */
async function useReserve(net: SimNetwork, team: Party[], id: string, seed: number): Promise<void> {
  const r = new Prng(seed);
  const xs = Array.from({ length: 12 }, () => BigInt(Math.floor(r.nextFloat() * 1e6)));
  const ys = Array.from({ length: 12 }, () => BigInt(Math.floor(r.nextFloat() * 1e6)));
  await productsAndComparisons(net, team, id, xs, ys);
}

describe('chaos during preprocessing: two die at random moments', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) {
    it(`seed ${seed}: the live three decide every batch and agree; the two recover and all five go on`, async () => {
      const net = new SimNetwork({ n: 5, seed, link: { latencyMs: 1, jitterMs: 1 } });
      const rng = new Prng(seed * 31 + 7);
      const mode = (['random', 'after-staging', 'coordinator'] as const)[seed % 3]!;
      const order = [1, 2, 3, 4, 5].sort(() => rng.nextFloat() - 0.5);
      const dead = order.slice(0, 2);
      const kill = (i: number, afterMs: number): void => {
        net.clock.setTimeout(() => { if (!net.isCrashed(i)) net.crash(i); }, afterMs);
      };
      let staged = 0;
      let proposed = false;
      const watch = (i: number) => (e: object): void => {
        const ev = e as { ev?: string; state?: string };
        if (mode === 'after-staging' && i === dead[0] && ev.ev === 'prep-batch' && ev.state === 'staged' && ++staged === 3) {
          kill(dead[0]!, 0);
          kill(dead[1]!, rng.nextFloat() * 4);
        }
        if (mode === 'coordinator' && ev.ev === 'prep-propose' && !proposed) {
          proposed = true;
          kill(i, 0);
          kill(dead.find((d) => d !== i) ?? dead[1]!, rng.nextFloat() * 4);
        }
      };
      const slowVotes = (i: number) => (): Promise<void> => new Promise((resolve) => net.transport(i).clock.setTimeout(resolve, rng.nextFloat() * 3));
      const mk = (i: number, t = net.transport(i), keys?: Uint8Array): Party =>
        createParty({ n: 5, t: 2, transport: t, preprocessing: prep, checkOpenings: true, ...(keys ? { keys } : {}), beforePrepVote: slowVotes(i), log: watch(i) });
      const parties = [1, 2, 3, 4, 5].map((i) => mk(i));
      await net.settle(Promise.all(parties.map((p) => p.start())));
      const keys = parties.map((p) => p.exportKeys());
      // background production is now running
      if (mode === 'random') {
        const t1 = rng.nextFloat() * 60;
        kill(dead[0]!, t1);
        kill(dead[1]!, t1 + rng.nextFloat() * 15);
      }
      if (mode === 'coordinator') {
        // make a classic ballot happen: parties veto a batch when a peer lost mid-batch is still gone
        // after the grace period (1 s), so cut one party off for longer than that
        net.clock.setTimeout(() => net.partition([[order[2]!], order.filter((j) => j !== order[2])]), 20 + rng.nextFloat() * 20);
        net.clock.setTimeout(() => net.heal(), 1_300);
        net.clock.setTimeout(() => { // no ballot came: kill at a fixed moment instead
          if (proposed) return;
          proposed = true;
          kill(dead[0]!, 0);
          kill(dead[1]!, 1);
        }, 2_000);
      }
      await net.run({ maxTimeMs: 2_100 });
      const live = parties.filter((p) => !net.isCrashed(p.id));
      expect(live.length).toBe(3);
      await net.run({ until: () => live.every((p) => p.status().preprocessing.inFlight === undefined), maxTimeMs: 60_000 });
      const logs = live.map(status);
      expect(logs.every((l) => l === logs[0]), `live logs ${logs.join(' ')}`).toBe(true);
      const reserve = live.map((p) => JSON.stringify(p.status().reserve));
      expect(reserve.every((r) => r === reserve[0])).toBe(true);
      if (live[0]!.status().reserve.triples >= 12 && live[0]!.status().reserve.bits >= 12 * 40) await useReserve(net, live, 'live', seed);

      // the two come back with their memory gone
      const gone = parties.filter((p) => net.isCrashed(p.id)).map((p) => p.id);
      const back = gone.map((i) => mk(i, net.restart(i), keys[i - 1]));
      await net.settle(Promise.all(back.map((p) => p.start())));
      await net.settle(Promise.all(back.map((p) => p.recover())), { maxTimeMs: 120_000 });
      const all = [...live, ...back].sort((a, b) => a.id - b.id);
      // background production alone (no job runs) refills every kind to its target: a batch the
      // ballots dropped after everyone was back must not leave production idle
      const full = (p: Party): boolean => {
        const s = p.status();
        return !s.preprocessing.stale && s.preprocessing.inFlight === undefined && s.reserve.triples >= prep.targetTriples && s.reserve.bits >= prep.targetBits;
      };
      await net.run({ until: () => all.every(full), maxTimeMs: 300_000 });
      expect(all.map((p) => `${p.id}:${status(p)}:${p.status().reserve.triples}/${p.status().reserve.bits}`).filter((_, i) => !full(all[i]!))).toEqual([]);
      await useReserve(net, all, 'all', seed + 100);
      await useReserve(net, all, 'all-again', seed + 200);
    }, 120_000);
  }
});
