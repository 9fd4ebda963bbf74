// One seeded run of the campaign (docs/reliability.md, "Seeded simulation"): five committee nodes
// (sim-node.ts), the sequencer's ordering and journal (modelled here: gapless seqs, group commit,
// ack once journaled, a feed per node from any seq) and the gateway's collection of results, on the
// simulated network's virtual clock. The seed draws the order stream, its arrival times and one
// fault schedule of the run's kind; after the schedule heals the run checks safety, liveness and
// (by the caller, running the seed twice) replay. Nothing here reads wall time or Math.random.
import { createHash } from 'node:crypto';
import { Prng, SimNetwork } from '@tenebra/transport';
import { shareSecret, reconstruct, decodeFieldVector, F, type ShareFanout } from '@tenebra/mpc';
import { Exchange, PlaintextBackend, generateStream, loadBook, type Op, type OpResult } from '@tenebra/matching';
import { COMPARISON_BITS, DEFAULT_JOB_BOUNDARIES, INSTRUMENTS } from '@tenebra/config';
import { generateX25519, PairBox } from '@tenebra/seal';
import { JOB_END_KIND, resultAad, type ResultFrame } from '@tenebra/wire';
import { JobBoundaries, type JobBoundaryPolicy } from '../../sequencer-enclave/src/job-boundaries';
import { COMMITTEE_MATCH_OPTIONS, committeeBookWidths, toWireOutcome, type IncomingOp } from '../../committee/src/apply';
import { encodeOp } from '../../committee/src/op-encoding';
import { SimNode, type SimStore } from './sim-node';

/** mixed: two faults on two nodes at once, overlapping (a freeze or a cut-off node, and a crash and restart of another). */
export const FAULT_KINDS = ['crash', 'restart', 'freeze', 'delay', 'partition', 'mixed'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface RunOptions {
  seed: number;
  kind: FaultKind;
  /** Ops in the stream (default 20). */
  orders?: number;
  /** Virtual ms after the last fault heals within which every node must have caught up (default 120 s). */
  livenessBoundMs?: number;
  /**
   * Outside the model, for the harness's own tests: 'three-down' also crashes a third node for good
   * (liveness must fail, naming the state); 'reference' changes one op of the plaintext reference
   * after it ran (safety must fail).
   */
  tamper?: 'three-down' | 'reference';
  /**
   * The sequencer's job boundaries (ADR 0008): 'intake' ends a job at every group commit;
   * 'progress' (the default, DEFAULT_JOB_BOUNDARIES) ends one only once the committee has taken every job closed before it (the nodes
   * report what they took), closing an open job with a job-end record of its own seq when nothing
   * else will. The product's JobBoundaries class decides, as in sequencer.ts.
   */
  jobBoundaries?: JobBoundaryPolicy;
  /** whom the nodes send a job round's shares (PartyOptions.shareFanout; default the engine's, 'all') */
  shareFanout?: ShareFanout;
}

export interface RunResult {
  seed: number;
  kind: FaultKind;
  ok: boolean;
  /** What failed, naming the state (null when ok). */
  failure: string | null;
  /** sha256 of the run's history (every ack, result arrival, fault and node event with its virtual time, the final books). */
  historyHash: string;
  /** Virtual ms from the last fault healing to every node caught up and every acknowledged op answered. */
  recoverMs: number | null;
  /** The fault schedule, one line. */
  schedule: string;
  /** Virtual time at the end. */
  virtualMs: number;
  history?: string[];
}

const N = 5;
const T = 2;
const SYMBOLS = ['BTC-USDC-PERP', 'ETH-USDC-PERP', 'SOL-USDC-PERP'];
const MAX_BATCH = 16;
/** How long the supervisor (npm start) takes to restart a node that ended itself. */
const SUPERVISOR_RESTART_MS = 500;
/** Sequencer to node feed, and node to gateway results: one-way virtual ms. */
const LINK_MS = 0.5;
/** The sequencer's group commit (journal write) in virtual ms. */
const JOURNAL_MS = 1;
/** Events per phase of a run before it counts as a livelock (a passing run takes some tens of thousands). */
const MAX_EVENTS = 3_000_000;

const stringify = (v: unknown): string => JSON.stringify(v, (_, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));

/** A timed fault action of the schedule. */
interface Action { at: number; what: string; run: () => void }

/** Runs one seed; never throws for a failure of the system under test (it is the result). */
export async function runSeed(o: RunOptions): Promise<RunResult> {
  const rng = new Prng(o.seed * 1_000_003 + FAULT_KINDS.indexOf(o.kind));
  const u = (a: number, b: number): number => a + rng.nextFloat() * (b - a);
  const pick = (k: number): number[] => {
    const all = [1, 2, 3, 4, 5];
    const out: number[] = [];
    while (out.length < k) out.push(all.splice(Math.floor(rng.nextFloat() * all.length), 1)[0]!);
    return out;
  };
  const net = new SimNetwork({ n: N, seed: o.seed, link: { latencyMs: 1, jitterMs: 1 } });
  const clock = net.clock;
  const history: string[] = [];
  const log = (what: string): void => { history.push(`${clock.now().toFixed(3)} ${what}`); };

  // ---- the order stream and the plaintext reference ----
  const stream = generateStream({ seed: o.seed, orders: o.orders ?? 20, symbols: SYMBOLS, features: 'all', accounts: 8 });
  const ref = new Exchange<bigint>(new PlaintextBackend({ compareBits: COMPARISON_BITS }), { symbols: INSTRUMENTS.map((i) => i.symbol), bookWidths: committeeBookWidths, ...COMMITTEE_MATCH_OPTIONS });
  /** The plaintext reference of each journaled op, by seq: computed after the run, in seq order, as the journal numbered the ops (job-end records take seqs too under 'progress'). */
  const want = new Map<bigint, OpResult<bigint>>();
  const policy: JobBoundaryPolicy = o.jobBoundaries ?? DEFAULT_JOB_BOUNDARIES;
  const jobs = new JobBoundaries(0n, policy);

  // ---- keys: the gateway's and each node's sealing keys (their randomness never reaches the history) ----
  const gw = generateX25519();
  const sealKeys = Array.from({ length: N }, () => generateX25519());
  const opens = sealKeys.map((k) => new PairBox(gw.privateKey, k.publicKey));

  // ---- the sequencer: journal, acks, feeds ----
  const entries: { seq: bigint; pub: Record<string, unknown>; shares: bigint[][] | null; tsNs: bigint; kind: IncomingOp['kind']; symbol: string; batchEnd: boolean; op: Op<bigint> | null }[] = [];
  const acked = new Set<bigint>();
  let intake: Op<bigint>[] = [];
  const feeds = new Map<number, { node: SimNode; next: bigint }>();
  const pump = (): void => {
    for (const [i, f] of feeds) {
      if (f.node.dead) { feeds.delete(i); continue; }
      const tr = net.transport(i);
      while (f.next <= BigInt(entries.length)) {
        const e = entries[Number(f.next) - 1]!;
        const node = f.node;
        const inc: IncomingOp = { seq: e.seq, tsNs: e.tsNs, kind: e.kind, symbol: e.symbol, batchEnd: e.batchEnd, pub: e.pub, shares: e.shares === null ? [] : e.shares[i - 1]! };
        tr.clock.setTimeout(() => node.enqueue(inc), LINK_MS);
        f.next++;
      }
    }
  };
  const submit = (op: Op<bigint>): void => {
    if (intake.length === 0) {
      clock.setTimeout(() => {
        // group commit: everything taken in meanwhile is journaled together, its last op ends the batch
        const group = intake;
        intake = [];
        const close = jobs.canClose();
        group.forEach((op, k) => {
          // the journal numbers the ops (a job-end record may have taken the seq the stream gave)
          const g: Op<bigint> = { ...op, seq: BigInt(entries.length + 1) };
          const { pub, vector } = encodeOp(g);
          const batchEnd = close && k === group.length - 1;
          if (batchEnd) jobs.closed(g.seq!);
          entries.push({ seq: g.seq!, pub, shares: vector.length ? shareSecret(vector, N, T) : null, tsNs: g.nowNs ?? 0n, kind: g.kind, symbol: g.kind === 'expire' ? (g.symbol ?? '') : g.symbol, batchEnd, op: g });
          acked.add(g.seq!);
          log(`ack ${g.seq}`);
        });
        // under 'progress': the committee has not taken the last closed job yet, so this one stays open
        if (!close) log(`group to ${entries.length}: job left open`);
        pump();
      }, JOURNAL_MS);
    }
    intake.push(op);
  };
  /** sequencer.ts reportTaken: a node took every op up to `taken` into a started job. */
  const reportTaken = (taken: bigint): void => {
    if (!jobs.report(taken)) return;
    if (intake.length > 0 || !jobs.canClose()) return; // a group commit is due: it closes the job
    const seq = BigInt(entries.length + 1);
    if (seq - 1n <= jobs.lastBoundary) return; // nothing open
    jobs.closed(seq);
    entries.push({ seq, pub: {}, shares: null, tsNs: 0n, kind: JOB_END_KIND, symbol: '', batchEnd: true, op: null });
    log(`job-end ${seq}`);
    pump();
  };

  // ---- the gateway's results ----
  const results = new Map<bigint, Map<number, ResultFrame>>();
  const problems: string[] = [];
  const sendResults = (node: number, frames: ResultFrame[]): void => {
    clock.setTimeout(() => {
      for (const f of frames) {
        const seq = BigInt(f.seq);
        let m = results.get(seq);
        if (!m) results.set(seq, (m = new Map()));
        if (m.has(node)) continue; // a resend after a restart
        m.set(node, f);
        log(`result ${seq} from ${node} ${stringify(f.pub)}`);
      }
    }, LINK_MS);
  };

  // ---- the nodes ----
  const stores: SimStore[] = Array.from({ length: N }, () => ({ lastSeq: 0n }));
  const nodes: SimNode[] = [];
  /** nodes the schedule holds down (not restarted by the supervisor) */
  const heldDown = new Set<number>();
  const make = (i: number): SimNode => new SimNode({
    index: i, n: N, t: T, net, store: stores[i - 1]!, sealKey: sealKeys[i - 1]!, gatewayPublicKey: gw.publicKey, maxBatch: MAX_BATCH,
    preprocessing: { mode: 'committee', targetTriples: 256, targetBits: 1024, batch: 128 },
    connectFeed: (node, fromSeq) => { feeds.set(i, { node, next: fromSeq }); pump(); },
    reportTaken: (seq) => clock.setTimeout(() => reportTaken(seq), LINK_MS),
    ...(o.shareFanout ? { shareFanout: o.shareFanout } : {}),
    sendResults, event: (node, what) => log(`node ${node} ${what}`),
    exited: (node) => {
      crash(node);
      clock.setTimeout(() => { if (!heldDown.has(node) && net.isCrashed(node)) restart(node); }, SUPERVISOR_RESTART_MS);
    },
  });
  const crash = (i: number): void => {
    net.crash(i);
    nodes[i - 1]?.kill();
  };
  const restart = (i: number): void => {
    const tr = net.restart(i);
    const node = make(i);
    nodes[i - 1] = node;
    node.start(tr).catch((e: unknown) => {
      if (node.dead) return;
      log(`node ${i} start failed: ${(e as Error).message}`);
      node.o.exited(i, 'start failed');
    });
  };
  for (let i = 1; i <= N; i++) nodes.push(make(i));
  try {
    await net.settle(Promise.all(nodes.map((nd, k) => nd.start(net.transport(k + 1)))), { maxTimeMs: 60_000 });
  } catch (e) {
    return { seed: o.seed, kind: o.kind, ok: false, failure: `setup: ${(e as Error).message}`, historyHash: '', recoverMs: null, schedule: '', virtualMs: clock.now() };
  }
  const t0 = clock.now() + 20;

  // ---- arrival times: gaps of 0-40 ms, sometimes bursts in one ms (one group commit, one batch) ----
  let at = t0;
  for (const op of stream) {
    if (rng.nextFloat() > 0.25) at += Math.floor(u(1, 40));
    clock.setTimeout(() => submit(op), at - clock.now());
  }
  const streamEnd = at;

  // ---- the fault schedule of this kind ----
  const actions: Action[] = [];
  const span = (): number => u(t0, streamEnd);
  switch (o.kind) {
    case 'crash': {
      // one or two nodes die at any point (a round, a preprocessing batch) and stay down past the stream
      const victims = pick(rng.nextFloat() < 0.25 ? 1 : 2);
      for (const v of victims) {
        const down = span();
        actions.push({ at: down, what: `crash ${v}`, run: () => { heldDown.add(v); crash(v); } });
        const up = streamEnd + u(0, 400);
        actions.push({ at: up, what: `restart ${v}`, run: () => { heldDown.delete(v); restart(v); } });
      }
      break;
    }
    case 'restart': {
      // crash and restart from the store during the stream, sometimes again while it recovers
      const victims = pick(rng.nextFloat() < 0.3 ? 1 : 2);
      for (const v of victims) {
        let down = span();
        for (let k = 0; k < 3; k++) {
          const up = down + u(5, 300);
          actions.push({ at: down, what: `crash ${v}`, run: () => { heldDown.add(v); crash(v); } });
          actions.push({ at: up, what: `restart ${v}`, run: () => { heldDown.delete(v); restart(v); } });
          if (rng.nextFloat() > 0.4) break;
          down = up + u(0, 60); // again, mid-recovery most often
        }
      }
      break;
    }
    case 'freeze': {
      // one node pauses (SIGSTOP) for a long while, its links up, then resumes
      const [v] = pick(1) as [number];
      const from = span();
      const len = u(200, 6_000);
      actions.push({ at: from, what: `freeze ${v}`, run: () => net.freeze(v) });
      actions.push({ at: from + len, what: `thaw ${v}`, run: () => net.thaw(v) });
      break;
    }
    case 'delay': {
      // slow, reordering links (jitter above latency) from some nodes, then back to normal
      const vs = pick(1 + Math.floor(rng.nextFloat() * 3));
      const from = span();
      const len = u(50, 2_000);
      const latencyMs = u(5, 80);
      const jitterMs = u(latencyMs, 4 * latencyMs);
      actions.push({ at: from, what: `delay ${vs.join(',')} ${latencyMs.toFixed(1)}+${jitterMs.toFixed(1)}ms`, run: () => { for (const v of vs) for (let j = 1; j <= N; j++) if (j !== v) net.setLink(v, j, { latencyMs, jitterMs }); } });
      actions.push({ at: from + len, what: 'delay heals', run: () => { for (const v of vs) for (let j = 1; j <= N; j++) if (j !== v) net.setLink(v, j, { latencyMs: 1, jitterMs: 1 }); } });
      break;
    }
    case 'partition': {
      // a minority (one or two nodes) cut off from the rest, then healed; sometimes twice
      let from = span();
      for (let k = 0; k < 2; k++) {
        const minority = pick(rng.nextFloat() < 0.5 ? 1 : 2);
        const rest = [1, 2, 3, 4, 5].filter((x) => !minority.includes(x));
        const len = u(50, 3_000);
        actions.push({ at: from, what: `partition ${minority.join(',')} | ${rest.join(',')}`, run: () => net.partition([minority, rest]) });
        actions.push({ at: from + len, what: 'partition heals', run: () => net.heal() });
        if (rng.nextFloat() < 0.5) break;
        from = from + len + u(10, 500);
      }
      break;
    }
    case 'mixed': {
      const [a, b] = pick(2) as [number, number];
      const from = span();
      const len = u(200, 5_000);
      if (rng.nextFloat() < 0.5) {
        actions.push({ at: from, what: `freeze ${a}`, run: () => net.freeze(a) });
        actions.push({ at: from + len, what: `thaw ${a}`, run: () => net.thaw(a) });
      } else {
        const rest = [1, 2, 3, 4, 5].filter((x) => x !== a);
        actions.push({ at: from, what: `partition ${a} | ${rest.join(',')}`, run: () => net.partition([[a], rest]) });
        actions.push({ at: from + len, what: 'partition heals', run: () => net.heal() });
      }
      const down = from + u(-200, len);
      const up = down + u(5, 3_000);
      actions.push({ at: Math.max(t0, down), what: `crash ${b}`, run: () => { heldDown.add(b); crash(b); } });
      actions.push({ at: Math.max(t0, down) + (up - down), what: `restart ${b}`, run: () => { heldDown.delete(b); restart(b); } });
      break;
    }
  }
  if (o.tamper === 'three-down') {
    const victims = pick(3);
    for (const v of victims) actions.push({ at: span(), what: `crash ${v} for good`, run: () => { heldDown.add(v); crash(v); } });
  }
  for (const a of actions) clock.setTimeout(() => { log(`fault ${a.what}`); a.run(); }, a.at - clock.now());
  const healAt = Math.max(streamEnd, ...actions.map((a) => a.at));
  const schedule = actions.map((a) => `${a.what}@${Math.round(a.at - t0)}`).join('; ');

  // ---- run to the heal, then liveness: every node caught up, every acknowledged op answered by t+1 ----
  const lastSeq = (): bigint => BigInt(entries.length);
  const answered = (): boolean => {
    for (let s = 1n; s <= lastSeq(); s++) if ((results.get(s)?.size ?? 0) < T + 1) return false;
    return true;
  };
  const caughtUp = (): boolean => acked.size === stream.length && answered()
    && nodes.every((nd) => !nd.dead && nd.phase === 'running' && nd.appliedSeq === lastSeq() && nd.pending.length === 0 && nd.party?.status().currentJob === undefined);
  const bound = o.livenessBoundMs ?? 120_000;
  const fail = (why: string): RunResult => {
    log(`FAIL ${why}`);
    return { seed: o.seed, kind: o.kind, ok: false, failure: why, historyHash: hash(history), recoverMs: null, schedule, virtualMs: clock.now(), history };
  };
  try {
    // an event storm at one virtual instant (a livelock) is bounded too
    await net.run({ until: () => clock.now() >= healAt, maxTimeMs: healAt - clock.now() + 1, maxEvents: MAX_EVENTS });
    await net.run({ until: caughtUp, maxTimeMs: bound, maxEvents: MAX_EVENTS });
  } catch (e) {
    return fail(`error while running: ${(e as Error).stack ?? String(e)}`);
  }
  if (!caughtUp()) {
    const missing: string[] = [];
    for (let s = 1n; s <= lastSeq() && missing.length < 5; s++) if ((results.get(s)?.size ?? 0) < T + 1) missing.push(`${s}:${results.get(s)?.size ?? 0}`);
    return fail(`liveness: not caught up ${bound} virtual ms after the last fault healed (at ${Math.round(healAt)}); acked ${acked.size}/${stream.length}; ops short of t+1 results ${missing.join(' ') || 'none'}; nodes ${nodes.map((nd) => nd.describe()).join(' ')}`);
  }
  const recoverMs = Math.max(0, clock.now() - healAt);
  log(`caught up ${recoverMs.toFixed(3)} ms after the heal`);

  // ---- safety: outcomes, fills (the gateway's reconstruction), final books ----
  for (const e of entries) if (e.op) want.set(e.seq, await ref.apply(e.op));
  if (o.tamper === 'reference') {
    const k = [...want.keys()].find((seq) => want.get(seq)!.outputs.length > 0)!;
    const w = want.get(k)!;
    want.set(k, { ...w, outputs: [w.outputs[0]! + 1n, ...w.outputs.slice(1)] });
  }
  for (let s = 1n; s <= lastSeq(); s++) {
    const got = results.get(s)!;
    const w = want.get(s);
    if (!w) {
      // a job-end record: every node answers it, with no outcome and nothing sealed
      for (const [node, f] of got) if (stringify(f.pub) !== stringify({ kind: JOB_END_KIND }) || f.sealed !== '') problems.push(`seq ${s} (job end) node ${node}: ${stringify(f.pub)}`);
      continue;
    }
    const wantPub = stringify(toWireOutcome(w.outcome));
    for (const [node, f] of got) if (stringify(f.pub) !== wantPub) problems.push(`seq ${s} node ${node}: outcome ${stringify(f.pub)} != reference ${wantPub}`);
    // as the gateway's collector: t + 1 results of one job attempt (ADR 0023), never a mix
    const attempts = new Map<string, number[]>();
    for (const [node, f] of got) attempts.set(f.job, [...(attempts.get(f.job) ?? []), node]);
    const whole = [...attempts.values()].find((nodes) => nodes.length >= T + 1);
    if (!whole) {
      problems.push(`seq ${s}: no ${T + 1} results of one job attempt (${stringify([...attempts])})`);
      continue;
    }
    const from = whole.sort((a, b) => a - b).slice(0, T + 1);
    const vecs = from.map((node) => {
      const f = got.get(node)!;
      return f.sealed === '' ? [] : decodeFieldVector(opens[node - 1]!.open(Buffer.from(f.sealed, 'base64'), resultAad(f.seq, node)));
    });
    const outputs = vecs[0]!.length === 0 ? [] : reconstruct(from, vecs, T);
    if (stringify(outputs) !== stringify(w.outputs)) problems.push(`seq ${s}: fills ${stringify(outputs)} != reference ${stringify(w.outputs)}`);
  }
  try {
    const opened = await net.settle(Promise.all(nodes.map((nd) => nd.party!.runJob('chaos:final-books', async (ctx) => {
      const out: Record<string, { pub: unknown; secrets: bigint[] }> = {};
      for (const symbol of SYMBOLS) {
        const book = loadBook(ctx, symbol);
        if (!book) continue;
        const snap = book.toSnapshot();
        out[symbol] = { pub: snap.pub, secrets: snap.secrets.length ? await ctx.open(ctx.concat(snap.secrets)) : [] };
      }
      return out;
    }))), { maxTimeMs: 60_000 });
    for (const symbol of SYMBOLS) {
      const w = ref.book(symbol)?.toSnapshot();
      const wantBook = w && w.pub.orders.length ? { pub: w.pub, secrets: w.secrets } : undefined;
      for (let k = 0; k < N; k++) {
        const g = opened[k]![symbol];
        const gotBook = g && (g.pub as { orders: unknown[] }).orders.length ? g : undefined;
        if (stringify(gotBook) !== stringify(wantBook)) problems.push(`book ${symbol} at node ${k + 1} differs from the reference: ${stringify(gotBook)} != ${stringify(wantBook)}`);
      }
      log(`book ${symbol} ${stringify(opened[0]![symbol] ?? null)}`);
      if (w) {
        const crossed = crossedIn(w.pub.orders, w.secrets);
        if (crossed) problems.push(`book ${symbol} crossed: ${crossed}`);
      }
    }
  } catch (e) {
    problems.push(`final books: ${(e as Error).message}`);
  }
  if (problems.length) return fail(`safety: ${problems.slice(0, 4).join('; ')}${problems.length > 4 ? ` (+${problems.length - 4} more)` : ''}`);
  return { seed: o.seed, kind: o.kind, ok: true, failure: null, historyHash: hash(history), recoverMs, schedule, virtualMs: clock.now(), history };
}

/** A book crosses when its best limit bid is at or above its best limit ask (pegs carry offsets, not prices). */
function crossedIn(orders: readonly { side: string; type: string; owner: boolean }[], secrets: readonly bigint[]): string | null {
  let k = 0;
  let bid: bigint | null = null;
  let ask: bigint | null = null;
  for (const ord of orders) {
    const price = secrets[k]!;
    k += ord.owner ? 3 : 2;
    if (ord.type !== 'limit') continue;
    if (ord.side === 'buy' && (bid === null || price > bid)) bid = price;
    if (ord.side === 'sell' && (ask === null || price < ask)) ask = price;
  }
  return bid !== null && ask !== null && bid >= ask ? `bid ${bid} >= ask ${ask}` : null;
}

function hash(lines: readonly string[]): string {
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}
