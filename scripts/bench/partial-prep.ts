// Committee preprocessing with parties down (docs/decisions/0017-production-with-parties-down.md):
// prints, on the simulated network (all parties in this one process, one thread), how long the
// committee takes to make the same reserve with all n up and with `--down k` of them crashed after
// setup, and the bytes all parties sent. Prints figures, asserts nothing.
//   node --import tsx scripts/bench/partial-prep.ts [--nodes 7 --threshold 2 --down 2] [--triples 5000 --bits 20000]
// One thread runs every party, so the wall time is the sum of the parties' work (fewer parties: less
// work in all), not what one node process would see.
import '@tenebra/transport/src/polyfill';
import { SimNetwork } from '@tenebra/transport';
import { createParty, type Party } from '@tenebra/mpc';
import { checkCommitteeSize } from '@tenebra/config';

const valueOf = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const n = valueOf('nodes', 7);
const t = valueOf('threshold', 2);
const down = valueOf('down', 2);
checkCommitteeSize(n, t);
const prep = { targetTriples: valueOf('triples', 5000), targetBits: valueOf('bits', 20000), batch: valueOf('batch', 500), background: false };

async function run(k: number): Promise<void> {
  const net = new SimNetwork({ n, seed: 7, link: { latencyMs: 0.2, jitterMs: 0.05 } });
  const parties: Party[] = [];
  for (let i = 1; i <= n; i++) parties.push(createParty({ n, t, transport: net.transport(i), preprocessing: prep }));
  await net.settle(Promise.all(parties.map((p) => p.start())));
  for (let i = n - k + 1; i <= n; i++) net.crash(i);
  const live = parties.slice(0, n - k);
  const b0 = net.stats.bytes;
  const t0 = performance.now();
  await net.settle(Promise.all(live.map((p) => p.fill())), { maxTimeMs: 3_600_000 });
  const ms = performance.now() - t0;
  const s = live[0]!.status();
  const bits = s.reserve.bits;
  console.log(
    `n=${n} t=${t}, ${n - k} up: ${s.reserve.triples} triples + ${s.reserve.lex4} lex4 + ${s.reserve.prod4} prod4 + ${bits} bits in ${ms.toFixed(0)} ms ` +
      `(${((bits / ms) * 1000).toFixed(0)} bits/s together), ${s.preprocessing.committedBatches} batches, ${((net.stats.bytes - b0) / 1e6).toFixed(1)} MB sent by all parties`,
  );
  await Promise.all(parties.map((p) => p.stop()));
}

await run(0);
if (down > 0) await run(down);
console.log(`load average at end ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')} (other work on the machine slows every figure)`);
