// What the page shows, computed from the processes' own metrics (docs/decisions/0012-metrics.md)
// and the launcher's view of each process. Pure: the sampler feeds it scrapes.
import type { Sample } from '@tenebra/metrics';
import { buckets, has, labelValues, quantileBetween, rate, total } from './series';
import type { ProcRole } from './target';

/**
 * up: running and answering; down: not running; frozen: stopped by the console (SIGSTOP);
 * recovering: a node answering without its engine yet or not ready (waiting for peers, recovering shares), that
 * reported a share recovery in the last window, or that has no quorum while other nodes have one
 * (it is still joining them); stale: running but its metrics did not
 * answer for STALE_MS (hung, overloaded or still starting): its figures are old.
 */
export type ProcState = 'up' | 'down' | 'frozen' | 'recovering' | 'stale';

export const STALE_MS = 5_000;
export const RESERVE_KINDS = ['triples', 'lex4', 'prod4', 'bits'] as const;

/** One process's scrapes: the newest and the one a window earlier (for rates and quantiles). */
export interface Scrapes {
  /** ms since the epoch of each; newest last */
  times: number[];
  samples: Sample[][];
}

export interface ProcView {
  role: ProcRole;
  index: number;
  pid: number | null;
  running: boolean;
  frozen: boolean;
  scrapes: Scrapes;
}

export interface PeerLink {
  peer: number;
  up: boolean;
  txBytesPerS: number;
  rxBytesPerS: number;
  txMsgsPerS: number;
  rxMsgsPerS: number;
  queued: number;
}

export interface NodeTile {
  index: number;
  pid: number | null;
  state: ProcState;
  /** CPU of the process, percent of one core */
  cpu: number | null;
  peers: PeerLink[];
  reserve: Record<(typeof RESERVE_KINDS)[number], number> | null;
  /** orders the reserve covers at the measured cost (null: not measured yet) */
  opsLeft: number | null;
  production: 'running' | 'stopped' | null;
  exhausted: boolean;
  quorum: boolean | null;
  roundsPerS: number;
  jobsPerS: number;
  opsPerS: number;
  /** sequenced ops waiting for their job, and the last seq applied: the job in flight is the next */
  pendingOps: number | null;
  appliedSeq: number | null;
}

export interface SequencerTile {
  state: ProcState;
  pid: number | null;
  cpu: number | null;
  lastSeq: number | null;
  opsPerS: number;
  /** mean ops per group commit and mean commit time over the window */
  groupOps: number | null;
  commitMs: number | null;
}

export interface GatewayTile {
  state: ProcState;
  pid: number | null;
  cpu: number | null;
  ackedPerS: number;
  queuedPerS: number;
  refusedPerS: number;
  ackP50Ms: number | null;
  ackP99Ms: number | null;
  fillsPerS: number;
  health: string | null;
  liveNodes: number | null;
  sequencerUp: boolean | null;
  ordersLeft: number | null;
  preprocessing: string | null;
}

export interface Leak {
  label: string;
  perS: number;
  total: number;
}

export interface FillLatency {
  symbol: string;
  p50Ms: number | null;
  p99Ms: number | null;
  fillsPerS: number;
}

/** One point of the flow plots. */
export interface FlowPoint {
  /** seconds since the epoch */
  t: number;
  acked: number;
  queued: number;
  /** matches per second (a match fills two orders) */
  matched: number;
  fillP50Ms: number | null;
  fillP99Ms: number | null;
  roundsPerS: number;
  openingsPerS: number;
  /** per instrument: fills per second and order-to-fill p50 */
  bySymbol: Record<string, { fills: number; p50Ms: number | null }>;
}

export interface Snapshot {
  time: number;
  nodes: NodeTile[];
  sequencer: SequencerTile;
  gateway: GatewayTile;
  leakage: Leak[];
  fillLatency: FillLatency[];
  flow: FlowPoint;
}

interface Pair {
  prev: Sample[] | undefined;
  now: Sample[];
  seconds: number;
  /** the oldest scrape of the window, for quantiles */
  first: Sample[] | undefined;
}

/** The newest scrape and the one before it, and the window's oldest; none when never scraped. */
function pairOf(s: Scrapes): Pair | null {
  const n = s.samples.length;
  if (n === 0) return null;
  return {
    now: s.samples[n - 1]!,
    prev: n > 1 ? s.samples[n - 2] : undefined,
    seconds: n > 1 ? (s.times[n - 1]! - s.times[n - 2]!) / 1000 : 0,
    first: n > 1 ? s.samples[0] : undefined,
  };
}

function stateOf(p: ProcView, now: number): ProcState {
  if (p.frozen) return 'frozen';
  if (!p.running) return 'down';
  const last = p.scrapes.times.at(-1);
  if (last === undefined || now - last > STALE_MS) return 'stale';
  return 'up';
}

const ms = (seconds: number | null) => (seconds === null ? null : seconds * 1000);
const orNull = (x: Sample[], name: string, match: Record<string, string> = {}) => (has(x, name) ? total(x, name, match) : null);
const cpuOf = (p: Pair | null) => (p && p.prev ? 100 * rate(p.prev, p.now, p.seconds, 'process_cpu_seconds_total') : null);

export function nodeTile(p: ProcView, n: number, now: number): NodeTile {
  let state = stateOf(p, now);
  const pr = state === 'down' ? null : pairOf(p.scrapes);
  const x = pr?.now ?? [];
  if (state === 'up') {
    // no engine yet (the quorum series comes with it), or a share recovery within the window
    const recovered = pr?.first ? total(x, 'tenebra_node_party_events_total', { event: 'recovered' }) - total(pr.first, 'tenebra_node_party_events_total', { event: 'recovered' }) : 0;
    const waiting = total(x, 'tenebra_node_party_events_total', { event: 'recovery-waiting' }) > 0 && !has(x, 'tenebra_node_quorum');
    // the quorum series comes with the engine, before a share recovery ends: the node's own ready
    // gauge says whether it has its shares (absent in older nodes: not checked)
    const unready = has(x, 'tenebra_node_ready') && total(x, 'tenebra_node_ready') === 0;
    if (!has(x, 'tenebra_node_quorum') || recovered > 0 || waiting || unready) state = 'recovering';
  }
  const r = (name: string, match: Record<string, string> = {}) => (pr ? rate(pr.prev, pr.now, pr.seconds, name, match) : 0);
  const peers: PeerLink[] = [];
  for (let j = 1; j <= n; j++) {
    if (j === p.index || !pr) continue;
    const m = { peer: String(j) };
    if (!x.some((s) => s.name === 'tenebra_node_peer_up' && s.labels.peer === m.peer)) continue;
    peers.push({
      peer: j,
      up: total(x, 'tenebra_node_peer_up', m) === 1 && state !== 'frozen',
      txBytesPerS: r('tenebra_node_peer_sent_bytes_total', m),
      rxBytesPerS: r('tenebra_node_peer_received_bytes_total', m),
      txMsgsPerS: r('tenebra_node_peer_sent_messages_total', m),
      rxMsgsPerS: r('tenebra_node_peer_received_messages_total', m),
      queued: total(x, 'tenebra_node_peer_queued_messages', m),
    });
  }
  const reserve = has(x, 'tenebra_node_reserve_items')
    ? Object.fromEntries(RESERVE_KINDS.map((kind) => [kind, total(x, 'tenebra_node_reserve_items', { kind })])) as NodeTile['reserve']
    : null;
  const left = orNull(x, 'tenebra_node_reserve_ops_left');
  const quorum = orNull(x, 'tenebra_node_quorum');
  const stopped = orNull(x, 'tenebra_node_production_stopped');
  return {
    index: p.index, pid: p.pid, state, cpu: cpuOf(pr), peers, reserve,
    opsLeft: left === null || left < 0 ? null : left,
    production: stopped === null ? null : stopped === 1 ? 'stopped' : 'running',
    exhausted: total(x, 'tenebra_node_preprocessing_exhausted') === 1,
    quorum: quorum === null ? null : quorum === 1,
    roundsPerS: r('tenebra_node_rounds_total'),
    jobsPerS: r('tenebra_node_jobs_total'),
    opsPerS: r('tenebra_node_ops_applied_total'),
    pendingOps: orNull(x, 'tenebra_node_pending_ops'),
    appliedSeq: orNull(x, 'tenebra_node_last_applied_seq'),
  };
}

export function sequencerTile(p: ProcView, now: number): SequencerTile {
  const state = stateOf(p, now);
  const pr = state === 'down' ? null : pairOf(p.scrapes);
  const x = pr?.now ?? [];
  const w = pr?.first;
  const groups = w ? total(x, 'tenebra_sequencer_group_commit_ops_count') - total(w, 'tenebra_sequencer_group_commit_ops_count') : 0;
  const mean = (name: string) => (w && groups > 0 ? (total(x, `${name}_sum`) - total(w, `${name}_sum`)) / groups : null);
  return {
    state, pid: p.pid, cpu: cpuOf(pr),
    lastSeq: orNull(x, 'tenebra_sequencer_last_seq'),
    opsPerS: pr ? rate(pr.prev, pr.now, pr.seconds, 'tenebra_sequencer_ops_journaled_total') : 0,
    groupOps: mean('tenebra_sequencer_group_commit_ops'),
    commitMs: ms(mean('tenebra_sequencer_group_commit_seconds')),
  };
}

const stateLabel = (x: Sample[], name: string, label: string): string | null =>
  x.find((s) => s.name === name && s.value === 1)?.labels[label] ?? null;

export function gatewayTile(p: ProcView, now: number): GatewayTile {
  const state = stateOf(p, now);
  const pr = state === 'down' ? null : pairOf(p.scrapes);
  const x = pr?.now ?? [];
  const r = (name: string) => (pr ? rate(pr.prev, pr.now, pr.seconds, name) : 0);
  const q = (quant: number) => (pr?.first ? ms(quantileBetween(buckets(pr.first, 'tenebra_gateway_order_ack_seconds'), buckets(x, 'tenebra_gateway_order_ack_seconds'), quant)) : null);
  const live = orNull(x, 'tenebra_gateway_live_nodes');
  const seqUp = orNull(x, 'tenebra_gateway_sequencer_up');
  const left = orNull(x, 'tenebra_gateway_reserve_orders_left');
  return {
    state, pid: p.pid, cpu: cpuOf(pr),
    ackedPerS: r('tenebra_gateway_orders_acknowledged_total'),
    queuedPerS: r('tenebra_gateway_orders_queued_total'),
    refusedPerS: r('tenebra_gateway_orders_refused_total'),
    ackP50Ms: q(0.5), ackP99Ms: q(0.99),
    fillsPerS: r('tenebra_gateway_fills_total'),
    health: stateLabel(x, 'tenebra_gateway_system_health', 'status'),
    liveNodes: live, sequencerUp: seqUp === null ? null : seqUp === 1,
    ordersLeft: left === null || left < 0 ? null : left,
    preprocessing: stateLabel(x, 'tenebra_gateway_preprocessing', 'state'),
  };
}

/**
 * Openings per leakage label: every node opens the same values, so the figures are the highest
 * any answering node reports (a node restarted since counts from zero).
 */
export function leakage(nodes: ProcView[]): Leak[] {
  const out = new Map<string, Leak>();
  for (const p of nodes) {
    const pr = p.running ? pairOf(p.scrapes) : null;
    if (!pr) continue;
    for (const label of labelValues(pr.now, 'tenebra_node_reveals_total', 'label')) {
      const t = total(pr.now, 'tenebra_node_reveals_total', { label });
      const perS = rate(pr.prev, pr.now, pr.seconds, 'tenebra_node_reveals_total', { label });
      const o = out.get(label) ?? { label, perS: 0, total: 0 };
      out.set(label, { label, perS: Math.max(o.perS, perS), total: Math.max(o.total, t) });
    }
  }
  return [...out.values()].sort((a, b) => a.label.localeCompare(b.label));
}

export function fillLatency(gateway: ProcView): FillLatency[] {
  const pr = gateway.running ? pairOf(gateway.scrapes) : null;
  if (!pr?.first) return [];
  const name = 'tenebra_gateway_order_to_fill_seconds';
  return labelValues(pr.now, `${name}_count`, 'symbol').map((symbol) => {
    const a = buckets(pr.first!, name, { symbol });
    const b = buckets(pr.now, name, { symbol });
    return {
      symbol,
      p50Ms: ms(quantileBetween(a, b, 0.5)),
      p99Ms: ms(quantileBetween(a, b, 0.99)),
      fillsPerS: rate(pr.prev, pr.now, pr.seconds, `${name}_count`, { symbol }),
    };
  });
}

/** The whole picture at `now`. */
export function snapshot(views: ProcView[], n: number, now: number): Snapshot {
  const nodes = views.filter((v) => v.role === 'committee').sort((a, b) => a.index - b.index).map((v) => nodeTile(v, n, now));
  // a node without quorum beside nodes that have one has not joined them yet
  const joined = nodes.some((x) => x.state === 'up' && x.quorum === true);
  for (const x of nodes) if (x.state === 'up' && x.quorum === false && joined) x.state = 'recovering';
  const seqView = views.find((v) => v.role === 'sequencer')!;
  const gwView = views.find((v) => v.role === 'gateway')!;
  const gateway = gatewayTile(gwView, now);
  const leaks = leakage(views.filter((v) => v.role === 'committee'));
  const fills = fillLatency(gwView);
  // the flow's latency is over every instrument together
  const pr = gwView.running ? pairOf(gwView.scrapes) : null;
  const all = (q: number) => (pr?.first ? ms(quantileBetween(buckets(pr.first, 'tenebra_gateway_order_to_fill_seconds'), buckets(pr.now, 'tenebra_gateway_order_to_fill_seconds'), q)) : null);
  const flow: FlowPoint = {
    t: now / 1000,
    acked: gateway.ackedPerS,
    queued: gateway.queuedPerS,
    matched: gateway.fillsPerS / 2,
    fillP50Ms: all(0.5),
    fillP99Ms: all(0.99),
    roundsPerS: Math.max(0, ...nodes.map((x) => x.roundsPerS)),
    openingsPerS: leaks.reduce((s, l) => s + l.perS, 0),
    bySymbol: Object.fromEntries(fills.map((f) => [f.symbol, { fills: f.fillsPerS, p50Ms: f.p50Ms }])),
  };
  return { time: now, nodes, sequencer: sequencerTile(seqView, now), gateway, leakage: leaks, fillLatency: fills, flow };
}
