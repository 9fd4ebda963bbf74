// npm run cost: the report read from metrics expositions (no processes): per-op figures, deltas
// between two scrapes, histogram quantiles, and a process that did not answer.
import { describe, it, expect } from 'vitest';
import { parseExposition } from '@tenebra/metrics';
import { histogramQuantile, report, targetsOf } from '../src/cost-report';
import type { ClusterFile } from '@tenebra/config';

const node = (ops: number, rounds: number, bytes: number, bits: number) => parseExposition(`
tenebra_node_jobs_total ${ops / 2}
tenebra_node_ops_applied_total ${ops}
tenebra_node_rounds_total ${rounds}
tenebra_node_peer_sent_bytes_total{peer="2"} ${bytes / 2}
tenebra_node_peer_sent_bytes_total{peer="3"} ${bytes / 2}
tenebra_node_peer_sent_messages_total{peer="2"} ${rounds}
tenebra_node_peers_up 4
tenebra_node_reserve_items{kind="bits"} ${bits}
tenebra_node_prep_batches_total{outcome="committed"} 3
tenebra_node_prep_batches_total{outcome="dropped"} 1
tenebra_node_party_events_total{event="stale"} 1
tenebra_node_party_events_total{event="prep-batch"} 4
tenebra_node_reveals_total{label="cross"} ${ops}
tenebra_node_reveals_total{label="insert-rank"} ${ops * 2}
`);

const gateway = (acks: number, fast: number) => parseExposition(`
tenebra_gateway_orders_acknowledged_total ${acks}
tenebra_gateway_orders_refused_total{code="1402"} 1
tenebra_gateway_fills_total 4
tenebra_gateway_order_ack_seconds_bucket{le="0.001"} 0
tenebra_gateway_order_ack_seconds_bucket{le="0.002"} ${fast}
tenebra_gateway_order_ack_seconds_bucket{le="0.005"} ${acks}
tenebra_gateway_order_ack_seconds_bucket{le="+Inf"} ${acks}
`);

describe('npm run cost', () => {
  const file = {
    env: 'test', processes: [
      { role: 'sequencer', index: 0, pid: 1, ports: { ws: 1, metrics: 9301 }, peerId: null, configFile: '', logFile: '' },
      { role: 'committee', index: 1, pid: 2, ports: { libp2p: 2, metrics: 9302 }, peerId: 'p', configFile: '', logFile: '' },
      { role: 'committee', index: 2, pid: 3, ports: { libp2p: 3, metrics: 9303 }, peerId: 'q', configFile: '', logFile: '' },
      { role: 'gateway', index: 0, pid: 4, ports: { http: 4, metrics: 9300 }, peerId: null, configFile: '', logFile: '' },
    ],
  } as unknown as ClusterFile;
  const targets = targetsOf(file);

  it('finds every process that serves metrics in cluster.json', () => {
    expect(targets.map((t) => [t.name, t.url])).toEqual([
      ['sequencer', 'http://127.0.0.1:9301/metrics'], ['node 1', 'http://127.0.0.1:9302/metrics'],
      ['node 2', 'http://127.0.0.1:9303/metrics'], ['gateway', 'http://127.0.0.1:9300/metrics'],
    ]);
  });

  it('reports per-op costs since start, and a node that did not answer', () => {
    const text = report(targets, new Map([['node 1', node(100, 900, 2_048_000, 5000)], ['node 2', []], ['gateway', gateway(10, 5)]]));
    const row = text.split('\n').find((l) => l.startsWith('node 1'))!;
    // 900 rounds / 100 ops, 2,000 KB / 100 ops, 900 messages / 100 ops, 3 committed / 1 dropped, a stale event
    expect(row.split(/\s+/).slice(2, 10)).toEqual(['50', '100', '9.0', '20.0', '9.0', '4', '5000', '3/1']);
    expect(row).toContain('stale 1');
    expect(row).not.toContain('prep-batch');
    expect(text).toMatch(/node 2 +\(no answer: down or restarting\)/);
    expect(text).toContain('reveals per op (node 1): cross 1.00, insert-rank 2.00');
    expect(text).toContain('gateway: 10 orders acknowledged, 1 refused, ack p50 2.00 ms');
  });

  it('reports the deltas between two scrapes, with rates', () => {
    const text = report(targets, new Map([['node 1', node(300, 2100, 6_144_000, 4000)], ['gateway', gateway(30, 10)]]),
      new Map([['node 1', node(100, 900, 2_048_000, 5000)], ['gateway', gateway(10, 5)]]), 10);
    expect(text.split('\n')[0]).toBe('cost over the last 10 s');
    const row = text.split('\n').find((l) => l.startsWith('node 1'))!;
    expect(row.split(/\s+/).slice(2, 6)).toEqual(['100', '200', '6.0', '20.0']); // 1,200 rounds / 200 ops
    expect(text).toContain('gateway: 20 orders acknowledged, 2.0 acks/s, 0 refused');
  });

  it('estimates histogram quantiles inside their bucket', () => {
    const s = gateway(10, 5);
    expect(histogramQuantile(s, undefined, 'tenebra_gateway_order_ack_seconds', 0.5)).toBeCloseTo(0.002, 9);
    expect(histogramQuantile(s, undefined, 'tenebra_gateway_order_ack_seconds', 0.75)).toBeCloseTo(0.0035, 9);
    expect(histogramQuantile(gateway(0, 0), undefined, 'tenebra_gateway_order_ack_seconds', 0.5)).toBeNull();
  });
});
