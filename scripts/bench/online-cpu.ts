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
const prep = { mode: 'dealer' as const, targetTriples: 100, targetLex4: 5 * total + 100, targetProd4: 0, targetBits: 52 * total + 100, batch: 8192, background: false };
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
const c0 = process.cpuUsage();
const w0 = performance.now();
for (let i = 0; i < J; i++) await one();
const c = process.cpuUsage(c0);
const cpuMs = (c.user + c.system) / 1000;
console.log(`online-cpu: ${J} jobs (lt of 4 + open, 4 rounds each) after ${WARM} warm-up: process CPU ${cpuMs.toFixed(0)} ms, wall ${(performance.now() - w0).toFixed(0)} ms`);
console.log(`  per job (5 parties) ${(cpuMs / J).toFixed(3)} ms; per party per round ${((1000 * cpuMs) / J / 5 / 4).toFixed(1)} us`);
for (const p of parties) await p.stop();
