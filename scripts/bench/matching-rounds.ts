// Matching latency and comparison counts per operation (prints figures; asserts nothing). Runs seeded
// streams (generateStream) through the MPC backend on the ideal-functionality test double with the
// engine's declared round costs (ENGINE_ROUNDS: comparison 3 rounds, min 4, mul/open 1; operations in flight overlap), one op
// after another on one book, as the committee applies one symbol. Deterministic: counts, not timings.
//   node --import tsx scripts/bench/matching-rounds.ts [--orders 3000] [--seeds 3]
import { Exchange, MpcBackend, CountingRecorder, generateStream, mapOp, type ExchangeOptions, type Op, type StreamOptions } from '@tenebra/matching';
import type { Sec } from '@tenebra/mpc';
import { ENGINE_ROUNDS, IdealJobContext } from '../../packages/matching/test/ideal-context';
import { parseFlags } from '../src/flags';

const flags = parseFlags(process.argv.slice(2), ['orders', 'seeds', 'only'], []);
const ORDERS = Number(flags.str.get('orders') ?? 3000);
const SEEDS = Number(flags.str.get('seeds') ?? 3);
const ONLY = flags.str.get('only');

const STREAMS: [string, Omit<StreamOptions, 'seed' | 'orders'>][] = [
  ['limit (issue-3 mix, spread 30)', { symbols: 1 }],
  ['limit, tight (spread 6)', { symbols: 1, spreadTicks: 6 }],
  ['all kinds (owners, 20 accounts)', { symbols: 1, features: 'all' }],
];

const CONFIGS: [string, ExchangeOptions][] = [
  ['binary (before)', { searchArity: 2 }],
  ['k=3 even', { searchArity: 3, searchStart: 'even' }],
  ['k=4 even', { searchArity: 4, searchStart: 'even' }],
  ['k=8 even', { searchArity: 8, searchStart: 'even' }],
  ['k=3 head', { searchArity: 3, searchStart: 'head' }],
  ['k=4 head (default)', { searchArity: 4, searchStart: 'head' }],
  ['k=8 head', { searchArity: 8, searchStart: 'head' }],
  ['k=4 head +prefetch', { searchArity: 4, prefetchRank: true }],
  ['k=4 head +pipeline', { searchArity: 4, pipelineCross: true }],
  ['k=3 head +prefetch +pipeline', { searchArity: 3, searchStart: 'head', prefetchRank: true, pipelineCross: true }],
  ['k=4 head +prefetch +pipeline', { searchArity: 4, searchStart: 'head', prefetchRank: true, pipelineCross: true }], // committee
  ['k=5 head +prefetch +pipeline', { searchArity: 5, searchStart: 'head', prefetchRank: true, pipelineCross: true }],
  ['k=2 +speculate', { searchArity: 2, speculate: true }],
  ['k=4 head +prefetch +speculate', { searchArity: 4, prefetchRank: true, speculate: true }],
];

interface Figures { rounds: number; cmps: number; reveals: Map<string, number>; ops: number }

async function run(ops: readonly Op<bigint>[], opts: ExchangeOptions): Promise<Figures> {
  const ctx = new IdealJobContext(48, ENGINE_ROUNDS);
  const rec = new CountingRecorder();
  const ex = new Exchange<Sec>(new MpcBackend(ctx, { recorder: rec }), opts);
  for (const op of ops) await ex.apply(mapOp(op, (v) => ctx.fromShares([v])));
  const o = ctx.stats.ops;
  const cmps = (o.le ?? 0) + (o.lt ?? 0) + (o.eq ?? 0) + (o.min ?? 0);
  return { rounds: ctx.stats.rounds, cmps, reveals: new Map([...rec.counts].map(([k, v]) => [k, v.total])), ops: ops.length };
}

const f2 = (x: number) => x.toFixed(2).padStart(6);
for (const [name, so] of STREAMS) {
  const streams = Array.from({ length: SEEDS }, (_, i) => generateStream({ ...so, seed: 100 + i, orders: ORDERS }));
  console.log(`\n${name}: ${SEEDS} seeds × ${ORDERS} ops, one book, sequential; per op:`);
  console.log(`${'config'.padEnd(28)} ${'rounds'.padStart(6)} ${'≈cmp+open'.padStart(9)} ${'cmps'.padStart(6)} ${'cross'.padStart(6)} ${'rank'.padStart(6)} ${'self'.padStart(6)} ${'exh'.padStart(6)}`);
  for (const [cname, opts] of CONFIGS) {
    if (ONLY && !cname.includes(ONLY)) continue;
    let rounds = 0, cmps = 0, n = 0;
    const rv = new Map<string, number>();
    for (const ops of streams) {
      const f = await run(ops, opts);
      rounds += f.rounds; cmps += f.cmps; n += f.ops;
      for (const [k, v] of f.reveals) rv.set(k, (rv.get(k) ?? 0) + v);
    }
    const r = (l: string) => f2((rv.get(l) ?? 0) / n);
    console.log(`${cname.padEnd(28)} ${f2(rounds / n)} ${f2(rounds / n / (ENGINE_ROUNDS.lt! + 1)).padStart(9)} ${f2(cmps / n)} ${r('cross')} ${r('insert-rank')} ${r('self-trade')} ${r('maker-exhausted')}`);
  }
}
