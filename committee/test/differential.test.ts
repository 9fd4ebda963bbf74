// The core differential test: one order stream through the plaintext reference and through five
// MPC parties (the committee's own batch applier, on the seeded simulated network) gives identical
// outcomes, identical fills (reconstructed by the gateway from sealed output shares) and identical
// final books. Ops reach the applier in the gateway's layout (public fields + secret vector).
// Also: a one-op job speculates (fewer rounds), a larger one does not.
import { describe, it, expect } from 'vitest';
import { pino } from 'pino';
import { SimNetwork } from '@tenebra/transport';
import { createParty, shareSecret, reconstruct, decodeFieldVector, F, type Party, type JobContext } from '@tenebra/mpc';
import {
  Exchange, PlaintextBackend, CountingRecorder, generateStream, loadBook, Book, type Op, type OpResult,
} from '@tenebra/matching';
import { COMPARISON_BITS, INSTRUMENTS } from '@tenebra/config';
import { generateX25519, PairBox } from '@tenebra/seal';
import { JOB_END_KIND, resultAad, type ResultFrame } from '@tenebra/wire';
import { encodeOp } from '../src/op-encoding';
import { BatchApplier, realOps, COMMITTEE_MATCH_OPTIONS, committeeBookWidths, matchOptionsOf, type BitBudget, type IncomingOp, type MatchPlan, toWireOutcome } from '../src/apply';

const N = 5;
const T = 2;
const SYMBOLS = ['BTC-USDC-PERP', 'ETH-USDC-PERP', 'SOL-USDC-PERP'];
const silent = pino({ level: 'silent' });

/** Splits a stream into batches of 1..maxBatch ops (deterministic from the seed). */
function batches<X>(ops: X[], seed: number, maxBatch: number): X[][] {
  const out: X[][] = [];
  let s = seed >>> 0;
  for (let i = 0; i < ops.length;) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const size = 1 + (s % maxBatch);
    out.push(ops.slice(i, i + size));
    i += size;
  }
  return out;
}

/** What node `party` would receive for op: public fields and its own shares. */
function incoming(op: Op<bigint>, pub: Record<string, unknown>, shares: bigint[][] | null, party: number): IncomingOp {
  return {
    seq: op.seq!, tsNs: op.nowNs ?? 0n, kind: op.kind, symbol: op.kind === 'expire' ? (op.symbol ?? '') : op.symbol, batchEnd: false,
    pub, shares: shares === null ? [] : shares[party - 1]!,
  };
}

/** A small modelled reserve, so a few hundred ops run through every plan (lean, latency, speculate). */
const SMALL_BUDGET: BitBudget = { capBits: 6_000, bitsPerSecond: 12_000, bitsPerRound: 4, leanBelowBits: 3_000 };

async function runDifferential(seed: number, orders: number, mode: 'dealer' | 'committee', features: 'limit' | 'all' = 'limit', given?: Op<bigint>[]): Promise<Set<MatchPlan>> {
  // Even seqs: every other job ends with a sequencer job-end record at an odd one, as under 'progress'
  // job boundaries in a backlog (docs/decisions/0008-job-boundaries.md).
  const stream = (given ?? generateStream({ seed, orders, symbols: SYMBOLS, features, accounts: 12 })).map((op) => ({ ...op, seq: op.seq! * 2n }));
  // Jobs of 1..24 ops (deterministic from the seed), small and large ones.
  const jobs = batches(stream.map((op, i) => ({ op, i })), seed, given ? 3 : 24);
  if (!given) expect(jobs.some((j) => j.length >= 16) && jobs.some((j) => j.length < 16)).toBe(true);
  // Reference, job by job with the options the committee chose for that job (its plan, from the
  // modelled reserve), at the committee's widths, so the reveals (counted per label) must match too.
  const refReveals = new CountingRecorder();
  const ref = new Exchange<bigint>(new PlaintextBackend({ recorder: refReveals, compareBits: COMPARISON_BITS }), { symbols: INSTRUMENTS.map((i) => i.symbol), bookWidths: committeeBookWidths, ...COMMITTEE_MATCH_OPTIONS });
  const refResults: OpResult<bigint>[] = [];
  const plans = new Set<MatchPlan>();

  // Committee on the simulated network.
  const net = new SimNetwork({ n: N, seed, link: { latencyMs: 1, jitterMs: 1 } });
  const gw = generateX25519();
  const sealKeys = Array.from({ length: N }, () => generateX25519());
  const parties: Party[] = [];
  const appliers: BatchApplier[] = [];
  for (let i = 1; i <= N; i++) {
    parties.push(createParty({ n: N, t: T, L: COMPARISON_BITS, transport: net.transport(i), preprocessing: { mode, targetTriples: 512, targetBits: 1024 } }));
    appliers.push(new BatchApplier({ index: i, n: N, sealKey: sealKeys[i - 1]!, gatewayPublicKey: gw.publicKey, log: silent, budget: SMALL_BUDGET }));
  }
  await net.settle(Promise.all(parties.map((p) => p.start())));

  const ops = stream.map((op) => {
    const { pub, vector } = encodeOp(op);
    return { op, pub, shares: vector.length ? shareSecret(vector, N, T) : null };
  });
  let k = 0;
  for (const [jobIndex, batch] of jobs.map((j) => j.map(({ i }) => ops[i]!)).entries()) {
    const jobEnd = jobIndex % 2 === 1 ? batch[batch.length - 1]!.op.seq! + 1n : null;
    const last = jobEnd ?? batch[batch.length - 1]!.op.seq!;
    const jobId = `batch:${batch[0]!.op.seq}-${last}:0`;
    const frames: ResultFrame[][] = await net.settle(Promise.all(parties.map((p, i) =>
      p.runJob(jobId, (ctx: JobContext) => appliers[i]!.apply(ctx, [
        ...batch.map((b) => incoming(b.op, b.pub, b.shares, i + 1)),
        ...(jobEnd === null ? [] : [{ seq: jobEnd, tsNs: 0n, kind: JOB_END_KIND, symbol: '', pub: {}, shares: [], batchEnd: true }]),
      ], last)))));
    // a job-end record gets a result of its own (the gateway's cursor passes it) and touches no book
    if (jobEnd !== null) for (const f of frames) expect(f[batch.length]).toMatchObject({ seq: String(jobEnd), pub: { kind: JOB_END_KIND }, sealed: '' });
    const plan = appliers[0]!.lastPlan!;
    for (const a of appliers) expect(a.lastPlan).toEqual(plan); // decided identically everywhere
    plans.add(plan.plan);
    for (const b of batch) refResults.push(await ref.apply(b.op, undefined, matchOptionsOf(plan.plan)));
    for (let j = 0; j < batch.length; j++, k++) {
      const want = refResults[k]!;
      for (const f of frames) expect(f[j]!.pub).toEqual(toWireOutcome(want.outcome));
      // The gateway's view: unseal any t+1 nodes' output shares and reconstruct.
      const from = [2, 4, 5];
      const vecs = from.map((node) => {
        const f = frames[node - 1]![j]!;
        return f.sealed === '' ? [] : decodeFieldVector(new PairBox(gw.privateKey, sealKeys[node - 1]!.publicKey).open(Buffer.from(f.sealed, 'base64'), resultAad(f.seq, node)));
      });
      const got = vecs[0]!.length === 0 ? [] : reconstruct(from, vecs, T);
      expect(got).toEqual(want.outputs);
    }
  }

  // A job of a job-end record alone (the node cut 256 ops just before it) runs as an empty job.
  const lonely = stream[stream.length - 1]!.seq! + 1n;
  const lonelyFrames = await net.settle(Promise.all(parties.map((p, i) => p.runJob(`batch:${lonely}-${lonely}:0`, (ctx: JobContext) =>
    appliers[i]!.apply(ctx, [{ seq: lonely, tsNs: 0n, kind: JOB_END_KIND, symbol: '', pub: {}, shares: [], batchEnd: true }], lonely)))));
  for (const f of lonelyFrames) expect(f).toEqual([{ t: 'result', node: f[0]!.node, seq: String(lonely), pub: { kind: JOB_END_KIND }, sealed: '', job: f[0]!.job }]);
  // ...and counts as no op (the ops metric and the capacity model count realOps)
  expect(realOps([{ seq: lonely, tsNs: 0n, kind: JOB_END_KIND, symbol: '', pub: {}, shares: [], batchEnd: true }])).toBe(0);
  expect(realOps([...stream.slice(0, 3).map((o) => ({ seq: o.seq!, tsNs: 0n, kind: 'place', symbol: 'X', pub: {}, shares: [], batchEnd: false })),
    { seq: lonely, tsNs: 0n, kind: JOB_END_KIND, symbol: '', pub: {}, shares: [], batchEnd: true }])).toBe(3);

  // Every node opened the same values the plaintext reference revealed (counted per label and per value).
  for (const a of appliers) expect(a.reveals.counts).toEqual(refReveals.counts);

  // Final books: open every book's secrets once and compare with the reference.
  const opened = await net.settle(Promise.all(parties.map((p) => p.runJob('final-books', async (ctx) => {
    const out: Record<string, { pub: unknown; secrets: bigint[] }> = {};
    for (const symbol of SYMBOLS) {
      const book = loadBook(ctx, symbol);
      if (!book) continue;
      const snap = book.toSnapshot();
      out[symbol] = { pub: snap.pub, secrets: snap.secrets.length ? await ctx.open(ctx.concat(snap.secrets)) : [] };
    }
    return out;
  }))));
  for (const symbol of SYMBOLS) {
    const want = ref.book(symbol)!.toSnapshot();
    const got = opened[0]![symbol];
    if (!got) {
      expect(want.secrets).toEqual([]);
      continue;
    }
    expect(got.pub).toEqual(want.pub);
    expect(got.secrets).toEqual(want.secrets);
    expect(() => Book.fromSnapshot(got.pub as never, got.secrets)).not.toThrow();
  }
  await Promise.all(parties.map((p) => p.stop()));
  return plans;
}

describe('plaintext reference and MPC committee give identical results', () => {
  for (const seed of [11, 12, 13, 14]) {
    it(`seed ${seed}: 400 ops over 3 symbols, committee-made preprocessing`, async () => {
      const plans = await runDifferential(seed, 400, 'committee');
      // the (small) modelled reserve runs low part-way: the committee switches to the lean options
      // and back, identically at every node
      expect(plans.has('lean')).toBe(true);
      expect(plans.has('latency')).toBe(true);
    }, 120_000);
  }
  it('seed 21: 150 ops with dealer preprocessing (same online protocol)', async () => {
    await runDifferential(21, 150, 'dealer');
  }, 180_000);
  // Every order type, time in force, aon, min_fill_size, self-trade prevention, modify and expire.
  // (seed 31: 22 IOC remainders, 9 FOK not filled, 4 self-trade cancels, 6 inline GTT expiries;
  // seeds 32/33 add filled markets, exhausted reduces, replaces that trade, expire ops that expire.)
  it('seed 31: 150 ops of every kind, committee-made preprocessing', async () => {
    await runDifferential(31, 150, 'committee', 'all');
  }, 180_000);
  for (const seed of [32, 33]) {
    it(`seed ${seed}: 200 ops of every kind with dealer preprocessing`, async () => {
      await runDifferential(seed, 200, 'dealer', 'all');
    }, 180_000);
  }
});

describe('values at the edges of the committee widths (price ceiling and window, max_qty), equal owners, zero remainders', () => {
  it('ETH (prices < 2^20 within a 2^16 window, quantities < 2^23) and BTC (prices < 2^24 within 2^20): identical to the reference', async () => {
    const ops: Op<bigint>[] = [];
    let seq = 0n;
    const place = (symbol: string, side: 'buy' | 'sell', price: bigint, qty: bigint, owner: bigint, tif: 'GTC' | 'IOC' = 'GTC'): void => {
      seq += 1n;
      ops.push({ kind: 'place', symbol, orderId: `x${seq}`, seq, nowNs: seq * 1_000_000n, side, type: 'limit', tif, price, qty, owner });
    };
    const ETH = 'ETH-USDC-PERP';
    const BTC = 'BTC-USDC-PERP';
    const PE = (1n << 20n) - 1n; // ETH's price ceiling in ticks
    const LE = PE - ((1n << 16n) - 1n); // the lowest price beside it in ETH's window (docs/decisions/0024-price-window.md)
    const QE = 5_000_000n; // ETH's max_qty in steps (< 2^23)
    const PB = (1n << 24n) - 1n;
    const LB = PB - ((1n << 20n) - 1n);
    place(ETH, 'sell', PE, QE, 1n); // the highest ask, the largest size
    place(ETH, 'sell', LE, 1n, 2n); // the lowest ask the window allows, the smallest size
    place(ETH, 'buy', PE, QE, 3n); // fills 1 at LE and QE - 1 at PE (maker exhausted twice), 1 rests at PE
    place(ETH, 'sell', PE, 1n, 3n); // its own resting bid: self-trade prevention, then rests
    place(ETH, 'buy', LE + 6n, 9n, 4n);
    place(ETH, 'sell', LE + 6n, 9n, 5n, 'IOC'); // equal quantities: both exhausted, zero remainder
    place(ETH, 'buy', PE, QE, 6n, 'IOC'); // takes the ask at PE: taker not exhausted, nothing left
    place(BTC, 'sell', PB, 500_000n, 7n);
    place(BTC, 'buy', PB, 500_000n, 8n, 'IOC'); // exact fill at BTC's ceiling
    place(BTC, 'buy', LB, 1n, 9n);
    place(BTC, 'sell', LB, 1n, 9n, 'IOC'); // own bid: self-trade at the lowest price of the window
    await runDifferential(41, ops.length, 'dealer', 'limit', ops);
  }, 120_000);
});

describe("the 'levels' rank search (ADR 0032) on shares: known level ends at the window's edges", () => {
  it('levels at both edges of the window, equal prices behind their level, a price inside a run the marks did not know, cancels that move a mark, equal owners, zero remainders: identical to the reference', async () => {
    const ops: Op<bigint>[] = [];
    let seq = 0n;
    const ETH = 'ETH-USDC-PERP';
    const place = (side: 'buy' | 'sell', price: bigint, qty: bigint, owner: bigint, tif: 'GTC' | 'IOC' = 'GTC'): string => {
      seq += 1n;
      ops.push({ kind: 'place', symbol: ETH, orderId: `v${seq}`, seq, nowNs: seq * 1_000_000n, side, type: 'limit', tif, price, qty, owner });
      return `v${seq}`;
    };
    const cancel = (orderId: string): void => {
      seq += 1n;
      ops.push({ kind: 'cancel', symbol: ETH, orderId, seq, nowNs: seq * 1_000_000n });
    };
    const HI = (1n << 20n) - 1n; // ETH's ceiling
    const LO = HI - ((1n << 16n) - 1n); // the lowest price beside it in its window
    // bids in three levels: the window's top, the middle, its bottom (each a run of equal prices)
    for (const p of [HI - 10n, HI - 10n, LO + 5n, LO + 5n, LO, LO, HI - 10n, LO]) place('buy', p, 3n, 1n); // the middle level's end is not known
    place('buy', LO + 2n, 2n, 2n); // inside the run LO + 5 .. LO that the marks see as one level
    place('buy', LO, 1n, 2n); // behind everything
    const mid = place('buy', LO + 5n, 4n, 3n); // behind the middle level
    place('buy', HI - 9n, 1n, 4n); // a new head, one tick up
    cancel(mid); // a marked order leaves: its mark passes to the order ahead
    place('buy', LO + 5n, 1n, 5n); // behind the middle level again, after the cancel
    place('sell', HI, 5n, 6n); // asks at the window's top: compared with bids at its bottom, the full width
    place('sell', HI, 5n, 7n);
    place('sell', HI - 9n, 1n, 4n, 'IOC'); // the head bid is its own: self-trade, nothing filled
    place('sell', HI - 10n, 9n, 8n, 'IOC'); // exactly the three bids at HI - 10: zero remainders
    place('buy', HI - 1n, 1n, 9n); // between the asks and the bids: the head
    place('buy', LO + 3n, 1n, 9n); // between known levels again
    await runDifferential(43, ops.length, 'dealer', 'limit', ops);
    // the committee's options search by the marks: fewer insert-rank bits than 'ends' on the same stream
    const rankBits = async (opts: object): Promise<number> => {
      const rec = new CountingRecorder();
      const ex = new Exchange<bigint>(new PlaintextBackend({ recorder: rec, compareBits: COMPARISON_BITS }), { symbols: SYMBOLS, bookWidths: committeeBookWidths, ...opts });
      for (const op of ops) await ex.apply(op);
      return rec.counts.get('insert-rank')?.total ?? 0;
    };
    expect(await rankBits(COMMITTEE_MATCH_OPTIONS)).toBeLessThan(await rankBits({ searchArity: 4, searchStart: 'ends', prefetchRank: true, pipelineCross: true }));
  }, 120_000);
});

describe('min_fill_size per execution on shares (issue 26)', () => {
  it('makers below the minimum passed over in place, a remainder below it cancelled, self-trades between: identical to the reference', async () => {
    const ops: Op<bigint>[] = [];
    let seq = 0n;
    const place = (side: 'buy' | 'sell', price: bigint, qty: bigint, owner: bigint, extra: Partial<Op<bigint>> = {}): void => {
      seq += 1n;
      ops.push({ kind: 'place', symbol: 'SOL-USDC-PERP', orderId: `m${seq}`, seq, nowNs: seq * 1_000_000n, side, type: 'limit', tif: 'GTC', price, qty, owner, ...extra } as Op<bigint>);
    };
    place('sell', 15_000n, 2n, 1n); // below the minimum: skipped
    place('sell', 15_001n, 5n, 2n); // filled whole
    place('sell', 15_001n, 4n, 3n); // the taker's own: self-trade prevention
    place('sell', 15_001n, 1n, 4n); // skipped
    place('sell', 15_002n, 4n, 5n); // filled whole, remainder 1 < 3: stop
    place('sell', 15_003n, 9n, 6n); // never reached
    place('buy', 15_003n, 10n, 3n, { tif: 'IOC', minFill: 3n });
    place('buy', 15_001n, 3n, 7n, { tif: 'IOC' }); // a plain taker finds the skipped makers first
    place('buy', 15_003n, 20n, 8n, { tif: 'IOC', minFill: 10n }); // nothing reaches 10: cancelled unfilled
    place('buy', 15_003n, 9n, 8n, { type: 'market', tif: 'IOC', price: null, minFill: 9n }); // uncapped market, exact
    place('buy', 15_003n, 4n, 8n, { tif: 'FOK', minFill: 2n }); // refused: MIN_FILL_AON
    await runDifferential(51, ops.length, 'dealer', 'limit', ops);
    // ... and the stream does what it says (plaintext): the skips, the stop, the refusal
    const ex = new Exchange<bigint>(new PlaintextBackend({ compareBits: COMPARISON_BITS }), { symbols: SYMBOLS });
    const out: unknown[] = [];
    for (const op of ops) out.push((await ex.apply(op)).outcome as unknown);
    expect(out[6]).toMatchObject({ fills: ['m2', 'm5'], selfTradeCancelled: ['m3'], cancelReason: 'IOC_REMAINDER' });
    expect(out[7]).toMatchObject({ fills: ['m1', 'm4'], takerFilled: true });
    expect(out[8]).toMatchObject({ fills: [], cancelReason: 'IOC_REMAINDER' });
    expect(out[9]).toMatchObject({ fills: ['m6'], takerFilled: true });
    expect(out[10]).toMatchObject({ reject: { code: 'MIN_FILL_AON' } });
  }, 120_000);
});

describe('matching options by job size', () => {
  it('a one-op job speculates (a crossing IOC fills in 5 rounds); in a larger job the same fill takes 7 (9 before self-trade became a zero test, 8 before the price window), 5 when it bets on a cross', async () => {
    const net = new SimNetwork({ n: N, seed: 5, link: { latencyMs: 1 } });
    const gw = generateX25519();
    const rounds = new Map<string, number>();
    const parties = Array.from({ length: N }, (_, k) => createParty({
      n: N, t: T, L: COMPARISON_BITS, transport: net.transport(k + 1),
      preprocessing: { mode: 'dealer', targetTriples: 256, targetBits: 1024 },
      log: k === 0 ? (e) => { const ev = e as { ev: string; job: string; rounds: number }; if (ev.ev === 'job-end') rounds.set(ev.job, ev.rounds); } : undefined,
    }));
    const appliers = parties.map((_, k) => new BatchApplier({ index: k + 1, n: N, sealKey: generateX25519(), gatewayPublicKey: gw.publicKey, log: silent }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    let seq = 0n;
    const place = (side: 'buy' | 'sell', tif: 'GTC' | 'IOC'): Op<bigint> =>
      ({ kind: 'place', symbol: 'ETH-USDC-PERP', orderId: `o${++seq}`, seq, nowNs: 0n, side, type: 'limit', tif, price: 3000n, qty: 5n, owner: seq });
    const cancelUnknown = (): Op<bigint> => ({ kind: 'cancel', symbol: 'BTC-USDC-PERP', orderId: 'none', seq: ++seq, nowNs: 0n });
    const run = async (ops: Op<bigint>[]): Promise<string> => {
      const ins = ops.map((op) => { const { pub, vector } = encodeOp(op); return { op, pub, shares: vector.length ? shareSecret(vector, N, T) : null }; });
      const id = `batch:${ops[0]!.seq}-${ops[ops.length - 1]!.seq}:0`;
      const frames = await net.settle(Promise.all(parties.map((p, i) => p.runJob(id, (ctx) => appliers[i]!.apply(ctx, ins.map((b) => incoming(b.op, b.pub, b.shares, i + 1)), ops[ops.length - 1]!.seq!)))));
      expect(frames[0]!.length).toBe(ops.length);
      return id;
    };
    await run([place('sell', 'GTC')]);
    const alone = await run([place('buy', 'IOC')]);
    await run([place('sell', 'GTC')]);
    const withOther = await run([place('buy', 'IOC'), cancelUnknown()]);
    // a self-trade on the last maker ends the op while its exhaustion test was still in flight:
    // the job must not return before it (the engine fails a job that leaves operations pending)
    const own = (side: 'buy' | 'sell', tif: 'GTC' | 'IOC'): Op<bigint> =>
      ({ kind: 'place', symbol: 'ETH-USDC-PERP', orderId: `o${++seq}`, seq, nowNs: 0n, side, type: 'limit', tif, price: 3000n, qty: 5n, owner: 77n });
    await run([own('sell', 'GTC')]);
    await run([own('buy', 'IOC')]); // speculating (one op)
    await run([own('sell', 'GTC')]);
    await run([own('buy', 'IOC'), cancelUnknown()]); // not speculating
    // ETH's prices are compared in its 2^16 window: 4 nibbles, one lex4 level, 2 rounds (5 nibbles at
    // the 2^20 ceiling took 3); the exhaustion comparison at 23 bits still takes 3
    expect(rounds.get(alone)).toBe(5);
    // cross (2) and its opening; then the owners' zero mask (1) and its opening beside the exhaustion
    // comparison (3), and the exhaustion pair's opening: 3 + 3 + 1
    // ...but that ask is the best price the placement before it just set, so the IOC bets on a cross
    // (ADR 0046's crossBet): its exhaustion test comes with its cross test, as in a one-op job
    expect(rounds.get(withOther)).toBe(5);
    // two asks: the IOC meets the older one, not the last placement's: no bet, 3 + 3 + 1
    await run([place('sell', 'GTC')]);
    await run([place('sell', 'GTC')]);
    const noBet = await run([place('buy', 'IOC'), cancelUnknown()]);
    expect(rounds.get(noBet)).toBe(7);
    await Promise.all(parties.map((p) => p.stop()));
  });
});
