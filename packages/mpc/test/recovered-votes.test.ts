// A party recovered from a memory loss used to abstain on the helpers' batch in flight, since its
// votes on it were gone. If two other parties then died, only two acceptors were left and the batch
// could never be decided: not even when the dead returned, since they recover and abstain too. Its
// own last durable state still says what it voted (every vote is durable before it is sent), so
// with `priorVotes` it abstains only when that state cannot tell (decision 0009, "Known gaps").
import { describe, expect, it } from 'vitest';
import { SimNetwork } from '@tenebra/transport';
import { createParty, type Party } from '../src/runtime';
import { prepLogOf } from '../src/state';
import { PreprocessingExhaustedError } from '../src/api';
import { priorVotesOn } from '../src/preprocessing';
import { products } from './helpers';

const prep = { targetTriples: 40, targetBits: 64, batch: 40, background: false };


/**
 * Party 3 dies and comes back with its keys (and, if `withPrior`, the log of its last durable
 * state) while the other four start batch 1; once it has recovered, parties 1 and 2 die. Returns
 * the three left and the logs.
 */
async function recoveredThenTwoDie(withPrior: boolean): Promise<{ net: SimNetwork; three: Party[]; logs: Record<string, unknown>[] }> {
  const net = new SimNetwork({ n: 5, seed: 29, link: { latencyMs: 1, jitterMs: 0.5 } });
  const logs: Record<string, unknown>[] = [];
  const log = (e: object): void => void logs.push(e as Record<string, unknown>);
  const parties = [1, 2, 3, 4, 5].map((i) => createParty({ n: 5, t: 2, transport: net.transport(i), preprocessing: prep, log }));
  await net.settle(Promise.all(parties.map((p) => p.start())));
  await net.settle(Promise.all(parties.map((p) => p.fill())), { maxTimeMs: 60_000 });
  // use some of the reserve, so that the next fill() makes batch 1
  const before = await products(net, parties, 'use', Array.from({ length: 30 }, (_, i) => BigInt(i + 2)), Array.from({ length: 30 }, () => 3n));
  for (const o of before) expect(o.status).toBe('fulfilled');
  const keys3 = parties[2]!.exportKeys();
  const durable3 = parties[2]!.exportState(); // party 3's last durable state: batch 1 not started
  expect(parties.every((p) => p.status().preprocessing.resolvedBatches === 1)).toBe(true);
  net.crash(3);
  const back = createParty({
    n: 5, t: 2, transport: net.restart(3), keys: keys3, preprocessing: prep, log,
    ...(withPrior ? { priorVotes: prepLogOf(durable3)! } : {}),
  });
  await net.settle(back.start());
  // with party 3's transport up again the others start batch 1; it waits for party 3's messages
  const four = [parties[0]!, parties[1]!, parties[3]!, parties[4]!];
  void Promise.all(four.map((p) => p.fill())).catch(() => undefined);
  await net.run({ until: () => four.every((p) => p.status().preprocessing.inFlight === 1), maxTimeMs: 10_000 });
  await net.settle(back.recover(), { maxTimeMs: 60_000 });
  net.crash(1);
  net.crash(2);
  return { net, three: [back, parties[3]!, parties[4]!], logs };
}

describe('a party recovered from a memory loss, then two others die', () => {
  it('with its last durable log it is an acceptor of the batch in flight: the three left decide it and go on', async () => {
    const { net, three, logs } = await recoveredThenTwoDie(true);
    expect(logs.some((e) => e.ev === 'prep-no-abstain' && e.batch === 1)).toBe(true);
    expect(logs.some((e) => e.ev === 'prep-abstain')).toBe(false);
    await net.run({ until: () => three.every((p) => p.status().preprocessing.resolvedBatches === 2), maxTimeMs: 20_000 });
    for (const p of three) expect(p.status().preprocessing).toMatchObject({ resolvedBatches: 2, committedBatches: 1, stale: false });
    // what the reserve holds still computes; more than that fails with the typed error, at once
    const ok = await products(net, three, 'small', [7n, 11n], [5n, 3n]);
    for (const o of ok) expect(o).toEqual({ status: 'fulfilled', value: [35n, 33n] });
    const big = await products(net, three, 'too-big', Array.from({ length: 200 }, () => 2n), Array.from({ length: 200 }, () => 3n), 30_000);
    for (const o of big) expect(o.status === 'rejected' && o.reason instanceof PreprocessingExhaustedError).toBe(true);
  }, 120_000);

  it('without it (no durable state) it abstains, and the batch waits for an acceptor that never comes', async () => {
    const { net, three, logs } = await recoveredThenTwoDie(false);
    expect(logs.some((e) => e.ev === 'prep-abstain' && e.batch === 1)).toBe(true);
    await net.run({ maxTimeMs: 20_000 });
    for (const p of three) expect(p.status().preprocessing.resolvedBatches).toBe(1);
  }, 120_000);
});

describe('what a durable log says about a later batch (priorVotesOn)', () => {
  it('never reached: none; in flight: its votes (staged means ready may have gone out, unless it promised first); past it or abstaining: unknown', () => {
    expect(priorVotesOn({ resolved: 3, committed: 2 }, 3)).toBe('none');
    expect(priorVotesOn({ resolved: 3, committed: 2 }, 5)).toBe('none');
    expect(priorVotesOn({ resolved: 3, committed: 2, running: 3 }, 3)).toBe('none'); // phase A only, no vote
    expect(priorVotesOn({ resolved: 3, committed: 2, running: 3, vote: { vote0: 'drop', promised: 0 } }, 3)).toEqual({ vote0: 'drop', promised: 0 });
    expect(priorVotesOn({ resolved: 3, committed: 2, staged: { id: 3, items: { triples: 1, lex4: 0, prod4: 0, nibbles: 0 } } }, 3)).toEqual({ vote0: 'commit', promised: 0 });
    expect(priorVotesOn({ resolved: 3, committed: 2, staged: { id: 3, items: { triples: 1, lex4: 0, prod4: 0, nibbles: 0 } }, vote: { promised: 8 } }, 3)).toEqual({ promised: 8 });
    expect(priorVotesOn({ resolved: 3, committed: 2, staged: { id: 3, items: { triples: 1, lex4: 0, prod4: 0, nibbles: 0 } } }, 4)).toBe('none');
    expect(priorVotesOn({ resolved: 4, committed: 3 }, 3)).toBe('unknown');
    expect(priorVotesOn({ resolved: 3, committed: 2, abstain: 3 }, 3)).toBe('unknown');
  });

  it('prepLogOf reads only a state header, and nothing from bytes that are not one', () => {
    expect(prepLogOf(new Uint8Array([0, 0, 0, 2, 123, 125]))).toBeUndefined(); // "{}": no version
    expect(prepLogOf(new Uint8Array([0, 0, 1, 0, 1]))).toBeUndefined(); // header longer than the bytes
    expect(prepLogOf(new TextEncoder().encode('garbage'))).toBeUndefined();
  });
});
