// Engine CPU per online round on the simulated network: prints figures, asserts nothing.
//   J=600 WARM=200 node --import tsx scripts/bench/online-cpu.ts
// Five parties in this one process (no transport: the engine's own per-round work, its openings,
// late-share checks, masks and the comparison protocol), a dealer-made reserve (INSECURE, a bench
// only), J jobs one after another, each a comparison of 4 values and an opening (4 rounds), after
// WARM untimed ones. Prints process CPU (user + system) per job and per party per round: CPU time,
// not wall time, so that other work on the machine slows it less (it still inflates it, through
// caches and the cost of being descheduled). Copy it beside another tree's node_modules to pair runs.
import '@tenebra/transport/src/polyfill';
import { SimNetwork } from '@tenebra/transport';
import { createParty, shareSecret, type Party } from '@tenebra/mpc';

const J = Number(process.env.J ?? 600);
const WARM = Number(process.env.WARM ?? 300);
const n = 5, t = 2;
const net = new SimNetwork({ n, seed: 1, link: { latencyMs: 0.1 } });
const total = J + WARM + 10;
// A job (lt of 4 at the engine's default width, then an opening) consumes 16 lex4 items and 52
// nibbles (208 random bits). The whole run's reserve is made before the timed part: until
// 2026-12-02 the targets counted 52 bits a job, the reserve ran dry a quarter of the way in and the
// timed part dealt the rest (BigInt dealing and its garbage: about half of the CPU it printed).
const prep = { mode: 'dealer' as const, targetTriples: 100, targetLex4: 16 * total + 100, targetProd4: 0, targetBits: 4 * 52 * total + 100, batch: 8192, background: false };
const parties: Party[] = Array.from({ length: n }, (_, i) => createParty({ n, t, transport: net.transport(i + 1), preprocessing: prep }));
await net.settle(Promise.all(parties.map((p) => p.start())));
await net.settle(Promise.all(parties.map((p) => p.fill())));
const xs = shareSecret([5n, 7n, 9n, 11n], n, t);
const ys = shareSecret([6n, 7n, 8n, 12n], n, t);
let job = 0;
async function one(): Promise<void> {
  const id = `j${job++}`;
  await net.settle(Promise.all(parties.map((p) => p.runJob(id, async (ctx) => {
    const r = await ctx.lt(ctx.fromShares(xs[p.id - 1]!), ctx.fromShares(ys[p.id - 1]!));
    return (await ctx.open(r)).length;
  }))));
}
for (let i = 0; i < WARM; i++) await one();
const before = parties[0]!.status().reserve;
const c0 = process.cpuUsage();
const w0 = performance.now();
for (let i = 0; i < J; i++) await one();
const c = process.cpuUsage(c0);
const cpuMs = (c.user + c.system) / 1000;
// a refill during the timed part shows as more left than before minus what was taken
const after = parties[0]!.status().reserve;
const refilled = (['lex4', 'nibbles', 'triples'] as const).filter((k) => after[k] > before[k] - (after.cursor[k] - before.cursor[k]));
if (refilled.length > 0) console.log(`WARNING: the reserve was refilled during the timed jobs (${refilled.join(', ')}): the figures below include dealer preprocessing`);
console.log(`online-cpu: ${J} jobs (lt of 4 + open, 4 rounds each) after ${WARM} warm-up: process CPU ${cpuMs.toFixed(0)} ms, wall ${(performance.now() - w0).toFixed(0)} ms`);
console.log(`  per job (5 parties) ${(cpuMs / J).toFixed(3)} ms; per party per round ${((1000 * cpuMs) / J / 5 / 4).toFixed(1)} us`);
for (const p of parties) await p.stop();
