// Deciding a preprocessing batch while parties are down (classic ballots, docs/decisions/0009):
// - every live party staged the batch and sent ready, and the parties whose ready is missing are
//   down (one, or two: t): a classic ballot commits it without them (the live majority all voted
//   commit at ballot 0), and the operation waiting for it completes with correct values. Before
//   classic ballots this waited until they returned.
// - a party died before its last phase-A round reached the others: nobody can stage the batch, the
//   others veto it, a classic ballot drops it, and the waiting operation fails at every live party
//   with PreprocessingExhaustedError (never a hang).
// - a party restarted from its own state with the batch still running votes drop on it while the
//   others staged it: a ballot must not commit it past that veto (the restored party could not stage
//   it and would be stale, so two more deaths would leave the committee stuck); it is dropped
//   everywhere and the five go on.
// - a party cut off for less than the veto grace period (a reset stream, a short freeze) in the middle
//   of background batches costs no batch: phase A goes on when it is back.
import { describe, expect, it } from 'vitest';
import { SimNetwork, type Transport } from '@tenebra/transport';
import { PreprocessingExhaustedError } from '../src/api';
import { Msg, decode } from '../src/messages';
import { createParty, type Party } from '../src/runtime';
import { deal, droppingSends, holdingRound } from './helpers';
import { LAST_PREP_ROUND } from '../src/preprocessing';

const prep = { targetTriples: 40, targetBits: 64, batch: 40, background: false };

/** A transport that never sends phase-A messages of `round`. */
function silentInRound(inner: Transport, round: number): Transport {
  return droppingSends(inner, (_, data) => {
    const env = decode(data);
    return env.type === Msg.PrepRound && env.a === round;
  });
}

/** Runs a job of three products on `live`; resolves to each party's outcome. */
function products(live: Party[], inputs: bigint[][][]): Promise<PromiseSettledResult<bigint[]>[]> {
  return Promise.allSettled(live.map((p) => p.runJob('needs-batch-0', async (ctx) => {
    const [x, y] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s));
    return ctx.open(await ctx.mul(x!, y!));
  })));
}

describe('a batch whose missing votes belong to parties that are down', () => {
  for (const dead of [[5], [4, 5]]) {
    it(`every live party staged it: a classic ballot commits it without ${dead.join(' and ')}, the operation completes`, async () => {
      const net = new SimNetwork({ n: 5, seed: 91 + dead.length, link: { latencyMs: 1, jitterMs: 0.5 } });
      const logs: Record<string, unknown>[] = [];
      const staged = new Map<number, Uint8Array>();
      const parties: Party[] = [];
      for (let i = 1; i <= 5; i++) {
        parties.push(createParty({
          n: 5, t: 2, transport: net.transport(i), preprocessing: prep,
          log: (e) => logs.push(e as Record<string, unknown>),
          // a dying party "writes" its state with the staged batch, then dies before sending ready
          ...(dead.includes(i) ? { beforePrepVote: () => new Promise<void>(() => { staged.set(i, parties[i - 1]!.exportState()); }) } : {}),
        }));
      }
      await net.settle(Promise.all(parties.map((p) => p.start())));
      void Promise.all(parties.map((p) => p.fill()));
      const live = parties.filter((p) => !dead.includes(p.id));
      await net.run({ until: () => staged.size === dead.length && live.every((p) => p.status().preprocessing.inFlight === 0), maxTimeMs: 60_000 });
      await net.run({ maxTimeMs: 100 });
      expect(parties.map((p) => p.status().preprocessing.committedBatches)).toEqual([0, 0, 0, 0, 0]);
      for (const d of dead) net.crash(d);
      const outs = await net.settle(products(live, deal(5, 2, [7n, 11n, 3n], [5n, 0n, 9n])));
      for (const o of outs) expect(o).toEqual({ status: 'fulfilled', value: [35n, 0n, 27n] });
      const decided = logs.filter((e) => e.ev === 'prep-decided' && e.batch === 0);
      expect(decided.length).toBeGreaterThanOrEqual(live.length);
      for (const e of decided) expect(e).toMatchObject({ value: 'commit' });
      expect((decided[0]!.ballot as number) > 0).toBe(true);
      for (const p of live) expect(p.status().preprocessing.committedBatches).toBe(1);
      // a dead party back from the state it wrote learns the commit and commits its staged items too
      const back = createParty({ n: 5, t: 2, transport: net.restart(dead[0]!), state: staged.get(dead[0]!)!, preprocessing: prep });
      await net.settle(back.start());
      await net.run({ until: () => back.status().preprocessing.committedBatches === 1, maxTimeMs: 10_000 });
      expect(back.status().preprocessing.stale).toBe(false);
    }, 60_000);
  }

  it('a party died before its last phase-A round arrived: the batch is dropped, the operation fails typed everywhere', async () => {
    const net = new SimNetwork({ n: 5, seed: 97, link: { latencyMs: 1, jitterMs: 0.5 } });
    const logs: Record<string, unknown>[] = [];
    const parties: Party[] = [];
    for (let i = 1; i <= 5; i++) {
      const tr = i === 5 ? silentInRound(net.transport(i), LAST_PREP_ROUND) : net.transport(i);
      parties.push(createParty({ n: 5, t: 2, transport: tr, preprocessing: prep, log: (e) => logs.push(e as Record<string, unknown>) }));
    }
    await net.settle(Promise.all(parties.map((p) => p.start())));
    void Promise.all(parties.map((p) => p.fill())).catch(() => undefined);
    // the others sent their last round and wait for party 5's
    await net.run({ until: () => logs.filter((e) => e.ev === 'prep-start').length === 5, maxTimeMs: 60_000 });
    await net.run({ maxTimeMs: 200 });
    expect(parties.map((p) => p.status().preprocessing.committedBatches)).toEqual([0, 0, 0, 0, 0]);
    net.crash(5);
    const live = parties.slice(0, 4);
    const outs = await net.settle(products(live, deal(5, 2, [7n, 11n, 3n], [5n, 0n, 9n])));
    for (const o of outs) {
      expect(o.status).toBe('rejected');
      expect((o as PromiseRejectedResult).reason).toBeInstanceOf(PreprocessingExhaustedError);
    }
    for (const e of logs.filter((x) => x.ev === 'prep-decided' && x.batch === 0)) expect(e).toMatchObject({ value: 'drop' });
    for (const p of live) {
      expect(p.status().preprocessing.committedBatches).toBe(0);
      expect(p.status().preprocessing.resolvedBatches).toBeGreaterThanOrEqual(1);
    }
  }, 60_000);

  it('a party cut off for 300 ms mid-batch: nothing is vetoed or dropped, every batch commits', async () => {
    const net = new SimNetwork({ n: 5, seed: 101, link: { latencyMs: 1, jitterMs: 0.5 } });
    const logs: Record<string, unknown>[] = [];
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({
      n: 5, t: 2, transport: net.transport(i), preprocessing: { targetTriples: 400, targetBits: 640, batch: 40 },
      log: (e) => logs.push(e as Record<string, unknown>),
    }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    // background production runs; cut party 3 off while a batch is in its phase A
    await net.run({ until: () => logs.some((e) => e.ev === 'prep-start'), maxTimeMs: 10_000 });
    net.partition([[3], [1, 2, 4, 5]]);
    await net.run({ maxTimeMs: 300 });
    expect(parties.some((p) => p.status().preprocessing.inFlight !== undefined)).toBe(true);
    net.heal();
    await net.run({ until: () => parties.every((p) => p.status().preprocessing.inFlight === undefined && p.status().reserve.triples >= 400), maxTimeMs: 60_000 });
    for (const p of parties) {
      expect(p.status().reserve.triples).toBeGreaterThanOrEqual(400);
      expect(p.status().preprocessing.made.dropped).toBe(0);
    }
    expect(logs.filter((e) => e.ev === 'prep-veto' || e.ev === 'prep-drop')).toEqual([]);
  }, 60_000);

  it('a party restored with the batch running vetoes it: the ballot drops it (nobody stale), then two die and three go on', async () => {
    const net = new SimNetwork({ n: 5, seed: 103, link: { latencyMs: 1, jitterMs: 0.5 } });
    const logs: Record<string, unknown>[] = [];
    const log = (e: object): void => void logs.push(e as Record<string, unknown>);
    const mk = (i: number, tr: Transport, state?: Uint8Array): Party =>
      createParty({ n: 5, t: 2, transport: tr, preprocessing: prep, log, ...(state ? { state } : {}) });
    // party 3 never hears the last phase-A round: the others stage batch 0, it stays in phase A
    const parties = [1, 2, 3, 4, 5].map((i) => mk(i, i === 3 ? holdingRound(net.transport(i), LAST_PREP_ROUND) : net.transport(i)));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    void Promise.all(parties.map((p) => p.fill())).catch(() => undefined);
    await net.run({ until: () => logs.filter((e) => e.ev === 'prep-batch' && e.state === 'staged').length === 4, maxTimeMs: 60_000 });
    await net.run({ maxTimeMs: 50 });
    expect(parties.map((p) => p.status().preprocessing.committedBatches)).toEqual([0, 0, 0, 0, 0]);
    // party 3 dies and comes back from the state it had (batch 0 running, no vote): it votes drop
    const state3 = parties[2]!.exportState();
    net.crash(3);
    const back = mk(3, net.restart(3), state3);
    await net.settle(back.start());
    const all = [parties[0]!, parties[1]!, back, parties[3]!, parties[4]!];
    await net.run({ until: () => all.every((p) => p.status().preprocessing.resolvedBatches >= 1), maxTimeMs: 30_000 });
    for (const e of logs.filter((x) => x.ev === 'prep-decided' && x.batch === 0)) expect(e).toMatchObject({ value: 'drop' });
    for (const p of all) {
      expect(p.status().preprocessing.stale).toBe(false);
      expect(p.status().preprocessing.committedBatches).toBe(0);
    }
    // the five make a batch together, then two die and the other three (the restored one among them) compute
    await net.settle(Promise.all(all.map((p) => p.fill())));
    for (const p of all) expect(p.status().preprocessing.committedBatches).toBeGreaterThanOrEqual(1);
    net.crash(1);
    net.crash(5);
    const three = [all[1]!, all[2]!, all[3]!];
    const outs = await net.settle(products(three, deal(5, 2, [7n, 11n, 3n], [5n, 0n, 9n])));
    for (const o of outs) expect(o).toEqual({ status: 'fulfilled', value: [35n, 0n, 27n] });
  }, 60_000);
});
