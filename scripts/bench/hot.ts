// Microbenchmark of the MPC engine's CPU hot path on the simulated network (5 parties in one thread):
// repeated lt batches on a dealer-made reserve, then committee preprocessing, each repeated so the
// figures can be compared back to back. Prints figures only.
//   node --import tsx scripts/bench/hot.ts [--reps 3] [--lt 2000] [--prof DIR] [--only lt|prep]
// --prof writes a V8 CPU profile of the timed part alone (not the setup) to DIR.
import '@tenebra/transport/src/polyfill';
import { writeFileSync, mkdirSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { SimNetwork } from '@tenebra/transport';
import { createParty, type Party, type PreprocessingOptions } from '@tenebra/mpc';
import { runStep } from './mpc-plan';
import { parseFlags, positiveNumber } from '../src/flags';

const FLAGS = parseFlags(process.argv.slice(2), ['reps', 'lt', 'prof', 'only']);
const reps = positiveNumber(FLAGS.str.get('reps') ?? '3', 'reps');
const LT = positiveNumber(FLAGS.str.get('lt') ?? '2000', 'lt');
const profDir = FLAGS.str.get('prof') ?? '';
const only = FLAGS.str.get('only') ?? '';
if (only !== '' && only !== 'lt' && only !== 'prep') throw new Error(`--only: '${only}' is not lt or prep`);
const n = 5;
const t = 2;

async function withParties<T>(prep: PreprocessingOptions, f: (ps: Party[], net: SimNetwork) => Promise<T>): Promise<T> {
  const net = new SimNetwork({ n, seed: 1, link: { latencyMs: 0.1 } });
  const ps = Array.from({ length: n }, (_, i) => createParty({ n, t, transport: net.transport(i + 1), preprocessing: prep }));
  await net.settle(Promise.all(ps.map((p) => p.start())));
  try {
    return await f(ps, net);
  } finally {
    for (const p of ps) await p.stop();
  }
}

const session = new Session();
if (profDir) {
  session.connect();
  await session.post('Profiler.enable');
}
async function timed<T>(f: () => Promise<T>): Promise<T> {
  if (profDir) await session.post('Profiler.start');
  try {
    return await f();
  } finally {
    if (profDir) {
      const { profile } = await session.post('Profiler.stop');
      mkdirSync(profDir, { recursive: true });
      writeFileSync(`${profDir}/hot-${Date.now()}.cpuprofile`, JSON.stringify(profile));
    }
  }
}

function cpuMs(c0: NodeJS.CpuUsage): string {
  const d = process.cpuUsage(c0);
  return ((d.user + d.system) / 1000).toFixed(0);
}

console.log(`load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
if (only !== 'prep') {
  const lts = reps * LT + 10;
  const dealer: PreprocessingOptions = { mode: 'dealer', targetTriples: lts, targetLex4: 5 * lts, targetProd4: 0, targetBits: 52 * lts, batch: 8192, background: false };
  await withParties(dealer, async (ps, net) => {
    const f0 = performance.now();
    await net.settle(Promise.all(ps.map((p) => runStep(p, { kind: 'fill' }, () => 0))));
    console.log(`dealer fill: ${(performance.now() - f0).toFixed(0)} ms`);
    await timed(async () => {
      for (let r = 0; r < reps; r++) {
        const c0 = process.cpuUsage();
        const res = await net.settle(Promise.all(ps.map((p) => runStep(p, { kind: 'lt', n: LT }, () => 0))));
        const ms = Math.max(...res.map((x) => x.ms));
        console.log(`lt x${LT}: ${ms.toFixed(0)} ms => ${((LT / ms) * 1000).toFixed(0)} comparisons/s; cpu ${cpuMs(c0)} ms`);
      }
    });
  });
}
if (only !== 'lt') {
  for (let r = 0; r < reps; r++) {
    const committee: PreprocessingOptions = { mode: 'committee', targetTriples: 1000, targetLex4: 1000, targetBits: 4000, batch: 500, background: false };
    await withParties(committee, async (ps, net) => {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      await timed(() => net.settle(Promise.all(ps.map((p) => p.fill()))));
      const ms = performance.now() - t0;
      console.log(`committee 4000 bits: ${ms.toFixed(0)} ms => ${((4000 / ms) * 1000).toFixed(0)} bits/s; cpu ${cpuMs(c0)} ms`);
    });
  }
}
console.log(`load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
