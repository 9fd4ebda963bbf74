// A flipped share is named; bad construction inputs give clear errors; state round-trips; a lost
// round message is re-sent; a party left behind for good is told so and fails loudly.
import { describe, expect, it } from 'vitest';
import { SimNetwork, type Transport } from '@tenebra/transport';
import { InconsistentSharesError, JobMessagesGoneError, type JobContext } from '../src/api';
import * as F from '../src/field';
import { Msg, decode, decodeVector, encode } from '../src/messages';
import { createParty, type Party } from '../src/runtime';
import { decodeSnapshot, prepLogOf } from '../src/state';
import { DEALER_LABEL } from '../src/preprocessing';
import { deal, droppingSends, fillReserve, rewritingRounds, signed, wrapTransport } from './helpers';

/** A transport that adds 1 to element `index` of the open-to-all shares it sends in job `jobId`. */
function flipping(inner: Transport, jobId: string, index: number): Transport {
  return rewritingRounds(inner, jobId, (env) => {
    const all = decodeVector(env.vectors[0]!);
    if (all.length > index) all[index] = F.add(all[index]!, 1n);
    return encode({ ...env, vectors: [all, decodeVector(env.vectors[1]!)] });
  });
}

/** A transport that adds 1 to every element of the open-to-all shares it sends in job `jobId`. */
function flippingAll(inner: Transport, jobId: string): Transport {
  return rewritingRounds(inner, jobId, (env) => {
    const all = decodeVector(env.vectors[0]!).map((x) => F.add(x, 1n));
    return encode({ ...env, vectors: [all, decodeVector(env.vectors[1]!)] });
  });
}

async function tamperedCluster(seed: number, checkOpenings: boolean, tamper: (tr: Transport) => Transport = (tr) => flipping(tr, 'flip', 1)): Promise<{ net: SimNetwork; parties: Party[]; events: Record<string, unknown>[] }> {
  const net = new SimNetwork({ n: 5, seed, link: { latencyMs: 1, jitterMs: 1 } });
  const events: Record<string, unknown>[] = [];
  const parties = [1, 2, 3, 4, 5].map((i) => {
    const tr = i === 4 ? tamper(net.transport(i)) : net.transport(i);
    const p = createParty({ n: 5, t: 2, transport: tr, checkOpenings, preprocessing: { targetTriples: 50, targetBits: 64, batch: 16 } });
    p.on('inconsistent-share', (e) => events.push(e));
    return p;
  });
  await net.settle(Promise.all(parties.map((p) => p.start())));
  return { net, parties, events };
}

describe('consistency checks', () => {
  it('checkOpenings: a flipped share is named (party and index) at every honest party', async () => {
    const { net, parties, events } = await tamperedCluster(3, true);
    const inputs = deal(5, 2, [10n, 20n, 30n]);
    const jobs = parties.map((p) => p.runJob('flip', async (ctx) => ctx.open(ctx.fromShares(inputs[p.id - 1]![0]!))));
    const res = await net.settle(Promise.allSettled(jobs));
    for (const p of parties) {
      const r = res[p.id - 1]!;
      if (p.id === 4) {
        expect(r.status).toBe('fulfilled'); // its own view is consistent
        continue;
      }
      expect(r.status).toBe('rejected');
      const e = (r as PromiseRejectedResult).reason as InconsistentSharesError;
      expect(e).toBeInstanceOf(InconsistentSharesError);
      expect(e.party).toBe(4);
      expect(e.index).toBe(1);
    }
    expect(events.filter((e) => e.badParty === 4).length).toBeGreaterThanOrEqual(4);
  });

  it('default mode: openings complete from t+1 shares; late shares are checked and the bad party named', async () => {
    const { net, parties, events } = await tamperedCluster(5, false);
    const inputs = deal(5, 2, [10n, 20n, 30n]);
    const jobs = parties.map((p) => p.runJob('flip', async (ctx) => ctx.open(ctx.fromShares(inputs[p.id - 1]![0]!))));
    await net.settle(Promise.allSettled(jobs));
    await net.run({ maxTimeMs: 100 });
    const named = new Set(events.filter((e) => e.badParty === 4 && e.index === 1).map((e) => e.party));
    expect([...named].sort()).toEqual([1, 2, 3, 5]);
  });

  it('default mode: a late share of a long vector is spot-checked at sampled positions, and a wholly wrong one is named', async () => {
    const m = 200; // longer than the 32 sampled positions
    // 4's wrong shares also arrive 20 virtual ms late, after every honest party has completed from
    // t+1 honest shares: otherwise whether they land in a party's base depends on the run's timing
    const late = (tr: Transport): Transport => wrapTransport(tr, {
      send: (to, data) => {
        const env = decode(data);
        if (env.type === Msg.JobRound && env.key === 'flip') tr.clock.setTimeout(() => tr.send(to, data), 20);
        else tr.send(to, data);
      },
    });
    const { net, parties, events } = await tamperedCluster(7, false, (tr) => flippingAll(late(tr), 'flip'));
    const inputs = deal(5, 2, Array.from({ length: m }, (_, i) => BigInt(i * 7 + 1)));
    const jobs = parties.map((p) => p.runJob('flip', async (ctx) => ctx.open(ctx.fromShares(inputs[p.id - 1]![0]!))));
    await net.settle(Promise.allSettled(jobs));
    await net.run({ maxTimeMs: 100 });
    const named = events.filter((e) => e.late === true && e.badParty === 4);
    // every honest party that finished without 4's share names it, at a position inside the vector
    expect(new Set(named.map((e) => e.party)).size).toBe(4);
    for (const e of named) {
      expect(e.index as number).toBeGreaterThanOrEqual(0);
      expect(e.index as number).toBeLessThan(m);
    }
    // and no honest party is ever named
    expect(events.filter((e) => e.badParty !== 4 && e.badParty !== null && e.badParty !== undefined)).toEqual([]);
  });
});

describe('bad inputs', () => {
  const net = new SimNetwork({ n: 5, seed: 1 });
  it('construction errors are clear', () => {
    expect(() => createParty({ n: 4, t: 2, transport: new SimNetwork({ n: 4, seed: 1 }).transport(1) })).toThrow(/t must be < n\/2/);
    expect(() => createParty({ n: 5, t: 0, transport: net.transport(1) })).toThrow(/t must be a positive integer/);
    expect(() => createParty({ n: 7, t: 2, transport: net.transport(1) })).toThrow(/transport is for n=5/);
    expect(() => createParty({ n: 5, t: 2, L: 90, transport: net.transport(1) })).toThrow(/does not fit/);
    expect(() => createParty({ n: 5, t: 2, transport: net.transport(1), preprocessing: { mode: 'magic' as 'dealer' } })).toThrow(/mode must be/);
    expect(() => createParty({ n: 5, t: 2, transport: net.transport(1), preprocessing: { batch: 0 } })).toThrow(/batch must be/);
    expect(() => createParty({ n: 5, t: 2, transport: net.transport(1), state: new Uint8Array([0, 0, 0, 9, 1]) })).toThrow(/state/);
  });

  it('operation errors are clear, and a failed job leaves the store as it was', async () => {
    const n5 = new SimNetwork({ n: 5, seed: 2 });
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({ n: 5, t: 2, transport: n5.transport(i), preprocessing: { mode: 'dealer', targetTriples: 10, targetBits: 16, batch: 8 } }));
    await n5.settle(Promise.all(parties.map((p) => p.start())));
    expect(parties[0]!.status().mode).toBe(DEALER_LABEL);
    const errs = await n5.settle(Promise.all(parties.map((p) => p.runJob('bad', async (ctx) => {
      const out: string[] = [];
      const a = ctx.constant([1n, 2n]);
      const b = ctx.constant([1n]);
      for (const f of [
        () => ctx.add(a, b),
        () => ctx.fromShares([F.P]),
        () => ctx.fromShares([-1n]),
        () => ctx.openTo(9, a),
        () => ctx.save('', a),
        () => ctx.mulPublic(a, [1n, 2n, 3n]),
      ]) {
        try {
          f();
          out.push('no error');
        } catch (e) {
          out.push((e as Error).message);
        }
      }
      return out;
    }))));
    for (const e of errs) {
      expect(e[0]).toMatch(/length mismatch/);
      expect(e[1]).toMatch(/not a field element/);
      expect(e[2]).toMatch(/not a field element/);
      expect(e[3]).toMatch(/outside 1\.\.5/);
      expect(e[4]).toMatch(/non-empty/);
      expect(e[5]).toMatch(/3 public values for 2/);
    }
    await expect(n5.settle(parties[0]!.runJob('bad', async () => 1))).rejects.toThrow(/already ran/);
    // a job that throws leaves the store unchanged
    const threw = parties.map((p) => p.runJob('throws', async (ctx) => {
      ctx.save('v', ctx.constant([7n, 7n]));
      await ctx.mul(ctx.constant([2n]), ctx.constant([3n]));
      throw new Error('deliberate');
    }));
    const r = await n5.settle(Promise.allSettled(threw));
    expect(r.every((x) => x.status === 'rejected')).toBe(true);
    const names = await n5.settle(Promise.all(parties.map((p) => p.runJob('look', async (ctx) => ctx.names()))));
    expect(names).toEqual([[], [], [], [], []]);
  });
});

describe('parameters n=3,t=1 and n=7,t=3', () => {
  for (const [n, t] of [[3, 1], [7, 3]] as const) {
    it(`sharing, opening, openTo, mul and lt with n=${n}, t=${t}`, async () => {
      const net = new SimNetwork({ n, seed: n, link: { latencyMs: 1, jitterMs: 1 } });
      const parties = Array.from({ length: n }, (_, i) => createParty({ n, t, transport: net.transport(i + 1), preprocessing: { targetTriples: 100, targetBits: 200, batch: 30 } }));
      await net.settle(Promise.all(parties.map((p) => p.start())));
      await fillReserve({ net, parties, logs: [] }, parties, 100, 200);
      const xs = [4n, -9n, (1n << 48n) - 1n];
      const ys = [4n, 11n, -5n];
      const inputs = deal(n, t, xs, ys);
      const outs = await net.settle(Promise.all(parties.map((p) => p.runJob('j', async (ctx) => {
        const x = ctx.fromShares(inputs[p.id - 1]![0]!);
        const y = ctx.fromShares(inputs[p.id - 1]![1]!);
        const [m, l, to] = await Promise.all([ctx.mul(x, y), ctx.lt(x, y), ctx.openTo(n, x)]);
        return { v: await ctx.open(ctx.concat([x, m, l])), to };
      }))));
      for (const o of outs) expect(signed(o.v)).toEqual([...xs, ...xs.map((x, i) => x * ys[i]!), ...xs.map((x, i) => (x < ys[i]! ? 1n : 0n))]);
      outs.forEach((o, i) => expect(o.to === null ? null : signed(o.to)).toEqual(i === n - 1 ? xs : null));
    });
  }
});

describe('a large bound', () => {
  // L = 70 fits the field only at kappa 40 (at the default 64, L <= 55 for n = 5, t = 2: field.ts)
  it('L = 70 (18 comparison blocks) compares correctly', async () => {
    const net = new SimNetwork({ n: 5, seed: 70, link: { latencyMs: 1 } });
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({ n: 5, t: 2, L: 70, k: 40, transport: net.transport(i), preprocessing: { mode: 'dealer', targetTriples: 50, targetBits: 600, batch: 64 } }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    const big = (1n << 70n) - 1n;
    const xs = [big, -big, 5n, big - 1n, 0n];
    const ys = [big - 1n, big, 5n, big, -big];
    const inputs = deal(5, 2, xs, ys);
    const outs = await net.settle(Promise.all(parties.map((p) => p.runJob('wide', async (ctx) => {
      const x = ctx.fromShares(inputs[p.id - 1]![0]!);
      const y = ctx.fromShares(inputs[p.id - 1]![1]!);
      return ctx.open(ctx.concat([await ctx.lt(x, y), await ctx.eq(x, y)]));
    }))));
    for (const o of outs) expect(o).toEqual([...xs.map((x, i) => (x < ys[i]! ? 1n : 0n)), ...xs.map((x, i) => (x === ys[i]! ? 1n : 0n))]);
  });
});

describe('state', () => {
  /** Five parties with a small committee-made reserve (60 triples, 80 bits). */
  async function stateCluster(seed: number): Promise<{ net: SimNetwork; opts: { targetTriples: number; targetBits: number; batch: number }; parties: Party[] }> {
    const net = new SimNetwork({ n: 5, seed, link: { latencyMs: 1 } });
    const opts = { targetTriples: 60, targetBits: 80, batch: 20 };
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({ n: 5, t: 2, transport: net.transport(i), preprocessing: opts }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    await fillReserve({ net, parties, logs: [] }, parties, 60, 80);
    return { net, opts, parties };
  }

  it('exportState and restart from it keeps store, public store and reserve', async () => {
    const { net, opts, parties } = await stateCluster(8);
    const inputs = deal(5, 2, [42n, -1n]);
    await net.settle(Promise.all(parties.map((p) => p.runJob('s1', async (ctx) => {
      ctx.save('a', ctx.fromShares(inputs[p.id - 1]![0]!));
      ctx.savePublic('p', '"x"');
    }))));
    await fillReserve({ net, parties, logs: [] }, parties, 60, 80);
    const st = parties[1]!.exportState();
    const before = parties[1]!.status().reserve;
    const again = createParty({ n: 5, t: 2, transport: net.restart(2), state: st, preprocessing: opts });
    await net.settle(again.start());
    expect(again.status().reserve).toEqual(before);
    const all = [parties[0]!, again, parties[2]!, parties[3]!, parties[4]!];
    const outs = await net.settle(Promise.all(all.map((p) => p.runJob('s2', async (ctx) => {
      const a = ctx.load('a')!;
      return { v: await ctx.open(await ctx.mul(a, a)), p: ctx.loadPublic('p') };
    }))));
    for (const o of outs) expect(o).toEqual({ v: [1764n, 1n], p: '"x"' });
  });

  it('exportStateParts: a small core plus reserve chunks written once; restart from them equals restart from exportState', async () => {
    const { net, opts, parties } = await stateCluster(9);
    const inputs = deal(5, 2, [42n, -1n]);
    const job = (id: string, f: (ctx: JobContext, p: Party) => Promise<unknown>) => net.settle(Promise.all(parties.map((p) => p.runJob(id, (ctx) => f(ctx, p)))));
    await job('s1', async (ctx, p) => {
      ctx.save('a', ctx.fromShares(inputs[p.id - 1]![0]!));
      ctx.savePublic('p', '"x"');
    });
    const first = parties[1]!.exportStateParts();
    const full = parties[1]!.exportState();
    expect(first.chunks.size).toBeGreaterThan(0);
    let chunkBytes = 0;
    for (const b of first.chunks.values()) chunkBytes += b.length;
    expect(first.core.length + chunkBytes).toBeGreaterThanOrEqual(full.length - 2048); // same content, split
    expect(first.core.length).toBeLessThan(full.length / 4);
    // A job that consumes preprocessing moves the cursor, not the chunks: the same keys name the same bytes.
    await job('s2', async (ctx) => ctx.open(await ctx.lt(ctx.load('a')!, ctx.constant([7n, 7n]))));
    const second = parties[1]!.exportStateParts();
    for (const [k, b] of second.chunks) if (first.chunks.has(k)) expect(Buffer.from(first.chunks.get(k)!).equals(b)).toBe(true);
    const before = parties[1]!.status().reserve;
    // A store holding every chunk ever written: restore takes only what the core lists.
    const stored = new Map([...first.chunks, ...second.chunks]);
    expect(() => createParty({ n: 5, t: 2, transport: net.transport(2), state: second.core })).toThrow(/chunk/);
    const missing = [...second.chunks.keys()][0]!;
    expect(() => createParty({ n: 5, t: 2, transport: net.transport(2), state: second.core, stateChunks: (k) => (k === missing ? undefined : stored.get(k)) })).toThrow(/missing/);
    const again = createParty({ n: 5, t: 2, transport: net.restart(2), state: second.core, stateChunks: (k) => stored.get(k), preprocessing: opts });
    await net.settle(again.start());
    expect(again.status().reserve).toEqual(before);
    const all = [parties[0]!, again, parties[2]!, parties[3]!, parties[4]!];
    const outs = await net.settle(Promise.all(all.map((p) => p.runJob('s3', async (ctx) => {
      const a = ctx.load('a')!;
      return { v: await ctx.open(ctx.concat([await ctx.mul(a, a), await ctx.lt(a, ctx.constant([50n, 50n]))])), p: ctx.loadPublic('p') };
    }))));
    for (const o of outs) expect(o).toEqual({ v: [1764n, 1n, 1n, 1n], p: '"x"' });
  });

  it('exportStateParts after a job that replaced one of two stored vectors: the core holds the new one and the untouched one', async () => {
    // The encoder reuses a stored vector's bytes while the same vector stays in the store (state.ts);
    // a save replaces the vector, so the next core must carry the new shares, not the cached bytes.
    const { net, parties } = await stateCluster(10);
    const ins = { a: deal(5, 2, [5n]), b: deal(5, 2, [6n]) };
    const job = (id: string, f: (ctx: JobContext, p: Party) => Promise<unknown>) => net.settle(Promise.all(parties.map((p) => p.runJob(id, (ctx) => f(ctx, p)))));
    await job('c1', async (ctx, p) => {
      ctx.save('a', ctx.fromShares(ins.a[p.id - 1]![0]!));
      ctx.save('b', ctx.fromShares(ins.b[p.id - 1]![0]!));
    });
    const keysBefore = new Set(parties[1]!.exportStateParts().chunks.keys());
    const split = (): ReturnType<typeof decodeSnapshot> => {
      const x = parties[1]!.exportStateParts();
      return decodeSnapshot(x.core, (k) => x.chunks.get(k));
    };
    const first = split();
    // the vectors live in chunks: an export with no job in between names the same chunks
    expect(new Set(parties[1]!.exportStateParts().chunks.keys())).toEqual(keysBefore);
    await job('c2', async (ctx) => ctx.save('b', ctx.addPublic(ctx.load('b')!, [10n])));
    const after = parties[1]!.exportStateParts();
    // one new chunk (b's new vector), one gone (its old one); a's is the same
    expect([...after.chunks.keys()].filter((k) => !keysBefore.has(k))).toHaveLength(1);
    expect([...keysBefore].filter((k) => !after.chunks.has(k))).toHaveLength(1);
    expect(prepLogOf(after.core)).toBeDefined();
    expect(() => decodeSnapshot(after.core)).toThrow(/chunk/);
    const parts = split();
    const full = decodeSnapshot(parties[1]!.exportState());
    expect(parts.store).toEqual(full.store);
    const byName = (s: typeof parts) => new Map(s.store);
    expect(byName(parts).get('a')).toEqual(byName(first).get('a'));
    expect(byName(parts).get('b')).not.toEqual(byName(first).get('b'));
    const opened = await job('c3', async (ctx) => ctx.open(ctx.concat([ctx.load('a')!, ctx.load('b')!])));
    for (const o of opened) expect(o).toEqual([5n, 16n]);
  });

  it('exportStateParts keeps a long public value in a chunk while it is unchanged; a restart from the parts reads it back', async () => {
    const { net, opts, parties } = await stateCluster(12);
    const book = (v: number): string => JSON.stringify({ v, levels: Array.from({ length: 40 }, (_, i) => [i, `o${i}`]) });
    const job = (id: string, f: (ctx: JobContext) => void) => net.settle(Promise.all(parties.map((p) => p.runJob(id, async (ctx) => f(ctx)))));
    await job('p1', (ctx) => { ctx.savePublic('book', book(1)); ctx.savePublic('cursor', '"1"'); });
    const first = parties[1]!.exportStateParts();
    const pubKeys = (x: typeof first): string[] => [...x.chunks.keys()].filter((k) => k.startsWith('pub/'));
    expect(pubKeys(first)).toHaveLength(1);
    expect(new TextDecoder().decode(first.core)).not.toContain('"o39"');
    // saved again with the same text, the short value changed: the same chunk, the same bytes
    await job('p2', (ctx) => { ctx.savePublic('book', book(1)); ctx.savePublic('cursor', '"2"'); });
    const second = parties[1]!.exportStateParts();
    expect(pubKeys(second)).toEqual(pubKeys(first));
    expect(second.chunks.get(pubKeys(second)[0]!)).toBe(first.chunks.get(pubKeys(first)[0]!));
    // changed: a new chunk in place of the old one
    await job('p3', (ctx) => ctx.savePublic('book', book(2)));
    const third = parties[1]!.exportStateParts();
    expect(pubKeys(third)).toHaveLength(1);
    expect(pubKeys(third)[0]).not.toBe(pubKeys(first)[0]);
    const stored = new Map([...first.chunks, ...third.chunks]);
    const again = createParty({ n: 5, t: 2, transport: net.restart(2), state: third.core, stateChunks: (k) => stored.get(k), preprocessing: opts });
    await net.settle(again.start());
    const all = [parties[0]!, again, parties[2]!, parties[3]!, parties[4]!];
    const outs = await net.settle(Promise.all(all.map((p) => p.runJob('p4', async (ctx) => [ctx.loadPublic('book'), ctx.loadPublic('cursor')]))));
    for (const o of outs) expect(o).toEqual([book(2), '"2"']);
  });
});

describe('a round message lost with no reconnect', () => {
  it('the waiting parties send every round of the job again, so a party that lacks an earlier one catches up', async () => {
    // Party 3's round-0 message of the job never reaches party 4, and no link goes down (so nothing
    // triggers the resend on peer-up). Parties 1 and 2 are dead: 3 and 5 finish round 0 with 3, 4
    // and 5's shares and wait in round 1 for 4's, while 4 waits in round 0 for 3's. Re-sending only
    // the round in flight would leave them waiting for ever.
    const net = new SimNetwork({ n: 5, seed: 11, link: { latencyMs: 1, jitterMs: 0.5 } });
    let dropped = 0;
    const parties = [1, 2, 3, 4, 5].map((i) => {
      const inner = net.transport(i);
      const tr: Transport = i !== 3 ? inner : droppingSends(inner, (to, data) => {
        const env = decode(data);
        if (to === 4 && env.type === Msg.JobRound && env.key === 'lossy' && env.a === 0 && dropped === 0) {
          dropped++;
          return true;
        }
        return false;
      });
      return createParty({ n: 5, t: 2, transport: tr, retransmitMs: 500, preprocessing: { targetTriples: 100, targetBits: 200, batch: 40 } });
    });
    await net.settle(Promise.all(parties.map((p) => p.start())));
    await fillReserve({ net, parties, logs: [] }, parties, 100, 200);
    net.crash(1);
    net.crash(2);
    const xs = [5n, -3n, 7n, 0n];
    const ys = [2n, 9n, 7n, -1n];
    const inputs = deal(5, 2, xs, ys);
    const live = parties.slice(2);
    const jobs = live.map((p) => p.runJob('lossy', async (ctx) => {
      const x = ctx.fromShares(inputs[p.id - 1]![0]!);
      const y = ctx.fromShares(inputs[p.id - 1]![1]!);
      const l = await ctx.lt(x, y);
      return ctx.open(ctx.concat([l, await ctx.mul(x, y)]));
    }));
    // before the first re-send: 4 waits in round 0 with its own and 5's shares, 3 and 5 in round 1
    await net.run({ maxTimeMs: 200 });
    const progress = (id: number) => parties[id - 1]!.status().jobProgress?.inflight;
    expect(progress(4)).toMatchObject({ r: 0, stage: 'shares', have: [4, 5] });
    expect(progress(3)).toMatchObject({ r: 1, stage: 'shares' });
    expect(progress(5)).toMatchObject({ r: 1, stage: 'shares' });
    const outs = await net.settle(Promise.all(jobs), { maxTimeMs: 30_000 });
    expect(dropped).toBe(1);
    for (const o of outs) expect(signed(o)).toEqual([0n, 1n, 0n, 0n, 10n, -27n, 49n, 0n]);
  });
});

describe('a party left behind', () => {
  /** Party 5 starts job j0 cut off from the others, who run j0..j{ahead-1} without it; then the links heal. */
  async function leftBehind(seed: number, ahead: number, opts: { finishedJobs?: number; jobPrecedes?: (a: string, b: string) => boolean; waitMs?: number } = {}): Promise<{ result: unknown; stale: unknown[] }> {
    const net = new SimNetwork({ n: 5, seed, link: { latencyMs: 1 } });
    // the others keep two finished jobs' messages for re-sending (default 8)
    const limits = { archivedJobs: 2, ...(opts.finishedJobs ? { finishedJobs: opts.finishedJobs } : {}) };
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({ n: 5, t: 2, transport: net.transport(i), limits, ...(opts.jobPrecedes ? { jobPrecedes: opts.jobPrecedes } : {}), preprocessing: { mode: 'dealer', targetTriples: 50, targetBits: 64, batch: 16 } }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    const stale: unknown[] = [];
    parties[4]!.on('stale', (e) => stale.push(e));
    const inputs = deal(5, 2, [6n], [7n]);
    const job = (p: Party, id: string) => p.runJob(id, async (ctx) => ctx.open(await ctx.mul(ctx.fromShares(inputs[p.id - 1]![0]!), ctx.fromShares(inputs[p.id - 1]![1]!))));
    net.partition([[1, 2, 3, 4], [5]]);
    const behind = job(parties[4]!, 'j0').then((v) => v, (e: unknown) => e);
    for (let k = 0; k < ahead; k++) expect(await net.settle(Promise.all(parties.slice(0, 4).map((p) => job(p, `j${k}`))))).toEqual([[42n], [42n], [42n], [42n]]);
    net.heal();
    if (opts.waitMs === undefined) return { result: await net.settle(behind), stale };
    const pending = Symbol('pending');
    let result: unknown = pending;
    void behind.then((v) => { result = v; });
    await net.run({ maxTimeMs: opts.waitMs });
    return { result: result === pending ? 'still waiting' : result, stale };
  }

  /** Job ids j<k> run in k order (as the committee's carry sequence numbers). */
  const byNumber = (a: string, b: string): boolean => Number(a.slice(1)) < Number(b.slice(1));

  it('still in the others\' re-send window: it gets their shares on reconnect and finishes with the right value', async () => {
    const { result, stale } = await leftBehind(41, 2);
    expect(result).toEqual([42n]);
    expect(stale).toEqual([]);
  });

  it('beyond it: told that the messages it lacks are gone, it fails the job with a typed error and reports stale, never waits for ever', async () => {
    const { result, stale } = await leftBehind(42, 4);
    expect(result).toBeInstanceOf(JobMessagesGoneError);
    // it fails as soon as too few could still send: three of its four peers have said so
    expect(result).toMatchObject({ job: 'j0', round: 0 });
    const gone = (result as JobMessagesGoneError).gone;
    expect(gone).toHaveLength(3);
    for (const j of gone) expect([1, 2, 3, 4]).toContain(j);
    expect(stale).toHaveLength(1);
  });

  it('behind by more jobs than the others remember: told so when ids carry an order (jobPrecedes), else it waits', async () => {
    // the others remember 3 finished ids; party 5's j0 is 6 jobs back
    const ordered = await leftBehind(43, 6, { finishedJobs: 3, jobPrecedes: byNumber });
    expect(ordered.result).toBeInstanceOf(JobMessagesGoneError);
    expect(ordered.result).toMatchObject({ job: 'j0', round: 0 });
    expect(ordered.stale).toHaveLength(1);
    // without an order j0 looks like a job the others have not started: they buffer its shares
    const unordered = await leftBehind(43, 6, { finishedJobs: 3, waitMs: 120_000 });
    expect(unordered.result).toBe('still waiting');
    expect(unordered.stale).toEqual([]);
  });
});
