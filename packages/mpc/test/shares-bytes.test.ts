// Received shares are kept as bytes until an opening interpolates them: a share vector with an
// element >= p or the wrong length is refused on arrival (as when it was decoded on arrival), and the
// opening completes from the honest parties' shares; late shares are still spot-checked.
import { describe, expect, it } from 'vitest';
import { SimNetwork, type Transport } from '@tenebra/transport';
import { createParty, type Party } from '../src/runtime';
import { deal, rewritingRounds } from './helpers';

type Tamper = 'overflow' | 'short';

/** A transport that corrupts the open-to-all vector of job `jobId` in its raw bytes. */
function corrupting(inner: Transport, jobId: string, how: Tamper): Transport {
  return rewritingRounds(inner, jobId, (env, data) => {
    const v = env.vectors[0]!;
    const off = v.byteOffset - data.byteOffset;
    const copy = new Uint8Array(data);
    if (how === 'overflow') copy.fill(0xff, off + 16, off + 32); // element 1 = 2^128 - 1 >= p
    else new DataView(copy.buffer).setUint32(off - 4, v.length / 16 - 1); // claims one element fewer
    return how === 'short' ? new Uint8Array([...copy.subarray(0, off + v.length - 16), ...copy.subarray(off + v.length)]) : copy;
  });
}

async function cluster(seed: number, how: Tamper): Promise<{ net: SimNetwork; parties: Party[]; logs: Record<string, unknown>[]; events: Record<string, unknown>[] }> {
  const net = new SimNetwork({ n: 5, seed, link: { latencyMs: 1, jitterMs: 1 } });
  const logs: Record<string, unknown>[] = [];
  const events: Record<string, unknown>[] = [];
  const parties = [1, 2, 3, 4, 5].map((i) => {
    const tr = i === 4 ? corrupting(net.transport(i), 'bad', how) : net.transport(i);
    const p = createParty({ n: 5, t: 2, transport: tr, log: (e) => logs.push(e as Record<string, unknown>), preprocessing: { mode: 'dealer', targetTriples: 10, targetBits: 16, batch: 8 } });
    p.on('inconsistent-share', (e) => events.push(e));
    return p;
  });
  await net.settle(Promise.all(parties.map((p) => p.start())));
  return { net, parties, logs, events };
}

describe('received shares as bytes', () => {
  for (const how of ['overflow', 'short'] as const) {
    it(`a share vector that is ${how === 'overflow' ? 'not below p' : 'too short'} is refused; openings complete from the others`, async () => {
      const { net, parties, logs } = await cluster(how === 'overflow' ? 11 : 12, how);
      const inputs = deal(5, 2, [10n, 20n, 30n]);
      const outs = await net.settle(Promise.all(parties.map((p) => p.runJob('bad', async (ctx) => {
        const x = ctx.fromShares(inputs[p.id - 1]![0]!);
        const opened = await ctx.open(x);
        const sq = await ctx.open(await ctx.mul(x, x)); // two more rounds, tampered the same way
        return [...opened, ...sq];
      }))));
      for (const o of outs) expect(o).toEqual([10n, 20n, 30n, 100n, 400n, 900n]);
      const ev = how === 'overflow' ? 'bad-share' : 'bad-share-length';
      const refused = logs.filter((e) => e.ev === ev && e.from === 4);
      // only party 4's shares are refused, and honest parties did get some of them in time
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.every((e) => e.party !== 4)).toBe(true);
      expect(logs.filter((e) => (e.ev === 'bad-share' || e.ev === 'bad-share-length') && e.from !== 4)).toEqual([]);
      await net.run({ maxTimeMs: 100 });
      // a refused in-time share is never mistaken for a consistent one, and nothing throws later
      expect(logs.filter((e) => e.ev === 'handler-error')).toEqual([]);
    });
  }

  it('party 4\'s share with a value >= p is refused in time or reported late (index -1) at every honest party', async () => {
    const { net, parties, logs, events } = await cluster(13, 'overflow');
    const inputs = deal(5, 2, Array.from({ length: 20 }, (_, i) => BigInt(i))); // <= 32: every position sampled
    const outs = await net.settle(Promise.all(parties.map((p) => p.runJob('bad', async (ctx) => ctx.open(ctx.fromShares(inputs[p.id - 1]![0]!))))));
    for (const o of outs) expect(o).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i)));
    await net.run({ maxTimeMs: 100 });
    for (const e of events) {
      expect(e.badParty).toBe(4);
      expect(e.late).toBe(true);
      expect(e.index).toBe(-1);
    }
    for (const j of [1, 2, 3, 5]) {
      const inTime = logs.some((e) => e.party === j && e.ev === 'bad-share' && e.from === 4);
      const late = events.some((e) => e.party === j);
      expect(inTime || late).toBe(true);
    }
  });
});
