// bench:orders' per-node section cost and its dedicated-hosts projection, from synthetic
// expositions (no processes).
import { describe, it, expect } from 'vitest';
import { parseExposition } from '@tenebra/metrics';
import { describeCost, project, sectionCost, type ClusterScrape } from '../bench/section-meter';

const node = (ops: number, cpuS: number, rounds: number, bytes: number, gcS = 0) => parseExposition(`
process_cpu_seconds_total ${cpuS}
nodejs_gc_duration_seconds_sum{kind="minor"} ${gcS}
nodejs_gc_duration_seconds_sum{kind="major"} ${gcS / 2}
tenebra_node_ops_applied_total ${ops}
tenebra_node_rounds_total ${rounds}
tenebra_node_peer_sent_bytes_total{peer="2"} ${bytes}
tenebra_node_peer_sent_messages_total{peer="2"} ${rounds}
`);
const proc = (cpuS: number, acks = 0, refused = 0) => parseExposition(`
process_cpu_seconds_total ${cpuS}
tenebra_gateway_orders_acknowledged_total ${acks}
tenebra_gateway_orders_refused_total{code="1408",via="rest"} ${refused}
`);

describe('section meter', () => {
  it('takes per-node deltas between two scrapes and skips a node down at either end', () => {
    const before: ClusterScrape = new Map([['node 1', node(10, 1, 30, 1000)], ['node 2', node(10, 2, 30, 1000)], ['node 3', []], ['gateway', proc(1, 5)], ['sequencer', proc(0.5)]]);
    const after: ClusterScrape = new Map([['node 1', node(110, 1.4, 330, 103_400, 0.02)], ['node 2', node(110, 2.6, 330, 1000)], ['node 3', node(50, 9, 9, 9)], ['gateway', proc(1.2, 105)], ['sequencer', proc(0.55)]]);
    const c = sectionCost(before, after);
    expect(c.nodes.map((n) => n.name)).toEqual(['node 1', 'node 2']);
    expect(c.nodes[0]).toMatchObject({ ops: 100, rounds: 300, sentBytes: 102_400 });
    expect(c.nodes[0]!.cpuMs).toBeCloseTo(400);
    expect(c.nodes[0]!.gcMs).toBeCloseTo(30); // minor and major kinds summed
    expect(c.gatewayAcks).toBe(100);
    expect(c.gatewayCpuMs).toBeCloseTo(200);
    const d = describeCost(c, { rttMs: 1, books: 1 });
    // the busiest node (6 ms/op) bounds the CPU figure; 3 rounds/op at 1 ms allow 333/s on one book
    expect(d.cpuMsPerOp).toBeCloseTo(6);
    expect(d.roundsPerOp).toBeCloseTo(3);
    expect(d.projection?.boundBy).toBe('node CPU');
    expect(d.lines.some((l) => l.startsWith('PROJECTION (not measured)'))).toBe(true);
  });

  it('gives the gateway CPU per placement beside the per-ack figure when it refused some', () => {
    const before: ClusterScrape = new Map([['node 1', node(10, 1, 30, 1000)], ['gateway', proc(1, 5, 0)], ['sequencer', proc(0.5)]]);
    const noneRefused: ClusterScrape = new Map([['node 1', node(110, 1.4, 330, 1000)], ['gateway', proc(1.3, 105, 0)], ['sequencer', proc(0.55)]]);
    expect(describeCost(sectionCost(before, noneRefused), { rttMs: 1, books: 1 }).lines.find((l) => l.startsWith('gateway CPU'))).toBe('gateway CPU 3.00 ms/ack, sequencer CPU 0.50 ms/ack (100 acks)');
    const someRefused: ClusterScrape = new Map([['node 1', node(110, 1.4, 330, 1000)], ['gateway', proc(1.3, 105, 50)], ['sequencer', proc(0.55)]]);
    const c = sectionCost(before, someRefused);
    expect(c.gatewayRefused).toBe(50);
    expect(describeCost(c, { rttMs: 1, books: 1 }).lines.find((l) => l.startsWith('gateway CPU'))).toBe('gateway CPU 3.00 ms/ack, sequencer CPU 0.50 ms/ack (100 acks; 2.00 ms per placement with the 50 refused)');
  });

  it("counts the sequencer's job-end records ('progress' job boundaries) apart from the nodes' ops", () => {
    const seq = (lastSeq: number, journaled: number) => parseExposition(`
process_cpu_seconds_total 0.5
tenebra_sequencer_last_seq ${lastSeq}
tenebra_sequencer_ops_journaled_total ${journaled}
`);
    // 100 seqs made and applied, 88 of them ops journaled: 12 job-end records, which the node's
    // ops metric leaves out
    const before: ClusterScrape = new Map([['node 1', node(10, 1, 30, 1000)], ['sequencer', seq(10, 10)]]);
    const after: ClusterScrape = new Map([['node 1', node(98, 1.88, 330, 1000)], ['sequencer', seq(110, 98)]]);
    const c = sectionCost(before, after);
    expect(c.jobEndRecords).toBe(12);
    expect(c.nodes[0]!.ops).toBe(88);
    expect(describeCost(c, { rttMs: 1, books: 1 }).cpuMsPerOp).toBeCloseTo(10); // 880 ms over 88 orders, not 100 seqs
  });

  it('projects the lower of the CPU bound and the round-trip bound, rounds spread over books', () => {
    const one = project(0.5, 10, 1, 1); // CPU 2000/s, rounds 100/s per book
    expect(one.cpuBound).toBeCloseTo(2000);
    expect(one.roundBoundPerBook).toBeCloseTo(100);
    expect(one.rate).toBeCloseTo(100);
    expect(one.boundBy).toBe('round trips');
    const many = project(0.5, 10, 1, 40); // 40 books: 4000/s by rounds, CPU binds
    expect(many.rate).toBeCloseTo(2000);
    expect(many.boundBy).toBe('node CPU');
  });

  it('gives no projection when no node applied anything', () => {
    const s: ClusterScrape = new Map([['node 1', node(5, 1, 1, 1)]]);
    expect(describeCost(sectionCost(s, s), { rttMs: 1, books: 1 }).projection).toBeNull();
  });
});
