// npm run fuzz -- [--inputs N] [--seed S] [--workers W] [--max-minutes M]: the fuzzing campaign of issue 25
// (gateway/fuzz/campaign.ts) against in-process gateways. With W > 1 the inputs are split over W
// child processes (seeds S, S+1, ...; each its own gateway), and their tallies are summed. Prints a
// progress line every 3 s, each violation as it happens, and the figures at the end; exits 1 on any
// violation. --max-minutes bounds the duration: the run stops there and reports the inputs it ran.
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { runCampaign, report, type CampaignResult } from './campaign';
import { Tally, type Violation } from './verdict';

const RESULT_TAG = 'FUZZ-RESULT ';

const { values } = parseArgs({
  options: { inputs: { type: 'string', default: '100000' }, seed: { type: 'string' }, workers: { type: 'string', default: '1' }, 'max-minutes': { type: 'string' }, child: { type: 'boolean', default: false } },
});
const inputs = Number(values.inputs);
const workers = Number(values.workers);
const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000;
if (!Number.isInteger(inputs) || inputs < 1) throw new Error('--inputs must be a positive integer');
if (!Number.isInteger(workers) || workers < 1 || workers > 16) throw new Error('--workers must be 1 to 16');
const maxMinutes = values['max-minutes'] !== undefined ? Number(values['max-minutes']) : undefined;
if (maxMinutes !== undefined && !(maxMinutes > 0)) throw new Error('--max-minutes must be positive');
const bound = maxMinutes !== undefined ? { maxMinutes } : {};

interface Summary {
  total: number;
  seconds: number;
  inputs: [string, number][];
  refused: [string, number][];
  ms: [string, number][];
  violations: Violation[];
}

function summary(r: CampaignResult): Summary {
  const t = r.tally;
  return { total: t.total, seconds: r.seconds, inputs: [...t.inputs], refused: [...t.refused], ms: [...t.ms], violations: t.violations };
}

async function runChild(i: number, n: number, progress: number[]): Promise<Summary> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', '--inputs', String(n), '--seed', String(seed + i), ...(maxMinutes !== undefined ? ['--max-minutes', String(maxMinutes)] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  let result: Summary | null = null;
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (l) => {
    if (l.startsWith(RESULT_TAG)) result = JSON.parse(l.slice(RESULT_TAG.length)) as Summary;
    else if (l.startsWith('progress ')) progress[i] = Number(l.split(' ')[1]);
    else console.log(`[worker ${i}] ${l}`);
  });
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  if (!result) throw new Error(`fuzz worker ${i} ended (${code}) without a result`);
  return result;
}

if (values.child) {
  const r = await runCampaign({
    inputs, seed, progressEveryMs: 1_000, ...bound,
    progress: (t) => console.log(`progress ${t.total}`),
    onViolation: (v) => console.log(`VIOLATION [${v.surface}] ${v.what}\n  input: ${v.input}`),
  });
  console.log(RESULT_TAG + JSON.stringify(summary(r)));
  process.exit(0);
} else if (workers === 1) {
  const r = await runCampaign({
    inputs, seed, ...bound,
    progress: (t, ms) => console.log(`fuzz: ${t.total}/${inputs} inputs, ${t.violations.length} violations, ${(ms / 1000).toFixed(0)} s, ${(t.total / (ms / 1000)).toFixed(0)}/s`),
    onViolation: (v) => console.log(`VIOLATION [${v.surface}] ${v.what}\n  input: ${v.input}`),
  });
  for (const l of report(r)) console.log(l);
  process.exit(r.tally.violations.length ? 1 : 0);
} else {
  const t0 = Date.now();
  const progress = Array<number>(workers).fill(0);
  const timer = setInterval(() => {
    const done = progress.reduce((a, b) => a + b, 0);
    const s = (Date.now() - t0) / 1000;
    console.log(`fuzz: ${done}/${inputs} inputs over ${workers} workers, ${s.toFixed(0)} s, ${(done / s).toFixed(0)}/s`);
  }, 3_000);
  const shares = Array.from({ length: workers }, (_, i) => Math.floor(inputs / workers) + (i < inputs % workers ? 1 : 0));
  const parts = await Promise.all(shares.map((n, i) => runChild(i, n, progress)));
  clearInterval(timer);
  const tally = new Tally();
  for (const p of parts) {
    for (const [k, v] of p.inputs) tally.inputs.set(k, (tally.inputs.get(k) ?? 0) + v);
    for (const [k, v] of p.refused) tally.refused.set(k, (tally.refused.get(k) ?? 0) + v);
    for (const [k, v] of p.ms) tally.timed(k, v);
    tally.violations.push(...p.violations);
  }
  const lines = report({ tally, seconds: (Date.now() - t0) / 1000, seed });
  lines[0] = `${lines[0]} over ${workers} workers (seeds ${seed}..${seed + workers - 1})`;
  for (const l of lines) console.log(l);
  process.exit(tally.violations.length ? 1 : 0);
}
