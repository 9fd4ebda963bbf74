// Where an order's milliseconds go, from placement to the pushed FILLED (prints figures; asserts
// nothing). Starts a fresh cluster of real processes with TENEBRA_TRACE_OPS=1 (every process logs a
// `trace` line per stage of each op: packages/config/src/op-trace.ts) and TENEBRA_TRACE_ROUNDS=1
// (node 1's engine logs each round), places a resting sell and then a crossing IOC buy, `--pairs`
// times at about `--rate` orders/s, times the buy from the REST call to the FILLED update on the
// buyer's encrypted WebSocket, then joins the processes' lines by seq and prints the median and p90
// of each stage's share of it, and node 1's job against rounds x link latency.
//   npm run bench:trace -- [--pairs 40] [--rate 4] [--nodes 5 --threshold 2] [--link-latency-ms MS [--link-jitter-ms MS]] [--node-nice 19] [--max-seconds 300] [--links tcp|unix] [--json FILE]
// A progress line every 3 s; the whole run is bounded by --max-seconds (the pairs stop, the figures
// cover what was placed).
import '@tenebra/transport/src/polyfill';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_COMMITTEE_LINKS, checkCommitteeSize, committeeLinksOf, layout } from '@tenebra/config';
import { Cluster } from '../src/cluster';
import { run as accounts } from '../src/accounts';
import { describeLinks, LINK_FLAGS, linkEmulationOf, parseFlags } from '../src/flags';
import { nodeStatus, testPorts, Trader, type Credentials } from '../test/harness';
import { closeHttpClient } from '../src/http-client';
import { FillWatch } from './fill-watch';
import { ticker } from './section-meter';

process.env.TENEBRA_TRACE_OPS = '1'; // inherited by every process the cluster spawns
const flags = parseFlags(process.argv.slice(2), ['pairs', 'rate', 'nodes', 'threshold', 'node-nice', 'quorum-nice', 'max-seconds', 'json', 'links', 'windows-out', ...LINK_FLAGS], ['keep', 'no-round-trace']);
// --windows-out FILE: every timed buy's window (the REST call to the pushed FILLED, epoch ms) and each
// process's clock offset, for `profile-areas.ts DIR --windows FILE` with TENEBRA_CPU_PROF=DIR: the
// processes' CPU on the fill's critical window only
const WINDOWS_OUT = flags.str.get('windows-out');
// --no-round-trace: the engine's per-round lines off (the round figures are then empty), to see
// what logging them costs the nodes' job windows
process.env.TENEBRA_TRACE_ROUNDS = flags.bool.has('no-round-trace') ? '0' : '1';
const PAIRS = Number(flags.str.get('pairs') ?? 40);
const RATE = Number(flags.str.get('rate') ?? 4);
const N = Number(flags.str.get('nodes') ?? 5);
const T = Number(flags.str.get('threshold') ?? 2);
checkCommitteeSize(N, T);
const NODE_NICE = Number(flags.str.get('node-nice') ?? 19);
// --quorum-nice N: an experiment on this one host, not a setting: nodes 1..t+1 run at niceness N
// (the others keep --node-nice) once the reserve is full, so a quorum's rounds get the cores first
const QUORUM_NICE = flags.str.has('quorum-nice') ? Number(flags.str.get('quorum-nice')) : undefined;
const MAX_MS = 1000 * Number(flags.str.get('max-seconds') ?? 300);
const LINKS = linkEmulationOf(flags);
/** --links tcp|unix: the committee links (docs/decisions/0041-unix-socket-links.md) */
const COMMITTEE_LINKS = committeeLinksOf(flags.str.get('links')) ?? DEFAULT_COMMITTEE_LINKS;
const JSON_OUT = flags.str.get('json');
const SYMBOL = 'ETH-USDC-PERP';
const MID = 300_000;

/** CPU ms (user + system, every thread) of each process of the cluster, by name, and of this bench process. */
function cpuOfCluster(dataDir: string): Map<string, number> {
  const out = new Map<string, number>();
  const tick = 10; // ms per clock tick (USER_HZ 100 on Linux)
  try {
    const c = JSON.parse(readFileSync(join(dataDir, 'cluster.json'), 'utf8')) as { processes: { role: string; index: number; pid: number | null }[] };
    for (const p of c.processes) {
      if (p.pid === null) continue;
      // fields after the command's closing parenthesis: state is field 3, utime 14, stime 15
      const f = readFileSync(`/proc/${p.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      out.set(p.role === 'committee' ? `node-${p.index}` : p.role, (Number(f[11]) + Number(f[12])) * tick);
    }
  } catch { /* not Linux, or a process gone: the figure is left out */ }
  const u = process.cpuUsage();
  out.set('bench', (u.user + u.system) / 1000);
  return out;
}

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** run / rq: the node's main thread's ms on a CPU / runnable but waiting for one, since it started (committee/src/sched-sample.ts) */
interface Sched { run: number; rq: number; cpu: number }
interface TraceLine { stage: string; at: number; seq?: string; first?: string; last?: string; rid?: string; order_id?: string; node?: number; rounds?: number; queuedMs?: number; sched?: Sched }
/** A node's preprocessing step (the engine's prep-step event) or GC pause: [start epoch ms, ms]. */
type Span = [number, number];
interface RoundLine { job: string; r: number; flushedAt: number; sentAt: number; doneAt: number; arrivals: [number, number][] }
/** The engine's deferred round start: scheduled (setImmediate) at schedAt, run at ranAt. */
interface DeferLine { job: string; schedAt: number; ranAt: number }
/** One job of node 1, ms summed over its rounds. */
interface JobSums { peers: number; between: number; queue: number; own: number }

function lines(file: string): Record<string, unknown>[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: Record<string, unknown>[] = [];
  for (const l of text.split('\n')) {
    if (!l.includes('"msg":"trace"') && !l.includes('"ev":"round"') && !l.includes('"ev":"job-') && !l.includes('"ev":"defer"') && !l.includes('"ev":"prep-step"') && !l.includes('"msg":"gc"')) continue;
    try {
      out.push(JSON.parse(l) as Record<string, unknown>);
    } catch { /* a line cut by the copy */ }
  }
  return out;
}

/** Does a trace line with first/last (or seq) cover seq s? */
const covers = (l: TraceLine, s: bigint): boolean => (l.seq !== undefined ? BigInt(l.seq) === s : l.first !== undefined && l.last !== undefined ? BigInt(l.first) <= s && s <= BigInt(l.last) : l.last !== undefined && BigInt(l.last) >= s);

async function main(): Promise<void> {
  const deadline = Date.now() + MAX_MS;
  const dataDir = mkdtempSync(join(tmpdir(), 'tenebra-trace-'));
  const ports = await testPorts(N);
  console.log(`fill trace: ${PAIRS} pairs at ~${RATE} orders/s, ${N}-node cluster (t=${T}) in ${dataDir}; ${describeLinks(LINKS, COMMITTEE_LINKS)}`);
  const cluster = await Cluster.start({ dataDir, env: 'test', ports, n: N, t: T, logLevel: 'info', nodeNice: NODE_NICE, links: COMMITTEE_LINKS, ...(LINKS ? { linkEmulation: LINKS } : {}) });
  let watches: FillWatch[] = [];
  const samples: { orderId: string; t0: number; ack: number; push: number }[] = [];
  try {
    await cluster.waitReady(Math.max(10_000, deadline - Date.now()));
    const creds = await Promise.all([0, 1].map(() => accounts(['--data', dataDir, 'create', '--tier', 'Apex', '--deposit', '100000000']) as Promise<unknown> as Promise<Credentials>));
    const traders = creds.map((c) => new Trader(cluster.baseUrl, c, { lean: true }));
    await Promise.all(traders.map((t) => t.login()));
    watches = await Promise.all(creds.map((c) => FillWatch.open(cluster.baseUrl, cluster.wsUrl, c)));
    // an idle committee with a full reserve, as bench:orders' fill section waits for
    const t0w = Date.now();
    const wait = ticker(() => `waiting for a full reserve: ${((Date.now() - t0w) / 1000).toFixed(0)} s; node 1 reserve ${nodeStatus(dataDir, 1)?.reserve?.bits ?? '?'} bits`);
    // ... and production idle (the status line every 2 s), so no batch of the initial fill overlaps the first pairs
    type Status = { reserve?: { bits: number }; capacity?: { production?: string } } | undefined;
    const ready = (st: Status) => (st?.reserve?.bits ?? 0) >= 20_000 && st?.capacity?.production === 'idle';
    while (Date.now() < deadline - 60_000 && !ready(nodeStatus(dataDir, 1) as Status)) await new Promise((r) => setTimeout(r, 200));
    wait.stop();
    if (QUORUM_NICE !== undefined) {
      const c = JSON.parse(readFileSync(join(dataDir, 'cluster.json'), 'utf8')) as { processes: { role: string; index: number; pid: number | null }[] };
      for (const p of c.processes) if (p.role === 'committee' && p.index <= T + 1 && p.pid !== null) setPriority(p.pid, QUORUM_NICE);
      console.log(`experiment: nodes 1..${T + 1} at niceness ${QUORUM_NICE}, the others at ${NODE_NICE}`);
    }
    // the processes' CPU while no order is placed, 3 s (timers, background work): what the pairs compete with
    const idle0 = cpuOfCluster(dataDir);
    await new Promise((r) => setTimeout(r, 3_000));
    const idle1 = cpuOfCluster(dataDir);
    const idlePerS = [...idle1].map(([k, v]) => [k, (v - (idle0.get(k) ?? v)) / 3] as const);
    console.log(`idle CPU ms per s before the pairs: ${idlePerS.map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}; all ${idlePerS.reduce((a, [, v]) => a + v, 0).toFixed(1)}`);
    const gap = 1000 / RATE;
    const started = Date.now();
    const cpu0 = cpuOfCluster(dataDir);
    const tick = ticker(() => `pairs: ${samples.length} of ${PAIRS} timed, ${((Date.now() - started) / 1000).toFixed(0)} s`);
    const pushes: Promise<void>[] = [];
    for (let i = 0; i < PAIRS && Date.now() < deadline - 35_000; i++) {
      const seller = traders[i % 2]!;
      const buyer = traders[(i + 1) % 2]!;
      const watch = watches[(i + 1) % 2]!;
      await seller.place({ symbol: SYMBOL, side: 'sell', type: 'limit', price: (MID + 50) / 100, quantity: 0.04, time_in_force: 'GTC' });
      await new Promise((r) => setTimeout(r, gap));
      const t0 = performance.timeOrigin + performance.now();
      const r = await buyer.place({ symbol: SYMBOL, side: 'buy', type: 'limit', price: (MID + 50) / 100, quantity: 0.04, time_in_force: 'IOC' });
      const ack = performance.timeOrigin + performance.now();
      if (r.status !== 200) continue;
      const orderId = r.body.data!.order_id;
      pushes.push(watch.filled(orderId, 30_000).then((at) => {
        if (!Number.isNaN(at)) samples.push({ orderId, t0, ack, push: performance.timeOrigin + at });
      }));
      await new Promise((r2) => setTimeout(r2, gap));
    }
    await Promise.all(pushes);
    tick.stop();
    const cpu1 = cpuOfCluster(dataDir);
    // What all the host's cores had to give per pair (a resting sell and a crossing buy), by process:
    // the committee's rounds wait for a CPU when five nodes and these share two cores.
    const pairs = Math.max(1, samples.length);
    const perPair = [...cpu1].map(([k, v]) => [k, (v - (cpu0.get(k) ?? v)) / pairs] as const);
    console.log(`CPU ms per pair during the pairs (clock ticks of 10 ms summed over ${pairs} pairs): ${perPair.map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}; all ${perPair.reduce((a, [, v]) => a + v, 0).toFixed(1)}`);
    await new Promise((r) => setTimeout(r, 1_500)); // the last lines reach the log files
    report(dataDir, samples);
    if (WINDOWS_OUT) writeWindows(dataDir, samples, WINDOWS_OUT);
  } finally {
    await Promise.all(watches.map((w) => w.close().catch(() => undefined)));
    await cluster.stop();
    closeHttpClient();
    if (!flags.bool.has('keep')) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The timed buys' windows and each process's epoch-to-monotonic offset (median over its trace lines), for profile-areas --windows. */
function writeWindows(dataDir: string, samples: { t0: number; push: number }[], file: string): void {
  const L = layout(dataDir);
  const offsets: Record<string, number> = {};
  for (const name of ['gateway', 'sequencer', ...Array.from({ length: N }, (_, k) => `node-${k + 1}`)]) {
    const byPid = new Map<string, number[]>();
    for (const l of lines(join(L.logsDir, `${name}.log`))) {
      if (l.msg !== 'trace' || typeof l.mono !== 'number' || typeof l.at !== 'number' || l.pid === undefined) continue;
      const k = String(l.pid);
      byPid.set(k, [...(byPid.get(k) ?? []), l.at * 1000 - l.mono]);
    }
    for (const [pid, xs] of byPid) offsets[pid] = pct(xs, 50);
  }
  writeFileSync(file, JSON.stringify({ windows: samples.map((s) => [s.t0, s.push]), offsets }));
  console.log(`windows of ${samples.length} fills and the clock offsets of ${Object.keys(offsets).length} processes written to ${file}`);
}

function report(dataDir: string, samples: { orderId: string; t0: number; ack: number; push: number }[]): void {
  const L = layout(dataDir);
  const gw = lines(join(L.logsDir, 'gateway.log')).filter((l) => l.msg === 'trace') as unknown as TraceLine[];
  const sq = lines(join(L.logsDir, 'sequencer.log')).filter((l) => l.msg === 'trace') as unknown as TraceLine[];
  const nodes = Array.from({ length: N }, (_, k) => lines(join(L.logsDir, `node-${k + 1}.log`)));
  const nodeTrace = nodes.map((ls) => ls.filter((l) => l.msg === 'trace') as unknown as TraceLine[]);
  const rounds1 = nodes[0]!.filter((l) => (l.mpc as { ev?: string } | undefined)?.ev === 'round').map((l) => l.mpc as RoundLine);
  const defers1 = nodes[0]!.filter((l) => (l.mpc as { ev?: string } | undefined)?.ev === 'defer').map((l) => l.mpc as DeferLine);
  const spansOf = (ls: Record<string, unknown>[], what: 'prep' | 'gc'): Span[] => ls.flatMap((l): Span[] => {
    const m = l.mpc as { ev?: string; at?: number; ms?: number } | undefined;
    if (what === 'prep' && m?.ev === 'prep-step' && m.at !== undefined && m.ms !== undefined) return [[m.at, m.ms]];
    if (what === 'gc' && l.msg === 'gc') return [[l.at as number, l.ms as number]];
    return [];
  });
  const prepSpans = nodes.map((ls) => spansOf(ls, 'prep'));
  const gcSpans = nodes.map((ls) => spansOf(ls, 'gc'));
  /** ms of `spans` inside [a, b] */
  const inside = (spans: Span[], a: number, b: number): number => spans.reduce((acc, [t, ms]) => acc + Math.max(0, Math.min(b, t + ms) - Math.max(a, t)), 0);
  /** Per buy job, per node: its job window's wall ms, on-CPU, run-queue wait, asleep, and prep steps and GC inside it. */
  const sched: { wall: number; run: number; rq: number; asleep: number; prep: number; gc: number }[][] = [];
  const seqOf = new Map<string, bigint>();
  for (const l of gw) if (l.stage === 'gw-acked' && l.order_id && l.seq) seqOf.set(l.order_id, BigInt(l.seq));
  const first = (ls: TraceLine[], stage: string, pred: (l: TraceLine) => boolean): number | undefined => ls.find((l) => l.stage === stage && pred(l))?.at;
  /** stage name -> per-sample ms since the previous stage */
  /** [stage, the stage it is timed from ('' = the REST call), what happens in between] */
  const rows: [string, string, string][] = [
    ['gw-accept', '', 'REST request to the gateway handler (HTTP, auth, limits)'],
    ['gw-sealed', 'gw-accept', 'validation, pre-trade risk, Shamir split, sealing'],
    ['gw-admitted', 'gw-sealed', "gateway's admit transaction (outbox: one fsync)"],
    ['seq-intake', 'gw-admitted', 'submit to the sequencer (attested link)'],
    ['seq-durable', 'seq-intake', 'journal append, group commit (fsync)'],
    ['gw-acked', 'seq-durable', 'ack back to the gateway'],
    ['seq-fanout', 'seq-durable', 'fan-out to the nodes starts'],
    ['node-recv', 'seq-fanout', 'node 1 receives the op'],
    ['job-start', 'node-recv', 'node 1: op queued until its job starts'],
    ['job-end', 'job-start', "node 1: the job's MPC rounds"],
    ['result-sent', 'job-end', 'node 1: result frame sent'],
    ['write-queued', 'job-end', 'node 1: the boundary hold and the previous write'],
    ['write-done', 'write-queued', 'node 1: boundary export and write (fsync)'],
    ['gw-result3', 'seq-durable', "gateway holds t+1 nodes' results (from durable)"],
    ['gw-decided', 'gw-result3', 'gateway decides (grace for more shares)'],
    ['gw-cleared', 'gw-decided', 'clearing transaction (fsync)'],
    ['gw-pushed', 'gw-cleared', 'events emitted (WebSocket push queued)'],
    ['client-push', 'gw-pushed', 'FILLED reaches the trader'],
  ];
  const per = new Map<string, number[]>(rows.map(([k]) => [k, []]));
  const fromT0 = new Map<string, number[]>(rows.map(([k]) => [k, []]));
  const total: number[] = [];
  const jobMs: number[] = [];
  const jobRounds: number[] = [];
  const roundWaits: number[] = [];
  const roundCompute: number[] = [];
  /** node 1, from a round's completion to the next round's flush: the job's local work and event-loop waits */
  const betweenRounds: number[] = [];
  const jobSums: JobSums[] = [];
  const nth = new Map<number, number>();
  for (const s of samples) {
    const seq = seqOf.get(s.orderId);
    if (seq === undefined) continue;
    const n1 = nodeTrace[0]!;
    const resultsAt = gw.filter((l) => l.stage === 'gw-result' && l.seq !== undefined && BigInt(l.seq) === seq).map((l) => l.at).sort((a, b) => a - b);
    const at: Record<string, number | undefined> = {
      'gw-accept': first(gw, 'gw-accept', (l) => l.order_id === s.orderId),
      'gw-sealed': first(gw, 'gw-sealed', (l) => l.order_id === s.orderId),
      'gw-admitted': first(gw, 'gw-admitted', (l) => l.order_id === s.orderId),
      'seq-intake': first(sq, 'seq-intake', (l) => l.rid === `p-${s.orderId}`),
      'seq-durable': first(sq, 'seq-durable', (l) => l.rid === `p-${s.orderId}`),
      'gw-acked': first(gw, 'gw-acked', (l) => l.order_id === s.orderId),
      'seq-fanout': first(sq, 'seq-fanout', (l) => covers(l, seq)),
      'node-recv': first(n1, 'node-recv', (l) => covers(l, seq)),
      'job-start': first(n1, 'job-start', (l) => covers(l, seq)),
      'job-end': first(n1, 'job-end', (l) => covers(l, seq)),
      'write-queued': first(n1, 'write-queued', (l) => covers(l, seq)),
      'write-done': first(n1, 'write-done', (l) => l.last !== undefined && BigInt(l.last) >= seq),
      'result-sent': first(n1, 'result-sent', (l) => covers(l, seq)),
      'gw-result3': resultsAt[T],
      'gw-decided': first(gw, 'gw-decided', (l) => covers(l, seq)),
      'gw-cleared': first(gw, 'gw-cleared', (l) => covers(l, seq)),
      'gw-pushed': first(gw, 'gw-pushed', (l) => covers(l, seq)),
      'client-push': s.push,
    };
    // which node's result completed the t+1 (node 1's own place in the order too)
    const resultNodes = gw.filter((l) => l.stage === 'gw-result' && l.seq !== undefined && BigInt(l.seq) === seq).sort((a, b) => a.at - b.at).map((l) => l.node!);
    const place = resultNodes.indexOf(1);
    if (place >= 0) nth.set(place + 1, (nth.get(place + 1) ?? 0) + 1);
    total.push(s.push - s.t0);
    for (const [k, since] of rows) {
      const a = at[k];
      const b = since === '' ? s.t0 : at[since];
      if (a === undefined || b === undefined) continue;
      per.get(k)!.push(a - b);
      fromT0.get(k)!.push(a - s.t0);
    }
    const perNode = nodeTrace.map((ls, k) => {
      const a = ls.find((l) => l.stage === 'job-start' && covers(l, seq));
      const b = ls.find((l) => l.stage === 'job-end' && covers(l, seq));
      if (!a?.sched || !b?.sched) return undefined;
      const wall = b.at - a.at;
      const run = b.sched.run - a.sched.run;
      const rq = b.sched.rq - a.sched.rq;
      return { wall, run, rq, asleep: Math.max(0, wall - run - rq), prep: inside(prepSpans[k]!, a.at, b.at), gc: inside(gcSpans[k]!, a.at, b.at) };
    });
    if (perNode.every((x) => x !== undefined)) sched.push(perNode as (typeof sched)[number]);
    const js = at['job-start'];
    const je = at['job-end'];
    if (js !== undefined && je !== undefined) {
      jobMs.push(je - js);
      const r = n1.find((l) => l.stage === 'job-end' && covers(l, seq))?.rounds;
      if (r !== undefined) jobRounds.push(r);
      const jl = n1.find((l) => l.stage === 'job-start' && covers(l, seq));
      const jobId = jl ? `batch:${jl.first}-${jl.last}:` : '';
      // per round of node 1's job: the wait from its own send to the t+1-th share (others' compute and the link)
      const mine = rounds1.filter((x) => x.job.startsWith(jobId)).sort((a, b) => a.r - b.r);
      for (let i = 1; i < mine.length; i++) betweenRounds.push(mine[i]!.flushedAt - mine[i - 1]!.doneAt);
      if (mine.length > 0) {
        // Per job: where its time went on node 1. The event loop's queue (a round start scheduled
        // until it ran) is this process waiting for the CPU or for other work of its own; the rest of
        // the gap between rounds is its own continuation code.
        const queue = defers1.filter((d) => d.job.startsWith(jobId)).reduce((a, d) => a + (d.ranAt - d.schedAt), 0);
        const between = mine.slice(1).reduce((a, rd, i) => a + (rd.flushedAt - mine[i]!.doneAt), 0);
        const peers = mine.reduce((a, rd) => {
          const tth = rd.arrivals.map(([, t]) => t).sort((x, y) => x - y)[T - 1];
          return a + (tth === undefined ? 0 : Math.max(0, tth - rd.sentAt));
        }, 0);
        jobSums.push({ peers, between, queue, own: mine.reduce((a, rd) => a + (rd.sentAt - rd.flushedAt), 0) });
      }
      for (const rd of mine) {
        roundCompute.push(rd.sentAt - rd.flushedAt);
        const arr = rd.arrivals.map(([, t]) => t).sort((a, b) => a - b);
        const tth = arr[T - 1];
        if (tth !== undefined) roundWaits.push(Math.max(0, tth - rd.sentAt));
      }
    }
  }
  const f = (x: number) => (Number.isNaN(x) ? '   -  ' : x.toFixed(2).padStart(7));
  const sumP50 = (k: keyof JobSums) => f(pct(jobSums.map((j) => j[k]), 50));
  console.log(`\n== where the milliseconds go: ${total.length} fills (IOC buy from the REST call to the pushed FILLED)`);
  console.log(`order-to-fill            p50 ${f(pct(total, 50))} ms  p90 ${f(pct(total, 90))} ms  p99 ${f(pct(total, 99))} ms`);
  console.log(`stage (ms from the stage it follows)                                     p50      p90   (p50 since the call)`);
  for (const [k, , what] of rows) {
    const xs = per.get(k)!;
    console.log(`  ${k.padEnd(13)} ${what.padEnd(55)} ${f(pct(xs, 50))}  ${f(pct(xs, 90))}   (${f(pct(fromT0.get(k)!, 50))})`);
  }
  const rtt = LINKS?.latencyMs ?? 0;
  console.log(`node 1's job: p50 ${f(pct(jobMs, 50))} ms over ${pct(jobRounds, 50)} rounds; per round: own compute p50 ${f(pct(roundCompute, 50))} ms, wait for the t-th peer share p50 ${f(pct(roundWaits, 50))} ms p90 ${f(pct(roundWaits, 90))} ms, from a round's end to the next round p50 ${f(pct(betweenRounds, 50))} ms p90 ${f(pct(betweenRounds, 90))} ms${rtt ? `; rounds x link latency = ${(pct(jobRounds, 50) * rtt).toFixed(0)} ms` : ''}`);
  console.log(`node 1's job, summed over its rounds (p50 per job): waiting for the t-th peer share ${sumP50('peers')} ms, between rounds ${sumP50('between')} ms, the event loop's queue before each round starts (round 0's too) ${sumP50('queue')} ms, own compute ${sumP50('own')} ms`);
  if (sched.length > 0) {
    // Where each node's job window went (Linux schedstat of its main thread): a round that waits for
    // a peer's share waits for that peer's CPU time, its run-queue wait or its sleep.
    type K = 'wall' | 'run' | 'rq' | 'asleep' | 'prep' | 'gc';
    const n1 = (k: K) => f(pct(sched.map((j) => j[0]![k]), 50));
    const all = (k: K) => f(pct(sched.map((j) => j.reduce((a, x) => a + x[k], 0)), 50));
    const withSpan = (k: 'prep' | 'gc') => sched.filter((j) => j.some((x) => x[k] > 0)).length;
    console.log(`the buy's job window per node (${sched.length} jobs, p50): node 1 wall ${n1('wall')} ms = on a CPU ${n1('run')} + waiting for a CPU (run queue) ${n1('rq')} + asleep ${n1('asleep')}; summed over the ${N} nodes: on a CPU ${all('run')} ms, run queue ${all('rq')} ms, asleep ${all('asleep')} ms`);
    console.log(`  inside the nodes' job windows: preprocessing steps in ${withSpan('prep')} of ${sched.length} jobs (p50 over all nodes ${all('prep')} ms), GC pauses >= 0.5 ms in ${withSpan('gc')} (p50 ${all('gc')} ms)`);
  }
  // Each node's process CPU (every thread: lmdb's writer and libuv's pool too) per job, split at its
  // trace lines: the job itself (job-start to job-end), the end of the job to its boundary write being
  // queued (the results' send, the engine's end-of-job work), the boundary's export and write, and
  // from the write to the next job's start (receiving and unsealing the next op, the overlapped
  // fsync, timers, background preprocessing: at this rate mostly idle time). Every job of the pairs,
  // sells and buys alike: the fixed cost of a one-op job, wherever it falls.
  const segNames = ['job', 'end-to-write', 'export+write', 'to-next-job'] as const;
  const segs = nodeTrace.map((ls) => {
    const out: number[][] = segNames.map(() => []);
    const withCpu = ls.filter((l) => l.sched !== undefined && ['job-start', 'job-end', 'write-queued', 'write-done'].includes(l.stage));
    for (let i = 1; i < withCpu.length; i++) {
      const k = ['job-start>job-end', 'job-end>write-queued', 'write-queued>write-done', 'write-done>job-start'].indexOf(`${withCpu[i - 1]!.stage}>${withCpu[i]!.stage}`);
      if (k >= 0) out[k]!.push(withCpu[i]!.sched!.cpu - withCpu[i - 1]!.sched!.cpu);
    }
    return out;
  });
  const mean = (xs: number[]) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
  console.log(`process CPU ms per job, per node (mean over ${segs[0]![0]!.length} jobs; p50 in brackets): ${segNames.join(' / ')}`);
  segs.forEach((s, k) => console.log(`  node-${k + 1}: ${s.map((xs) => `${f(mean(xs)).trim()} (${f(pct(xs, 50)).trim()})`).join(' / ')}; sum of means ${f(s.reduce((a, xs) => a + (xs.length ? mean(xs) : 0), 0)).trim()}`));
  // How much of the nodes' boundary CPU (export, lmdb write: write-queued to write-done) began while
  // the gateway still waited for its t+1-th result of the job's last seq, i.e. inside the fill's
  // critical window, competing with the slower nodes' last round (ADR 0045's hold moves it out)
  const resultsBySeq = new Map<bigint, number[]>();
  for (const l of gw) if (l.stage === 'gw-result' && l.seq !== undefined) resultsBySeq.set(BigInt(l.seq), [...(resultsBySeq.get(BigInt(l.seq)) ?? []), l.at]);
  let writes = 0;
  let early = 0;
  let earlyCpu = 0;
  for (const ls of nodeTrace) {
    const queued = new Map<string, TraceLine>();
    for (const l of ls) {
      if (l.stage === 'write-queued' && l.last !== undefined) queued.set(l.last, l);
      if (l.stage !== 'write-done' || l.last === undefined) continue;
      const q = queued.get(l.last);
      const rs = resultsBySeq.get(BigInt(l.last))?.sort((a, b) => a - b);
      if (!q || !rs || rs.length <= T) continue;
      writes++;
      if (q.at < rs[T]!) {
        early++;
        earlyCpu += (l.sched?.cpu ?? 0) - (q.sched?.cpu ?? 0);
      }
    }
  }
  const jobsSeen = Math.max(1, writes / N);
  console.log(`boundary writes begun before the gateway held t+1 results: ${early} of ${writes}; their CPU ${f(earlyCpu / jobsSeen).trim()} ms per job over the ${N} nodes`);
  console.log(`node 1's result was the k-th to reach the gateway: ${[...nth].sort((a, b) => a[0] - b[0]).map(([k, c]) => `${k}th ${c}`).join(', ')}`);
  if (JSON_OUT) {
    const fig = Object.fromEntries(rows.map(([k]) => [k, { p50: pct(per.get(k)!, 50), p90: pct(per.get(k)!, 90) }]));
    writeFileSync(JSON_OUT, JSON.stringify({ argv: process.argv.slice(2), committeeLinks: COMMITTEE_LINKS, fills: total.length, p50: pct(total, 50), p90: pct(total, 90), p99: pct(total, 99), stages: fig, jobP50: pct(jobMs, 50), roundsP50: pct(jobRounds, 50), roundWaitP50: pct(roundWaits, 50), betweenRoundsP50: pct(betweenRounds, 50), committeeP50: sched.length === 0 ? undefined : Object.fromEntries((['wall', 'run', 'rq', 'asleep', 'prep', 'gc'] as const).map((k) => [k, { node1: pct(sched.map((j) => j[0]![k]), 50), sum: pct(sched.map((j) => j.reduce((a, x) => a + x[k], 0)), 50) }])), nodeCpuPerJob: segs.map((s) => Object.fromEntries(segNames.map((n, i) => [n, { mean: mean(s[i]!), p50: pct(s[i]!, 50) }]))), jobSumsP50: { peers: pct(jobSums.map((j) => j.peers), 50), between: pct(jobSums.map((j) => j.between), 50), queue: pct(jobSums.map((j) => j.queue), 50), own: pct(jobSums.map((j) => j.own), 50) } }, null, 2));
  }
}

main().then(() => process.exit(0), (e: unknown) => {
  console.error(e);
  process.exit(1);
});
