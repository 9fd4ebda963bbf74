// Committee preprocessing alone on the simulated network (five parties in this one thread): prints
// the production rate, asserts nothing. For CPU profiles of production:
//   node --cpu-prof --cpu-prof-dir=DIR --import tsx scripts/bench/prep-profile.ts
import '@tenebra/transport/src/polyfill';
import { SimNetwork } from '@tenebra/transport';
import { createParty, type Party } from '@tenebra/mpc';

const n = 5;
const t = 2;
const net = new SimNetwork({ n, seed: 1, link: { latencyMs: 0.1 } });
const prep = { mode: 'committee' as const, targetTriples: 3000, targetLex4: 3000, targetProd4: 750, targetBits: 12000, batch: 500, background: false };
const parties: Party[] = Array.from({ length: n }, (_, i) => createParty({ n, t, transport: net.transport(i + 1), preprocessing: prep }));
await net.settle(Promise.all(parties.map((p) => p.start())));
const t0 = performance.now();
await net.settle(Promise.all(parties.map((p) => p.fill())));
const ms = performance.now() - t0;
console.log(`committee preprocessing (5 parties, one thread): ${prep.targetTriples} triples + ${prep.targetLex4} lex4 + ${prep.targetProd4} prod4 closure items + ${prep.targetBits} bits in ${ms.toFixed(0)} ms => ${(prep.targetBits / ms * 1000).toFixed(0)} bits/s with the triples and closure items alongside`);
for (const p of parties) await p.stop();
