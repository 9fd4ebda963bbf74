// `npm run cost -- [--data DIR | --env test] [--every S [--times K]]`: what the running cluster's
// work costs, read from every process's Prometheus metrics (docs/decisions/0012-metrics.md): per
// committee node the jobs, ops, rounds, bytes and messages per op, the preprocessing reserve and
// its batches, and what the matching revealed; the gateway's acks, refusals, ack latency and fills;
// the sequencer's journal. Once, or with --every the deltas over each interval (the cost of the
// load running now rather than since each process started).
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { layout, readJson, type ClusterFile } from '@tenebra/config';
import { scrape, sumOf, type Sample } from '@tenebra/metrics';
import { parseFlags } from './flags';

const USAGE = `usage: npm run cost -- [--data DIR | --env test] [--every SECONDS [--times K]]
  prints, per committee node, jobs, ops, rounds per op, bytes and messages sent per op (online rounds
  and preprocessing together: the reserve refills as ops use it), the
  preprocessing reserve and batches, reveals per label; the gateway's acks, refusals, ack latency
  and fills; the sequencer's journal. With --every, the deltas over each interval (K intervals,
  default until Ctrl-C).`;

interface Target {
  name: string;
  role: string;
  url: string;
}

/** Every process of the cluster that serves metrics, from cluster.json. */
export function targetsOf(file: ClusterFile, host = '127.0.0.1'): Target[] {
  const out: Target[] = [];
  for (const p of file.processes) {
    const port = p.ports['metrics'];
    if (port === undefined) continue;
    out.push({ name: p.role === 'committee' ? `node ${p.index}` : p.role, role: p.role, url: `http://${host}:${port}/metrics` });
  }
  return out;
}

type Scrape = Map<string, Sample[]>;

async function scrapeAll(targets: readonly Target[]): Promise<Scrape> {
  const out: Scrape = new Map();
  await Promise.all(targets.map(async (t) => {
    try {
      out.set(t.name, await scrape(t.url));
    } catch {
      out.set(t.name, []); // down (killed, restarting): reported as such
    }
  }));
  return out;
}

/** Sum of a series now, less the same sum in the earlier scrape (when given). */
function delta(now: Sample[], before: Sample[] | undefined, name: string, match: Record<string, string> = {}): number {
  return sumOf(now, name, match) - (before ? sumOf(before, name, match) : 0);
}

/** Label values of a series, e.g. the kinds of reserve_items. */
function labelsOf(s: Sample[], name: string, label: string): string[] {
  return [...new Set(s.filter((x) => x.name === name && x.labels[label] !== undefined).map((x) => x.labels[label]!))].sort();
}

/** The p-quantile of a histogram's delta, by linear interpolation inside its bucket (seconds). */
export function histogramQuantile(now: Sample[], before: Sample[] | undefined, name: string, q: number): number | null {
  const buckets = now.filter((x) => x.name === `${name}_bucket`).map((x) => ({ le: Number(x.labels['le'] === '+Inf' ? Infinity : x.labels['le']), n: x.value }));
  for (const b of buckets) b.n -= before?.find((x) => x.name === `${name}_bucket` && Number(x.labels['le'] === '+Inf' ? Infinity : x.labels['le']) === b.le)?.value ?? 0;
  buckets.sort((a, b) => a.le - b.le);
  const total = buckets.at(-1)?.n ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let prevLe = 0;
  let prevN = 0;
  for (const b of buckets) {
    if (b.n >= rank) {
      if (!Number.isFinite(b.le)) return prevLe; // beyond the last bound: report that bound
      return prevLe + ((rank - prevN) / Math.max(1e-12, b.n - prevN)) * (b.le - prevLe);
    }
    prevLe = b.le;
    prevN = b.n;
  }
  return null;
}

const fmt = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : '-');
const per = (a: number, b: number, digits = 1): string => (b > 0 ? fmt(a / b, digits) : '-');

/** The report for one scrape (and the deltas against an earlier one). */
export function report(targets: readonly Target[], now: Scrape, before?: Scrape, seconds?: number): string {
  const lines: string[] = [];
  const span = before && seconds ? `over the last ${seconds} s` : 'since each process started';
  lines.push(`cost ${span}`);
  lines.push(`${'process'.padEnd(9)} ${'jobs'.padStart(7)} ${'ops'.padStart(7)} ${'rnd/op'.padStart(7)} ${'KB/op'.padStart(8)} ${'msg/op'.padStart(7)} ${'peers'.padStart(5)} ${'bits rsv'.padStart(9)} ${'batches +/-'.padStart(12)}  events`);
  for (const t of targets.filter((x) => x.role === 'committee')) {
    const s = now.get(t.name) ?? [];
    if (s.length === 0) {
      lines.push(`${t.name.padEnd(9)} (no answer: down or restarting)`);
      continue;
    }
    const b = before?.get(t.name);
    const d = (name: string, m: Record<string, string> = {}) => delta(s, b, name, m);
    const ops = d('tenebra_node_ops_applied_total');
    const events = labelsOf(s, 'tenebra_node_party_events_total', 'event')
      .map((e) => [e, d('tenebra_node_party_events_total', { event: e })] as const)
      .filter(([e, v]) => v > 0 && e !== 'prep-batch')
      .map(([e, v]) => `${e} ${v}`).join(', ');
    lines.push([
      t.name.padEnd(9), fmt(d('tenebra_node_jobs_total'), 0).padStart(7), fmt(ops, 0).padStart(7),
      per(d('tenebra_node_rounds_total'), ops).padStart(7), per(d('tenebra_node_peer_sent_bytes_total') / 1024, ops).padStart(8),
      per(d('tenebra_node_peer_sent_messages_total'), ops).padStart(7), fmt(sumOf(s, 'tenebra_node_peers_up'), 0).padStart(5),
      fmt(sumOf(s, 'tenebra_node_reserve_items', { kind: 'bits' }), 0).padStart(9),
      `${fmt(d('tenebra_node_prep_batches_total', { outcome: 'committed' }), 0)}/${fmt(d('tenebra_node_prep_batches_total', { outcome: 'dropped' }), 0)}`.padStart(12),
      ` ${events || '-'}`,
    ].join(' '));
  }
  const first = targets.find((x) => x.role === 'committee' && (now.get(x.name)?.length ?? 0) > 0);
  if (first) {
    const s = now.get(first.name)!;
    const b = before?.get(first.name);
    const ops = delta(s, b, 'tenebra_node_ops_applied_total');
    const reveals = labelsOf(s, 'tenebra_node_reveals_total', 'label')
      .map((l) => `${l} ${per(delta(s, b, 'tenebra_node_reveals_total', { label: l }), ops, 2)}`).join(', ');
    lines.push(`reveals per op (${first.name}): ${reveals || '-'}`);
  }
  const gw = now.get('gateway');
  if (gw && gw.length > 0) {
    const b = before?.get('gateway');
    const acks = delta(gw, b, 'tenebra_gateway_orders_acknowledged_total');
    const refused = delta(gw, b, 'tenebra_gateway_orders_refused_total');
    const p50 = histogramQuantile(gw, b, 'tenebra_gateway_order_ack_seconds', 0.5);
    const p99 = histogramQuantile(gw, b, 'tenebra_gateway_order_ack_seconds', 0.99);
    const rate = seconds ? `, ${fmt(acks / seconds, 1)} acks/s` : '';
    lines.push(`gateway: ${fmt(acks, 0)} orders acknowledged${rate}, ${fmt(refused, 0)} refused, ack p50 ${p50 === null ? '-' : fmt(p50 * 1000, 2)} ms, p99 ${p99 === null ? '-' : fmt(p99 * 1000, 2)} ms (bucket estimates), ${fmt(delta(gw, b, 'tenebra_gateway_fills_total'), 0)} fills`);
  } else if (gw) lines.push('gateway: no answer');
  const sq = now.get('sequencer');
  if (sq && sq.length > 0) {
    const b = before?.get('sequencer');
    const groups = delta(sq, b, 'tenebra_sequencer_group_commit_ops_count');
    lines.push(`sequencer: ${fmt(delta(sq, b, 'tenebra_sequencer_ops_journaled_total'), 0)} ops journaled in ${fmt(groups, 0)} group commits (${per(delta(sq, b, 'tenebra_sequencer_group_commit_ops_sum'), groups)} ops each)`);
  } else if (sq) lines.push('sequencer: no answer');
  return lines.join('\n');
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2), ['data', 'env', 'every', 'times'], ['help']);
  if (flags.bool.has('help')) {
    console.log(USAGE);
    return;
  }
  const env = flags.str.get('env') ?? 'production';
  const dataDir = resolve(flags.str.get('data') ?? (env === 'test' ? 'data-test' : 'data'));
  const L = layout(dataDir);
  if (!existsSync(L.clusterFile)) throw new Error(`no cluster in ${dataDir} (${L.clusterFile} is missing): start one with npm start`);
  const targets = targetsOf(readJson<ClusterFile>(L.clusterFile));
  if (targets.length === 0) throw new Error(`${L.clusterFile} lists no metrics port: restart the cluster with this checkout's npm start, which adds them`);
  const every = flags.str.get('every');
  if (every === undefined) {
    console.log(report(targets, await scrapeAll(targets)));
    return;
  }
  const secs = Number(every);
  if (!Number.isFinite(secs) || secs <= 0) throw new Error(`--every must be a positive number of seconds, got '${every}'`);
  const times = flags.str.get('times') === undefined ? Infinity : Number(flags.str.get('times'));
  let before = await scrapeAll(targets);
  for (let k = 0; k < times; k++) {
    await new Promise((r) => setTimeout(r, secs * 1000));
    const now = await scrapeAll(targets);
    console.log(`${report(targets, now, before, secs)}\n`);
    before = now;
  }
}

if (process.argv[1] && resolve(process.argv[1]).endsWith('cost-report.ts')) {
  main().catch((e: unknown) => {
    console.error(`npm run cost failed: ${(e as Error).message}`);
    process.exit(1);
  });
}
