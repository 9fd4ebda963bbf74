// What a bench section cost each process, from the processes' own Prometheus metrics
// (docs/decisions/0012-metrics.md), and a projection of the committee's rate on dedicated hosts
// from those per-node costs. Measures that noise moves little: CPU time, rounds and bytes per op.
import { layout, readJson, type ClusterFile } from '@tenebra/config';
import { scrape, sumOf, type Sample } from '@tenebra/metrics';
import { targetsOf } from '../src/cost-report';

/** One scrape of every process of a cluster, by name ("node 1", "gateway", "sequencer"). */
export type ClusterScrape = Map<string, Sample[]>;

export async function scrapeCluster(dataDir: string): Promise<ClusterScrape> {
  const targets = targetsOf(readJson<ClusterFile>(layout(dataDir).clusterFile));
  const out: ClusterScrape = new Map();
  await Promise.all(targets.map(async (t) => {
    try {
      out.set(t.name, await scrape(t.url));
    } catch {
      out.set(t.name, []); // down: no figures for it
    }
  }));
  return out;
}

/** Per committee node, over a section: the deltas the projection needs. */
export interface NodeCost {
  name: string;
  ops: number;
  /** process CPU (user + system) over the section, ms */
  cpuMs: number;
  /** V8 garbage collection over the section, ms (prom-client's default nodejs_gc_duration_seconds) */
  gcMs: number;
  rounds: number;
  sentBytes: number;
  sentMessages: number;
  /** stream writes (messages coalesced per write show as msgs/op over writes/op) */
  sentWrites: number;
}

export interface SectionCost {
  nodes: NodeCost[];
  /** CPU ms of the gateway and the sequencer over the section */
  gatewayCpuMs: number;
  sequencerCpuMs: number;
  gatewayAcks: number;
  /** placements the gateway refused over the section (each costs it nearly a full placement) */
  gatewayRefused: number;
  /** the sequencer's job-end records over the section ('progress' job boundaries): seqs it made
   * durable beyond the ops it journaled (nodes leave them out of their ops metric) */
  jobEndRecords: number;
}

const d = (now: Sample[] | undefined, before: Sample[] | undefined, name: string): number =>
  (now ? sumOf(now, name) : 0) - (before ? sumOf(before, name) : 0);

/** The deltas between two scrapes of one cluster. */
export function sectionCost(before: ClusterScrape, after: ClusterScrape): SectionCost {
  // Job-end records take a seq each (10-15% of the seqs of small 'progress' jobs): matched orders,
  // counted from applied seqs, leave them out; the nodes' ops metric already does.
  const seqAfter = after.get('sequencer');
  const seqBefore = before.get('sequencer');
  const jobEndRecords = Math.max(0, d(seqAfter, seqBefore, 'tenebra_sequencer_last_seq') - d(seqAfter, seqBefore, 'tenebra_sequencer_ops_journaled_total'));
  const nodes: NodeCost[] = [];
  for (const [name, now] of after) {
    if (!name.startsWith('node ')) continue;
    const was = before.get(name);
    if (now.length === 0 || !was || was.length === 0) continue; // down at either end: no clean delta
    nodes.push({
      name,
      ops: d(now, was, 'tenebra_node_ops_applied_total'),
      cpuMs: 1000 * d(now, was, 'process_cpu_seconds_total'),
      gcMs: 1000 * d(now, was, 'nodejs_gc_duration_seconds_sum'),
      rounds: d(now, was, 'tenebra_node_rounds_total'),
      sentBytes: d(now, was, 'tenebra_node_peer_sent_bytes_total'),
      sentMessages: d(now, was, 'tenebra_node_peer_sent_messages_total'),
      sentWrites: d(now, was, 'tenebra_node_peer_writes_total'),
    });
  }
  nodes.sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }));
  return {
    nodes,
    gatewayCpuMs: 1000 * d(after.get('gateway'), before.get('gateway'), 'process_cpu_seconds_total'),
    sequencerCpuMs: 1000 * d(after.get('sequencer'), before.get('sequencer'), 'process_cpu_seconds_total'),
    gatewayAcks: d(after.get('gateway'), before.get('gateway'), 'tenebra_gateway_orders_acknowledged_total'),
    gatewayRefused: d(after.get('gateway'), before.get('gateway'), 'tenebra_gateway_orders_refused_total'),
    jobEndRecords,
  };
}

export interface Projection {
  /** orders/s one node's core could carry: 1000 / CPU ms per op (the busiest node) */
  cpuBound: number;
  /** orders/s one book allows: ops on a book run one after another, each rounds/op round trips */
  roundBoundPerBook: number;
  /** the round bound over `books` books matched concurrently (their rounds share messages) */
  roundBound: number;
  rate: number;
  boundBy: 'node CPU' | 'round trips';
}

/**
 * A committee on dedicated hosts (each node its own core; the gateway and sequencer elsewhere): the
 * rate is the lower of what one node's CPU allows and what sequential round trips on each book
 * allow. A projection from measured parts, not a measurement: bandwidth and the other processes are
 * taken as free, and preprocessing is counted only as far as the section's CPU paid for it.
 */
export function project(cpuMsPerOp: number, roundsPerOp: number, rttMs: number, books: number): Projection {
  const cpuBound = cpuMsPerOp > 0 ? 1000 / cpuMsPerOp : Infinity;
  const roundBoundPerBook = roundsPerOp > 0 && rttMs > 0 ? 1000 / (roundsPerOp * rttMs) : Infinity;
  const roundBound = roundBoundPerBook * Math.max(1, books);
  const rate = Math.min(cpuBound, roundBound);
  return { cpuBound, roundBoundPerBook, roundBound, rate, boundBy: cpuBound <= roundBound ? 'node CPU' : 'round trips' };
}

const f1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(x >= 100 ? 0 : x >= 10 ? 1 : 2) : '-');

/** The per-node table and the projection, as printed lines. */
export function describeCost(c: SectionCost, opts: { rttMs: number; books: number }): { lines: string[]; projection: Projection | null; cpuMsPerOp: number; roundsPerOp: number } {
  const lines = ['per node (process CPU over the section / ops it applied):', 'node      ops   CPU ms/op  rounds/op   KB/op  msgs/op  writes/op  GC ms/op'];
  for (const n of c.nodes) {
    const per = (x: number): number => (n.ops > 0 ? x / n.ops : NaN);
    lines.push(`${n.name.padEnd(8)} ${String(n.ops).padStart(5)} ${f1(per(n.cpuMs)).padStart(11)} ${f1(per(n.rounds)).padStart(10)} ${f1(per(n.sentBytes) / 1024).padStart(7)} ${f1(per(n.sentMessages)).padStart(8)} ${f1(per(n.sentWrites)).padStart(10)} ${f1(per(n.gcMs)).padStart(9)}`);
  }
  const busy = c.nodes.filter((n) => n.ops > 0);
  if (busy.length === 0) return { lines, projection: null, cpuMsPerOp: NaN, roundsPerOp: NaN };
  const cpuMsPerOp = Math.max(...busy.map((n) => n.cpuMs / n.ops));
  const roundsPerOp = Math.max(...busy.map((n) => n.rounds / n.ops));
  const acks = Math.max(1, c.gatewayAcks);
  // a refusal costs the gateway most of a placement (validation, risk, the account read) but no ack:
  // with refusals the per-ack figure overstates an ack, and the per-placement one is the cleaner
  const perPlacement = c.gatewayRefused > 0
    ? `; ${f1(c.gatewayCpuMs / (c.gatewayAcks + c.gatewayRefused))} ms per placement with the ${c.gatewayRefused} refused` : '';
  lines.push(`gateway CPU ${f1(c.gatewayCpuMs / acks)} ms/ack, sequencer CPU ${f1(c.sequencerCpuMs / acks)} ms/ack (${c.gatewayAcks} acks${perPlacement})`);
  const p = project(cpuMsPerOp, roundsPerOp, opts.rttMs, opts.books);
  lines.push(
    `PROJECTION (not measured): a committee on dedicated hosts, one core per node, ${opts.rttMs} ms round trip, ${opts.books} book${opts.books === 1 ? '' : 's'}:`,
    `  node CPU allows ${f1(p.cpuBound)} orders/s (${f1(cpuMsPerOp)} ms/op on the busiest node); round trips allow ${f1(p.roundBoundPerBook)}/s per book (${f1(roundsPerOp)} rounds/op), ${f1(p.roundBound)}/s over ${opts.books}`,
    `  => about ${f1(p.rate)} orders/s, bound by ${p.boundBy}`,
  );
  return { lines, projection: p, cpuMsPerOp, roundsPerOp };
}

/**
 * Prints `line()` every `everyMs` until stop() is called (so a long section or catch-up never leaves
 * a silent terminal). The line is computed at each tick.
 */
export function ticker(line: () => string, everyMs = 3_000): { stop(): void } {
  const t = setInterval(() => {
    try {
      console.log(`  .. ${line()}`);
    } catch (e) {
      console.log(`  .. (progress unavailable: ${(e as Error).message})`);
    }
  }, everyMs);
  t.unref();
  return { stop: () => clearInterval(t) };
}
