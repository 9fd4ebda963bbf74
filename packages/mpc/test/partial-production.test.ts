// Production with fewer than n parties up (docs/decisions/0017-production-with-parties-down.md): a
// committee of 7 with t = 2 loses 2 parties and keeps making preprocessing with the other 5 (2t+1),
// each batch computed and held by its participant set; the dead return with their memory gone,
// recover the items made without them by share recovery, and the seven go on.
// Checked on the seeded simulated network:
// - after the kill, batches commit at the five (inline, for a job that needs more than the reserve,
//   and in the background), and the job's products and comparisons open correctly;
// - every item of a batch made by the five, read from the five reserves, is consistent (all five
//   shares on one degree-t polynomial) and correct: c = a*b for triples, each nibble's 15 unary
//   indicators and value agree with a 4-bit value; closure items (lex4) hold the products of their masks;
// - the two come back with memory gone, recover (helpers wait until no batch made without them is in
//   flight), every party ends with the same log and reserve, and jobs run with every share checked,
//   the last one at the two returned parties and one other only (t+1), consuming items made while
//   they were dead;
// - a party back from its own state while the five compute a batch without it stays out of it (the
//   members' notice), the batch commits, and it recovers (4 seeds);
// - two die at random moments of background production: the five decide every batch, refill the
//   reserve and use it with every share checked; the two recover and the seven go on (4 seeds);
// - the dead recover while the five compute a batch without them: helpers answer once it is
//   decided, so they do not end stale;
// - a third party dies in the five's batch: the four drop it and, unable to produce (2t+1 = 5), fail
//   an operation past the reserve with PreprocessingExhaustedError and complete one within it.
import { describe, expect, it } from 'vitest';
import { Prng, SimNetwork } from '@tenebra/transport';
import * as F from '../src/field';
import { PreprocessingExhaustedError } from '../src/api';
import { createParty, type Party } from '../src/runtime';
import { reconstructChecked } from '../src/shamir';
import type { Preprocessor } from '../src/preprocessing';
import { NIBBLE_WIDTH, WIDTH, type Kind } from '../src/reserve';
import { LEX4, closureItemOf } from '../src/closure';
import { deal } from './helpers';

const N = 7;
const T = 2;
const prep = { targetTriples: 200, targetBits: 320, batch: 40 };

function prepOf(p: Party): Preprocessor {
  return (p as unknown as { prep: Preprocessor }).prep;
}

function log(p: Party): string {
  const s = p.status().preprocessing;
  return `${s.resolvedBatches}/${s.committedBatches}/${s.inFlight ?? '-'}`;
}

/** Products of `count` and comparisons of the first `lts` pairs of random values on `team`; asserts the opened values. */
async function useReserve(net: SimNetwork, team: Party[], id: string, seed: number, count = 12, lts = count): Promise<void> {
  const r = new Prng(seed);
  const xs = Array.from({ length: count }, () => BigInt(Math.floor(r.nextFloat() * 1e6)));
  const ys = Array.from({ length: count }, () => BigInt(Math.floor(r.nextFloat() * 1e6)));
  const inputs = deal(N, T, xs, ys);
  const outs = await net.settle(Promise.all(team.map((p) => p.runJob(id, async (ctx) => {
    const [x, y] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s));
    const [xl, yl] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s.slice(0, lts)));
    return ctx.open(ctx.concat([await ctx.mul(x!, y!), await ctx.lt(xl!, yl!)]));
  }))), { maxTimeMs: 300_000 });
  const want = [...xs.map((x, i) => x * ys[i]!), ...xs.slice(0, lts).map((x, i) => (x < ys[i]! ? 1n : 0n))];
  for (const o of outs) expect(o).toEqual(want);
}

/** Opens items [from, from+k) of a kind from the holders' reserves, checking every share lies on one polynomial. */
function openItems(holders: Party[], kind: Kind, from: number, k: number): bigint[][] {
  const shares = holders.map((p) => prepOf(p).reserve.range(kind, from, k));
  const flat = reconstructChecked(holders.map((p) => p.id), shares, T, N);
  const w = WIDTH[kind];
  return Array.from({ length: k }, (_, i) => flat.slice(i * w, (i + 1) * w));
}

describe('a committee of 7 with t = 2 produces with 2 parties down', () => {
  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: five make, commit and use batches; the two return by recovery and the seven go on`, async () => {
      const net = new SimNetwork({ n: N, seed, link: { latencyMs: 1, jitterMs: 1 } });
      const rng = new Prng(seed * 17 + 3);
      const events: Record<string, unknown>[] = [];
      const mk = (i: number, keys?: Uint8Array): Party => createParty({
        n: N, t: T, transport: keys ? net.restart(i) : net.transport(i), preprocessing: prep, checkOpenings: true,
        ...(keys ? { keys } : {}),
        log: (e) => { if (events.length < 50_000) events.push(e as Record<string, unknown>); },
      });
      const parties = Array.from({ length: N }, (_, i) => mk(i + 1));
      await net.settle(Promise.all(parties.map((p) => p.start())));
      const keys = parties.map((p) => p.exportKeys());
      await net.run({ until: () => parties.every((p) => p.status().preprocessing.inFlight === undefined && p.status().reserve.triples >= prep.targetTriples), maxTimeMs: 300_000 });
      // every batch so far was made by all seven
      expect(events.filter((e) => e.ev === 'prep-start' && e.members !== undefined)).toEqual([]);

      // two die, at a random moment (maybe mid-batch: a batch then in flight is vetoed and dropped)
      const dead = [1, 2, 3, 4, 5, 6, 7].sort(() => rng.nextFloat() - 0.5).slice(0, 2).sort((a, b) => a - b);
      const live = parties.filter((p) => !dead.includes(p.id));
      const before = prepOf(live[0]!).committed;
      const endBefore = { ...prepOf(live[0]!).reserve.end };
      for (const d of dead) net.crash(d);
      // a job that needs more triples than the reserve holds: production runs inline with five
      const need = live[0]!.status().reserve.triples + 30;
      await useReserve(net, live, 'past-the-reserve', seed, need, 12);
      // and the background refills the reserve to its targets with five
      await net.run({ until: () => live.every((p) => p.status().preprocessing.inFlight === undefined && p.status().reserve.triples >= prep.targetTriples && p.status().reserve.bits >= prep.targetBits), maxTimeMs: 300_000 });
      const logs = live.map(log);
      expect(logs.every((l) => l === logs[0]), `live logs ${logs.join(' ')}`).toBe(true);
      expect(prepOf(live[0]!).committed).toBeGreaterThan(before + 1);
      for (const p of live) expect(p.status().preprocessing.stale).toBe(false);
      const partial = events.filter((e) => e.ev === 'prep-start' && Array.isArray(e.members));
      expect(partial.length).toBeGreaterThan(0);
      for (const e of partial) expect(e.members).toEqual(live.map((p) => p.id));

      // the items made by the five are consistent across all five and correct
      const res = prepOf(live[0]!).reserve;
      const tFrom = Math.max(endBefore.triples, res.cursor.triples);
      const tK = Math.min(100, res.end.triples - tFrom);
      expect(tK).toBeGreaterThan(0);
      for (const [a, b, c] of openItems(live, 'triples', tFrom, tK)) expect(c).toBe(F.mod(a! * b!));
      const uFrom = Math.max(endBefore.nibbles, res.cursor.nibbles);
      const uK = Math.min(100, res.end.nibbles - uFrom);
      expect(uK).toBeGreaterThan(0);
      const values = new Set<bigint>();
      for (const nib of openItems(live, 'nibbles', uFrom, uK)) {
        const v = nib[NIBBLE_WIDTH - 1]!;
        expect(v >= 0n && v < 16n).toBe(true);
        values.add(v);
        for (let j = 0; j < 15; j++) expect(nib[j]).toBe(v > BigInt(j) ? 1n : 0n);
      }
      expect(values.size).toBeGreaterThan(8); // random 4-bit values, not a constant
      const lFrom = Math.max(endBefore.lex4, res.cursor.lex4);
      const lK = Math.min(50, res.end.lex4 - lFrom);
      if (lK > 0) {
        for (const item of openItems(live, 'lex4', lFrom, lK)) expect(item).toEqual(closureItemOf(LEX4, item.slice(0, LEX4.factors)));
      }

      // the two come back with their memory gone and recover
      const back = dead.map((i) => mk(i, keys[i - 1]));
      await net.settle(Promise.all(back.map((p) => p.start())));
      await net.settle(Promise.all(back.map((p) => p.recover())), { maxTimeMs: 300_000 });
      const all = [...live, ...back].sort((a, b) => a.id - b.id);
      await useReserve(net, all, 'all-seven', seed + 100);
      await net.run({ until: () => all.every((p) => p.status().preprocessing.inFlight === undefined && !p.status().preprocessing.stale), maxTimeMs: 300_000 });
      const logs7 = all.map(log);
      expect(logs7.every((l) => l === logs7[0]), `logs ${logs7.join(' ')}`).toBe(true);
      const reserves = all.map((p) => JSON.stringify(p.status().reserve));
      expect(reserves.every((r) => r === reserves[0])).toBe(true);
      // the returned two hold correct shares of the items made without them: they and one other
      // (t+1 = 3) run a job alone, the other four cut off
      const trio = [...back, live[0]!];
      net.partition([trio.map((p) => p.id), all.filter((p) => !trio.includes(p)).map((p) => p.id)]);
      await useReserve(net, trio, 'trio', seed + 200, 4);
    }, 300_000);
  }

  for (const seed of [41, 42, 43, 44]) it(`seed ${seed}: a party back from its own state while the five compute a batch without it stays out of it: the batch commits, it recovers`, async () => {
    const net = new SimNetwork({ n: N, seed, link: { latencyMs: 1, jitterMs: 1 } });
    const events: Record<string, unknown>[] = [];
    let restartAt: number | undefined;
    let state6: Uint8Array | undefined;
    let six: Party | undefined;
    const mk = (i: number, o: { keys?: Uint8Array; state?: Uint8Array } = {}): Party => createParty({
      // (openings from the first t+1 shares: with checkOpenings a job would wait for the share of 6,
      // which is up again but not in the job; the opened values are checked below)
      n: N, t: T, transport: o.keys || o.state ? net.restart(i) : net.transport(i), preprocessing: prep, ...o,
      log: (e) => {
        const ev = e as Record<string, unknown>;
        if (events.length < 50_000) events.push(ev);
        // the first batch made without the dead: bring party 6 back from its state while it is in round 0
        if (restartAt === undefined && ev.ev === 'prep-start' && Array.isArray(ev.members)) {
          restartAt = ev.batch as number;
          net.clock.setTimeout(() => {
            six = mk(6, { state: state6! });
            six.start().catch((err: unknown) => events.push({ ev: 'test-error', error: String(err) }));
          }, 0);
        }
      },
    });
    const parties = Array.from({ length: N }, (_, i) => mk(i + 1));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    const keys = parties.map((p) => p.exportKeys());
    await net.run({ until: () => parties.every((p) => p.status().preprocessing.inFlight === undefined && p.status().reserve.triples >= prep.targetTriples), maxTimeMs: 300_000 });
    state6 = parties[5]!.exportState();
    net.crash(6);
    net.crash(7);
    const live = parties.slice(0, 5);
    // a job that takes most of the triples: background production starts without 6 and 7 after it
    const drain = deal(N, T, Array.from({ length: 150 }, (_, i) => BigInt(i)), Array.from({ length: 150 }, () => 3n));
    const outs = await net.settle(Promise.all(live.map((p) => p.runJob('drain', async (ctx) => {
      const [x, y] = drain[p.id - 1]!.map((v) => ctx.fromShares(v));
      return ctx.open(await ctx.mul(x!, y!));
    }))));
    for (const o of outs) expect(o).toEqual(Array.from({ length: 150 }, (_, i) => BigInt(3 * i)));
    await net.run({ until: () => restartAt !== undefined && six !== undefined && live.every((p) => p.status().preprocessing.resolvedBatches > restartAt!), maxTimeMs: 60_000 });
    const batch = restartAt!;
    // the batch without 6 committed at the five: 6's own proposal did not stall it
    const atLive = (x: Record<string, unknown>): boolean => x.batch === batch && live.some((p) => p.id === x.party);
    expect(events.filter((x) => x.ev === 'prep-drop' && atLive(x))).toEqual([]);
    expect(events.filter((x) => x.ev === 'prep-batch' && x.state === 'committed' && atLive(x)).length).toBe(5);
    expect(events.filter((x) => x.party === 6 && (x.ev === 'prep-outsider' || x.ev === 'prep-stale')).length).toBeGreaterThan(0);
    // 6 does not hold it: it is stale and recovers from the others
    await net.run({ until: () => six!.status().preprocessing.stale, maxTimeMs: 60_000 });
    net.crash(6);
    const six2 = mk(6, { keys: keys[5]! });
    await net.settle(six2.start());
    await net.settle(six2.recover(), { maxTimeMs: 300_000 });
    const six3 = [...live, six2];
    await net.run({ until: () => six3.every((p) => p.status().preprocessing.inFlight === undefined && !p.status().preprocessing.stale), maxTimeMs: 300_000 });
    await useReserve(net, six3, 'six', 6);
    const logs = six3.map(log);
    expect(logs.every((l) => l === logs[0]), `logs ${logs.join(' ')}`).toBe(true);
    expect(events.filter((x) => x.ev === 'test-error')).toEqual([]);
  }, 300_000);

  for (const seed of [1, 2, 3, 4]) it(`seed ${seed}: two die at random moments of production; the five decide every batch, refill and use the reserve; the two recover`, async () => {
    const net = new SimNetwork({ n: N, seed: 100 + seed, link: { latencyMs: 1, jitterMs: 1 } });
    const rng = new Prng(seed * 29 + 1);
    const slowVotes = (i: number) => (): Promise<void> => new Promise((resolve) => net.transport(i).clock.setTimeout(resolve, rng.nextFloat() * 3));
    let partial = 0;
    const mk = (i: number, keys?: Uint8Array): Party => createParty({
      n: N, t: T, transport: keys ? net.restart(i) : net.transport(i), preprocessing: prep, checkOpenings: true,
      ...(keys ? { keys } : {}), beforePrepVote: slowVotes(i),
      log: (e) => { if ((e as { ev?: string }).ev === 'prep-start' && Array.isArray((e as { members?: unknown }).members)) partial++; },
    });
    const parties = Array.from({ length: N }, (_, i) => mk(i + 1));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    const keys = parties.map((p) => p.exportKeys());
    // background production runs from the start; two die within its first batches, seconds apart
    const dead = [1, 2, 3, 4, 5, 6, 7].sort(() => rng.nextFloat() - 0.5).slice(0, 2);
    const t1 = rng.nextFloat() * 40;
    net.clock.setTimeout(() => net.crash(dead[0]!), t1);
    net.clock.setTimeout(() => net.crash(dead[1]!), t1 + rng.nextFloat() * 1500);
    await net.run({ maxTimeMs: 1_600 });
    const live = parties.filter((p) => !net.isCrashed(p.id));
    expect(live.length).toBe(5);
    // the five refill the reserve to its targets by background production alone
    const full = (p: Party): boolean => {
      const st = p.status();
      return !st.preprocessing.stale && st.preprocessing.inFlight === undefined && st.reserve.triples >= prep.targetTriples && st.reserve.bits >= prep.targetBits;
    };
    await net.run({ until: () => live.every(full), maxTimeMs: 300_000 });
    expect(partial).toBeGreaterThan(0); // batches made by the five alone
    const logs = live.map(log);
    expect(logs.every((l) => l === logs[0]), `live logs ${logs.join(' ')}`).toBe(true);
    const reserve = live.map((p) => JSON.stringify(p.status().reserve));
    expect(reserve.every((r) => r === reserve[0])).toBe(true);
    await useReserve(net, live, 'five', seed);
    // the two come back with their memory gone and recover; the seven refill and use the reserve
    const back = dead.map((i) => mk(i, keys[i - 1]));
    await net.settle(Promise.all(back.map((p) => p.start())));
    await net.settle(Promise.all(back.map((p) => p.recover())), { maxTimeMs: 300_000 });
    const all = [...live, ...back].sort((a, b) => a.id - b.id);
    await useReserve(net, all, 'seven', seed + 100);
    await net.run({ until: () => all.every(full), maxTimeMs: 300_000 });
    const logs7 = all.map(log);
    expect(logs7.every((l) => l === logs7[0]), `logs ${logs7.join(' ')}`).toBe(true);
    await useReserve(net, all, 'seven-again', seed + 200);
  }, 300_000);

  it('the dead recover while the five compute a batch without them: helpers answer once it is decided, so they do not end stale', async () => {
    const net = new SimNetwork({ n: N, seed: 61, link: { latencyMs: 1, jitterMs: 1 } });
    let partialAt: number | undefined;
    const mk = (i: number, keys?: Uint8Array): Party => createParty({
      n: N, t: T, transport: keys ? net.restart(i) : net.transport(i), preprocessing: prep,
      ...(keys ? { keys } : {}),
      log: (e) => {
        const ev = e as Record<string, unknown>;
        if (partialAt === undefined && ev.ev === 'prep-start' && Array.isArray(ev.members)) partialAt = ev.batch as number;
      },
    });
    const parties = Array.from({ length: N }, (_, i) => mk(i + 1));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    const keys = parties.map((p) => p.exportKeys());
    await net.run({ until: () => parties.every((p) => p.status().preprocessing.inFlight === undefined && p.status().reserve.triples >= prep.targetTriples), maxTimeMs: 300_000 });
    net.crash(6);
    net.crash(7);
    const live = parties.slice(0, 5);
    await useReserve(net, live, 'drain', 9, 150, 2);
    // background production now runs without 6 and 7: they come back and recover while it does
    await net.run({ until: () => partialAt !== undefined && live.some((p) => p.status().preprocessing.inFlight !== undefined), maxTimeMs: 60_000 });
    const inFlight = live[0]!.status().preprocessing.inFlight!;
    const back = [6, 7].map((i) => mk(i, keys[i - 1]));
    const stale: number[] = [];
    for (const p of back) p.on('stale', () => stale.push(p.id));
    await net.settle(Promise.all(back.map((p) => p.start())));
    await net.settle(Promise.all(back.map((p) => p.recover())), { maxTimeMs: 300_000 });
    // they were answered with the batch in flight decided
    for (const p of back) expect(p.status().preprocessing.resolvedBatches).toBeGreaterThan(inFlight);
    const all = [...live, ...back];
    await net.run({ until: () => all.every((p) => p.status().preprocessing.inFlight === undefined), maxTimeMs: 300_000 });
    expect(stale).toEqual([]);
    const logs = all.map(log);
    expect(logs.every((l) => l === logs[0]), `logs ${logs.join(' ')}`).toBe(true);
    await useReserve(net, all, 'seven', 10);
  }, 300_000);

  it('a third party dies while the five compute a batch: the four drop it, an operation past the reserve fails typed, one within it completes', async () => {
    const net = new SimNetwork({ n: N, seed: 71, link: { latencyMs: 1, jitterMs: 1 } });
    let third: number | undefined;
    const mk = (i: number): Party => createParty({
      n: N, t: T, transport: net.transport(i), preprocessing: prep,
      log: (e) => {
        const ev = e as Record<string, unknown>;
        // the first batch of the five: one of them dies in its phase A
        if (third === undefined && ev.ev === 'prep-start' && Array.isArray(ev.members)) {
          third = 5;
          net.clock.setTimeout(() => net.crash(5), 1);
        }
      },
    });
    const parties = Array.from({ length: N }, (_, i) => mk(i + 1));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    await net.run({ until: () => parties.every((p) => p.status().preprocessing.inFlight === undefined && p.status().reserve.triples >= prep.targetTriples), maxTimeMs: 300_000 });
    net.crash(6);
    net.crash(7);
    const four = parties.slice(0, 4);
    await useReserve(net, parties.slice(0, 5), 'drain', 3, 150, 2);
    await net.run({ until: () => third !== undefined && four.every((p) => p.status().preprocessing.inFlight === undefined), maxTimeMs: 60_000 });
    const logs = four.map(log);
    expect(logs.every((l) => l === logs[0]), `logs ${logs.join(' ')}`).toBe(true);
    for (const p of four) expect(p.status().preprocessing.made.dropped).toBeGreaterThan(0);
    // four up cannot produce (2t+1 = 5): past the reserve fails at every party, within it completes
    const have = four[0]!.status().reserve.triples;
    const past = deal(N, T, Array.from({ length: have + 1 }, () => 2n), Array.from({ length: have + 1 }, () => 3n));
    const outs = await net.settle(Promise.allSettled(four.map((p) => p.runJob('past', async (ctx) => {
      const [x, y] = past[p.id - 1]!.map((v) => ctx.fromShares(v));
      return ctx.open(await ctx.mul(x!, y!));
    }))));
    for (const o of outs) {
      expect(o.status).toBe('rejected');
      expect((o as PromiseRejectedResult).reason).toBeInstanceOf(PreprocessingExhaustedError);
    }
    await useReserve(net, four, 'within', 4, Math.min(12, four[0]!.status().reserve.triples), 1);
  }, 300_000);
});
