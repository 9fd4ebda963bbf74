// A partial fan-out of job rounds (PartyOptions.shareFanout): each party sends a round's shares to
// the next t (or t + 1) live parties only, the results stay exact, and a party a sender left out
// gets the shares by asking (Msg.JobPull) long before the retransmit timer.
import { describe, expect, it } from 'vitest';
import { SimNetwork, type Transport } from '@tenebra/transport';
import type { JobContext } from '../src/api';
import { Msg, decode } from '../src/messages';
import { createParty, type Party, type ShareFanout } from '../src/runtime';
import { deal, droppingSends, fillReserve, signed, wrapTransport } from './helpers';

/** Counts the JobRound messages each party sends to each peer in job `jobId`. */
function counting(inner: Transport, jobId: string, sent: Map<string, number>): Transport {
  return wrapTransport(inner, {
    send: (to, data) => {
      const env = decode(data);
      if (env.type === Msg.JobRound && env.key === jobId) sent.set(`${to}#${env.a}`, (sent.get(`${to}#${env.a}`) ?? 0) + 1);
      inner.send(to, data);
    },
  });
}

const xs = [5n, -3n, 7n, 0n, 123n, -77n];
const ys = [2n, 9n, 7n, -1n, 124n, -78n];

async function job(p: Party, id: string, inputs: bigint[][][]): Promise<bigint[]> {
  return p.runJob(id, async (ctx: JobContext) => {
    const x = ctx.fromShares(inputs[p.id - 1]![0]!);
    const y = ctx.fromShares(inputs[p.id - 1]![1]!);
    const l = await ctx.lt(x, y);
    return ctx.open(ctx.concat([l, await ctx.mul(x, y)]));
  });
}

async function cluster(fanout: ShareFanout, wrap: (i: number, tr: Transport) => Transport, retransmitMs = 5_000): Promise<{ net: SimNetwork; parties: Party[]; logs: Record<string, unknown>[] }> {
  const net = new SimNetwork({ n: 5, seed: 21, link: { latencyMs: 1, jitterMs: 0.5 } });
  const logs: Record<string, unknown>[] = [];
  const parties = [1, 2, 3, 4, 5].map((i) => createParty({
    n: 5, t: 2, transport: wrap(i, net.transport(i)), shareFanout: fanout, retransmitMs,
    preprocessing: { targetTriples: 200, targetBits: 800, batch: 64 }, log: (e) => logs.push({ party: i, ...e }),
  }));
  await net.settle(Promise.all(parties.map((p) => p.start())));
  await fillReserve({ net, parties, logs: [] }, parties, 100, 700);
  return { net, parties, logs };
}

const expected: bigint[] = xs.map((x, k): bigint => (x < ys[k]! ? 1n : 0n)).concat(xs.map((x, k) => x * ys[k]!));

describe('partial fan-out of job rounds', () => {
  for (const [fanout, per] of [['minimal', 2], ['spare', 3], ['all', 4]] as const) {
    it(`'${fanout}': every party sends each round to ${per} peers, and the results are exact`, async () => {
      const sent = new Map<string, number>();
      const { net, parties } = await cluster(fanout, (i, tr) => counting(tr, `fan-${fanout}`, sent));
      const inputs = deal(5, 2, xs, ys);
      const outs = await net.settle(Promise.all(parties.map((p) => job(p, `fan-${fanout}`, inputs))), { maxTimeMs: 30_000 });
      for (const o of outs) expect(signed(o)).toEqual(expected);
      // messages per round and receiver, over all senders: 5 senders x `per` peers each round
      const rounds = new Set([...sent.keys()].map((k) => k.split('#')[1]));
      const total = [...sent.values()].reduce((a, b) => a + b, 0);
      expect(total).toBe(rounds.size * 5 * per);
      // each party hears from exactly `per` others (the next ones in index order send to it)
      for (let to = 1; to <= 5; to++) expect(sent.get(`${to}#0`)).toBe(per);
    });
  }

  it("a party a sender left out asks for the round (Msg.JobPull) and completes, with the retransmit timer off", async () => {
    // 'minimal': party 4 hears from 2 and 3 only. Party 3's round-0 message to 4 is lost (the link
    // stays up, so there is no peer-up resend) and retransmits are off: only the pull can save it.
    let dropped = 0;
    const { net, parties, logs } = await cluster('minimal', (i, tr) => (i !== 3 ? tr : droppingSends(tr, (to, data) => {
      const env = decode(data);
      if (to === 4 && env.type === Msg.JobRound && env.key === 'pulled' && env.a === 0 && dropped === 0) {
        dropped++;
        return true;
      }
      return false;
    })), 0);
    const inputs = deal(5, 2, xs, ys);
    const outs = await net.settle(Promise.all(parties.map((p) => job(p, 'pulled', inputs))), { maxTimeMs: 30_000 });
    expect(dropped).toBe(1);
    for (const o of outs) expect(signed(o)).toEqual(expected);
    const pulls = logs.filter((l) => l.ev === 'job-pull' && l.job === 'pulled');
    expect(pulls.some((l) => l.party === 4 && l.round === 0)).toBe(true);
  });

  it('with two parties down the three others send to each other and finish', async () => {
    const { net, parties } = await cluster('minimal', (_, tr) => tr);
    net.crash(1);
    net.crash(2);
    const inputs = deal(5, 2, xs, ys);
    const live = parties.slice(2);
    const outs = await net.settle(Promise.all(live.map((p) => job(p, 'two-down', inputs))), { maxTimeMs: 30_000 });
    for (const o of outs) expect(signed(o)).toEqual(expected);
  });

  it('refuses an unknown fan-out', () => {
    const net = new SimNetwork({ n: 5, seed: 1 });
    expect(() => createParty({ n: 5, t: 2, transport: net.transport(1), shareFanout: 'some' as ShareFanout })).toThrow(/shareFanout must be one of all, spare, minimal/);
  });
});
