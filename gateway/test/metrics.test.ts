// The gateway's Prometheus series follow its placements, fills, results, sessions and health.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { parseExposition, sumOf, type Sample } from '@tenebra/metrics';
import { Registry } from 'prom-client';
import { startRig, call, newAccount, bearer, type Rig, type Account } from './harness';
import { until } from './fakes';
import { TenebraRestClient, TenebraSocket } from '@tenebra/client';

const O = (over: Record<string, unknown> = {}) => ({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.5, price: 3000, time_in_force: 'GTC', ...over });

describe('gateway metrics', () => {
  let rig: Rig;
  let a: Account;
  let b: Account;
  const registry = new Registry();
  const scrape = async (): Promise<Sample[]> => parseExposition(await registry.metrics());
  const place = async (who: Account, body: Record<string, unknown>) => {
    await new Promise((r) => setTimeout(r, 2)); // one placement per ms per symbol and account
    return call(rig.gw, 'POST', '/api/v1/orders', body, bearer(who));
  };
  beforeAll(async () => {
    rig = await startRig({ metrics: registry });
    [a, b] = await Promise.all([newAccount(rig), newAccount(rig)]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('count acknowledged and refused placements, ack latency, fills and results applied', async () => {
    let m = await scrape();
    expect(sumOf(m, 'tenebra_gateway_orders_acknowledged_total')).toBe(0);
    expect(sumOf(m, 'tenebra_gateway_results_applied_total')).toBe(0);

    expect((await place(a, O({ side: 'sell' }))).status).toBe(200);
    expect((await place(b, O({ time_in_force: 'IOC' }))).status).toBe(200);
    expect((await place(a, O({ price: 3000.005 }))).status).toBe(400); // 1402 INVALID_PRICE
    expect((await place(a, O({ symbol: 'FOO-USDC-PERP' }))).status).toBe(400); // 1401 UNKNOWN_SYMBOL
    expect((await place(a, O({ price: 0 }))).status).toBe(400); // 1402 again
    await until(() => rig.gw.resultsCursor === BigInt(rig.seq.journal.length + 1), 10_000, 'every journaled op to be applied');

    m = await scrape();
    expect(sumOf(m, 'tenebra_gateway_orders_acknowledged_total')).toBe(2);
    expect(sumOf(m, 'tenebra_gateway_orders_refused_total', { code: '1402' })).toBe(2);
    expect(sumOf(m, 'tenebra_gateway_orders_refused_total', { code: '1401' })).toBe(1);
    expect(sumOf(m, 'tenebra_gateway_order_ack_seconds_count')).toBe(2);
    expect(sumOf(m, 'tenebra_gateway_order_ack_seconds_sum')).toBeGreaterThan(0);
    expect(sumOf(m, 'tenebra_gateway_order_ack_seconds_bucket', { le: '+Inf' })).toBe(2);
    expect(sumOf(m, 'tenebra_gateway_fills_total')).toBe(2); // one match: the maker's side and the taker's
    // order-to-fill times the incoming order only (the maker's would be how long it rested)
    expect(sumOf(m, 'tenebra_gateway_order_to_fill_seconds_count', { symbol: 'ETH-USDC-PERP' })).toBe(1);
    expect(sumOf(m, 'tenebra_gateway_order_to_fill_seconds_sum')).toBeGreaterThan(0);
    expect(sumOf(m, 'tenebra_gateway_results_applied_total')).toBe(2);
    expect(sumOf(m, 'tenebra_gateway_results_cursor')).toBe(3);
  });

  it('count encrypted WebSocket placements apart from REST ones (via="ws")', async () => {
    const rest = new TenebraRestClient({ baseUrl: rig.gw.urls.baseUrl, credentials: { apiKey: b.api_key, apiSecret: b.api_secret, passphrase: b.passphrase } });
    const socket = new TenebraSocket({ url: rig.gw.urls.wsUrl, rest, heartbeat: false, requestTimeoutMs: 8_000 });
    try {
      await socket.connect();
      const before = await scrape();
      const ok = await socket.placeOrder({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.5, price: 2990, time_in_force: 'GTC' });
      expect(ok.code).toBe(0);
      const bad = await socket.placeOrder({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.5, price: 2990.005, time_in_force: 'GTC' });
      expect(bad.code).toBe(1402);
      const m = await scrape();
      const d = (name: string, match: Record<string, string>) => sumOf(m, name, match) - sumOf(before, name, match);
      expect(d('tenebra_gateway_orders_acknowledged_total', { via: 'ws' })).toBe(1);
      expect(d('tenebra_gateway_orders_acknowledged_total', { via: 'rest' })).toBe(0);
      expect(d('tenebra_gateway_order_ack_seconds_count', { via: 'ws' })).toBe(1);
      expect(d('tenebra_gateway_orders_refused_total', { via: 'ws', code: '1402' })).toBe(1);
      expect(sumOf(m, 'tenebra_gateway_orders_acknowledged_total', { via: 'rest' })).toBe(2);
    } finally {
      await socket.close();
    }
  });

  it('show the live nodes, the sequencer link, WebSocket sessions and the system_health status', async () => {
    const m = await scrape();
    expect(sumOf(m, 'tenebra_gateway_live_nodes')).toBe(rig.env.config.n);
    expect(sumOf(m, 'tenebra_gateway_sequencer_up')).toBe(1);
    expect(sumOf(m, 'tenebra_gateway_ws_sessions')).toBe(0);
    const status = rig.gw.ws.health.current.status;
    expect(sumOf(m, 'tenebra_gateway_system_health', { status })).toBe(1);
    expect(m.filter((s) => s.name === 'tenebra_gateway_system_health').map((s) => s.value).sort()).toEqual([0, 0, 1]);
  });
});
