// A committee node's Prometheus series (docs/decisions/0012-metrics.md). Jobs and party events are
// counted as they happen; everything the node already keeps (the engine's status, the transport's
// per-peer counters, the reveal counts) is read at scrape time, with no timer of its own.
import { Counter, Histogram, type Registry } from 'prom-client';
import { counterOf, gaugeOf, one } from '@tenebra/metrics';
import type { PartyEvent, PartyStatus } from '@tenebra/mpc';
import type { Libp2pPeerStats } from '@tenebra/transport';
import { CAPACITY_KINDS, type Capacity } from './capacity';

/** What the series are read from (CommitteeNode; a fake in tests). */
export interface NodeMetricsSource {
  readonly index: number;
  readonly n: number;
  /** the engine's status, once the party exists */
  status(): PartyStatus | undefined;
  /** link counters towards peer j (undefined before the transport exists) */
  peerStats(j: number): Libp2pPeerStats | undefined;
  /** openings revealed to the nodes, by leakage label (BatchApplier.reveals) */
  reveals(): Iterable<[string, { total: number }]>;
  /** last seq whose job boundary is on disk */
  appliedSeq(): bigint;
  /** sequenced ops waiting for their job */
  pendingOps(): number;
  /** what the reserve covers (capacity.ts); absent: the series are not served */
  capacity?(): Capacity;
  /** true once the node has its shares (engine ready: keys set up or shares recovered) and follows the sequencer */
  ready?(): boolean;
}

/** Every engine event, counted by name (stale and recovery ones are what explain a restart). */
export const PARTY_EVENTS: readonly PartyEvent[] = ['quorum-lost', 'quorum-restored', 'inconsistent-share', 'prep-batch', 'stale', 'recovered', 'recovery-waiting'];

const RESERVE_KINDS = ['triples', 'nibbles', 'bits', 'lex4', 'prod4'] as const;

export class NodeMetrics {
  private readonly jobs: Counter;
  private readonly ops: Counter;
  private readonly rounds: Counter;
  private readonly jobSeconds: Histogram;
  private readonly jobRounds: Histogram;
  private readonly events: Counter<'event'>;

  constructor(registry: Registry, src: NodeMetricsSource) {
    this.jobs = new Counter({ name: 'tenebra_node_jobs_total', help: 'MPC jobs run to completion (one per sequencer batch applied)', registers: [registry] });
    this.ops = new Counter({ name: 'tenebra_node_ops_applied_total', help: 'sequenced ops applied by completed jobs (the sequencer\'s job-end records left out)', registers: [registry] });
    this.rounds = new Counter({ name: 'tenebra_node_rounds_total', help: 'MPC communication rounds of completed jobs', registers: [registry] });
    this.jobSeconds = new Histogram({
      name: 'tenebra_node_job_seconds', help: 'MPC time of a job (its runJob, retries included; not the state write)', registers: [registry],
      buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30],
    });
    this.jobRounds = new Histogram({
      name: 'tenebra_node_job_rounds', help: 'MPC communication rounds per job', registers: [registry],
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
    });
    this.events = new Counter({ name: 'tenebra_node_party_events_total', help: 'engine events (party.on): quorum lost/restored, stale, recovered, recovery waiting, preprocessing batches, inconsistent shares', labelNames: ['event'], registers: [registry] });
    for (const ev of PARTY_EVENTS) this.events.inc({ event: ev }, 0);

    const peers = (): number[] => Array.from({ length: src.n }, (_, k) => k + 1).filter((j) => j !== src.index);
    const perPeer = (pick: (p: Libp2pPeerStats) => number) => (): [{ peer: string }, number][] =>
      peers().flatMap((j) => {
        const p = src.peerStats(j);
        return p ? [[{ peer: String(j) }, pick(p)]] : [];
      });
    counterOf(registry, 'tenebra_node_peer_sent_bytes_total', 'bytes written to each peer (libp2p transport)', ['peer'], perPeer((p) => p.sentBytes));
    counterOf(registry, 'tenebra_node_peer_received_bytes_total', 'bytes read from each peer', ['peer'], perPeer((p) => p.receivedBytes));
    counterOf(registry, 'tenebra_node_peer_sent_messages_total', 'messages written to each peer', ['peer'], perPeer((p) => p.sentMessages));
    counterOf(registry, 'tenebra_node_peer_writes_total', 'stream writes to each peer (each carries one or more messages)', ['peer'], perPeer((p) => p.sentWrites));
    counterOf(registry, 'tenebra_node_peer_received_messages_total', 'messages read from each peer', ['peer'], perPeer((p) => p.receivedMessages));
    counterOf(registry, 'tenebra_node_peer_dropped_messages_total', 'outbound messages dropped (queue full or broken stream)', ['peer'], perPeer((p) => p.droppedOutbound));
    counterOf(registry, 'tenebra_node_peer_connects_total', 'outbound stream openings to each peer (1 + reconnects)', ['peer'], perPeer((p) => p.connects));
    gaugeOf(registry, 'tenebra_node_peer_queued_messages', 'messages queued towards each peer', ['peer'], perPeer((p) => p.queuedMessages));
    gaugeOf(registry, 'tenebra_node_peer_up', 'peer link up (1) or down (0)', ['peer'], perPeer((p) => (p.up ? 1 : 0)));

    const st = (): PartyStatus | undefined => src.status();
    gaugeOf(registry, 'tenebra_node_peers_up', 'other committee nodes this node sees alive', [], () => {
      const s = st();
      return s ? one(s.alive.filter((j) => j !== src.index).length) : [];
    });
    gaugeOf(registry, 'tenebra_node_quorum', '1 while at least t+1 parties are alive, else 0', [], () => {
      const s = st();
      return s ? one(s.quorum ? 1 : 0) : [];
    });
    // the quorum gauge is 1 as soon as t+1 parties are alive, also while this node still recovers
    // its shares: this one says whether it can take part in jobs yet (the console's 'up' vs 'recovering')
    const ready = src.ready?.bind(src);
    if (ready) gaugeOf(registry, 'tenebra_node_ready', '1 once the node has its shares (keys set up or shares recovered) and follows the sequencer, else 0', [], () => one(ready() ? 1 : 0));
    gaugeOf(registry, 'tenebra_node_reserve_items', 'preprocessing items in reserve, by kind (bits = 4 x nibbles)', ['kind'], () => {
      const s = st();
      return s ? RESERVE_KINDS.map((kind) => [{ kind }, s.reserve[kind]]) : [];
    });
    counterOf(registry, 'tenebra_node_prep_items_made_total', 'preprocessing items this node helped make since it started, by kind', ['kind'], () => {
      const s = st();
      return s ? RESERVE_KINDS.map((kind) => [{ kind }, s.preprocessing.made[kind]]) : [];
    });
    counterOf(registry, 'tenebra_node_prep_batches_total', 'preprocessing batches decided since start, by outcome (committed or dropped)', ['outcome'], () => {
      const s = st();
      return s ? [[{ outcome: 'committed' }, s.preprocessing.made.batches], [{ outcome: 'dropped' }, s.preprocessing.made.dropped]] : [];
    });
    counterOf(registry, 'tenebra_node_reveals_total', 'values opened to the nodes by the matching, by leakage label', ['label'], () =>
      [...src.reveals()].map(([label, c]) => [{ label }, c.total]));
    gaugeOf(registry, 'tenebra_node_last_applied_seq', 'last sequence number whose job boundary is on disk', [], () => one(Number(src.appliedSeq())));
    gaugeOf(registry, 'tenebra_node_pending_ops', 'sequenced ops waiting for their job', [], () => one(src.pendingOps()));
    const cap = src.capacity?.bind(src);
    if (cap) {
      gaugeOf(registry, 'tenebra_node_reserve_ops_left', 'ops the preprocessing reserve covers at the measured cost per op (-1 until a cost is measured)', [], () => {
        const left = cap().opsLeft;
        return one(left === null ? -1 : left);
      });
      gaugeOf(registry, 'tenebra_node_prep_cost_per_op', 'moving average of preprocessing items consumed per applied op, by kind', ['kind'], () => {
        const c = cap().costPerOp;
        return c ? CAPACITY_KINDS.map((kind) => [{ kind }, c[kind]]) : [];
      });
      gaugeOf(registry, 'tenebra_node_production_stopped', '1 while preprocessing cannot be made (fewer nodes alive than it needs): the reserve only shrinks', [], () => one(cap().production === 'stopped' ? 1 : 0));
      gaugeOf(registry, 'tenebra_node_preprocessing_exhausted', '1 while the current job waits for preprocessing the reserve lacks (matching paused until production resumes)', [], () => one(cap().exhausted ? 1 : 0));
    }
  }

  /** A job finished: `ops` sequenced ops in `seconds` of MPC over `rounds` rounds. */
  jobDone(ops: number, seconds: number, rounds: number): void {
    this.jobs.inc();
    this.ops.inc(ops);
    this.rounds.inc(rounds);
    this.jobSeconds.observe(seconds);
    this.jobRounds.observe(rounds);
  }

  partyEvent(event: PartyEvent): void {
    this.events.inc({ event });
  }
}
