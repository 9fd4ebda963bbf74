// The venue's health as the gateway sees it, for the system_health push of every encrypted session
// (docs/websocket.md). Derived only from what the gateway already holds: its committee nodes' results
// links (events of the results pipeline), its sequencer link's local state, its results cursor and
// the acks of its own submits. Nothing here asks another process.
import type { HealthReason, HealthStatus, SystemHealth } from '@tenebra/session';
import type { GatewayClock } from '../clock';
import type { CommitteeCapacity } from '../results/capacity';

/** What the health is read from (gateway.ts wires the results pipeline, the sequencer link and the submission tracker). */
export interface HealthSource {
  /** committee size and Shamir degree */
  readonly n: number;
  readonly t: number;
  /** committee nodes with an authenticated results link */
  liveNodes(): number;
  /** the attested sequencer link is up (local state of the link, no round trip) */
  sequencerUp(): boolean;
  /** the next seq whose outcome will be applied */
  cursor(): bigint;
  /** sequenced ops whose outcome is not applied yet */
  backlog(cursor: bigint): bigint;
  /** how long the oldest op still without a journal ack has waited (ms), or null */
  oldestJournalWaitMs(nowMs: number): number | null;
  /** calls fn when a node's results link comes up or goes down; returns the unsubscribe */
  onNodesChanged(fn: () => void): () => void;
  /** what the connected nodes report of their preprocessing reserve (absent: not reported) */
  capacity?(): CommitteeCapacity;
}

export interface HealthThresholds {
  /** results_stalled: ops wait and no outcome was applied for this long (ms) */
  stallMs: number;
  /** journal_slow: an op has waited this long for the sequencer's journal ack (ms) */
  journalSlowMs: number;
}

/** One look at the sources. */
export interface HealthReading {
  n: number;
  t: number;
  liveNodes: number;
  sequencerUp: boolean;
  backlog: bigint;
  /** ms since results last caught up or moved while ops wait (0 when none wait) */
  stalledMs: number;
  /** ms the oldest op without a journal ack has waited, or null */
  journalWaitMs: number | null;
  /** the committee's preprocessing reserve as its nodes report it */
  capacity?: CommitteeCapacity;
}

/** Causes that stop trading; the others only degrade it. */
const DOWN_REASONS: ReadonlySet<HealthReason> = new Set(['sequencer_down', 'quorum_lost', 'reserve_exhausted']);
/** The backlog is published in steps of this many ops (docs/leakage.md: no count of single ops). */
export const BACKLOG_STEP = 10n;

/** The system_health payload of a reading (pure). */
export function assessHealth(r: HealthReading, th: HealthThresholds, timeNs: bigint): SystemHealth {
  const needed = r.t + 1;
  const reasons: HealthReason[] = [];
  const why: string[] = [];
  if (!r.sequencerUp) {
    reasons.push('sequencer_down');
    why.push('the sequencer link is down: orders are refused (503 / 1503) until it reconnects');
  }
  const quorum = r.liveNodes >= needed;
  if (!quorum) {
    reasons.push('quorum_lost');
    why.push(`${r.liveNodes} of ${r.n} committee nodes connected, ${needed} needed: no outcome (rest, fill, cancel) is decided until more return`);
  } else if (r.liveNodes < r.n) {
    reasons.push('nodes_missing');
    why.push(`${r.liveNodes} of ${r.n} committee nodes connected: trading goes on; ${r.liveNodes - needed} more may fail before it stops`);
  }
  // A stall or a slow journal whose cause is already named above is not reported twice.
  if (quorum && r.capacity?.preprocessing !== 'exhausted' && r.backlog > 0n && r.stalledMs >= th.stallMs) {
    reasons.push('results_stalled');
    why.push(`sequenced ops have had no outcome for over ${th.stallMs} ms: cancels and modifies may answer 202 / 1502`);
  }
  if (r.sequencerUp && r.journalWaitMs !== null && r.journalWaitMs >= th.journalSlowMs) {
    reasons.push('journal_slow');
    why.push(`an op has waited over ${th.journalSlowMs} ms for the sequencer's journal: placements may answer 202 / 1502`);
  }
  const cap = r.capacity;
  const left = cap?.ordersLeft ?? null;
  const leftText = left === null ? '' : ((left / BACKLOG_STEP) * BACKLOG_STEP).toString();
  if (cap?.preprocessing === 'exhausted') {
    reasons.push('reserve_exhausted');
    why.push('the committee ran out of preprocessing while nodes are down: matching is paused and new orders are refused (503 / 1505); acknowledged orders wait and are matched once every node is back');
  } else if (cap?.preprocessing === 'stopped') {
    reasons.push('preprocessing_stopped');
    why.push(`preprocessing stopped (it needs every committee node): the reserve covers ${left === null ? 'an unknown number of' : `about ${leftText}`} more orders, then new orders are refused until every node is back`);
  }
  const status: HealthStatus = reasons.some((x) => DOWN_REASONS.has(x)) ? 'down' : reasons.length > 0 ? 'degraded' : 'ok';
  return {
    status,
    message: why.join('; '),
    time_ns: timeNs.toString(),
    live_nodes: r.liveNodes,
    nodes_total: r.n,
    nodes_needed: needed,
    sequencer_link: r.sequencerUp,
    results_backlog: ((r.backlog / BACKLOG_STEP) * BACKLOG_STEP).toString(),
    reasons,
    ...(cap?.preprocessing === undefined ? {} : { preprocessing: cap.preprocessing }),
    ...(left === null ? {} : { reserve_orders: leftText }),
  };
}

/** What makes two assessments a different state: a push goes out only when this changes. */
function stateKey(h: SystemHealth): string {
  return `${h.status}|${h.reasons.join(',')}|${h.live_nodes}|${h.sequencer_link ? 1 : 0}`;
}

/**
 * The current health and a version that moves when its state changes (status, causes, live nodes,
 * sequencer link; the backlog and the time alone do not make a change). refresh() is called on
 * every node event and on the WebSocket sweep (every 250 ms), which also catches the time-based
 * causes and the sequencer link.
 */
export class HealthMonitor {
  private cursorSeen: bigint;
  /** when results last caught up with the acknowledged ops or moved */
  private progressMs: number;
  private latest: SystemHealth;
  private key: string;
  private ver = 1;

  constructor(
    private readonly source: HealthSource,
    private readonly clock: GatewayClock,
    private readonly thresholds: HealthThresholds,
  ) {
    this.cursorSeen = source.cursor();
    this.progressMs = clock.nowMs();
    this.latest = this.assess();
    this.key = stateKey(this.latest);
  }

  /** The latest assessment. */
  get current(): SystemHealth {
    return this.latest;
  }

  /** Moves whenever the state changes. */
  get version(): number {
    return this.ver;
  }

  /** Assesses again; true when the state changed. */
  refresh(): boolean {
    this.latest = this.assess();
    const key = stateKey(this.latest);
    if (key === this.key) return false;
    this.key = key;
    this.ver++;
    return true;
  }

  private assess(): SystemHealth {
    const s = this.source;
    const now = this.clock.nowMs();
    const cursor = s.cursor();
    const backlog = s.backlog(cursor);
    if (cursor !== this.cursorSeen || backlog === 0n) {
      this.cursorSeen = cursor;
      this.progressMs = now;
    }
    return assessHealth({
      n: s.n, t: s.t, liveNodes: s.liveNodes(), sequencerUp: s.sequencerUp(), backlog,
      stalledMs: backlog === 0n ? 0 : now - this.progressMs, journalWaitMs: s.oldestJournalWaitMs(now),
      ...(s.capacity ? { capacity: s.capacity() } : {}),
    }, this.thresholds, this.clock.nowNs());
  }
}
