// Messages as a real transport hands them over: at any byte offset of a larger buffer (a libp2p
// stream delivers frames inside chunks, as Node Buffers), so a decoded vector is a view at an odd
// offset. Committee production and a job on its items must work on such views (field.words copied
// an unaligned view with slice(), which on a Buffer is a view: the two-round production's root
// assembly threw RangeError, seen only over libp2p).
import { describe, expect, it } from 'vitest';
import { SimNetwork } from '@tenebra/transport';
import * as F from '../src/field';
import { createParty, type Party } from '../src/runtime';
import { deal, wrapTransport } from './helpers';

describe('wire vectors at odd offsets', () => {
  it('committee preprocessing and a job with products, comparisons and equalities give the plaintext results', async () => {
    const net = new SimNetwork({ n: 5, seed: 5, link: { latencyMs: 1, jitterMs: 0.5 } });
    const parties: Party[] = [];
    for (let i = 1; i <= 5; i++) {
      const inner = net.transport(i);
      // every received message copied to offset 1 of a fresh Node Buffer (odd: no 2-, 4- or 8-byte
      // view; a Buffer, as libp2p delivers, whose slice() is a view and not a copy)
      const tr = wrapTransport(inner, {
        onMessage: (h) => inner.onMessage((from, data) => {
          const buf = Buffer.alloc(data.length + 1);
          buf.set(data, 1);
          h(from, buf.subarray(1));
        }),
      });
      parties.push(createParty({ n: 5, t: 2, transport: tr, preprocessing: { targetTriples: 60, targetBits: 160, batch: 30, background: false } }));
    }
    await net.settle(Promise.all(parties.map((p) => p.start())));
    await net.settle(Promise.all(parties.map((p) => p.fill())));
    expect(parties.map((p) => p.status().preprocessing.committedBatches).every((c) => c > 0)).toBe(true);
    const xs = [3n, -5n, 1000n, 0n, 17n];
    const ys = [4n, -5n, -1000n, 0n, -17n];
    const inputs = deal(5, 2, xs, ys);
    const outs = await net.settle(Promise.all(parties.map((p) => p.runJob('odd', async (ctx) => {
      const [x, y] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s));
      const [m, l, e] = await Promise.all([ctx.mul(x!, y!), ctx.lt(x!, y!), ctx.eq(x!, y!)]);
      return ctx.open(ctx.concat([m, l, e]));
    }))));
    const want = [...xs.map((x, i) => x * ys[i]!), ...xs.map((x, i) => (x < ys[i]! ? 1n : 0n)), ...xs.map((x, i) => (x === ys[i]! ? 1n : 0n))];
    for (const o of outs) expect(o.map(F.toSigned)).toEqual(want);
  }, 60_000);

  it('n = 7, t = 3 (degree 2t = 6 over seven): the two-round production and a job on its items give the plaintext results', async () => {
    const n = 7;
    const t = 3;
    const net = new SimNetwork({ n, seed: 3, link: { latencyMs: 1 } });
    const parties: Party[] = Array.from({ length: n }, (_, i) => createParty({ n, t, transport: net.transport(i + 1), preprocessing: { targetTriples: 60, targetBits: 200, batch: 30, background: false } }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    await net.settle(Promise.all(parties.map((p) => p.fill())));
    const xs = [3n, -5n, 1000n, 0n, 17n];
    const ys = [4n, -5n, -1000n, 0n, -17n];
    const inputs = deal(n, t, xs, ys);
    const outs = await net.settle(Promise.all(parties.map((p) => p.runJob('seven', async (ctx) => {
      const [x, y] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s));
      const [m, l, e] = await Promise.all([ctx.mul(x!, y!), ctx.lt(x!, y!), ctx.eq(x!, y!)]);
      return ctx.open(ctx.concat([m, l, e]));
    }))));
    const want = [...xs.map((x, i) => x * ys[i]!), ...xs.map((x, i) => (x < ys[i]! ? 1n : 0n)), ...xs.map((x, i) => (x === ys[i]! ? 1n : 0n))];
    for (const o of outs) expect(o.map(F.toSigned)).toEqual(want);
  }, 120_000);
});
