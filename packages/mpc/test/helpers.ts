import { expect } from 'vitest';
import { SimNetwork, type Transport } from '@tenebra/transport';
import { Msg, decode, type Envelope } from '../src/messages';
import type { JobContext } from '../src/api';
import * as F from '../src/field';
import type { PreprocessingOptions } from '../src/preprocessing';
import { createParty, type Party, type PartyOptions } from '../src/runtime';
import { shareSecret } from '../src/shamir';

export interface Cluster {
  net: SimNetwork;
  parties: Party[];
  logs: object[];
}

export async function cluster(o: {
  n?: number;
  t?: number;
  seed?: number;
  prep?: PreprocessingOptions;
  checkOpenings?: boolean;
  latencyMs?: number;
  jitterMs?: number;
  fill?: boolean;
}): Promise<Cluster> {
  const n = o.n ?? 5;
  const t = o.t ?? 2;
  const net = new SimNetwork({ n, seed: o.seed ?? 1, link: { latencyMs: o.latencyMs ?? 1, jitterMs: o.jitterMs ?? 0.5 } });
  const logs: object[] = [];
  const parties: Party[] = [];
  for (let i = 1; i <= n; i++) {
    const opts: PartyOptions = {
      n, t, transport: net.transport(i),
      preprocessing: { targetTriples: 300, targetBits: 400, batch: 40, ...o.prep },
      checkOpenings: o.checkOpenings ?? false,
      log: (e) => { if (logs.length < 20000) logs.push(e); },
    };
    parties.push(createParty(opts));
  }
  await net.settle(Promise.all(parties.map((p) => p.start())));
  if (o.fill !== false) await fillReserve({ net, parties, logs });
  return { net, parties, logs };
}

/** Runs the simulation until every live party's reserve reached its target and nothing is in flight. */
export async function fillReserve(c: Cluster, parties = c.parties, minTriples = 300, minBits = 400): Promise<void> {
  await c.net.run({
    until: () => parties.every((p) => {
      const s = p.status();
      return s.preprocessing.inFlight === undefined && s.reserve.triples >= minTriples && s.reserve.bits >= minBits && s.reserve.lex4 >= minBits / 10;
    }),
    maxTimeMs: 600_000,
  });
}

/** Shares plaintext vectors: result[i-1] = party i's shares, per input vector. */
export function deal(n: number, t: number, ...vectors: bigint[][]): bigint[][][] {
  const per: bigint[][][] = Array.from({ length: n }, () => []);
  for (const v of vectors) {
    const sh = shareSecret(v.map((x) => F.fromSigned(x)), n, t);
    for (let i = 0; i < n; i++) per[i]!.push(sh[i]!);
  }
  return per;
}

/** Runs the same job at the given parties. */
export function runAll<T>(parties: Party[], jobId: string, fn: (ctx: JobContext, id: number) => Promise<T>): Promise<T>[] {
  return parties.map((p) => p.runJob(jobId, (ctx) => fn(ctx, p.id)));
}

export const signed = (xs: bigint[]): bigint[] => xs.map(F.toSigned);

/** `inner` with some of its calls replaced: the base of every test transport. */
export function wrapTransport(inner: Transport, over: Partial<Pick<Transport, 'send' | 'onMessage'>>): Transport {
  return {
    self: inner.self, n: inner.n, clock: inner.clock,
    send: (to, data) => inner.send(to, data),
    onMessage: (h) => inner.onMessage(h),
    onPeer: (h) => inner.onPeer(h),
    isUp: (p) => inner.isUp(p),
    start: () => inner.start(),
    stop: () => inner.stop(),
    ...over,
  };
}

/**
 * A transport that passes every call through to `inner`, except that the round messages of job
 * `jobId` it sends go through `rewrite` first (to tamper with shares in tests).
 */
export function rewritingRounds(inner: Transport, jobId: string, rewrite: (env: Envelope, data: Uint8Array) => Uint8Array): Transport {
  return wrapTransport(inner, {
    send(to, data) {
      const env = decode(data);
      inner.send(to, env.type === Msg.JobRound && env.key === jobId ? rewrite(env, data) : data);
    },
  });
}

/** A transport that does not send the outgoing messages `drop` picks. */
export function droppingSends(inner: Transport, drop: (to: number, data: Uint8Array) => boolean): Transport {
  return wrapTransport(inner, {
    send: (to, data) => {
      if (!drop(to, data)) inner.send(to, data);
    },
  });
}

/** A transport that drops the incoming messages `drop` picks. */
export function dropping(inner: Transport, drop: (from: number, data: Uint8Array) => boolean): Transport {
  return wrapTransport(inner, {
    onMessage: (h) => inner.onMessage((from, data) => {
      if (!drop(from, data)) h(from, data);
    }),
  });
}

/** A transport that holds back the incoming preprocessing phase-A messages of `round` while `hold()` is true. */
export function holdingRound(inner: Transport, round: number, hold: () => boolean = () => true): Transport {
  return dropping(inner, (_, data) => {
    if (!hold()) return false;
    const env = decode(data);
    return env.type === Msg.PrepRound && env.a === round;
  });
}

/** A job of products x * y on `team` (five parties, t = 2); resolves to each party's outcome. */
export function products(net: SimNetwork, team: Party[], id: string, xs: bigint[], ys: bigint[], maxTimeMs = 60_000): Promise<PromiseSettledResult<bigint[]>[]> {
  const inputs = deal(5, 2, xs, ys);
  return net.settle(Promise.allSettled(team.map((p) => p.runJob(id, async (ctx) => {
    const [x, y] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s));
    return ctx.open(await ctx.mul(x!, y!));
  }))), { maxTimeMs });
}

/** A job of products and comparisons of xs and ys on `team` (every live share checked); expects the opened values. */
export async function productsAndComparisons(net: SimNetwork, team: Party[], id: string, xs: bigint[], ys: bigint[]): Promise<void> {
  const inputs = deal(5, 2, xs, ys);
  const outs = await net.settle(Promise.all(team.map((p) => p.runJob(id, async (ctx) => {
    const [x, y] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s));
    return ctx.open(ctx.concat([await ctx.mul(x!, y!), await ctx.lt(x!, y!)]));
  }))), { maxTimeMs: 120_000 });
  const want = [...xs.map((x, i) => x * ys[i]!), ...xs.map((x, i) => (x < ys[i]! ? 1n : 0n))];
  for (const o of outs) expect(o).toEqual(want);
}
