import { describe, expect, it } from 'vitest';
import { parseExposition, processRegistry, sumOf, type Sample } from '@tenebra/metrics';
import type { PartyStatus } from '@tenebra/mpc';
import type { Libp2pPeerStats } from '@tenebra/transport';
import { NodeMetrics } from '../src/metrics';
import type { Capacity } from '../src/capacity';

function peer(sentBytes: number, receivedBytes: number, up = true): Libp2pPeerStats {
  return {
    up, queuedMessages: 0, queuedBytes: 0, droppedOutbound: 0, sentMessages: sentBytes / 100, sentBytes, sentWrites: sentBytes / 200,
    receivedMessages: receivedBytes / 100, receivedBytes, connects: 1, dialAttempts: 1, stalledResets: 0,
  };
}

function status(alive: number[], quorum: boolean, made: { batches: number; dropped: number; nibbles: number }): PartyStatus {
  const counts = { triples: 10, lex4: 20, prod4: 5, nibbles: 100 };
  return {
    party: 2, phase: 'ready', alive, quorum, mode: 'committee', lastFinishedJob: undefined, currentJob: undefined,
    reserve: { ...counts, bits: 400, cursor: { triples: 0, lex4: 0, prod4: 0, nibbles: 0 } },
    preprocessing: {
      resolvedBatches: made.batches + made.dropped, committedBatches: made.batches, inFlight: undefined, stale: false, perBatch: counts,
      made: { triples: 1, lex4: 2, prod4: 3, nibbles: made.nibbles, bits: 4 * made.nibbles, batches: made.batches, dropped: made.dropped, productionMs: 0 },
    },
  };
}

/** A node 2 of 3 whose status, links and counts the test moves by hand. */
function rig() {
  const registry = processRegistry('committee', 2);
  const links = new Map<number, Libp2pPeerStats>();
  const reveals = new Map<string, { total: number; ones: number }>();
  const state = { ready: false, status: undefined as PartyStatus | undefined, applied: 0n, pending: 0, capacity: { production: 'idle', exhausted: false, costPerOp: null, opsLeft: null } as Capacity };
  const metrics = new NodeMetrics(registry, {
    index: 2, n: 3, status: () => state.status, peerStats: (j) => links.get(j), reveals: () => reveals,
    appliedSeq: () => state.applied, pendingOps: () => state.pending, capacity: () => state.capacity, ready: () => state.ready,
  });
  const scrape = async (): Promise<Sample[]> => parseExposition(await registry.metrics());
  return { metrics, links, reveals, state, scrape };
}

describe('NodeMetrics', () => {
  it('counts finished jobs, their ops, rounds and durations', async () => {
    const r = rig();
    let s = await r.scrape();
    expect(sumOf(s, 'tenebra_node_jobs_total')).toBe(0);
    r.metrics.jobDone(3, 0.04, 12);
    r.metrics.jobDone(1, 0.5, 30);
    s = await r.scrape();
    expect(sumOf(s, 'tenebra_node_jobs_total', { role: 'committee', index: '2' })).toBe(2);
    expect(sumOf(s, 'tenebra_node_ops_applied_total')).toBe(4);
    expect(sumOf(s, 'tenebra_node_rounds_total')).toBe(42);
    expect(sumOf(s, 'tenebra_node_job_seconds_count')).toBe(2);
    expect(sumOf(s, 'tenebra_node_job_seconds_sum')).toBeCloseTo(0.54);
    expect(sumOf(s, 'tenebra_node_job_seconds_bucket', { le: '0.05' })).toBe(1);
    expect(sumOf(s, 'tenebra_node_job_rounds_bucket', { le: '20' })).toBe(1);
  });

  it('counts engine events by name, each shown at zero first', async () => {
    const r = rig();
    expect(sumOf(await r.scrape(), 'tenebra_node_party_events_total', { event: 'stale' })).toBe(0);
    r.metrics.partyEvent('recovered');
    r.metrics.partyEvent('quorum-lost');
    r.metrics.partyEvent('quorum-lost');
    const s = await r.scrape();
    expect(sumOf(s, 'tenebra_node_party_events_total', { event: 'recovered' })).toBe(1);
    expect(sumOf(s, 'tenebra_node_party_events_total', { event: 'quorum-lost' })).toBe(2);
    expect(s.filter((x) => x.name === 'tenebra_node_party_events_total')).toHaveLength(7);
  });

  it('reads links, status, reveals and the job loop at scrape time', async () => {
    const r = rig();
    // before the party and transport exist: no quorum, no link series, no failure
    let s = await r.scrape();
    expect(sumOf(s, 'tenebra_node_quorum')).toBe(0);
    expect(s.some((x) => x.name === 'tenebra_node_peer_sent_bytes_total')).toBe(false);

    r.links.set(1, peer(1000, 2000));
    r.links.set(3, peer(300, 0, false));
    r.state.status = status([1, 2], true, { batches: 4, dropped: 1, nibbles: 50 });
    r.reveals.set('cross', { total: 7, ones: 2 });
    r.state.applied = 41n;
    r.state.pending = 3;
    s = await r.scrape();
    expect(sumOf(s, 'tenebra_node_peer_sent_bytes_total', { peer: '1' })).toBe(1000);
    expect(sumOf(s, 'tenebra_node_peer_received_bytes_total', { peer: '1' })).toBe(2000);
    expect(sumOf(s, 'tenebra_node_peer_sent_messages_total')).toBe(13);
    expect(sumOf(s, 'tenebra_node_peer_up', { peer: '3' })).toBe(0);
    expect(s.some((x) => x.labels.peer === '2')).toBe(false); // no link to itself
    expect(sumOf(s, 'tenebra_node_peers_up')).toBe(1);
    expect(sumOf(s, 'tenebra_node_quorum')).toBe(1);
    expect(sumOf(s, 'tenebra_node_reserve_items', { kind: 'bits' })).toBe(400);
    expect(sumOf(s, 'tenebra_node_reserve_items', { kind: 'lex4' })).toBe(20);
    expect(sumOf(s, 'tenebra_node_prep_items_made_total', { kind: 'nibbles' })).toBe(50);
    expect(sumOf(s, 'tenebra_node_prep_batches_total', { outcome: 'committed' })).toBe(4);
    expect(sumOf(s, 'tenebra_node_prep_batches_total', { outcome: 'dropped' })).toBe(1);
    expect(sumOf(s, 'tenebra_node_reveals_total', { label: 'cross' })).toBe(7);
    expect(sumOf(s, 'tenebra_node_last_applied_seq')).toBe(41);
    expect(sumOf(s, 'tenebra_node_pending_ops')).toBe(3);

    // quorum lost, more bytes: the next scrape follows
    r.links.set(1, peer(5000, 2000));
    r.state.status = status([2], false, { batches: 4, dropped: 1, nibbles: 50 });
    s = await r.scrape();
    expect(sumOf(s, 'tenebra_node_peer_sent_bytes_total', { peer: '1' })).toBe(5000);
    expect(sumOf(s, 'tenebra_node_quorum')).toBe(0);
    expect(sumOf(s, 'tenebra_node_peers_up')).toBe(0);
  });

  it('reports what the reserve covers: ops left, cost per op, production stopped, exhausted', async () => {
    const r = rig();
    let s = await r.scrape();
    expect(sumOf(s, 'tenebra_node_reserve_ops_left')).toBe(-1); // no cost measured yet
    expect(sumOf(s, 'tenebra_node_production_stopped')).toBe(0);
    r.state.capacity = { production: 'stopped', exhausted: true, costPerOp: { bits: 320, lex4: 27, prod4: 2, triples: 0 }, opsLeft: 12 };
    s = await r.scrape();
    expect(sumOf(s, 'tenebra_node_reserve_ops_left')).toBe(12);
    expect(sumOf(s, 'tenebra_node_prep_cost_per_op', { kind: 'bits' })).toBe(320);
    expect(sumOf(s, 'tenebra_node_production_stopped')).toBe(1);
    expect(sumOf(s, 'tenebra_node_preprocessing_exhausted')).toBe(1);
  });

  it('says ready only once the node has its shares, not as soon as it has a quorum', async () => {
    const r = rig();
    expect(sumOf(await r.scrape(), 'tenebra_node_ready')).toBe(0);
    // recovering its shares among live peers: quorum 1, not ready
    r.state.status = { ...status([1, 2, 3], true, { batches: 0, dropped: 0, nibbles: 0 }), phase: 'recovering' };
    let s = await r.scrape();
    expect(sumOf(s, 'tenebra_node_quorum')).toBe(1);
    expect(sumOf(s, 'tenebra_node_ready')).toBe(0);
    r.state.ready = true;
    s = await r.scrape();
    expect(sumOf(s, 'tenebra_node_ready')).toBe(1);
  });
});
