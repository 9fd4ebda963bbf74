// MPC engine benchmark: prints figures, asserts nothing.
//   node --import tsx scripts/bench/mpc.ts [--quick] [--sim-only] [--libp2p-only] [--latency-only] [--batched-only]
//     [--production-only] [--background] [--nodes 5 --threshold 2]
//     [--link-latency-ms MS [--link-jitter-ms MS]] [--link-bandwidth-mbps MBPS]   (emulated WAN links between the libp2p processes)
//     [--links tcp|unix]   (the libp2p processes' links: loopback TCP ports or Unix sockets, docs/decisions/0041; default: DEFAULT_COMMITTEE_LINKS)
//     [--json FILE]   (every figure printed, also as JSON: `npm run report -- FILE...` draws runs side by side)
// (MPC_TRACE=<party> logs that party's rounds; MPC_ELD=1 prints event-loop delay per party.)
// (MPC_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles each party process: they exit normally at the end.)
// For n parties with Shamir degree t (default 5 and 2): on the simulated network (all parties in this
// one process, one thread) and with n node processes over libp2p on 127.0.0.1. Online figures use a reserve made by the seeded
// dealer (INSECURE, experiments only) so the bench does not spend minutes producing it; the online
// work is identical. Preprocessing production is measured separately in committee mode.
import '@tenebra/transport/src/polyfill';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { SimNetwork, checkLinkEmulation, generateIdentity, unixSocketMultiaddr, type LinkEmulation, type PeerEntry } from '@tenebra/transport';
import { DEFAULT_KAPPA, LEX4, costOf, createParty, type Party, type PreprocessingOptions } from '@tenebra/mpc';
import { DEFAULT_COMMITTEE_LINKS, checkCommitteeSize, committeeLinksOf } from '@tenebra/config';
import { runStep, type Step, type StepResult } from './mpc-plan';
import { parseFlags } from '../src/flags';

const args = new Set(process.argv.slice(2));
// the shared parser refuses a mistyped flag (it would silently run the whole bench) and answers --help
parseFlags(process.argv.slice(2), ['nodes', 'threshold', 'link-latency-ms', 'link-jitter-ms', 'link-bandwidth-mbps', 'json', 'links'],
  ['quick', 'sim-only', 'libp2p-only', 'latency-only', 'batched-only', 'production-only', 'background']);
const quick = args.has('--quick');
const valueOf = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const linksAt = process.argv.indexOf('--links');
/** --links tcp|unix: how the libp2p party processes reach each other (as `npm start -- --links`) */
const LINKS_OVER = committeeLinksOf(linksAt >= 0 ? process.argv[linksAt + 1] : undefined) ?? DEFAULT_COMMITTEE_LINKS;
const jsonAt = process.argv.indexOf('--json');
const JSON_OUT = jsonAt >= 0 ? process.argv[jsonAt + 1] : undefined;
if (jsonAt >= 0 && (!JSON_OUT || JSON_OUT.startsWith('--'))) throw new Error('--json needs a file name');
/** one entry per printed section, for --json (the figures as printed, unrounded) */
interface Section {
  where: string;
  preprocessing?: { ms: number; triples: number; lex4: number; prod4: number; bits: number; triplesPerSec: number; lex4PerSec: number; bitsPerSec: number; mbSent: number; cpuMsPer1000Bits?: number };
  mul: { k: number; ms: number; perSec: number; bytesPerMul: number }[];
  lt: { k: number; jobs: number; rounds: number; medianMs: number; perSec: number; bytesPerComparison: number }[];
  ltLatency?: { jobs: number; p50Ms: number; p99Ms: number; maxMs: number };
}
const sections: Section[] = [];
const n = valueOf('nodes', 5);
const t = valueOf('threshold', 2);
checkCommitteeSize(n, t);
/** emulated WAN links for the libp2p processes (as `npm start -- --link-latency-ms ...`) */
const LINKS = ((): LinkEmulation | undefined => {
  const has = (k: string): boolean => process.argv.includes(`--${k}`);
  if (!has('link-latency-ms') && !has('link-jitter-ms') && !has('link-bandwidth-mbps')) return undefined;
  const e: LinkEmulation = { latencyMs: valueOf('link-latency-ms', 0), jitterMs: valueOf('link-jitter-ms', 0), ...(has('link-bandwidth-mbps') ? { bandwidthMbps: valueOf('link-bandwidth-mbps', 0) } : {}) };
  checkLinkEmulation(e);
  return e;
})();
const BIG = quick ? 2000 : 10000;
const LAT = Number(process.env.MPC_LAT ?? (quick ? 50 : 300));
/**
 * Untimed single-comparison jobs before the timed ones (MPC_LAT_WARMUP): a fresh process runs its
 * first few hundred jobs before V8 has compiled their paths (measured, --latency-only on an idle
 * machine: p50 6.6 ms over the first 300 jobs, 2.8 ms over the first 1,000), and a committee node
 * runs for hours. The batched steps have their warm-up job too.
 */
const LAT_WARMUP = Number(process.env.MPC_LAT_WARMUP ?? (quick ? 20 : 500));
const MULS = quick ? 5000 : 20000;
const WARMUP = 200;
/** Jobs per batched size: one job's figure swings by tens of percent run to run, so the median is printed with the range. */
const LT_JOBS_1000 = quick ? 2 : 5;
const LT_JOBS_BIG = 2;
const PROD = quick ? { triples: 1000, bits: 4000 } : { triples: 5000 * Number(process.env.MPC_PROD_X ?? 1), bits: 20000 * Number(process.env.MPC_PROD_X ?? 1) };

const latOnly = args.has('--latency-only');
// --batched-only: the batched comparisons alone, each size twice (their figures vary run to run)
const online: Step[] = latOnly
  ? [{ kind: 'fill' }, { kind: 'latency', count: LAT, warmup: LAT_WARMUP }]
  : args.has('--batched-only')
  ? [{ kind: 'fill' }, { kind: 'lt', n: WARMUP, warmup: true }, { kind: 'lt', n: 1000, jobs: LT_JOBS_1000 }, { kind: 'lt', n: BIG, jobs: LT_JOBS_BIG }]
  : [
      { kind: 'fill' },
      { kind: 'mul', n: MULS },
      { kind: 'lt', n: WARMUP, warmup: true },
      { kind: 'lt', n: 1000, jobs: LT_JOBS_1000 },
      { kind: 'lt', n: BIG, jobs: LT_JOBS_BIG },
      { kind: 'latency', count: LAT, warmup: LAT_WARMUP },
    ];
const production: Step[] = [{ kind: 'fill' }];
const lts = WARMUP + 1000 * LT_JOBS_1000 + BIG * LT_JOBS_BIG + LAT + LAT_WARMUP;
const dealerPrep: PreprocessingOptions = { mode: 'dealer', targetTriples: MULS + lts + 100, targetLex4: 5 * lts + 100, targetProd4: 0, targetBits: 52 * lts + 100, batch: 8192, background: false };
// MPC_PIECES=1: phase-A steps in pieces (PreprocessingOptions.pieces, ADR 0047)
const PIECES = process.env.MPC_PIECES === '1';
const committeePrep: PreprocessingOptions = { mode: 'committee', targetTriples: PROD.triples, targetBits: PROD.bits, batch: Number(process.env.MPC_BATCH ?? 500), background: false, pieces: PIECES };

const prepLabel = (where: string): string => (where.includes('dealer') ? 'dealer, INSECURE, experiments only' : 'committee');

function pct(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

function print(where: string, results: StepResult[][]): void {
  // results[party][step]; throughput from the slowest party, bytes summed over parties
  const steps = results[0]!.length;
  console.log(`\n== ${where} ==`);
  const section: Section = { where, mul: [], lt: [] };
  sections.push(section);
  for (let s = 0; s < steps; s++) {
    const r0 = results[0]![s]!;
    const ms = Math.max(...results.map((r) => r[s]!.ms));
    const bytes = results.reduce((a, r) => a + r[s]!.bytesSent, 0);
    if (r0.step.startsWith('warm-up')) continue;
    if (r0.step.startsWith('fill')) {
      const { triples: mt, lex4: ml, prod4: mq, bits: mb } = r0.made;
      const per = (x: number): string => (x / ms * 1000).toFixed(0);
      if (mt + ml + mq + mb > 0) section.preprocessing = { ms, triples: mt, lex4: ml, prod4: mq, bits: mb, triplesPerSec: mt / ms * 1000, lex4PerSec: ml / ms * 1000, bitsPerSec: mb / ms * 1000, mbSent: bytes / 1e6 };
      if (mt + ml + mq + mb > 0) console.log(`preprocessing (${prepLabel(where)}): ${mt} triples + ${ml} lex4 + ${mq} prod4 closure items + ${mb} bits in ${ms.toFixed(0)} ms => ${per(mt)} triples/s, ${per(ml)} lex4/s and ${per(mb)} bits/s together (= ${(mb / 52 / ms * 1000).toFixed(0)} comparisons' worth of bits/s); ${(bytes / 1e6).toFixed(1)} MB sent by all parties`);
      // CPU per node (process.cpuUsage of each node process over the step, user + system; the
      // triples and closure items made alongside included): a figure that other load on the machine
      // disturbs less than bits/s, though contention still inflates it
      const cpus = results.map((r) => r[s]!.cpuMs).filter((x): x is number => x !== undefined);
      if (mb > 0 && cpus.length === results.length) {
        const perK = cpus.map((c) => (c / mb) * 1000);
        const mean = perK.reduce((a, x) => a + x, 0) / perK.length;
        if (section.preprocessing) section.preprocessing.cpuMsPer1000Bits = mean;
        console.log(`  CPU ms per 1000 bits, per node: ${mean.toFixed(2)} (nodes ${Math.min(...perK).toFixed(2)}-${Math.max(...perK).toFixed(2)}; ${(cpus.reduce((a, x) => a + x, 0) / 1000).toFixed(2)} s of CPU over the ${cpus.length} nodes in ${(ms / 1000).toFixed(2)} s)`);
        const msgs = results.map((r) => r[s]!.messagesSent).filter((x): x is number => x !== undefined);
        if (msgs.length === results.length) console.log(`  messages sent per 1000 bits, per node: ${(msgs.reduce((a, x) => a + x, 0) / msgs.length / mb * 1000).toFixed(2)} (every message to one peer counted once)`);
      }
      continue;
    }
    if (r0.step.startsWith('mul')) {
      const k = Number(r0.step.split('x')[1]);
      section.mul.push({ k, ms, perSec: k / ms * 1000, bytesPerMul: bytes / k });
      console.log(`mul x${k} (one job, 1 round): ${ms.toFixed(0)} ms => ${(k / ms * 1000).toFixed(0)} multiplications/s; ${(bytes / k).toFixed(0)} bytes/mul (all parties)`);
      continue;
    }
    if (r0.step.startsWith('lt')) {
      const k = parseInt(r0.step.split('x')[1]!, 10);
      // each job's time at its slowest party; several jobs: the median, with the range
      const jobs = r0.samples?.length ?? 1;
      const per = r0.samples ? r0.samples.map((_, j) => Math.max(...results.map((r) => r[s]!.samples![j]!))) : [ms];
      const med = pct(per, 0.5);
      const rate = (x: number): string => (k / x * 1000).toFixed(0);
      section.lt.push({ k, jobs, rounds: r0.rounds, medianMs: med, perSec: k / med * 1000, bytesPerComparison: bytes / k / jobs });
      const range = jobs > 1 ? ` (${jobs} jobs: ${rate(Math.max(...per))}-${rate(Math.min(...per))}/s)` : '';
      console.log(`lt x${k} (${jobs > 1 ? `median of ${jobs} jobs` : 'one job'}, ${r0.rounds} rounds): ${med.toFixed(0)} ms => ${rate(med)} comparisons/s${range}; per comparison ${(bytes / k / jobs).toFixed(0)} bytes (all parties), ${(r0.triples / k / jobs).toFixed(1)} triples + ${(r0.lex4 / k / jobs).toFixed(1)} lex4 closure items, ${(4 * r0.nibbles / k / jobs).toFixed(1)} random bits`);
      continue;
    }
    const samples = results[0]![s]!.samples!;
    section.ltLatency = { jobs: samples.length, p50Ms: pct(samples, 0.5), p99Ms: pct(samples, 0.99), maxMs: Math.max(...samples) };
    console.log(`single lt latency (one job per comparison, party 1, ${samples.length} jobs after ${LAT_WARMUP} warm-up jobs): p50 ${pct(samples, 0.5).toFixed(2)} ms, p99 ${pct(samples, 0.99).toFixed(2)} ms`);
    const cold = results[0]![s]!.coldSamples;
    if (cold) console.log(`  (the warm-up jobs themselves, the first of these processes: p50 ${pct(cold, 0.5).toFixed(2)} ms, p99 ${pct(cold, 0.99).toFixed(2)} ms)`);
  }
}

async function simnet(prep: PreprocessingOptions, plan: Step[]): Promise<StepResult[][]> {
  const net = new SimNetwork({ n, seed: 1, link: { latencyMs: 0.1 } });
  const parties: Party[] = Array.from({ length: n }, (_, i) => createParty({ n, t, transport: net.transport(i + 1), preprocessing: prep }));
  await net.settle(Promise.all(parties.map((p) => p.start())));
  const out: StepResult[][] = parties.map(() => []);
  for (const step of plan) {
    const b0 = parties.map((p) => net.stats.perLink(p.id, p.id));
    void b0;
    const sent = (i: number) => (): number => {
      let b = 0;
      for (let j = 1; j <= n; j++) if (j !== i) b += net.stats.perLink(i, j).bytes;
      return b;
    };
    const res = await net.settle(Promise.all(parties.map((p) => runStep(p, step, sent(p.id)))));
    res.forEach((r, i) => out[i]!.push(r));
  }
  for (const p of parties) await p.stop();
  return out;
}

async function freePorts(k: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: k }, () => new Promise<Server>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => resolve(s));
  })));
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

async function libp2p(prep: PreprocessingOptions, plan: Step[]): Promise<StepResult[][]> {
  const worker = fileURLToPath(new URL('./mpc-party.ts', import.meta.url));
  const ids = await Promise.all(Array.from({ length: n }, () => generateIdentity()));
  const sockets = LINKS_OVER === 'unix' ? mkdtempSync(join(tmpdir(), 'tenebra-mpc-')) : undefined;
  const ports = sockets === undefined ? await freePorts(n) : [];
  const peers: PeerEntry[] = ids.map((id, k) => ({
    index: k + 1, peerId: id.peerId, addr: sockets === undefined ? `/ip4/127.0.0.1/tcp/${ports[k]}` : unixSocketMultiaddr(join(sockets, `p${k + 1}.sock`)),
  }));
  const out: StepResult[][] = ids.map(() => []);
  const children: ChildProcess[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      let done = 0;
      ids.forEach((id, k) => {
        const child = fork(worker, [], { execArgv: ['--import', 'tsx', ...(process.env.MPC_NODE_ARGS ?? '').split(' ').filter(Boolean)], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
        children.push(child);
        child.on('message', (m: { type: string; result?: StepResult; error?: string }) => {
          if (m.type === 'error') reject(new Error(`party ${k + 1}: ${m.error}`));
          if (m.type === 'step') out[k]!.push(m.result!);
          if (m.type === 'done' && ++done === n) resolve();
        });
        child.send({ type: 'config', config: { self: k + 1, n, t, privateKeyHex: Buffer.from(id.privateKey).toString('hex'), peers, prep, plan, ...(LINKS ? { links: LINKS } : {}) } });
      });
    });
  } finally {
    // Ask each party to exit (so --cpu-prof in MPC_NODE_ARGS can write its profile); kill what is left after 3 s.
    await Promise.all(children.map((c) => new Promise<void>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve();
      const timer = setTimeout(() => { c.kill('SIGKILL'); resolve(); }, 3000);
      c.once('exit', () => { clearTimeout(timer); resolve(); });
      try { c.send({ type: 'exit' }); } catch { c.kill('SIGKILL'); }
    })));
    if (sockets !== undefined) rmSync(sockets, { recursive: true, force: true });
  }
  return out;
}

const os = await import('node:os');
const started = new Date().toISOString();
const loadAtStart = os.loadavg();
const load = (): string => os.loadavg().map((x) => x.toFixed(1)).join(' ');
console.log(`Tenebra MPC benchmark: n=${n}, t=${t}, p=2^127-1, L=48, kappa=${DEFAULT_KAPPA}${quick ? ' (quick)' : ''}; machine: ${os.cpus().length} cores, node ${process.version}; load average at start ${load()}`);
const c = costOf('lt', 48);
console.log(`lt declares: ${c.rounds} rounds, ${c.triples} triples + ${c.lex4} lex4 closure items (${LEX4.width} elements, ${LEX4.subsets.length} products each), ${c.bits} random bits (${c.nibbles} nibbles), ${c.masks} PRSS mask, ${c.elementsPerPeer} field elements (16 B) per peer`);
if (!args.has('--libp2p-only')) {
  print(`simulated network (${n} parties in one thread; online, dealer-made reserve)`, await simnet(dealerPrep, online));
  if (!latOnly) print('simulated network (committee preprocessing)', await simnet(committeePrep, production));
}
if (args.has('--background')) {
  // The cluster's case: committee-made preprocessing in the background (cluster.ts config, batch from
  // MPC_BATCH) while single comparisons run; the first ones wait for a batch made inline.
  const batch = Number(process.env.MPC_BATCH ?? 512);
  const bg: PreprocessingOptions = { mode: 'committee', targetTriples: 20_000, targetBits: 40_000, batch, background: true, pieces: PIECES };
  const res = await libp2p(bg, [{ kind: 'latency', count: LAT, warmup: LAT_WARMUP }]);
  const s = res[0]![0]!.samples!;
  const made = res[0]![0]!.made;
  const where = `libp2p, ${n} processes over ${LINKS_OVER}, committee preprocessing in the background (batch ${batch})`;
  console.log(`\n== ${where} ==`);
  sections.push({ where, mul: [], lt: [], ltLatency: { jobs: s.length, p50Ms: pct(s, 0.5), p99Ms: pct(s, 0.99), maxMs: Math.max(...s) } });
  console.log(`single lt latency (${s.length} jobs after ${LAT_WARMUP} warm-up jobs): p50 ${pct(s, 0.5).toFixed(2)} ms, p99 ${pct(s, 0.99).toFixed(2)} ms, max ${Math.max(...s).toFixed(1)} ms; meanwhile made ${made.triples} triples + ${made.lex4} lex4 + ${made.prod4} prod4 + ${made.bits} bits in ${res[0]![0]!.ms.toFixed(0)} ms`);
} else if (!args.has('--sim-only')) {
  if (!args.has('--production-only')) print(`libp2p, ${n} processes on 127.0.0.1 over ${LINKS_OVER}${LINKS ? ` (links: ${LINKS.latencyMs} ± ${LINKS.jitterMs} ms${LINKS.bandwidthMbps ? `, ${LINKS.bandwidthMbps} Mbit/s` : ''})` : ''} (online, dealer-made reserve)`, await libp2p(dealerPrep, online));
  if (!latOnly && !args.has('--batched-only')) print(`libp2p, ${n} processes over ${LINKS_OVER} (committee preprocessing)`, await libp2p(committeePrep, production));
}
console.log(`\nload average at end ${load()} (other work on the machine slows every figure above)`);
if (JSON_OUT) {
  const run = { bench: 'mpc', n, t, quick, started, argv: process.argv.slice(2), cores: os.cpus().length, node: process.version, loadAtStart, loadAtEnd: os.loadavg(), committeeLinks: LINKS_OVER, ...(LINKS ? { links: LINKS } : {}), sections };
  writeFileSync(JSON_OUT, `${JSON.stringify(run, null, 2)}\n`);
  console.log(`figures written to ${JSON_OUT}`);
}
