// The gateway's Prometheus series (docs/decisions/0012-metrics.md): placements by answer
// (acknowledged, queued, refused by code) and by way in (`via`: rest, ws) with the acknowledgement latency, fills and results
// applied, and, read at scrape time, live WebSocket sessions and the system_health status.
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, type Registry } from 'prom-client';
import { counterOf, gaugeOf, one } from '@tenebra/metrics';
import { HEALTH_STATUSES, type HealthStatus } from '@tenebra/session';
import type { GatewayEvents } from './events';
import { API_PREFIX } from './http/app';
import type { CommitteeCapacity } from './results/capacity';

/** What the scrape-time series read (gateway.ts). */
export interface GatewayMetricsSource {
  /** next seq whose outcome will be applied */
  resultsCursor(): bigint;
  /** open WebSocket sockets */
  wsSessions(): number;
  /** the system_health status pushed to every encrypted session (ws/health.ts HealthMonitor) */
  health(): HealthStatus;
  /** committee nodes with an authenticated results link */
  liveNodes(): number;
  sequencerUp(): boolean;
  /** what the connected nodes report of their preprocessing reserve (results/capacity.ts) */
  capacity?(): CommitteeCapacity;
}

/** The envelope's code at the start of an error body (`{"code":1402,...`, http/reply.ts). */
const ERROR_CODE = /^\{"code":(\d+)/;

export class GatewayMetrics {
  private readonly acked: Counter<'via'>;
  private readonly queued: Counter<'via'>;
  private readonly refused: Counter<'code' | 'via'>;
  private readonly ackSeconds: Histogram<'via'>;
  private readonly fills: Counter;
  private readonly takerFill: Histogram<'symbol'>;

  constructor(registry: Registry, src: GatewayMetricsSource) {
    this.acked = new Counter({ name: 'tenebra_gateway_orders_acknowledged_total', help: 'placements acknowledged (journaled by the sequencer: status NEW), by way in (rest: 200, ws: order.place ack code 0)', labelNames: ['via'], registers: [registry] });
    this.queued = new Counter({ name: 'tenebra_gateway_orders_queued_total', help: 'placements answered 202 / 1502 QUEUED (journal ack late), by way in', labelNames: ['via'], registers: [registry] });
    this.refused = new Counter({ name: 'tenebra_gateway_orders_refused_total', help: 'placements refused, by code (e.g. 1402 INVALID_PRICE, 42900 rate_limited) and way in', labelNames: ['code', 'via'], registers: [registry] });
    this.ackSeconds = new Histogram({
      name: 'tenebra_gateway_order_ack_seconds', help: 'placement from request received to its acknowledgement (NEW): REST 200 sent, or order.place answered', labelNames: ['via'], registers: [registry],
      buckets: [0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.02, 0.05, 0.1, 0.25, 1],
    });
    this.fills = new Counter({ name: 'tenebra_gateway_fills_total', help: 'fills applied to orders, per order side (a maker-taker match counts twice)', registers: [registry] });
    this.takerFill = new Histogram({
      name: 'tenebra_gateway_order_to_fill_seconds', help: 'an incoming order (taker) from its acceptance to each of its fills applied: sequencing, the committee\'s matching and the results link, by instrument', labelNames: ['symbol'], registers: [registry],
      buckets: [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60],
    });
    const startCursor = src.resultsCursor();
    counterOf(registry, 'tenebra_gateway_results_applied_total', 'sequenced ops whose committee outcome was applied since start', [], () => one(Number(src.resultsCursor() - startCursor)));
    gaugeOf(registry, 'tenebra_gateway_results_cursor', 'next sequence number whose outcome will be applied', [], () => one(Number(src.resultsCursor())));
    gaugeOf(registry, 'tenebra_gateway_ws_sessions', 'open WebSocket sockets', [], () => one(src.wsSessions()));
    gaugeOf(registry, 'tenebra_gateway_system_health', 'system_health status: 1 for the current one (ok, degraded, down), 0 for the others', ['status'], () => {
      const now = src.health();
      return HEALTH_STATUSES.map((status) => [{ status }, status === now ? 1 : 0]);
    });
    gaugeOf(registry, 'tenebra_gateway_live_nodes', 'committee nodes with an authenticated results link', [], () => one(src.liveNodes()));
    gaugeOf(registry, 'tenebra_gateway_sequencer_up', 'attested sequencer link up (1) or down (0)', [], () => one(src.sequencerUp() ? 1 : 0));
    const cap = src.capacity?.bind(src);
    if (cap) {
      gaugeOf(registry, 'tenebra_gateway_reserve_orders_left', 'ops the committee\'s preprocessing reserve covers (least any connected node reports; -1 while unknown)', [], () => {
        const left = cap().ordersLeft;
        return one(left === null ? -1 : Number(left));
      });
      gaugeOf(registry, 'tenebra_gateway_preprocessing', 'committee preprocessing state: 1 for the current one (running, idle, stopped, exhausted), 0 for the others', ['state'], () => {
        const now = cap().preprocessing;
        return (['running', 'idle', 'stopped', 'exhausted'] as const).map((state) => [{ state }, state === now ? 1 : 0]);
      });
    }
  }

  /** Counts every answer to POST /orders (idempotent replays included) as it is sent. */
  watchPlacements(app: FastifyInstance): void {
    app.addHook('onSend', async (req, reply, payload) => {
      if (req.method !== 'POST' || req.routeOptions.url !== `${API_PREFIX}/orders`) return payload;
      this.placementAnswered(reply.statusCode, typeof payload === 'string' ? payload : '', reply.elapsedTime / 1000);
      return payload;
    });
  }

  /** A REST placement's answer: its status and the envelope's code read from the body. */
  placementAnswered(status: number, body: string, seconds: number): void {
    this.placement('rest', status, status >= 400 ? Number(ERROR_CODE.exec(body)?.[1] ?? NaN) : undefined, seconds);
  }

  /** One placement's answer, by way in: 200 acknowledged, 202 queued, otherwise refused with its code. */
  placement(via: 'rest' | 'ws', status: number, code: number | undefined, seconds: number): void {
    if (status === 200) {
      this.acked.inc({ via });
      this.ackSeconds.observe({ via }, seconds);
    } else if (status === 202) {
      this.queued.inc({ via });
    } else if (status >= 400) {
      this.refused.inc({ via, code: code !== undefined && Number.isFinite(code) ? String(code) : `http_${status}` });
    }
  }

  /** Counts fills from the committed order events. */
  watchFills(events: GatewayEvents): void {
    events.on('order', (e) => {
      if (e.message_type !== 'partial_fill' && e.message_type !== 'filled') return;
      this.fills.inc();
      // a maker's fill would time how long it rested, not the venue
      if (e.liquidity === 'taker') this.takerFill.observe({ symbol: e.order.symbol }, Math.max(0, Number(BigInt(e.order.out_time_ns) - BigInt(e.order.in_time_ns))) / 1e9);
    });
  }
}
