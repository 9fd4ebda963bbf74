// npm run chaos -- --seeds 1000 [--from S] [--faults crash,restart,freeze,delay,partition,mixed]
//   [--replay-every K] [--max-minutes M] [--orders N] [--job-boundaries intake|progress|both]
//   [--share-fanout all|spare|minimal] [--out FILE]
// The seeded simulation campaign (docs/reliability.md, "Seeded simulation"): seed S runs the fault
// kind faults[S mod k] (sim-run.ts), every K-th seed of each kind runs twice and must give the same history hash.
// --job-boundaries: the sequencer's policy (ADR 0008; default progress); 'both' runs every seed under
// each, so a seed's two runs differ only in where jobs end. Prints a line every 5 s, stops starting seeds after --max-minutes, and ends with per kind: runs,
// failures, the failing seeds with a replay command, and a histogram of the time to recover.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_JOB_BOUNDARIES, JOB_BOUNDARY_POLICIES, type JobBoundaryPolicy } from '@tenebra/config';
import { SHARE_FANOUTS, type ShareFanout } from '@tenebra/mpc';
import { FAULT_KINDS, runSeed, type FaultKind, type RunResult } from './sim-run';
import { histogram, kindOf, type KindSummary } from './summary';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1000' },
    from: { type: 'string', default: '1' },
    faults: { type: 'string', default: FAULT_KINDS.join(',') },
    'replay-every': { type: 'string', default: '10' },
    'max-minutes': { type: 'string', default: '120' },
    orders: { type: 'string', default: '20' },
    'job-boundaries': { type: 'string', default: DEFAULT_JOB_BOUNDARIES },
    'share-fanout': { type: 'string' },
    out: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});
const seeds = Number(values.seeds);
const from = Number(values.from);
const replayEvery = Number(values['replay-every']);
const maxMs = Number(values['max-minutes']) * 60_000;
const orders = Number(values.orders);
const policies: JobBoundaryPolicy[] = values['job-boundaries'] === 'both' ? ['intake', 'progress'] : [values['job-boundaries'] as JobBoundaryPolicy];
for (const p of policies) if (!JOB_BOUNDARY_POLICIES.includes(p)) throw new Error(`--job-boundaries: intake, progress or both, got ${p}`);
const shareFanout = values['share-fanout'] as ShareFanout | undefined;
if (shareFanout !== undefined && !SHARE_FANOUTS.includes(shareFanout)) throw new Error(`--share-fanout: one of ${SHARE_FANOUTS.join(', ')}, got ${shareFanout}`);
const faults = values.faults.split(',').map((s) => s.trim()).filter(Boolean) as FaultKind[];
for (const f of faults) if (!FAULT_KINDS.includes(f)) throw new Error(`unknown fault kind ${f} (known: ${FAULT_KINDS.join(', ')})`);
if (!Number.isSafeInteger(seeds) || seeds < 1 || !Number.isSafeInteger(from) || from < 0) throw new Error('--seeds and --from take whole numbers');

const byKind = new Map<FaultKind, KindSummary>(faults.map((k) => [k, { runs: 0, failures: 0, failing: [], recoverMs: [], replays: 0, replayMismatches: 0 }]));
const replayCmd = (seed: number, kind: FaultKind, policy: JobBoundaryPolicy): string => `npm run chaos -- --from ${seed} --seeds 1 --faults ${kind}${orders !== 20 ? ` --orders ${orders}` : ''}${policy !== DEFAULT_JOB_BOUNDARIES ? ` --job-boundaries ${policy}` : ''}${shareFanout ? ` --share-fanout ${shareFanout}` : ''} --verbose`;
const started = performance.now();
let done = 0;
let failed = 0;
let current = from;
const progress = setInterval(() => {
  const s = (performance.now() - started) / 1000;
  console.log(`[${s.toFixed(0)} s] ${done}/${seeds * policies.length} runs, ${failed} failed, at seed ${current} (${(done / Math.max(s, 1e-9)).toFixed(2)} runs/s)`);
}, 5_000);

let stoppedEarly = false;
for (let seed = from; seed < from + seeds; seed++) {
  if (performance.now() - started > maxMs) {
    stoppedEarly = true;
    break;
  }
  current = seed;
  const kind = kindOf(seed, faults);
  const sum = byKind.get(kind)!;
  for (const jobBoundaries of policies) {
    let r: RunResult;
    try {
      r = await runSeed({ seed, kind, orders, jobBoundaries, ...(shareFanout ? { shareFanout } : {}) });
    } catch (e) {
      r = { seed, kind, ok: false, failure: `harness error: ${(e as Error).stack ?? String(e)}`, historyHash: '', recoverMs: null, schedule: '', virtualMs: 0 };
    }
    // every K-th seed of each kind (seed mod K alone would skip the kinds that never fall on it)
    if (r.ok && replayEvery > 0 && Math.floor(seed / faults.length) % replayEvery === 0) {
      const again = await runSeed({ seed, kind, orders, jobBoundaries, ...(shareFanout ? { shareFanout } : {}) });
      sum.replays++;
      if (again.historyHash !== r.historyHash) {
        sum.replayMismatches++;
        r = { ...r, ok: false, failure: `replay: history ${r.historyHash.slice(0, 12)} then ${again.historyHash.slice(0, 12)}` };
      }
    }
    sum.runs++;
    done++;
    if (r.ok) {
      if (r.recoverMs !== null) sum.recoverMs.push(r.recoverMs);
    } else {
      sum.failures++;
      failed++;
      sum.failing.push({ seed, policy: jobBoundaries });
      console.log(`FAIL seed ${seed} (${kind}, ${jobBoundaries} job boundaries; ${r.schedule}): ${r.failure}`);
      console.log(`  replay: ${replayCmd(seed, kind, jobBoundaries)}`);
    }
    if (values.verbose) {
      console.log(`seed ${seed} ${kind} (${jobBoundaries}) ${r.ok ? 'ok' : 'FAILED'}: schedule ${r.schedule}; recovered in ${r.recoverMs?.toFixed(1) ?? '-'} virtual ms; history ${r.historyHash}`);
      if (!r.ok && r.history) console.log(r.history.join('\n'));
    }
  }
}
clearInterval(progress);

const secs = (performance.now() - started) / 1000;
console.log(`\n${done} runs (seeds ${from}..${current}${policies.length > 1 ? `, each under ${policies.join(' and ')} job boundaries` : ''}) in ${secs.toFixed(0)} s${stoppedEarly ? `, stopped by --max-minutes before seed ${current + 1}` : ''}; ${failed} failed`);
console.log('kind       runs  failed  replays(mismatch)  recover p50 / p99 / max (virtual ms)');
for (const [kind, s] of byKind) {
  const sorted = [...s.recoverMs].sort((a, b) => a - b);
  const q = (p: number): string => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(0) : '-');
  console.log(`${kind.padEnd(10)} ${String(s.runs).padStart(4)}  ${String(s.failures).padStart(6)}  ${`${s.replays}(${s.replayMismatches})`.padStart(17)}  ${q(0.5)} / ${q(0.99)} / ${sorted.length ? sorted[sorted.length - 1]!.toFixed(0) : '-'}`);
  console.log(`           time to recover: ${histogram(s.recoverMs)}`);
  for (const f of s.failing) console.log(`           failed seed ${f.seed} (${f.policy}): ${replayCmd(f.seed, kind, f.policy)}`);
}
if (values.out) writeFileSync(values.out, JSON.stringify({ from, seeds: current - from + 1, runs: done, jobBoundaries: policies, ...(shareFanout ? { shareFanout } : {}), seconds: Math.round(secs), stoppedEarly, orders, faults, byKind: Object.fromEntries(byKind) }, null, 1));
process.exitCode = failed ? 1 : 0;
