// The sequencer's Prometheus series (docs/decisions/0012-metrics.md): ops journaled, each intake
// group's size and time to durability (the group commit), and, read at scrape time, the last seq
// and who is connected. Counts and timings only: the sequencer's metrics show nothing its logs and
// the frames it sends do not already show (docs/leakage.md).
import { Counter, Histogram, type Registry } from 'prom-client';
import { gaugeOf, one } from '@tenebra/metrics';

/** Called by Sequencer as each intake group becomes durable. */
export interface GroupCommitObserver {
  groupCommitted(ops: number, seconds: number): void;
}

/** What the scrape-time gauges read (server.ts). */
export interface SequencerMetricsSource {
  lastSeq(): bigint;
  /** nodes with a live feed */
  subscribers(): number;
  /** authenticated connections allowed to submit (the gateway) */
  submitters(): number;
}

export class SequencerMetrics implements GroupCommitObserver {
  private readonly journaled: Counter;
  private readonly groupOps: Histogram;
  private readonly commitSeconds: Histogram;

  constructor(registry: Registry, src: SequencerMetricsSource) {
    this.journaled = new Counter({ name: 'tenebra_sequencer_ops_journaled_total', help: 'ops made durable in the journal (and so acknowledged) since start', registers: [registry] });
    this.groupOps = new Histogram({
      name: 'tenebra_sequencer_group_commit_ops', help: 'ops per intake group (one event-loop turn, appended together in one journal transaction)', registers: [registry],
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    });
    this.commitSeconds = new Histogram({
      name: 'tenebra_sequencer_group_commit_seconds', help: 'from appending an intake group to its last op durable (lmdb commit with fsync, queueing behind the commit in flight included)', registers: [registry],
      buckets: [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1],
    });
    gaugeOf(registry, 'tenebra_sequencer_last_seq', 'highest durable sequence number', [], () => one(Number(src.lastSeq())));
    gaugeOf(registry, 'tenebra_sequencer_subscribers', 'committee nodes with a live feed', [], () => one(src.subscribers()));
    gaugeOf(registry, 'tenebra_sequencer_submitters', 'authenticated connections that may submit (the gateway)', [], () => one(src.submitters()));
  }

  groupCommitted(ops: number, seconds: number): void {
    this.journaled.inc(ops);
    this.groupOps.observe(ops);
    this.commitSeconds.observe(seconds);
  }
}
