// `npm run chaos:real -- --runs 20 [--seed S] [--max-minutes M] [--pace-ms MS] [--kills nodes,sequencer,gateway] [--json FILE]`:
// the real-process fault campaign (chaos-real/campaign.ts). Exit code 1 when any run lost or got an
// order wrong, left an operation unsettled, failed to recover, or did not conserve collateral.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runCampaign, type KillKind, type RunResult } from './chaos-real/campaign';

const USAGE = `usage: npm run chaos:real -- [--runs N] [--seed S] [--max-minutes M] [--pace-ms MS] [--kills nodes,sequencer,gateway] [--json FILE]
  --runs N         runs on one cluster (default 20); each: a kill -9 and restart, then a partition and healing
  --seed S         the fault schedule and the orders (default 1); the same seed draws the same choices
  --max-minutes M  start no run after M minutes (default 60)
  --pace-ms MS     each flow (REST on ETH, WebSocket on SOL) sends one operation every MS ms (default 2500:
                   below what the committee matches on a loaded 2-core machine, so the backlog stays short)
  --kills K,...    what a run may kill (default all: a pair of nodes 70%, the sequencer 15%, the gateway 15%)
  --json FILE      also write the results as JSON`;

function positiveInt(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || (n === 0 && name !== 'seed')) throw new Error(`--${name} must be a positive integer, got ${v}`);
  return n;
}

async function main(): Promise<void> {
  // a loaded machine takes minutes to start seven processes (harness.ts reads it)
  process.env.TENEBRA_TEST_READY_MS ??= '600000';
  const { values } = parseArgs({
    options: {
      runs: { type: 'string' }, seed: { type: 'string' }, 'max-minutes': { type: 'string' }, 'pace-ms': { type: 'string' },
      kills: { type: 'string' }, json: { type: 'string' }, help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const kills = values.kills?.split(',').map((k) => k.trim()) as KillKind[] | undefined;
  for (const k of kills ?? []) if (!['nodes', 'sequencer', 'gateway'].includes(k)) throw new Error(`--kills: unknown kind ${k}`);
  const seed = positiveInt('seed', values.seed, 1);
  const t0 = Date.now();
  const { results } = await runCampaign({
    runs: positiveInt('runs', values.runs, 20), seed, maxMinutes: positiveInt('max-minutes', values['max-minutes'], 60),
    paceMs: positiveInt('pace-ms', values['pace-ms'], 2_500), ...(kills ? { kills } : {}), progressMs: 5_000,
    log: (line) => console.log(line),
  });
  const bad = results.filter(failed);
  console.log(`\n${summary(results, seed, Date.now() - t0).join('\n')}`);
  if (values.json) writeFileSync(values.json, JSON.stringify(results, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2));
  process.exitCode = bad.length > 0 ? 1 : 0;
}

export function failed(r: RunResult): boolean {
  return r.lost > 0 || r.wrong > 0 || r.unsettled > 0 || r.problems.length > 0 || r.driftMicro < 0n || r.driftMicro > r.driftTolerance;
}

function summary(results: RunResult[], seed: number, ms: number): string[] {
  const sum = (f: (r: RunResult) => number) => results.reduce((s, r) => s + f(r), 0);
  const stat = (xs: number[]) => {
    if (xs.length === 0) return '-';
    const s = [...xs].sort((a, b) => a - b);
    const q = (p: number) => (s[Math.min(s.length - 1, Math.floor(p * s.length))]! / 1000).toFixed(1);
    return `median ${q(0.5)} s, max ${(s.at(-1)! / 1000).toFixed(1)} s`;
  };
  const byKind = (k: string) => results.filter((r) => r.kill.kind === k);
  const lines = [
    `chaos:real seed ${seed}: ${results.length} runs in ${(ms / 60_000).toFixed(1)} min, ${results.filter(failed).length} failed`,
    `  acknowledged operations ${sum((r) => r.acked)}, lost ${sum((r) => r.lost)}, wrong ${sum((r) => r.wrong)}, unsettled ${sum((r) => r.unsettled)}`,
    `  collateral conserved in ${results.filter((r) => r.driftMicro >= 0n && r.driftMicro <= r.driftTolerance).length} of ${results.length} runs (drifts, µUSDC: ${results.map((r) => r.driftMicro.toString()).join(' ')})`,
  ];
  for (const k of ['nodes', 'sequencer', 'gateway']) {
    const rs = byKind(k);
    if (rs.length) lines.push(`  kill ${k.padEnd(9)} ${String(rs.length).padStart(2)} runs: ack stall ${stat(rs.map((r) => r.kill.stallMs))}; matching stall ${stat(rs.map((r) => r.kill.matchStallMs))}; recovery after restart ${stat(rs.map((r) => r.kill.recoverMs))}`);
  }
  lines.push(`  partitions    ${String(results.length).padStart(2)} runs (${results.filter((r) => r.partition.nodes.length === 1).length} of one node, ${results.filter((r) => r.partition.nodes.length === 2).length} of two): ack stall ${stat(results.map((r) => r.partition.stallMs))}; matching stall ${stat(results.map((r) => r.partition.matchStallMs))}; recovery after healing ${stat(results.map((r) => r.partition.recoverMs))}`);
  lines.push(`  settling (flows stopped until every acknowledged order showed its reference state): ${stat(results.map((r) => r.settleMs))}`);
  return lines;
}

main().catch((e: unknown) => {
  console.error(`chaos:real failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
  process.exit(2);
});
