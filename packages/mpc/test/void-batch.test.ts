// A stale survivor among three (decision 0009, "Known gaps", last item; issue 22): batch 1 is decided
// commit while party 5 never staged it (the last phase-A message of party 4 to it is lost and it is
// cut off at the commit), so party 5 is stale; then parties 3 and 4 die. Share recovery needs t+1 = 3
// helpers at one state and only 1 and 2 are left, and batch 1's items have only those two holders,
// so no job that needs them can finish: before the repair the three waited for good. The repair
// voids batch 1 by one more consensus instance (void.ts): it is unconsumed (no finished job used it),
// so its items are dropped at the same position of every reserve, the job that had begun using them
// fails at all three with PreprocessingExhaustedError (the committee node retries it under the next
// attempt id), the three hold one state again, and the two dead parties recover from them.
import { describe, expect, it } from 'vitest';
import { SimNetwork } from '@tenebra/transport';
import { PreprocessingExhaustedError } from '../src/api';
import { Msg, decode } from '../src/messages';
import { createParty, type Party } from '../src/runtime';
import { prepLogOf } from '../src/state';
import { deal, dropping, products } from './helpers';
import { LAST_PREP_ROUND } from '../src/preprocessing';

const prep = { targetTriples: 40, targetBits: 64, batch: 40, background: false };


const range = (k: number, f: (i: number) => bigint): bigint[] => Array.from({ length: k }, (_, i) => f(i));

/**
 * Five parties; batch 0 committed everywhere and 30 of its 40 triples used; batch 1 committed by
 * parties 1-4 while party 5, which never staged it, is stale. Returns with all five up.
 */
async function staleFifth(seed: number): Promise<{ net: SimNetwork; parties: Party[]; keys: Uint8Array[]; logs: Record<string, unknown>[]; saved5: Uint8Array }> {
  const net = new SimNetwork({ n: 5, seed, link: { latencyMs: 1, jitterMs: 0.5 } });
  const logs: Record<string, unknown>[] = [];
  let lose = false; // party 4's last phase-A message of batch 1 to party 5 is lost (a reset stream)
  const parties = [1, 2, 3, 4, 5].map((i) => createParty({
    n: 5, t: 2, preprocessing: prep, checkOpenings: true, log: (e) => logs.push(e as Record<string, unknown>),
    transport: i === 5
      ? dropping(net.transport(5), (from, d) => {
        const e = decode(d);
        return lose && from === 4 && e.type === Msg.PrepRound && e.a === LAST_PREP_ROUND;
      })
      : net.transport(i),
  }));
  await net.settle(Promise.all(parties.map((p) => p.start())));
  const keys = parties.map((p) => p.exportKeys());
  await net.settle(Promise.all(parties.map((p) => p.fill())), { maxTimeMs: 60_000 });
  const used = await products(net, parties, 'use', range(30, (i) => BigInt(i + 2)), range(30, () => 3n));
  for (const o of used) expect(o.status).toBe('fulfilled');
  const saved5 = parties[4]!.exportState(); // party 5's last job boundary: batch 1 not started
  lose = true;
  void Promise.all(parties.map((p) => p.fill())).catch(() => undefined);
  await net.run({ until: () => logs.filter((e) => e.ev === 'prep-batch' && e.state === 'staged' && e.batch === 1).length === 4, maxTimeMs: 60_000 });
  // a 300 ms cut while fill() waits: the four commit batch 1 by a ballot; party 5 cannot stage it
  net.partition([[5], [1, 2, 3, 4]]);
  lose = false;
  await net.run({ maxTimeMs: 300 });
  net.heal();
  await net.run({ until: () => parties[4]!.status().preprocessing.stale, maxTimeMs: 30_000 });
  for (const p of parties.slice(0, 4)) expect(p.status().preprocessing).toMatchObject({ committedBatches: 2, resolvedBatches: 2 });
  expect(parties[4]!.status().preprocessing).toMatchObject({ stale: true, committedBatches: 1 });
  return { net, parties, keys, logs, saved5 };
}

describe('a stale survivor among three: voiding the unconsumed batch it lacks', () => {
  it('the three void it, the job that began using it fails everywhere, the two dead recover, and all five compute', async () => {
    const { net, parties, keys, logs } = await staleFifth(9);
    const stale = parties[4]!;
    const staleEvents: unknown[] = [];
    stale.on('stale', (e) => staleEvents.push(e));
    net.crash(3);
    net.crash(4);
    const three = [parties[0]!, parties[1]!, stale];
    // party 5 sees two parties down: share recovery could not find t+1 helpers at one state
    await net.run({ until: () => logs.some((e) => e.ev === 'prep-void-start' && e.party === 5), maxTimeMs: 10_000 });
    // attempt 0 of a job that needs more triples than precede batch 1: parties 1 and 2 take batch
    // 1's items at once, party 5 waits for the void; it fails at all three, identically
    const xs = range(20, (i) => BigInt(i + 5));
    const ys = range(20, (i) => BigInt(700 - i));
    const first = await products(net, three, 'big:0', xs, ys, 30_000);
    for (const o of first) expect(o.status === 'rejected' && o.reason instanceof PreprocessingExhaustedError).toBe(true);
    expect(logs.filter((e) => e.ev === 'prep-void-decided').map((e) => [e.party, e.value])).toEqual(expect.arrayContaining([[1, 'void'], [2, 'void'], [5, 'void']]));
    expect(logs.some((e) => e.ev === 'job-voided' && e.party === 1)).toBe(true);
    // one state at the three: same log, same reserve positions, nobody stale
    const st = three.map((p) => p.status());
    for (const s of st) expect(s.preprocessing).toMatchObject({ stale: false, committedBatches: 1, resolvedBatches: 2 });
    for (const s of st) expect(s.reserve.cursor).toEqual(st[0]!.reserve.cursor);
    for (const s of st) expect(s.reserve.triples).toBe(0);
    expect(staleEvents).toEqual([]);
    // the three make progress on what needs no preprocessing
    const inputs = deal(5, 2, [41n, 5n], [1n, 2n]);
    const sums = await net.settle(Promise.all(three.map((p) => p.runJob('sum', async (ctx) => {
      const [x, y] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s));
      return ctx.open(ctx.add(x!, y!));
    }))), { maxTimeMs: 30_000 });
    for (const s of sums) expect(s).toEqual([42n, 7n]);
    // the dead return with their keys only and recover from the three (t+1 helpers at one state)
    const back = [3, 4].map((i) => createParty({ n: 5, t: 2, transport: net.restart(i), keys: keys[i - 1]!, preprocessing: prep, checkOpenings: true, log: (e) => logs.push(e as Record<string, unknown>) }));
    await net.settle(Promise.all(back.map((p) => p.start())));
    await net.settle(Promise.all(back.map((p) => p.recover())), { maxTimeMs: 60_000 });
    const all = [parties[0]!, parties[1]!, back[0]!, back[1]!, stale];
    // production resumes with all five, and the job, retried under its next attempt id, completes
    await net.settle(Promise.all(all.map((p) => p.fill())), { maxTimeMs: 60_000 });
    for (const p of all) expect(p.status().preprocessing).toMatchObject({ stale: false, committedBatches: 2 });
    const second = await products(net, all, 'big:1', xs, ys);
    for (const o of second) expect(o).toEqual({ status: 'fulfilled', value: xs.map((x, i) => x * ys[i]!) });
  }, 120_000);

  it('a batch some finished job consumed is never voided: the instance decides keep and the party stays stale', async () => {
    const { net, parties, logs } = await staleFifth(9);
    const stale = parties[4]!;
    // parties 1-4 run a job that uses batch 1's items and finish it (party 5, cut off, takes no part)
    net.partition([[5], [1, 2, 3, 4]]);
    const four = parties.slice(0, 4);
    const eaten = await products(net, four, 'eat', range(20, (i) => BigInt(i + 1)), range(20, () => 2n));
    for (const o of eaten) expect(o.status).toBe('fulfilled');
    net.heal();
    const before = parties[0]!.status().reserve;
    const staleEvents: unknown[] = [];
    stale.on('stale', (e) => staleEvents.push(e));
    net.crash(3);
    net.crash(4);
    await net.run({ until: () => logs.some((e) => e.ev === 'prep-void-decided' && e.party === 5), maxTimeMs: 10_000 });
    await net.run({ maxTimeMs: 1_000 });
    const decided = logs.filter((e) => e.ev === 'prep-void-decided');
    expect(decided.length).toBeGreaterThan(0);
    for (const e of decided) expect(e.value).toBe('keep');
    expect(stale.status().preprocessing.stale).toBe(true);
    expect(staleEvents.length).toBeGreaterThan(0); // the committee node exits and recovers, as before
    for (const p of parties.slice(0, 2)) expect(p.status().preprocessing).toMatchObject({ committedBatches: 2 });
    expect(parties[0]!.status().reserve).toEqual(before);
  }, 120_000);
  it('a holder cut off during the void learns it when it returns: its reserve drops the batch at the same position', async () => {
    const { net, parties, logs } = await staleFifth(9);
    // a holder's durable log names its last committed batch (a holder restored from it can learn a void)
    expect(prepLogOf(parties[2]!.exportState())?.last).toMatchObject({ id: 1, c: 1 });
    net.crash(4);
    net.partition([[3], [1, 2, 5]]); // party 3, a holder, alive but cut off: the three left decide
    await net.run({ until: () => [1, 2, 5].every((i) => logs.some((e) => e.ev === 'prep-void-decided' && e.party === i)), maxTimeMs: 10_000 });
    expect(parties[2]!.status().preprocessing.committedBatches).toBe(2);
    net.heal();
    await net.run({ until: () => parties[2]!.status().preprocessing.committedBatches === 1, maxTimeMs: 10_000 });
    const four = [parties[0]!, parties[1]!, parties[2]!, parties[4]!];
    const st = four.map((p) => p.status());
    for (const x of st) expect(x.preprocessing).toMatchObject({ stale: false, committedBatches: 1, resolvedBatches: 2 });
    for (const x of st) expect([x.reserve.cursor, x.reserve.triples]).toEqual([st[0]!.reserve.cursor, st[0]!.reserve.triples]);
    // the ten triples before the voided batch are the same at all four (checkOpenings checks every opening)
    const xs = range(10, (i) => BigInt(i + 9));
    const ys = range(10, (i) => BigInt(50 - i));
    const outs = await products(net, four, 'after', xs, ys);
    for (const o of outs) expect(o).toEqual({ status: 'fulfilled', value: xs.map((x, i) => x * ys[i]!) });
  }, 120_000);
  it('voided while idle: rounds that fit before the batch complete, and the first one that would have used it fails at all three alike', async () => {
    const { net, parties, logs } = await staleFifth(9);
    net.crash(3);
    net.crash(4);
    const three = [parties[0]!, parties[1]!, parties[4]!];
    await net.run({ until: () => [1, 2, 5].every((i) => logs.some((e) => e.ev === 'prep-void-decided' && e.party === i && e.value === 'void')), maxTimeMs: 10_000 });
    const xs = range(6, (i) => BigInt(i + 2));
    const small = await products(net, three, 'small', xs, xs);
    for (const o of small) expect(o).toEqual({ status: 'fulfilled', value: xs.map((x) => x * x) });
    const big = await products(net, three, 'big:0', range(20, () => 2n), range(20, () => 3n), 30_000);
    for (const o of big) expect(o.status === 'rejected' && o.reason instanceof PreprocessingExhaustedError).toBe(true);
    expect(logs.filter((e) => e.ev === 'prep-void-burn').map((e) => e.party).sort()).toEqual([1, 2, 5]);
    const st = three.map((p) => p.status());
    for (const x of st) expect([x.reserve.cursor, x.reserve.triples, x.preprocessing.stale]).toEqual([st[0]!.reserve.cursor, 0, false]);
  }, 120_000);
  it('as the committee node does: the stale node restarts, finds no helpers, resumes from its own state and voids the batch with the two holders', async () => {
    const { net, parties, logs, saved5 } = await staleFifth(9);
    net.crash(5); // the node exits on 'stale' ...
    net.crash(3);
    net.crash(4);
    // ... and, with no three helpers at one state, falls back to its own last persisted state
    const back = createParty({ n: 5, t: 2, transport: net.restart(5), state: saved5, preprocessing: prep, checkOpenings: true, log: (e) => logs.push(e as Record<string, unknown>) });
    const staleEvents: unknown[] = [];
    back.on('stale', (e) => staleEvents.push(e));
    await net.settle(back.start());
    const three = [parties[0]!, parties[1]!, back];
    await net.run({ until: () => [1, 2, 5].every((i) => logs.some((e) => e.ev === 'prep-void-decided' && e.party === i)), maxTimeMs: 10_000 });
    expect(logs.filter((e) => e.ev === 'prep-void-decided').map((e) => e.value)).toEqual(['void', 'void', 'void']);
    for (const p of three) expect(p.status().preprocessing).toMatchObject({ stale: false, committedBatches: 1 });
    expect(staleEvents).toEqual([]);
    const xs = range(8, (i) => BigInt(i + 3));
    const outs = await products(net, three, 'after', xs, xs);
    for (const o of outs) expect(o).toEqual({ status: 'fulfilled', value: xs.map((x) => x * x) });
  }, 120_000);
});
