// How long committee preprocessing holds an event loop at a time, by batch size, with and without
// phase-A pieces (PreprocessingOptions.pieces, ADR 0047): five parties on the simulated network in
// this one thread, the cluster's mix (scripts/src/cluster.ts targets, times --x). Per phase-A step
// of party 1 the longest uninterrupted computation (the step itself unsplit, its longest piece in
// pieces), and CPU ms per 1000 bits per party. Prints figures, asserts nothing.
//   node --import tsx scripts/bench/prep-pieces.ts [--batch 1024] [--pieces 0|1] [--x 5] [--runs 2]
import '@tenebra/transport/src/polyfill';
import { SimNetwork } from '@tenebra/transport';
import { createParty, type Party, type PreprocessingOptions } from '@tenebra/mpc';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const n = 5;
const t = 2;
const x = arg('x', 5);
const batch = arg('batch', 1024);
const pieces = arg('pieces', 1) === 1;
const runs = arg('runs', 2);
const prep: PreprocessingOptions = { mode: 'committee', targetTriples: 2_000 * x, targetLex4: 3_400 * x, targetProd4: 1_000 * x, targetBits: 40_000 * x, batch, background: false, pieces };
const pct = (v: number[], p: number): number => v[Math.min(v.length - 1, Math.floor((v.length * p) / 100))]!;
for (let run = 0; run < runs; run++) {
  const holds: number[] = [];
  const piecesPer: number[] = [];
  const net = new SimNetwork({ n, seed: 1 + run, link: { latencyMs: 0.1 } });
  const parties: Party[] = Array.from({ length: n }, (_, i) => createParty({
    n, t, transport: net.transport(i + 1), preprocessing: prep,
    log: (e) => {
      const ev = e as { ev?: string; ms?: number; maxMs?: number; pieces?: number; piece?: number; stepMs?: number };
      // in pieces every piece logs a prep-step; the last carries the step's figures
      if (ev.piece !== undefined && ev.pieces === undefined) return;
      // steps that only found the round incomplete (a few us) are left out
      if (i === 0 && ev.ev === 'prep-step' && (ev.stepMs ?? ev.ms ?? 0) > 0.1) {
        holds.push(ev.maxMs ?? ev.ms!);
        piecesPer.push(ev.pieces ?? 1);
      }
    },
  }));
  await net.settle(Promise.all(parties.map((p) => p.start())));
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await net.settle(Promise.all(parties.map((p) => p.fill())), { maxTimeMs: 3_600_000 });
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const made = parties[0]!.status().preprocessing.made;
  holds.sort((a, b) => a - b);
  const cpuPer = (c.user + c.system) / 1000 / n / (made.bits / 1000);
  console.log(
    `batch ${batch}, pieces ${pieces ? 'on' : 'off'}, run ${run + 1}: ${made.bits} bits in ${made.batches} batches, ${(ms / 1000).toFixed(2)} s; ` +
      `CPU ${cpuPer.toFixed(2)} ms per 1000 bits per party; longest hold per step (party 1, ${holds.length} steps) ` +
      `p50 ${pct(holds, 50).toFixed(2)} p90 ${pct(holds, 90).toFixed(2)} max ${holds[holds.length - 1]!.toFixed(2)} ms; ` +
      `pieces per step ${Math.min(...piecesPer)}-${Math.max(...piecesPer)}`,
  );
}
process.exit(0);
