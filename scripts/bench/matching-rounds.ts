// Matching latency, comparisons and random bits per operation (prints figures; asserts nothing). Runs
// seeded streams through the MPC backend on the ideal-functionality test double with the engine's
// declared costs (ENGINE_ROUNDS: comparison 3 rounds, min 4, mul/open/randomMultiple 1; operations in
// flight overlap; random nibbles by costOf at each comparison's width, at the committee's
// COMPARISON_BITS), one op after another on one book, as the committee applies one symbol.
// Deterministic: counts, not timings. "bits" = random nibbles x 4, what bench:orders reports per
// order from node 1's nibble cursor; then the same bits by purpose: the reveal label of the bit each
// comparison gave (cross, rank, exhaustion pair), or 'unopened' (prefetched, pipelined, speculative
// comparisons that were settled and never opened).
// Configs with 'w16'/'w12' compare prices inside a window of 2^16 / 2^12 ticks (BookWidths.bandBits,
// docs/decisions/0024-price-window.md); ETH's committee setting is the first. 'levels' configs search
// by the books' known price-level ends (docs/decisions/0032-rank-by-price-levels.md; the committee's
// options since then: 'w16 k=3 first2 levels +prefetch +pipeline', one-op jobs '... +speculate',
// lean 'w16 k=2 levels'). The 20-instrument stream runs only the 'w16' configs, each book at its
// own committee widths. LW=head,tail,boundary,interior overrides the 'levels' weights (exploring).
// --opts '<json>' adds a config of those MatchOptions (at ETH's committee widths, the 'w16' setting) named 'opts'.
// ADR 0046's options (speculateFurther, lookaheadAfterCross, crossBet) are off unless a config sets them.
//   node --import tsx scripts/bench/matching-rounds.ts [--orders 3000] [--seeds 3] [--only <config>] [--stream <name>] [--rounds-by-width] [--round-steps] [--job-ops N] [--opts <json>]
import { Exchange, MpcBackend, CountingRecorder, generateStream, mapOp, type BookWidths, type ExchangeOptions, type Op, type StreamOptions } from '@tenebra/matching';
import type { Sec } from '@tenebra/mpc';
import { COMPARISON_BITS, INSTRUMENTS, bookWidthsOf, instrumentBySymbol, toUnits } from '@tenebra/config';
import { REFERENCE_PRICES } from '@tenebra/gateway';
import { ENGINE_ROUNDS, ENGINE_ROUNDS_BY_WIDTH, IdealJobContext } from '../../packages/matching/test/ideal-context';
import { parseFlags } from '../src/flags';

const flags = parseFlags(process.argv.slice(2), ['orders', 'seeds', 'only', 'stream', 'job-ops', 'opts'], ['rounds-by-width', 'round-steps']);
/** --job-ops N: queue N ops at a time, as a committee job does (they still run one after another per book; 'lookahead' needs a queue) */
const JOB_OPS = Number(flags.str.get('job-ops') ?? 1);
const ORDERS = Number(flags.str.get('orders') ?? 3000);
const SEEDS = Number(flags.str.get('seeds') ?? 3);
const ONLY = flags.str.get('only');
const ONLY_STREAM = flags.str.get('stream');
/** --rounds-by-width: a comparison takes the engine's rounds at its own width (4 nibbles: 2), not a fixed 3 */
const ROUNDS_BY_WIDTH = flags.bool.has('rounds-by-width');
/** --round-steps: after each config's line, its rounds per op by matching step (RoundSteps) */
const ROUND_STEPS = flags.bool.has('round-steps');

/**
 * bench:orders' sustained section on one instrument (ETH): `clients` traders in turn, trader c's i-th
 * order a GTC limit on side (i + c) even = buy, at mid + off for a buy and mid - off for a sell with
 * off = ((7i + 3c) mod 11) - 5, 40 + (13i mod 90) steps, each trader its own owner: about half cross.
 */
function sustainedStream(seed: number, orders: number, clients = 24): Op<bigint>[] {
  return multiStream(seed, orders, 1, clients, 's');
}

/**
 * The same load over `symbols` instruments as bench:orders --symbols spreads it: trader c's i-th order
 * on instrument (floor(i / 2) + c) mod symbols (0 = ETH as above; the others in catalogue order around
 * their listing reference price, sizes of 1-3 units worth about 150 USDC there).
 */
function multiStream(seed: number, orders: number, symbols: number, clients = 24, idPrefix = 'm'): Op<bigint>[] {
  const others = INSTRUMENTS.filter((i) => i.symbol !== 'ETH-USDC-PERP');
  const ops: Op<bigint>[] = [];
  const next = new Array<number>(clients).fill(0);
  let seq = 1n;
  // the seed rotates which trader starts, so seeds differ a little (acks return in varying order)
  for (let r = 0; ops.length < orders; r += 1) {
    for (let j = 0; j < clients && ops.length < orders; j += 1) {
      const c = (j + seed + r * (seed % 5)) % clients;
      const i = next[c]!++;
      const side = (i + c) % 2 === 0 ? 'buy' : 'sell';
      const off = BigInt(((i * 7 + c * 3) % 11) - 5);
      const k = (Math.floor(i / 2) + c) % symbols;
      let symbol = 'ETH-USDC-PERP';
      let mid = 300_000n;
      let qty = BigInt(40 + ((i * 13) % 90));
      if (k > 0) {
        const inst = others[k - 1]!;
        const ref = REFERENCE_PRICES[inst.base_asset]!;
        symbol = inst.symbol;
        mid = toUnits(ref, inst.tick_size)!;
        const step = Number(inst.step_size);
        const unit = Math.max(Math.ceil(Number(inst.min_qty) / step), Math.ceil(150 / (Number(ref) * step)));
        qty = BigInt(unit * (1 + (i % 3)));
      }
      ops.push({ kind: 'place', symbol, orderId: `${idPrefix}${seq}`, seq, nowNs: seq, side, type: 'limit', tif: 'GTC', price: side === 'buy' ? mid + off : mid - off, qty, owner: BigInt(c + 1) });
      seq += 1n;
    }
  }
  return ops;
}

const ETH = bookWidthsOf(instrumentBySymbol('ETH-USDC-PERP')!);
/** ETH's ceiling alone (the widths before the price window), and with windows of 2^16 and 2^12 ticks. */
const ETH_CEIL: BookWidths = { priceBits: ETH.priceBits, qtyBits: ETH.qtyBits };
const ETH16: BookWidths = { ...ETH_CEIL, bandBits: 16 };
const ETH12: BookWidths = { ...ETH_CEIL, bandBits: 12 };
const STREAMS: [string, (seed: number) => Op<bigint>[]][] = [
  ['sustained (bench:orders: ±5 ticks, 24 owners, ~half crossing; ETH)', (seed) => sustainedStream(seed, ORDERS)],
  ['sustained on 20 instruments (bench:orders --symbols 20; each book at its own committee widths)', (seed) => multiStream(seed, ORDERS, 20)],
  ...([
    ['limit (issue-3 mix, spread 30)', { symbols: 1 }],
    ['limit, tight (spread 6)', { symbols: 1, spreadTicks: 6 }],
    ['all kinds (owners, 20 accounts)', { symbols: 1, features: 'all' }],
  ] as [string, Omit<StreamOptions, 'seed' | 'orders'>][]).map(([n, so]): [string, (seed: number) => Op<bigint>[]] => [n, (seed) => generateStream({ ...so, seed, orders: ORDERS })]),
];

/** The widths each config runs at: ETH's (prices < 2^20 ticks, quantities < 2^23 steps) or none (every comparison at L). */
const W: ExchangeOptions = { bookWidths: (): BookWidths => ETH_CEIL };
const W16: ExchangeOptions = { bookWidths: (): BookWidths => ETH16 };
const W12: ExchangeOptions = { bookWidths: (): BookWidths => ETH12 };
const LW = process.env.LW?.split(',').map(Number);
const LWO = LW ? { levelWeights: { head: LW[0]!, tail: LW[1]!, boundary: LW[2]!, interior: LW[3]! } } : {};
// ADR 0046's options, off here unless a config sets them (the committee's since are set there)
const OFF46: ExchangeOptions = { speculateFurther: false, lookaheadAfterCross: false, crossBet: false };
const CONFIGS0: [string, ExchangeOptions][] = [
  ['committee, multi-op job, full width', { searchArity: 4, prefetchRank: true, pipelineCross: true }],
  ['committee, one-op job, full width', { searchArity: 4, prefetchRank: true, pipelineCross: true, speculate: true }],
  ['k=4 +prefetch +pipeline', { ...W, searchArity: 4, prefetchRank: true, pipelineCross: true }],
  ['k=4 +prefetch +speculate', { ...W, searchArity: 4, prefetchRank: true, pipelineCross: true, speculate: true }],
  ['k=4 head', { ...W, searchArity: 4 }],
  ['k=4 +pipeline', { ...W, searchArity: 4, pipelineCross: true }],
  ['k=4 gallop', { ...W, searchArity: 4, searchStart: 'gallop' }],
  ['k=3 gallop +pipeline', { ...W, searchArity: 3, searchStart: 'gallop', pipelineCross: true }],
  ['k=2 binary', { ...W, searchArity: 2 }],
  ['k=2 gallop', { ...W, searchArity: 2, searchStart: 'gallop' }],
  ['k=2 gallop +pipeline', { ...W, searchArity: 2, searchStart: 'gallop', pipelineCross: true }],
  ['k=2 gallop +speculate', { ...W, searchArity: 2, searchStart: 'gallop', speculate: true }],
  ['k=2 ends', { ...W, searchArity: 2, searchStart: 'ends' }],
  ['k=2 ends +pipeline', { ...W, searchArity: 2, searchStart: 'ends', pipelineCross: true }],
  ['k=3 ends', { ...W, searchArity: 3, searchStart: 'ends' }],
  ['k=3 ends +pipeline', { ...W, searchArity: 3, searchStart: 'ends', pipelineCross: true }],
  ['k=4 ends +prefetch +pipeline', { ...W, searchArity: 4, searchStart: 'ends', prefetchRank: true, pipelineCross: true }],
  ['k=3 ends +prefetch +pipeline', { ...W, searchArity: 3, searchStart: 'ends', prefetchRank: true, pipelineCross: true }],
  ['k=4 gallop +prefetch +pipeline', { ...W, searchArity: 4, searchStart: 'gallop', prefetchRank: true, pipelineCross: true }],
  ['k=3 gallop +prefetch +pipeline', { ...W, searchArity: 3, searchStart: 'gallop', prefetchRank: true, pipelineCross: true }],
  ['k=4 ends +prefetch', { ...W, searchArity: 4, searchStart: 'ends', prefetchRank: true }],
  ['k=2 ends +prefetch', { ...W, searchArity: 2, searchStart: 'ends', prefetchRank: true }],
  ['k=2 ends +prefetch +pipeline', { ...W, searchArity: 2, searchStart: 'ends', prefetchRank: true, pipelineCross: true }],
  ['w16 k=4 +prefetch +pipeline', { ...W16, searchArity: 4, prefetchRank: true, pipelineCross: true }],
  ['w16 k=4 +prefetch +speculate', { ...W16, searchArity: 4, prefetchRank: true, pipelineCross: true, speculate: true }],
  ['w16 k=4 ends +prefetch +pipeline', { ...W16, searchArity: 4, searchStart: 'ends', prefetchRank: true, pipelineCross: true }],
  ['w16 k=4 ends +prefetch +speculate', { ...W16, searchArity: 4, searchStart: 'ends', prefetchRank: true, pipelineCross: true, speculate: true }],
  ['w16 k=4 ends +prefetch', { ...W16, searchArity: 4, searchStart: 'ends', prefetchRank: true }],
  ['w16 k=3 ends +prefetch +pipeline', { ...W16, searchArity: 3, searchStart: 'ends', prefetchRank: true, pipelineCross: true }],
  ['w16 k=2 ends +prefetch +pipeline', { ...W16, searchArity: 2, searchStart: 'ends', prefetchRank: true, pipelineCross: true }],
  ['w16 k=2 gallop', { ...W16, searchArity: 2, searchStart: 'gallop' }],
  ['w16 k=2 ends', { ...W16, searchArity: 2, searchStart: 'ends' }],
  ['w16 k=4 levels +prefetch +pipeline', { ...W16, searchArity: 4, searchStart: 'levels', prefetchRank: true, pipelineCross: true }],
  ['w16 k=4 levels +prefetch +speculate', { ...W16, searchArity: 4, searchStart: 'levels', prefetchRank: true, pipelineCross: true, speculate: true }],
  ['w16 k=3 levels +prefetch +pipeline', { ...W16, searchArity: 3, searchStart: 'levels', prefetchRank: true, pipelineCross: true }],
  ['w16 k=2 levels +prefetch +pipeline', { ...W16, searchArity: 2, searchStart: 'levels', prefetchRank: true, pipelineCross: true }],
  ['w16 k=4 levels +pipeline', { ...W16, searchArity: 4, searchStart: 'levels', pipelineCross: true }],
  ['w16 k=3 levels +pipeline', { ...W16, searchArity: 3, searchStart: 'levels', pipelineCross: true }],
  ['w16 k=2 levels', { ...W16, searchArity: 2, searchStart: 'levels' }],
  ['w16 k=4 first2 levels +prefetch +pipeline', { ...W16, searchArity: 4, searchFirstArity: 2, searchStart: 'levels', prefetchRank: true, pipelineCross: true }],
  ['w16 k=3 first2 levels +prefetch +pipeline', { ...W16, searchArity: 3, searchFirstArity: 2, searchStart: 'levels', prefetchRank: true, pipelineCross: true }],
  ['w16 k=4 first3 levels +prefetch +pipeline', { ...W16, searchArity: 4, searchFirstArity: 3, searchStart: 'levels', prefetchRank: true, pipelineCross: true }],
  ['w16 k=2 levels +prefetch', { ...W16, searchArity: 2, searchStart: 'levels', prefetchRank: true }],
  ['w16 k=2 levels +pipeline', { ...W16, searchArity: 2, searchStart: 'levels', pipelineCross: true }],
  ['w16 k=2 levels +prefetch +speculate', { ...W16, searchArity: 2, searchStart: 'levels', prefetchRank: true, pipelineCross: true, speculate: true }],
  ['w16 k=3 first2 levels +prefetch +speculate', { ...W16, searchArity: 3, searchFirstArity: 2, searchStart: 'levels', prefetchRank: true, pipelineCross: true, speculate: true }],
  ['w16 k=3 levels +prefetch +speculate', { ...W16, searchArity: 3, searchStart: 'levels', prefetchRank: true, pipelineCross: true, speculate: true }],
  ['w16 k=2 first3 levels +prefetch +pipeline', { ...W16, searchArity: 2, searchFirstArity: 3, searchStart: 'levels', prefetchRank: true, pipelineCross: true }],
  ['w16 k=2 first3 levels +prefetch', { ...W16, searchArity: 2, searchFirstArity: 3, searchStart: 'levels', prefetchRank: true }],
  ['w16 k=3 first2 levels +prefetch +speculate +pipeline', { ...W16, searchArity: 3, searchFirstArity: 2, searchStart: 'levels', prefetchRank: true, pipelineCross: true, speculate: true, pipelineWithSpeculate: true }],
  ['w16 k=3 first2 levels +prefetch +pipeline, no lookahead', { ...W16, searchArity: 3, searchFirstArity: 2, searchStart: 'levels', prefetchRank: true, pipelineCross: true, lookahead: false }],
  ['w16 k=3 levels +prefetch, no lookahead', { ...W16, searchArity: 3, searchStart: 'levels', prefetchRank: true, lookahead: false }],
  ['w16 k=3 levels +prefetch', { ...W16, searchArity: 3, searchStart: 'levels', prefetchRank: true }],
  ['w16 k=2 first4 levels +prefetch', { ...W16, searchArity: 2, searchFirstArity: 4, searchStart: 'levels', prefetchRank: true }],
  ['w16 k=3 first4 levels +prefetch', { ...W16, searchArity: 3, searchFirstArity: 4, searchStart: 'levels', prefetchRank: true }],
  ['w16 k=2 first3 levels +prefetch +speculate', { ...W16, searchArity: 2, searchFirstArity: 3, searchStart: 'levels', prefetchRank: true, speculate: true }],
  ['w16 k=3 first2 levels +prefetch +pipeline unfused', { ...W16, searchArity: 3, searchFirstArity: 2, searchStart: 'levels', prefetchRank: true, pipelineCross: true, fuseRankOpen: false }],
  // ADR 0046 (the committee's latency options since: the last line)
  ['w16 k=3 levels +prefetch +further', { ...W16, searchArity: 3, searchStart: 'levels', prefetchRank: true, speculateFurther: true, lookaheadAfterCross: false }],
  ['w16 k=3 levels +prefetch +lac', { ...W16, searchArity: 3, searchStart: 'levels', prefetchRank: true, lookaheadAfterCross: true }],
  ['w16 k=3 levels +prefetch +lac +further', { ...W16, searchArity: 3, searchStart: 'levels', prefetchRank: true, speculateFurther: true, lookaheadAfterCross: true }],
  ['w16 k=3 levels +prefetch +bet', { ...W16, searchArity: 3, searchStart: 'levels', prefetchRank: true, crossBet: true }],
  ['w16 k=3 levels +prefetch +lac +further +bet', { ...W16, searchArity: 3, searchStart: 'levels', prefetchRank: true, speculateFurther: true, lookaheadAfterCross: true, crossBet: true }],
  ['w12 k=4 +prefetch +pipeline', { ...W12, searchArity: 4, prefetchRank: true, pipelineCross: true }],
  ['w12 k=4 ends +prefetch +pipeline', { ...W12, searchArity: 4, searchStart: 'ends', prefetchRank: true, pipelineCross: true }],
  ['w12 k=2 ends', { ...W12, searchArity: 2, searchStart: 'ends' }],
];

const OPTS = flags.str.get('opts');
if (OPTS !== undefined) CONFIGS0.push([`w16 opts ${OPTS}`, { ...W16, ...(JSON.parse(OPTS) as ExchangeOptions) }]);
const CONFIGS: [string, ExchangeOptions][] = CONFIGS0.map(([n, o]) => [n, { ...OFF46, ...(o.searchStart === 'levels' ? { ...o, ...LWO } : o) }]);
/** Comparison methods of Arith: their random nibbles are taken when issued (before the first await). */
const COMPARISONS = new Set(['lt', 'le', 'leWide', 'eq', 'ltU', 'leU', 'leD', 'min']);
/**
 * Wraps the backend so that each comparison's nibbles are booked to the label its bit is opened
 * under (revealOrder: the exhaustion pair), or stay 'unopened'. Same calls, same order: a view only.
 */
/**
 * Where an op's rounds go (its critical path): each opening is charged the rounds from the previous
 * opening's end (or the op's start) to its own end, the comparisons it waited for included; openings
 * that end in the same round share it (the first is charged). Steps: the first cross test, the next
 * makers' cross tests, the self-trade test, the exhaustion pair, the rank search's first step and its
 * further steps, other labels as they are, and 'settle' for rounds after the op's last opening
 * (comparisons issued ahead, settled unopened).
 */
class RoundSteps {
  readonly byStep = new Map<string, number>();
  private mark = 0;
  private seen = new Set<string>();
  constructor(private readonly ctx: IdealJobContext) {}
  startOp(): void {
    this.mark = this.ctx.stats.rounds;
    this.seen = new Set();
  }
  endOp(): void {
    this.charge('settle');
  }
  opened(label: string): void {
    const first = !this.seen.has(label);
    this.seen.add(label);
    const step = label === 'cross' ? (first ? 'cross, first' : 'cross, next') : label === 'insert-rank' ? (first ? 'rank, first step' : 'rank, further') : label;
    this.charge(step);
  }
  private charge(step: string): void {
    const now = this.ctx.stats.rounds;
    this.byStep.set(step, (this.byStep.get(step) ?? 0) + (now - this.mark));
    this.mark = now;
  }
}

function purposeTracked(inner: MpcBackend, ctx: IdealJobContext, byPurpose: Map<string, number>, steps?: RoundSteps): MpcBackend {
  const pending = new Map<Sec, number>();
  const book = (s: Sec, label: string): void => {
    const n = pending.get(s);
    if (n === undefined) return;
    pending.delete(s);
    byPurpose.set(label, (byPurpose.get(label) ?? 0) + n);
  };
  return new Proxy(inner, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv) as unknown;
      if (typeof v !== 'function') return v;
      const name = String(prop);
      if (COMPARISONS.has(name)) {
        return (...args: unknown[]) => {
          const before = ctx.stats.nibbles;
          const p = (v as (...a: unknown[]) => Promise<Sec>).apply(target, args);
          const n = ctx.stats.nibbles - before;
          return p.then((s) => { pending.set(s, (pending.get(s) ?? 0) + n); return s; });
        };
      }
      const step = <T>(label: string, p: Promise<T>): Promise<T> => p.then((v) => { steps?.opened(label); return v; });
      if (name === 'reveal') return (b: Sec, label: string, scope?: string) => { book(b, label); return step(label, target.reveal(b, label, scope)); };
      if (name === 'revealZero') return (z: Sec, label: string, scope?: string) => step(label, target.revealZero(z, label, scope));
      if (name === 'revealOrder') return (lt: Sec, z: Sec, le: string, ge: string, scope?: string) => { book(lt, 'exhaustion'); return step('exhaustion', target.revealOrder(lt, z, le, ge, scope)); };
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

interface Figures { rounds: number; cmps: number; nibbles: number; triples: number; reveals: Map<string, number>; ops: number; byPurpose: Map<string, number>; byStep: Map<string, number> }

async function run(ops: readonly Op<bigint>[], opts: ExchangeOptions): Promise<Figures> {
  const ctx = new IdealJobContext(COMPARISON_BITS, ROUNDS_BY_WIDTH ? ENGINE_ROUNDS_BY_WIDTH : ENGINE_ROUNDS);
  const rec = new CountingRecorder();
  const byPurpose = new Map<string, number>();
  const steps = new RoundSteps(ctx);
  const ex = new Exchange<Sec>(purposeTracked(new MpcBackend(ctx, { recorder: rec }), ctx, byPurpose, steps), opts);
  for (let i = 0; i < ops.length; i += JOB_OPS) {
    // with JOB_OPS > 1 a job's ops are queued together; RoundSteps then charges an op's settling to the next op's first opening
    steps.startOp();
    await Promise.all(ops.slice(i, i + JOB_OPS).map((op) => ex.apply(mapOp(op, (v) => ctx.fromShares([v])))));
    steps.endOp();
  }
  const booked = [...byPurpose.values()].reduce((a, b) => a + b, 0);
  byPurpose.set('unopened', ctx.stats.nibbles - booked);
  const o = ctx.stats.ops;
  const cmps = (o.le ?? 0) + (o.lt ?? 0) + (o.ltz ?? 0) + (o.eq ?? 0) + (o.min ?? 0);
  return { rounds: ctx.stats.rounds, cmps, nibbles: ctx.stats.nibbles, triples: ctx.stats.triples, reveals: new Map([...rec.counts].map(([k, v]) => [k, v.total])), ops: ops.length, byPurpose, byStep: steps.byStep };
}

/** Columns of the bits-by-purpose table: a reveal label (or 'exhaustion', 'unopened'), header. */
const PURPOSES: [string, string][] = [['cross', 'cross'], ['insert-rank', 'rank'], ['exhaustion', 'exh'], ['unopened', 'unopn'], ['other', 'other']];
const f2 = (x: number) => x.toFixed(2).padStart(6);
const f1 = (x: number) => x.toFixed(1).padStart(6);
for (const [name, make] of STREAMS) {
  if (ONLY_STREAM && !name.includes(ONLY_STREAM)) continue;
  const streams = Array.from({ length: SEEDS }, (_, i) => make(100 + i));
  // the 20-instrument stream: every book at its committee widths (price window, ceiling, max_qty), so
  // only the window configs ('w16': ETH's setting, each other book its own) apply to it
  const multi = name.includes('20 instruments');
  const committeeWidths: ExchangeOptions = { bookWidths: (sym) => { const i = instrumentBySymbol(sym); return i ? bookWidthsOf(i) : undefined; } };
  console.log(`\n${name}: ${SEEDS} seeds × ${ORDERS} ops, one book, sequential; rounds ${ROUNDS_BY_WIDTH ? "at each comparison's width" : "at 3 per comparison"}; per op (comparisons at ${COMPARISON_BITS} bits unless the config has widths: prices ${ETH.priceBits}, quantities ${ETH.qtyBits}):`);
  console.log(`${'config'.padEnd(38)} ${'bits'.padStart(6)} ${'rounds'.padStart(6)} ${'cmps'.padStart(6)} ${'triples'.padStart(7)} ${'cross'.padStart(6)} ${'rank'.padStart(6)} ${'self'.padStart(6)} ${'exh'.padStart(6)} | bits by purpose: ${PURPOSES.map(([, h]) => h.padStart(6)).join(' ')}`);
  for (let [cname, opts] of CONFIGS) {
    if (ONLY && !ONLY.split(',').some((o) => cname === o.replace(/^=/, '') || (!o.startsWith('=') && cname.includes(o)))) continue;
    if (multi && !cname.startsWith('w16')) continue;
    if (multi) opts = { ...opts, ...committeeWidths };
    let rounds = 0, cmps = 0, nibbles = 0, triples = 0, n = 0;
    const rv = new Map<string, number>();
    const bp = new Map<string, number>();
    const bs = new Map<string, number>();
    for (const ops of streams) {
      const f = await run(ops, opts);
      for (const [k, v] of f.byStep) bs.set(k, (bs.get(k) ?? 0) + v);
      rounds += f.rounds; cmps += f.cmps; nibbles += f.nibbles; triples += f.triples; n += f.ops;
      for (const [k, v] of f.reveals) rv.set(k, (rv.get(k) ?? 0) + v);
      for (const [k, v] of f.byPurpose) bp.set(k, (bp.get(k) ?? 0) + v);
    }
    const others = [...bp].filter(([k]) => !PURPOSES.some(([p]) => p === k)).reduce((a, [, v]) => a + v, 0);
    const purpose = PURPOSES.map(([p]) => f1((4 * (p === 'other' ? others : bp.get(p) ?? 0)) / n)).join(' ');
    const r = (l: string) => f2((rv.get(l) ?? 0) / n);
    console.log(`${cname.padEnd(38)} ${f1((4 * nibbles) / n)} ${f2(rounds / n)} ${f2(cmps / n)} ${f2(triples / n).padStart(7)} ${r('cross')} ${r('insert-rank')} ${r('self-trade')} ${r('maker-exhausted')} |                  ${purpose}`);
    if (ROUND_STEPS) {
      const order = ['cross, first', 'self-trade', 'exhaustion', 'cross, next', 'rank, first step', 'rank, further', 'settle'];
      const keys = [...order.filter((k) => bs.has(k)), ...[...bs.keys()].filter((k) => !order.includes(k)).sort()];
      console.log(`    rounds per op by step: ${keys.map((k) => `${k} ${((bs.get(k) ?? 0) / n).toFixed(2)}`).join(', ')}`);
    }
  }
}
