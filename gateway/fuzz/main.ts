// npm run fuzz -- [--inputs N] [--seed S]: the fuzzing campaign of issue 25 (gateway/fuzz/campaign.ts)
// against an in-process gateway. Prints a progress line every 3 s and the figures at the end; exits 1
// on any violation.
import { parseArgs } from 'node:util';
import { runCampaign, report } from './campaign';

const { values } = parseArgs({ options: { inputs: { type: 'string', default: '100000' }, seed: { type: 'string' } } });
const inputs = Number(values.inputs);
const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000;
if (!Number.isInteger(inputs) || inputs < 1) throw new Error('--inputs must be a positive integer');

const r = await runCampaign({
  inputs, seed,
  progress: (t, ms) => console.log(`fuzz: ${t.total}/${inputs} inputs, ${t.violations.length} violations, ${(ms / 1000).toFixed(0)} s, ${(t.total / (ms / 1000)).toFixed(0)}/s`),
});
for (const l of report(r)) console.log(l);
process.exit(r.tally.violations.length ? 1 : 0);
