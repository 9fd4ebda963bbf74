// The measurement plan of scripts/bench/mpc.ts, run identically by every party (in one process on
// the simulated network, or one process per party over libp2p). Inputs are shared from a fixed seed
// in every party, each keeping its own shares, so no input distribution is needed.
import { F, costOf, seededRng, shareSecret, type Party } from '@tenebra/mpc';

export type Step =
  | { kind: 'fill' }
  | { kind: 'mul'; n: number }
  /** warmup: run, not printed (the first jobs pay for compiling the code paths); jobs: how many jobs of n (default 1), each timed */
  | { kind: 'lt'; n: number; warmup?: boolean; jobs?: number }
  /** warmup: single-comparison jobs run first and not timed (a fresh process compiles those paths) */
  | { kind: 'latency'; count: number; warmup?: number };

export interface StepResult {
  step: string;
  ms: number;
  /** Per-job wall times (latency step; lt steps of several jobs). */
  samples?: number[];
  /** Per-job wall times of the latency step's untimed warm-up jobs (a fresh process's first jobs). */
  coldSamples?: number[];
  triples: number;
  lex4: number;
  prod4: number;
  nibbles: number;
  bytesSent: number;
  /** Messages this party handed to the transport over the step (libp2p runs; mpc-party.ts). */
  messagesSent?: number;
  rounds: number;
  made: { triples: number; lex4: number; prod4: number; bits: number };
  /** CPU time (user + system) this party's process spent in the step, ms; absent on the simulated network (one process for all). */
  cpuMs?: number;
}

const cache = new Map<string, bigint[][]>();

/** Party i's shares of a fixed pseudo-random vector of signed values |v| < 2^47. */
export function inputShares(tag: string, len: number, n: number, t: number, self: number): bigint[] {
  const key = `${tag}:${len}`;
  let sh = cache.get(key);
  if (!sh) {
    const rng = seededRng(`bench-input:${key}`);
    const vals = rng(len).map((x) => F.fromSigned((x & ((1n << 48n) - 1n)) - (1n << 47n)));
    sh = shareSecret(vals, n, t, seededRng(`bench-shares:${key}`));
    cache.set(key, sh);
  }
  return sh[self - 1]!;
}

const jobCounters = new Map<number, number>();
const nextJob = (party: number): number => {
  const k = jobCounters.get(party) ?? 0;
  jobCounters.set(party, k + 1);
  return k;
};

/** Runs one step at one party; bytesSent() reports this party's bytes sent so far. */
/** The name a step's figures are printed under (also MPC_PROF_STEP's key). */
export function stepName(step: Step): string {
  if (step.kind === 'lt' && step.warmup) return `warm-up lt x${step.n}`;
  if (step.kind === 'lt' && (step.jobs ?? 1) > 1) return `lt x${step.n} jobs ${step.jobs}`;
  return step.kind === 'fill' ? 'fill' : step.kind === 'latency' ? `latency x${step.count}` : `${step.kind} x${step.n}`;
}

export async function runStep(p: Party, step: Step, bytesSent: () => number): Promise<StepResult> {
  const { n, t, id } = p;
  // Inputs first (BigInt sharing from a seed: not part of what is measured)...
  const size = step.kind === 'mul' || step.kind === 'lt' ? step.n : 1;
  const x = step.kind === 'fill' ? [] : inputShares('x', size, n, t, id);
  const y = step.kind === 'fill' ? [] : inputShares('y', size, n, t, id);
  // ...then a barrier: a tiny job all parties must reach, so a step's clock starts together everywhere.
  await p.runJob(`bench-sync-${nextJob(p.id)}`, async (ctx) => ctx.open(ctx.constant([1n])));
  const s0 = p.status();
  const b0 = bytesSent();
  const t0 = performance.now();
  let rounds = 0;
  let samples: number[] | undefined;
  let coldSamples: number[] | undefined;
  switch (step.kind) {
    case 'fill':
      await p.fill();
      break;
    case 'mul':
    case 'lt': {
      const jobs = step.kind === 'lt' ? step.jobs ?? 1 : 1;
      if (jobs > 1) samples = [];
      for (let k = 0; k < jobs; k++) {
        const s = performance.now();
        await p.runJob(`bench-${step.kind}-${step.n}-${nextJob(id)}`, async (ctx) => {
          const a = ctx.fromShares(x);
          const b = ctx.fromShares(y);
          const r = step.kind === 'mul' ? await ctx.mul(a, b) : await ctx.lt(a, b);
          return r.length;
        });
        samples?.push(performance.now() - s);
      }
      rounds = costOf(step.kind, 48).rounds;
      break;
    }
    case 'latency': {
      const timed = async (count: number): Promise<number[]> => {
        const out: number[] = [];
        for (let k = 0; k < count; k++) {
          const s = performance.now();
          await p.runJob(`bench-lat-${nextJob(id)}`, async (ctx) => (await ctx.lt(ctx.fromShares(x), ctx.fromShares(y))).length);
          out.push(performance.now() - s);
        }
        return out;
      };
      coldSamples = await timed(step.warmup ?? 0);
      samples = await timed(step.count);
      rounds = costOf('lt', 48).rounds;
      break;
    }
  }
  const ms = performance.now() - t0;
  const s1 = p.status();
  return {
    step: stepName(step),
    ms,
    ...(samples ? { samples } : {}),
    ...(coldSamples?.length ? { coldSamples } : {}),
    triples: s1.reserve.cursor.triples - s0.reserve.cursor.triples,
    lex4: s1.reserve.cursor.lex4 - s0.reserve.cursor.lex4,
    prod4: s1.reserve.cursor.prod4 - s0.reserve.cursor.prod4,
    nibbles: s1.reserve.cursor.nibbles - s0.reserve.cursor.nibbles,
    bytesSent: bytesSent() - b0,
    rounds,
    made: {
      triples: s1.preprocessing.made.triples - s0.preprocessing.made.triples,
      lex4: s1.preprocessing.made.lex4 - s0.preprocessing.made.lex4,
      prod4: s1.preprocessing.made.prod4 - s0.preprocessing.made.prod4,
      bits: s1.preprocessing.made.bits - s0.preprocessing.made.bits,
    },
  };
}
