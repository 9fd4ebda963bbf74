// GET /market-data/reference[/{symbol}]: the oracle reference as the venue prices against it (no
// token), exact decimals on the tick grid, the feed it came from, and a clear state when no fresh
// quote exists; unknown symbols and parameters are refused in the spec's envelope.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { call } from './harness';
import { startOrderRig, type OrderRig } from './order-rig';
import { TenebraRestClient } from '@tenebra/client';

describe('market data: the oracle reference', () => {
  let rig: OrderRig;
  beforeAll(async () => {
    rig = await startOrderRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('serves every instrument and one symbol without a token, as exact decimals with its source', async () => {
    rig.sim.market.set('SOL-USDC-PERP', 15_012n); // tick 0.01: mid 150.12
    rig.sim.primary.publish();
    const one = await call(rig.gw, 'GET', '/api/v1/market-data/reference/SOL-USDC-PERP');
    expect(one.status, one.raw).toBe(200);
    expect(one.body.data).toMatchObject({ symbol: 'SOL-USDC-PERP', status: 'fresh', mid: 150.12, source: 'primary' });
    expect(one.body.data.bid).toBeLessThanOrEqual(150.12);
    expect(one.body.data.ask).toBeGreaterThanOrEqual(150.12);
    expect(one.raw).toMatch(/"mid":150\.12[,}]/); // an exact decimal, never a float rendering
    expect(Date.parse(one.body.data.as_of)).toBeGreaterThan(0);
    const all = await call(rig.gw, 'GET', '/api/v1/market-data/reference');
    expect(all.status).toBe(200);
    expect(all.body.data.references).toHaveLength(20);
    expect(all.body.data.references.find((r: any) => r.symbol === 'SOL-USDC-PERP')).toEqual(one.body.data);
  });

  it('says when no fresh quote exists instead of serving an old one', async () => {
    rig.sim.market.remove('NEAR-USDC-PERP');
    rig.sim.primary.publish();
    rig.sim.secondary.publish();
    const r = await call(rig.gw, 'GET', '/api/v1/market-data/reference/NEAR-USDC-PERP');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ symbol: 'NEAR-USDC-PERP', status: 'missing', mid: null, bid: null, ask: null, source: null });
    expect(r.body.data.detail).toMatch(/no fresh reference price for NEAR-USDC-PERP/);
    rig.sim.market.set('NEAR-USDC-PERP', 5_000n);
    rig.sim.primary.publish();
  });

  it('through the SDK, without credentials', async () => {
    const rest = new TenebraRestClient({ baseUrl: rig.gw.urls.baseUrl });
    const one = await rest.marketReference('SOL-USDC-PERP'); // typed by the overload: MarketReference
    expect(one).toMatchObject({ symbol: 'SOL-USDC-PERP', status: 'fresh', source: 'primary' });
    expect(one.mid).toBe('150.12'); // a decimal string, whatever its value
    const all = await rest.marketReference();
    expect(all).toHaveLength(20);
    expect(all.every((r) => r.mid === null || typeof r.mid === 'string')).toBe(true);
  });

  it('refuses unknown symbols and parameters', async () => {
    const r = await call(rig.gw, 'GET', '/api/v1/market-data/reference/FOO-USDC-PERP');
    expect([r.status, r.body.error]).toEqual([404, 'not_found']);
    expect(r.body.message).toMatch(/^not_found: unknown symbol 'FOO-USDC-PERP'/);
    const q = await call(rig.gw, 'GET', '/api/v1/market-data/reference?symbol=SOL-USDC-PERP');
    expect([q.status, q.body.error]).toEqual([400, 'invalid_request']);
  });
});
