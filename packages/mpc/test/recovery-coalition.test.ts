// Issue 22 on the simulated network, with real parties: party 1 asks for share recovery without
// having lost its memory (helpers cannot tell), so it holds its own shares at every state. Under one
// nonce it asks helpers 2 and 3 before a job that takes 40 off a resting order's size, and helpers 4
// and 5 after it. With a mask depending on the nonce alone, its own share and two answers at each
// state fix s1 + z and s2 + z under one mask z, and the difference at 0 is the 40 (no helper needs
// to collude here: four honest helpers answered). With masks bound to the state answered at, the
// two polynomials carry independent masks.

import { describe, expect, it } from 'vitest';
import { SimNetwork } from '@tenebra/transport';
import * as F from '../src/field';
import { Msg, bytesText, decode, decodeVector, encode, type Envelope } from '../src/messages';
import { createParty } from '../src/runtime';
import { interpolate } from '../src/shamir';
import { decodeSnapshot } from '../src/state';
import { deal, dropping, runAll } from './helpers';

const S1 = [100n, 250n, 7n];
const FILL = [40n, 0n, 0n];
const trueDiff = FILL;

describe('share recovery on the network: a party asking at two states under one nonce', () => {
  it('cannot compute the difference of the values between the states', async () => {
    const net = new SimNetwork({ n: 5, seed: 22, link: { latencyMs: 1, jitterMs: 0.5 } });
    const replies: { from: number; env: Envelope }[] = [];
    const inner1 = net.transport(1);
    // party 1's own recovery is not running: the probe's replies are taken off its link
    const t1 = dropping(inner1, (from, data) => {
      const env = decode(data);
      if (env.type !== Msg.RecoverReply || !env.key.startsWith('probe')) return false;
      replies.push({ from, env });
      return true;
    });
    const prep = { targetTriples: 40, targetBits: 64, batch: 40, background: false };
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({ n: 5, t: 2, transport: i === 1 ? t1 : net.transport(i), preprocessing: prep }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    const per = deal(5, 2, S1);
    await net.settle(Promise.all(runAll(parties, 'put', async (ctx, id) => ctx.save('book/size', ctx.fromShares(per[id - 1]![0]!)))));
    const own = (): bigint[] => decodeSnapshot(parties[0]!.exportState()).store.find(([k]) => k === 'book/size')![1];

    const probe = async (helpers: number[]): Promise<Map<number, { values: bigint[]; stateId: string }>> => {
      replies.length = 0;
      for (const j of helpers) inner1.send(j, encode({ type: Msg.RecoverRequest, key: 'probe-1', prepCommitted: 0, prepNext: 0 }));
      await net.run({ until: () => replies.length >= helpers.length, maxTimeMs: 10_000 });
      return new Map(replies.map(({ from, env }) => {
        expect(env.b).toBe(1);
        const meta = JSON.parse(bytesText(env.extra)) as { stateId: string };
        return [from, { values: decodeVector(env.vectors[0]!).slice(0, S1.length), stateId: meta.stateId }];
      }));
    };

    const own1 = own();
    const at1 = await probe([2, 3]);
    await net.settle(Promise.all(runAll(parties, 'partial-fill', async (ctx) => ctx.save('book/size', ctx.sub(ctx.load('book/size')!, ctx.constant(FILL))))));
    const own2 = own();
    const at2 = await probe([4, 5]);

    // two states, helpers at one state agree on it
    expect(at1.get(2)!.stateId).toBe(at1.get(3)!.stateId);
    expect(at2.get(4)!.stateId).toBe(at2.get(5)!.stateId);
    expect(at1.get(2)!.stateId).not.toBe(at2.get(4)!.stateId);

    const g1 = interpolate([1, 2, 3], [own1, at1.get(2)!.values, at1.get(3)!.values], 0);
    const g2 = interpolate([1, 4, 5], [own2, at2.get(4)!.values, at2.get(5)!.values], 0);
    const est = g1.map((x, i) => F.sub(x, g2[i]!));
    // with a nonce-only mask est is [40, 0, 0] exactly
    for (let i = 0; i < S1.length; i++) expect(est[i]).not.toBe(trueDiff[i]);
  });
});
