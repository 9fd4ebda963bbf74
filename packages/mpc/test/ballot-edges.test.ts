// Edge cases of deciding preprocessing batches (Fast Paxos, docs/decisions/0009), each found by a
// review of the protocol and reproduced here before it was fixed:
// - a ballot abandoned after a split leaves a party that promised it in phase A: it never sends
//   ready, so once everyone is up again a ballot must still come (it did not: the waiting operation
//   hung with all five up);
// - a party restored from an own state older than its part in a later batch must not infer which
//   batch a peer committed from counts alone (it committed the dropped batch 0 in place of batch 1:
//   its reserve diverged, caught by checkOpenings); it goes stale and recovers instead;
// - the whole committee restarting from states of different ages (one party's state predates
//   batch 0, the others restored it staged and keep no phase-A messages to re-send): the behind
//   party vetoes after hearing nothing new for two re-send periods, and a ballot drops the batch
//   (everyone waited forever before); since 11-25 the restored peers answer its phase-A messages
//   with rounds-gone and it vetoes at once (the drop came 9 s after the restart, now within 1 s).
// A second review of those fixes found three more, also reproduced first:
// - a party in phase A that learns of a commit while every peer is up waits to stage, but the peers
//   re-send only the batch they still have in flight: it waited forever, running a ballot every
//   500 ms; now it goes stale after two silent re-send periods (and runs no ballots once decided);
// - a party with b staged since it started (not restored) that missed the commit must still learn
//   it from a peer's log after the peers dropped a later batch (it went stale needlessly);
// - a long job is no silence: the peers park their phase-A steps during a job, so a background
//   batch was vetoed during a 12 s job with no failure.
// Found while chasing a survivor among three that went stale (cluster test committee-restarts):
// - one party dies while another, up, is still in phase A (the dead one's last message to it was
//   lost): a ballot among the four took the first three promises, all "commit", and committed the
//   batch over the party that had not staged it. That party was stale, and with a second death it
//   was one of three left, unable to recover (share recovery needs t+1 other helpers). The
//   coordinator now waits for every party it sees up before choosing commit (150 ms at most), and
//   stops waiting as soon as that party goes down.
// Found by a review on 2026-12-04 (reproduced first):
// - a rounds-gone from a peer whose last-round message we already hold vetoed the batch anyway:
//   the guard still looked for round 3 (phase A had four rounds once, now two), so a party that
//   needed nothing more from that peer dropped a batch the others could commit.
import { describe, expect, it } from 'vitest';
import { SimNetwork } from '@tenebra/transport';
import { Msg, decode, encode } from '../src/messages';
import { createParty, type Party } from '../src/runtime';
import { deal, dropping, holdingRound, wrapTransport } from './helpers';
import { LAST_PREP_ROUND } from '../src/preprocessing';

const prep = { targetTriples: 40, targetBits: 64, batch: 40, background: false };

/** A job of products on `team`; resolves to each party's outcome. */
function products(net: SimNetwork, team: Party[], id: string, xs: bigint[], ys: bigint[]): Promise<PromiseSettledResult<bigint[]>[]> {
  const inputs = deal(5, 2, xs, ys);
  return net.settle(Promise.allSettled(team.map((p) => p.runJob(id, async (ctx) => {
    const [x, y] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s));
    return ctx.open(await ctx.mul(x!, y!));
  }))), { maxTimeMs: 120_000 });
}

/**
 * Five parties whose every vote "writes" their state into `saved` first (the committee node's
 * durable write), except the parties `durable` refuses: their write never completes.
 */
function savingStates(net: SimNetwork, durable: (i: number) => boolean): { parties: Party[]; saved: Map<number, Uint8Array>; logs: Record<string, unknown>[]; log: (e: object) => void } {
  const logs: Record<string, unknown>[] = [];
  const log = (e: object): void => void logs.push(e as Record<string, unknown>);
  const saved = new Map<number, Uint8Array>();
  const parties: Party[] = [];
  for (let i = 1; i <= 5; i++) {
    parties.push(createParty({
      n: 5, t: 2, transport: net.transport(i), preprocessing: prep, log,
      beforePrepVote: () => new Promise<void>((resolve) => {
        if (!durable(i)) return;
        saved.set(i, parties[i - 1]!.exportState());
        resolve();
      }),
    }));
  }
  return { parties, saved, logs, log };
}

describe('deciding a batch: edge cases', () => {
  it('a ballot abandoned after a 10 ms split: once all are up again a ballot decides, the operation completes', async () => {
    const net = new SimNetwork({ n: 5, seed: 11, link: { latencyMs: 1, jitterMs: 0.5 } });
    const logs: Record<string, unknown>[] = [];
    let hold = true;
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({
      n: 5, t: 2, transport: i === 1 ? holdingRound(net.transport(i), LAST_PREP_ROUND, () => hold) : net.transport(i), preprocessing: prep,
      log: (e) => logs.push(e as Record<string, unknown>),
    }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    // the scenario runs in simulated time while products() drives the network
    const sleep = (ms: number): Promise<void> => new Promise((r) => net.clock.setTimeout(r, ms));
    const staged = (): number => logs.filter((e) => e.ev === 'prep-batch' && e.state === 'staged' && e.batch === 0).length;
    const scenario = (async () => {
      while (staged() < 4) await sleep(1);
      await sleep(20);
      // parties 2-5 staged batch 0, party 1 is in phase A; a short split: ballots start, none completes
      net.partition([[1], [2, 3, 4, 5]]);
      await sleep(10);
      hold = false;
      net.heal();
    })();
    const outs = await products(net, parties, 'needs-batch-0', [7n, 11n, 3n], [5n, 0n, 9n]);
    await scenario;
    expect(logs.some((e) => e.ev === 'prep-ballot')).toBe(true);
    for (const o of outs) expect(o).toEqual({ status: 'fulfilled', value: [35n, 0n, 27n] });
  }, 60_000);

  it('a party restored from an older own state goes stale instead of committing the wrong batch; recovered, all five compute', async () => {
    const net = new SimNetwork({ n: 5, seed: 7, link: { latencyMs: 1, jitterMs: 0.5 } });
    const logs: Record<string, unknown>[] = [];
    let hold5 = true;
    let saved1: Uint8Array | undefined;
    const parties: Party[] = [];
    for (let i = 1; i <= 5; i++) {
      parties.push(createParty({
        n: 5, t: 2, transport: i === 5 ? holdingRound(net.transport(i), LAST_PREP_ROUND, () => hold5) : net.transport(i), preprocessing: prep, checkOpenings: true,
        log: (e) => logs.push(e as Record<string, unknown>),
        ...(i === 1 ? {
          beforePrepVote: (batch: number) => new Promise<void>((resolve) => {
            if (batch === 0) {
              saved1 = parties[0]!.exportState();
              resolve();
            }
            // batch 1: party 1 dies before this write completes
          }),
        } : {}),
      }));
    }
    await net.settle(Promise.all(parties.map((p) => p.start())));
    const keys1 = parties[0]!.exportKeys();
    void Promise.all(parties.map((p) => p.fill())).catch(() => undefined);
    // parties 1-4 stage batch 0, party 5 stays in phase A; party 4 cut off: a ballot among the
    // others drops batch 0 (party 5 has no ballot-0 vote)
    await net.run({ until: () => logs.filter((e) => e.ev === 'prep-batch' && e.state === 'staged' && e.batch === 0).length === 4, maxTimeMs: 60_000 });
    await net.run({ maxTimeMs: 50 });
    net.partition([[4], [1, 2, 3, 5]]);
    await net.run({ until: () => [0, 1, 2, 4].every((i) => parties[i]!.status().preprocessing.resolvedBatches >= 1), maxTimeMs: 30_000 });
    hold5 = false;
    net.heal();
    // batch 1: all five compute phase A; party 1 dies before its vote is durable, the others commit it
    await net.run({ until: () => logs.filter((e) => e.ev === 'prep-batch' && e.state === 'staged' && e.batch === 1).length === 5, maxTimeMs: 60_000 });
    await net.run({ maxTimeMs: 20 });
    net.crash(1);
    const others = parties.slice(1);
    await net.run({ until: () => others.every((p) => p.status().preprocessing.committedBatches === 1 && p.status().preprocessing.resolvedBatches === 2), maxTimeMs: 30_000 });
    for (const p of others) expect(p.status().preprocessing).toMatchObject({ committedBatches: 1, resolvedBatches: 2 });
    // party 1 back from its own last durable state (batch 0 staged): it cannot tell which batch was
    // committed, so it must not commit batch 0
    const back = createParty({ n: 5, t: 2, transport: net.restart(1), state: saved1!, preprocessing: prep, checkOpenings: true });
    await net.settle(back.start());
    await net.run({ until: () => back.status().preprocessing.stale || back.status().preprocessing.resolvedBatches >= 2, maxTimeMs: 30_000 });
    expect(back.status().preprocessing.stale).toBe(true);
    expect(back.status().preprocessing.committedBatches).toBe(0);
    // as the committee node does with a stale party: restart with the keys only and recover
    net.crash(1);
    const fresh = createParty({ n: 5, t: 2, transport: net.restart(1), keys: keys1, preprocessing: prep, checkOpenings: true });
    await net.settle(fresh.start());
    await net.settle(fresh.recover(), { maxTimeMs: 60_000 });
    const all = [fresh, ...others];
    const xs = Array.from({ length: 40 }, (_, i) => BigInt(i + 3));
    const ys = Array.from({ length: 40 }, (_, i) => BigInt(1000 - i));
    const outs = await products(net, all, 'products', xs, ys);
    for (const o of outs) expect(o).toEqual({ status: 'fulfilled', value: xs.map((x, i) => x * ys[i]!) });
  }, 60_000);

  it('the whole committee restarts from states of different ages: the batch is dropped and the five go on', async () => {
    const net = new SimNetwork({ n: 5, seed: 13, link: { latencyMs: 1, jitterMs: 0.5 } });
    // party 1's write is still in flight at the crash
    const { parties, saved, logs, log } = savingStates(net, (i) => i !== 1);
    await net.settle(Promise.all(parties.map((p) => p.start())));
    saved.set(1, parties[0]!.exportState()); // party 1's last durable state: before batch 0
    void Promise.all(parties.map((p) => p.fill())).catch(() => undefined);
    await net.run({ until: () => logs.filter((e) => e.ev === 'prep-batch' && e.state === 'staged' && e.batch === 0).length === 5 && saved.size === 5, maxTimeMs: 60_000 });
    await net.run({ maxTimeMs: 20 });
    for (let i = 1; i <= 5; i++) net.crash(i);
    const all = [1, 2, 3, 4, 5].map((i) => createParty({ n: 5, t: 2, transport: net.restart(i), state: saved.get(i)!, preprocessing: prep, log }));
    await net.settle(Promise.all(all.map((p) => p.start())));
    const restartedAt = net.clock.now();
    const outs = await products(net, all, 'after-restart', [7n, 11n, 3n], [5n, 0n, 9n]);
    for (const o of outs) expect(o).toEqual({ status: 'fulfilled', value: [35n, 0n, 27n] });
    for (const e of logs.filter((x) => x.ev === 'prep-decided' && x.batch === 0)) expect(e).toMatchObject({ value: 'drop' });
    // the restored peers answer party 1's phase-A messages with "gone" at once, so it vetoes at once
    // (it waited for two silent re-send periods, 6 s, before)
    expect(net.clock.now() - restartedAt).toBeLessThan(1_000);
    for (const p of all) expect(p.status().preprocessing.stale).toBe(false);
  }, 60_000);

  it('the whole committee restarts, one with its memory gone: the helpers decide their restored staged batch before they answer, and it recovers with it', async () => {
    const net = new SimNetwork({ n: 5, seed: 17, link: { latencyMs: 1, jitterMs: 0.5 } });
    const { parties, saved, logs, log } = savingStates(net, () => true);
    await net.settle(Promise.all(parties.map((p) => p.start())));
    const keys4 = parties[3]!.exportKeys();
    void Promise.all(parties.map((p) => p.fill())).catch(() => undefined);
    // batch 0 is committed everywhere, but the last durable states hold it staged (no job since)
    await net.run({ until: () => parties.every((p) => p.status().preprocessing.committedBatches === 1), maxTimeMs: 60_000 });
    for (let i = 1; i <= 5; i++) net.crash(i);
    const restored = [1, 2, 3, 5].map((i) => createParty({ n: 5, t: 2, transport: net.restart(i), state: saved.get(i)!, preprocessing: prep, log }));
    await net.settle(Promise.all(restored.map((p) => p.start())));
    const fresh = createParty({ n: 5, t: 2, transport: net.restart(4), keys: keys4, preprocessing: prep, log });
    await net.settle(fresh.start());
    await net.settle(fresh.recover(), { maxTimeMs: 60_000 });
    expect(logs.some((e) => e.ev === 'recovery-busy' && String(e.why).includes('deciding preprocessing batch 0'))).toBe(true);
    expect(logs.some((e) => e.ev === 'prep-abstain')).toBe(false); // nothing left in flight to abstain on
    const all = [...restored.slice(0, 3), fresh, restored[3]!];
    await net.run({ until: () => all.every((p) => p.status().preprocessing.committedBatches === 1) || fresh.status().preprocessing.stale, maxTimeMs: 30_000 });
    for (const p of all) expect(p.status().preprocessing).toMatchObject({ stale: false, committedBatches: 1, resolvedBatches: 1 });
    const reserve = all.map((p) => JSON.stringify(p.status().reserve));
    expect(reserve.every((r) => r === reserve[0])).toBe(true);
    const outs = await products(net, all, 'after-restart', [7n, 11n, 3n], [5n, 0n, 9n]);
    for (const o of outs) expect(o).toEqual({ status: 'fulfilled', value: [35n, 0n, 27n] });
  }, 60_000);

  it('a commit learned in phase A that can never be staged (the peers moved on): stale, not waiting forever', async () => {
    const net = new SimNetwork({ n: 5, seed: 9, link: { latencyMs: 1, jitterMs: 0.5 } });
    const logs: Record<string, unknown>[] = [];
    let lost = true; // party 4's last phase-A message to party 5 is lost (a reset stream)
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({
      n: 5, t: 2, preprocessing: prep, log: (e) => logs.push(e as Record<string, unknown>),
      transport: i === 5
        ? dropping(net.transport(5), (from, d) => {
          const e = decode(d);
          return lost && from === 4 && e.type === Msg.PrepRound && e.a === LAST_PREP_ROUND;
        })
        : net.transport(i),
    }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    void Promise.all(parties.map((p) => p.fill())).catch(() => undefined);
    await net.run({ until: () => logs.filter((e) => e.ev === 'prep-batch' && e.state === 'staged' && e.batch === 0).length === 4, maxTimeMs: 60_000 });
    // a 300 ms cut (under the veto grace) while fill() waits: the four commit batch 0 by a ballot
    net.partition([[5], [1, 2, 3, 4]]);
    lost = false;
    await net.run({ maxTimeMs: 300 });
    net.heal();
    await net.run({ maxTimeMs: 30_000 });
    for (const p of parties.slice(0, 4)) expect(p.status().preprocessing.committedBatches).toBe(1);
    expect(parties[4]!.status().preprocessing.stale).toBe(true);
    expect(logs.filter((e) => e.party === 5 && e.ev === 'prep-ballot').length).toBeLessThan(10);
  }, 60_000);

  it('one dies while another is still in phase A: the ballot hears every party up, drops the batch, and a second death leaves three healthy', async () => {
    const net = new SimNetwork({ n: 5, seed: 21, link: { latencyMs: 1, jitterMs: 0.5 } });
    // party 5 is a little slower to reach (its promise arrives after the other three)
    for (const j of [1, 2, 3, 4]) net.setLink(5, j, { latencyMs: 4, jitterMs: 0 });
    const logs: Record<string, unknown>[] = [];
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({
      n: 5, t: 2, preprocessing: prep, log: (e) => logs.push(e as Record<string, unknown>),
      // party 1's last phase-A message to party 5 is lost with it (it dies before that stream flushed)
      transport: i === 5
        ? dropping(net.transport(5), (from, d) => {
          const e = decode(d);
          return from === 1 && e.type === Msg.PrepRound && e.a === LAST_PREP_ROUND;
        })
        : net.transport(i),
    }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    void Promise.all(parties.map((p) => p.fill())).catch(() => undefined);
    await net.run({ until: () => logs.filter((e) => e.ev === 'prep-batch' && e.state === 'staged' && e.batch === 0).length === 4, maxTimeMs: 60_000 });
    net.crash(1);
    // the four decide batch 0 (those that staged it start a ballot now that 1 is down)
    const four = parties.slice(1);
    await net.run({ until: () => four.every((p) => p.status().preprocessing.resolvedBatches === 1 || p.status().preprocessing.stale), maxTimeMs: 30_000 });
    expect(four.map((p) => p.status().preprocessing.stale)).toEqual([false, false, false, false]);
    for (const e of logs.filter((x) => x.ev === 'prep-decided' && x.batch === 0)) expect(e).toMatchObject({ value: 'drop' });
    // a second death: the three left agree on the log and all three can still compute
    net.crash(2);
    const three = parties.slice(2);
    await net.run({ maxTimeMs: 3_000 });
    for (const p of three) expect(p.status().preprocessing).toMatchObject({ stale: false, committedBatches: 0, resolvedBatches: 1 });
  }, 60_000);

  it('a coordinator waiting for the promise of a party it sees up stops waiting when that party goes down', async () => {
    const net = new SimNetwork({ n: 5, seed: 23, link: { latencyMs: 1, jitterMs: 0.5 } });
    const logs: Record<string, unknown>[] = [];
    const at = (e: object): void => void logs.push({ ...(e as Record<string, unknown>), t: net.clock.now() });
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({
      n: 5, t: 2, preprocessing: prep, log: at,
      // party 5 stages but its ready never goes out (its durable write hangs), and it answers no ballot
      ...(i === 5 ? { beforePrepVote: () => new Promise<void>(() => undefined) } : {}),
      transport: i === 5 ? dropping(net.transport(5), (_, d) => decode(d).type === Msg.PrepPrepare) : net.transport(i),
    }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    void Promise.all(parties.map((p) => p.fill())).catch(() => undefined);
    await net.run({ until: () => logs.filter((e) => e.ev === 'prep-batch' && e.state === 'staged' && e.batch === 0).length === 5, maxTimeMs: 60_000 });
    await net.run({ maxTimeMs: 20 });
    net.crash(4); // staged parties with a peer down start a ballot; party 5 is up and silent
    await net.run({ until: () => logs.some((e) => e.ev === 'prep-ballot'), maxTimeMs: 5_000 });
    await net.run({ maxTimeMs: 30 });
    expect(logs.some((e) => e.ev === 'prep-propose')).toBe(false); // still waiting for party 5
    const down = net.clock.now();
    net.crash(5);
    await net.run({ until: () => logs.some((e) => e.ev === 'prep-propose'), maxTimeMs: 5_000 });
    const propose = logs.find((e) => e.ev === 'prep-propose')!;
    expect(propose).toMatchObject({ value: 'commit', promises: [1, 2, 3] });
    expect(Number(propose.t) - down).toBeLessThan(5);
    await net.run({ until: () => parties.slice(0, 3).every((p) => p.status().preprocessing.committedBatches === 1), maxTimeMs: 5_000 });
    for (const p of parties.slice(0, 3)) expect(p.status().preprocessing).toMatchObject({ stale: false, committedBatches: 1 });
  }, 60_000);

  it('a party that missed the commit of the batch it staged learns it from a log that also shows a later drop', async () => {
    const net = new SimNetwork({ n: 5, seed: 3, link: { latencyMs: 1, jitterMs: 0.5 } });
    const logs: Record<string, unknown>[] = [];
    let deaf5: 'readies' | 'all' | 'none' = 'readies';
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({
      n: 5, t: 2, preprocessing: prep, log: (e) => logs.push(e as Record<string, unknown>),
      transport: i === 5 ? dropping(net.transport(5), (_, d) => deaf5 === 'all' || (deaf5 === 'readies' && decode(d).type === Msg.PrepReady)) : net.transport(i),
    }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    void Promise.all(parties.map((p) => p.fill())).catch(() => undefined);
    await net.run({ until: () => logs.some((e) => e.ev === 'prep-batch' && e.party === 5 && e.state === 'staged' && e.batch === 0), maxTimeMs: 60_000 });
    deaf5 = 'all';
    const four = parties.slice(0, 4);
    await net.run({ until: () => four.every((p) => p.status().preprocessing.committedBatches === 1), maxTimeMs: 30_000 });
    net.partition([[5], [1, 2, 3, 4]]);
    await net.run({ maxTimeMs: 100 });
    // an operation needing more than the reserve while 5 is away: giving up vetoes batch 1, a ballot drops it
    const xs = Array.from({ length: 200 }, (_, i) => BigInt(i + 1));
    const outs = await products(net, four, 'big', xs, xs);
    for (const o of outs) expect(o.status).toBe('rejected');
    await net.run({ until: () => four.every((p) => p.status().preprocessing.resolvedBatches === 2), maxTimeMs: 30_000 });
    deaf5 = 'none';
    net.heal();
    await net.run({ maxTimeMs: 5_000 });
    expect(parties[4]!.status().preprocessing).toMatchObject({ stale: false, committedBatches: 1, resolvedBatches: 2 });
    const reserve = parties.map((p) => JSON.stringify(p.status().reserve));
    expect(reserve.every((r) => r === reserve[0])).toBe(true);
  }, 60_000);

  it('a 12 s job is no silence: no background batch is vetoed while the five are busy', async () => {
    const net = new SimNetwork({ n: 5, seed: 5, link: { latencyMs: 1, jitterMs: 0.5 } });
    const logs: Record<string, unknown>[] = [];
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({
      n: 5, t: 2, preprocessing: { targetTriples: 160, targetBits: 256, batch: 40, background: true }, transport: net.transport(i),
      log: (e) => logs.push(e as Record<string, unknown>),
    }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    const sleep = (ms: number): Promise<void> => new Promise((r) => net.clock.setTimeout(r, ms));
    await net.run({ until: () => logs.filter((e) => e.ev === 'prep-start' && e.batch === 1).length === 5, maxTimeMs: 60_000 });
    // a 12 s job (e.g. waiting on inputs); party 1 enters it 5 ms after the others
    const jobs = parties.map(async (p) => {
      if (p.id === 1) await sleep(5);
      return p.runJob('long', async () => {
        await sleep(12_000);
        return 1;
      });
    });
    await net.settle(Promise.allSettled(jobs), { maxTimeMs: 60_000 });
    await net.run({ maxTimeMs: 2_000 });
    expect(logs.filter((e) => e.ev === 'prep-silent' || e.ev === 'prep-veto' || e.ev === 'prep-drop')).toEqual([]);
  }, 60_000);
  it('a rounds-gone from a peer whose last phase-A message is already here does not veto: the batch commits', async () => {
    const net = new SimNetwork({ n: 5, seed: 5, link: { latencyMs: 1, jitterMs: 0.5 } });
    const logs: Record<string, unknown>[][] = [[], [], [], [], []];
    let hold3 = true; // party 1 misses party 3's round-1 message of batch 0 until released
    let have2 = false; // party 1 holds party 2's round-1 message of batch 0
    let deliver: ((from: number, data: Uint8Array) => void) | undefined;
    const inner = net.transport(1);
    const t1 = wrapTransport(inner, {
      onMessage: (h) => {
        deliver = h;
        inner.onMessage((from, data) => {
          const env = decode(data);
          const round1 = env.type === Msg.PrepRound && env.a === LAST_PREP_ROUND && env.b === 0;
          if (round1 && from === 3 && hold3) return;
          if (round1 && from === 2) have2 = true;
          h(from, data);
        });
      },
    });
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({
      n: 5, t: 2, transport: i === 1 ? t1 : net.transport(i), preprocessing: prep,
      log: (e) => logs[i - 1]!.push(e as Record<string, unknown>),
    }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    void Promise.all(parties.map((p) => p.fill())).catch(() => undefined);
    const staged = (i: number): boolean => logs[i - 1]!.some((e) => e.ev === 'prep-batch' && e.state === 'staged' && e.batch === 0);
    await net.run({ until: () => have2 && [2, 3, 4, 5].every(staged), maxTimeMs: 30_000 });
    expect(staged(1)).toBe(false);
    // party 2 says it keeps no phase-A messages of batch 0 (as a party restored with it staged
    // does): party 1 needs none from it, so this must change nothing
    deliver!(2, encode({ type: Msg.PrepRoundsGone, b: 0, prepCommitted: 0, prepNext: 0 }));
    hold3 = false;
    await net.run({ until: () => parties.every((p) => p.status().preprocessing.resolvedBatches >= 1), maxTimeMs: 30_000 });
    expect(logs[0]!.filter((e) => e.ev === 'prep-rounds-gone' || e.ev === 'prep-veto' || e.ev === 'prep-stale')).toEqual([]);
    for (const p of parties) expect(p.status().preprocessing).toMatchObject({ committedBatches: 1, stale: false });
    for (const l of logs) expect(l.some((e) => e.ev === 'prep-batch' && e.batch === 0 && e.state === 'dropped')).toBe(false);
  }, 60_000);
});
