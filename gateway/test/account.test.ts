// REST conformance of the account side through a real gateway (fake sequencer and committee):
// GET /account, /account/vip, /vip/tiers, /positions, /settlement/status/{batchId}, scopes, bad
// input; tiers that follow 30-day volume and the fees they make execution charge; settlement
// batches whose commitments verify against the simulated public chain; two environments.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { usdcToMicro } from '@tenebra/config';
import { startRig, call, newAccount, bearer, summary, type Rig, type Account, type Json } from './harness';
import { until } from './fakes';
import { ADMIN_SECRET_HEADER } from '../src/http/routes-admin';
import { commit, verifyMerkle } from '../src/settlement/commitment';
import type { SettlementEvent } from '../src/events';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectOk(r: Json): Record<string, any> {
  expect(r.status, r.raw).toBe(200);
  for (const h of ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(r.headers[h], h).toBeDefined();
  expect(r.body.code).toBe(0);
  expect(r.body.timestamp).toMatch(ISO_MS);
  expect(r.body.request_id).toBe(r.headers['x-request-id']);
  return r.body.data;
}

function expectError(r: Json, status: number, error: string, message?: RegExp): void {
  expect(r.status, r.raw).toBe(status);
  expect(r.body.error).toBe(error);
  expect(r.body.message).toMatch(new RegExp(`^${error}: `));
  if (message) expect(r.body.message).toMatch(message);
  expect(r.body.request_id).toBe(r.headers['x-request-id']);
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(r.headers[h], h).toBeDefined();
}

const get = (rig: Rig, path: string, a?: { token: string }) => call(rig.gw, 'GET', `/api/v1${path}`, undefined, a ? bearer(a) : {});
const O = (over: Record<string, unknown> = {}) => ({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 1, price: 3000, time_in_force: 'GTC', ...over });

async function place(rig: Rig, a: Account, body: Record<string, unknown>): Promise<void> {
  const r = await call(rig.gw, 'POST', '/api/v1/orders', body, bearer(a));
  expect(r.status, r.raw).toBe(200);
}

async function settled(rig: Rig): Promise<void> {
  await until(() => rig.gw.resultsCursor === BigInt(rig.seq.journal.length + 1), 10_000, 'every journaled op to be applied');
  await rig.gw.venue.ledger.idle();
}

async function tokenWith(rig: Rig, a: Account, scope: string): Promise<{ token: string }> {
  const r = await call(rig.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: a.api_key, client_secret: a.api_secret, passphrase: a.passphrase, scope });
  expect(r.status, r.raw).toBe(200);
  return { token: r.body.access_token };
}

describe('account, positions, VIP tiers and settlement over REST', () => {
  let rig: Rig;
  let a: Account;
  let b: Account;
  let c: Account;
  // Core accounts whose volume lifts them to Select (few requests: Core's burst is 5)
  let v1: Account;
  let v2: Account;
  beforeAll(async () => {
    // the risk monitor does not run here (its marks would follow the walking oracle): positions show the
    // entry price as mark until one is accepted; marking is tested in risk-monitor.test.ts
    rig = await startRig({ venue: { settlementIntervalMs: 3_600_000 }, publicLimits: { perMinute: 10_000, perSecond: 10_000, burst: 10_000 }, risk: { intervalMs: 0 } });
    [a, b, c, v1, v2] = await Promise.all([
      newAccount(rig, 'Apex', '10000000', { leverage: 5 }), newAccount(rig, 'Apex', '10000000', { leverage: 5 }), newAccount(rig, 'Apex', '1000'),
      newAccount(rig, 'Core', '10000000', { leverage: 5 }), newAccount(rig, 'Core', '10000000', { leverage: 5 }),
    ]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('GET /vip/tiers needs no token and serves the whole schedule', async () => {
    const d = expectOk(await get(rig, '/vip/tiers'));
    expect(d.volume_window_days).toBe(30);
    expect(d.tiers.map((t: any) => [t.tier, t.min_volume_30d, t.maker_fee_pct, t.taker_fee_pct, t.min_notional, t.instant_taker_bonus_pct, t.hourly_taker_bonus_pct])).toEqual([
      ['Core', 0, 0.02, 0.05, 25, 5, 5],
      ['Select', 5000000, 0.01, 0.04, 50, 7.5, 10],
      ['Advanced', 10000000, 0, 0.03, 75, 10, 12.5],
      ['Prime', 25000000, -0.005, 0.025, 90, 12.5, 15],
      ['Apex', 50000000, -0.01, 0.02, 100, 20, 25],
    ]);
    expect(d.tiers.map((t: any) => [t.maker_fee_bps, t.taker_fee_bps])).toEqual([[2, 5], [1, 4], [0, 3], [-0.5, 2.5], [-1, 2]]);
    expect(d.tiers[3].limits).toMatchObject({ rest_requests_per_minute: 3000, rest_requests_per_second: 100, rest_burst: 200, orders_per_minute: 1200, cancels_per_minute: 6000, mass_quote_batches_per_minute: 120, max_open_orders: 1200, max_open_orders_per_symbol: 100, ws_messages_per_second: 300 });
    expect(d.tiers[0].limits.mass_quote_batches_per_minute).toBeNull();
    expectError(await get(rig, '/vip/tiers?tier=Core'), 400, 'invalid_request', /unknown query parameter 'tier'/);
  });

  it('needs a bearer token with the read scope on every account endpoint', async () => {
    const readOnly = await tokenWith(rig, c, 'read');
    const tradeOnly = await tokenWith(rig, c, 'trade');
    for (const path of ['/account', '/account/vip', '/positions', '/settlement/status/1', '/settlement/batches']) {
      expectError(await get(rig, path), 401, 'invalid_token', /Authorization: Bearer/);
      expectError(await call(rig.gw, 'GET', `/api/v1${path}`, undefined, { authorization: 'Bearer not.a.jwt' }), 401, 'invalid_token');
      expectError(await get(rig, path, tradeOnly), 403, 'insufficient_scope', /needs the 'read' scope/);
      const r = await get(rig, path, readOnly);
      expect([200, 404], `${path}: ${r.raw}`).toContain(r.status);
      expectError(await get(rig, `${path}?x=1`, readOnly), 400, 'invalid_request', /unknown query parameter 'x'/);
    }
    // revoked tokens are refused too
    await call(rig.gw, 'POST', '/api/v1/auth/token/revoke', { token: readOnly.token });
    expectError(await get(rig, '/account', readOnly), 401, 'token_revoked');
  });

  it('GET /account: balance, free collateral, reserved margin, VIP tier and config', async () => {
    const d = expectOk(await get(rig, '/account', a));
    expect(d).toMatchObject({
      user_id: a.user_id, environment: 'test', currency: 'USDC', balance: 10000000, reserved_margin: 0, free_collateral: 10000000,
      position_margin: 0, equity: 10000000, total_deposited: 10000000, open_orders: 0, open_positions: 0, vip_tier: 'Apex',
      maker_fee_bps: -1, taker_fee_bps: 2, volume_30d: 0,
      config: { leverage: 5, margin_mode: 'isolated', api_key: a.api_key, api_key_scopes: ['trade', 'read'], token_scopes: ['trade', 'read'], max_open_orders: 2500, max_open_orders_per_symbol: 200, min_order_notional: 100 },
    });
    // a resting sell reserves margin (3000 / 5) plus the worst-case taker fee (2 bps): free collateral drops
    await place(rig, a, O({ side: 'sell' }));
    await settled(rig);
    const r = expectOk(await get(rig, '/account', a));
    expect([r.reserved_margin, r.free_collateral, r.open_orders]).toEqual([600.6, 9999399.4, 1]);
  });

  it('GET /positions: open positions with every field, updated from fills', async () => {
    expect(expectOk(await get(rig, '/positions', b))).toEqual({ positions: [] });
    await place(rig, b, O({ side: 'buy' }));
    await settled(rig);
    const [pb] = expectOk(await get(rig, '/positions', b)).positions;
    const [pa] = expectOk(await get(rig, '/positions', a)).positions;
    expect(Object.keys(pb).sort()).toEqual(['entry_price', 'funding_accrued', 'leverage', 'liquidation_price', 'margin', 'mark_price', 'position_id', 'realized_pnl', 'side', 'size', 'status', 'symbol', 'unrealized_pnl', 'updated_at']);
    expect(pb).toMatchObject({ symbol: 'ETH-USDC-PERP', side: 'long', size: 1, entry_price: 3000, mark_price: 3000, margin: 600, leverage: 5, unrealized_pnl: 0, realized_pnl: 0, funding_accrued: 0, liquidation_price: 2539.68254, status: 'OPEN' });
    expect(pa).toMatchObject({ side: 'short', size: 1, margin: 600, liquidation_price: 3412.322275 }); // where the first tranche fires (110%): 3600 / 1.055
    expect(pb.position_id).toMatch(/^[0-9a-f]{24}$/);
    expect(pb.position_id).not.toBe(pa.position_id);
    expect(pb.updated_at).toMatch(ISO_MS);
    // balances: b paid the Apex taker fee (0.6), a got the Apex maker rebate (0.3) and the Apex instant
    // taker bonus (20% of b's 0.6 = 0.12); margins moved into positions
    const ab = expectOk(await get(rig, '/account', b));
    expect([ab.balance, ab.position_margin, ab.equity, ab.open_positions]).toEqual([9999399.4, 600, 9999999.4, 1]);
    expect(expectOk(await get(rig, '/account', a)).balance).toBe(9999400.42);
    // closing the position removes it from the list
    await place(rig, a, O({ side: 'buy', price: 3000 }));
    await place(rig, b, O({ side: 'sell', price: 3000 }));
    await settled(rig);
    expect(expectOk(await get(rig, '/positions', b)).positions).toEqual([]);
  });

  it('tiers follow 30-day notional volume, and the fees /account/vip reports are what execution charges', async () => {
    const balance = async (x: Account): Promise<bigint> => BigInt(usdcToMicro(String((await summary(rig, x.user_id)).balance))!);
    let v = expectOk(await get(rig, '/account/vip', v2));
    expect(v).toMatchObject({ tier: 'Core', maker_fee_bps: 2, taker_fee_bps: 5, volume_30d: 0, volume_window_days: 30, volume_tier: 'Core', assigned_tier: 'Core', next_tier: { tier: 'Select', min_volume_30d: 5000000, volume_needed: 5000000 } });
    // 80 BTC at 65,000 = 5.2M: both sides cross Select's 5M
    await place(rig, v1, { symbol: 'BTC-USDC-PERP', side: 'sell', type: 'limit', quantity: 80, price: 65000, time_in_force: 'GTC' });
    await place(rig, v2, { symbol: 'BTC-USDC-PERP', side: 'buy', type: 'limit', quantity: 80, price: 65000, time_in_force: 'GTC' });
    await settled(rig);
    v = expectOk(await get(rig, '/account/vip', v2));
    expect(v).toMatchObject({ tier: 'Select', maker_fee_bps: 1, taker_fee_bps: 4, maker_fee_pct: 0.01, taker_fee_pct: 0.04, volume_30d: 5200000, volume_tier: 'Select', assigned_tier: 'Core', min_notional: 50, next_tier: { tier: 'Advanced', volume_needed: 4800000 } });
    expect(v.as_of).toMatch(ISO_MS);
    expect((await summary(rig, v1.user_id)).tier).toBe('Select');
    // The next fill is charged at Select: taker 4 bps of 3000 = 1.2 (Core: 1.5), maker 1 bp = 0.3 (Core: 0.6).
    const before = [await balance(v1), await balance(v2)];
    await place(rig, v1, O({ side: 'sell' }));
    await place(rig, v2, O({ side: 'buy' }));
    await settled(rig);
    expect(before[0]! - (await balance(v1))).toBe(600_210_000n); // margin 600 + maker fee 0.3 − instant bonus (Select 7.5% of 1.2 = 0.09)
    expect(before[1]! - (await balance(v2))).toBe(601_200_000n); // margin 600 + taker fee 1.2
    expect(expectOk(await get(rig, '/account', v2))).toMatchObject({ vip_tier: 'Select', taker_fee_bps: 4, volume_30d: 5203000 });
    // the operator can assign a higher floor tier
    const r = await call(rig.gw, 'POST', `/admin/accounts/${v1.user_id}/tier`, { tier: 'Prime' }, { [ADMIN_SECRET_HEADER]: rig.env.adminSecret });
    expect(r.body.data).toEqual({ user_id: v1.user_id, assigned_tier: 'Prime', tier: 'Prime' });
    expect(expectOk(await get(rig, '/account/vip', v1))).toMatchObject({ tier: 'Prime', assigned_tier: 'Prime', volume_tier: 'Select', maker_fee_bps: -0.5 });
    expectError(await call(rig.gw, 'POST', `/admin/accounts/${v1.user_id}/tier`, { tier: 'Gold' }, { [ADMIN_SECRET_HEADER]: rig.env.adminSecret }), 400, 'invalid_request', /tier must be one of/);
    expectError(await call(rig.gw, 'POST', `/admin/accounts/${v1.user_id}/tier`, { tier: 'Core' }), 403, 'forbidden');
  });

  it('settles fills in batches of hiding commitments on the public chain, queryable by batch id', async () => {
    const announced: SettlementEvent[] = [];
    const settledPositions: string[] = [];
    rig.gw.events.on('settlement', (e) => announced.push(e));
    rig.gw.events.on('position', (e) => {
      if (e.update_reason === 'settlement') settledPositions.push(`${e.position.user_id} ${e.position.symbol}`);
    });
    const batch = await rig.gw.venue.settlement.closeBatch();
    expect(batch).not.toBeNull();
    const id = batch!.batch_id;
    const d = expectOk(await get(rig, `/settlement/status/${id}`, b));
    expect(d).toMatchObject({ batch_id: id, status: 'committed', accounts: 4, shielded_pool_total: 40001000, chain: { network: 'tenebra-sim-test', confirmations: 1 } });
    expect(d.committed_at).toMatch(ISO_MS);
    // b's opening verifies against its commitment, and its path against the root on chain
    const e = d.account;
    expect(commit(id, b.user_id, e.delta_json, e.salt)).toBe(e.commitment);
    expect(verifyMerkle(e.commitment, e.merkle_proof, d.commitments_root)).toBe(true);
    // b opened and closed 1 ETH at 3000, as taker both times (2 bps: 0.6 each)
    expect(e.delta).toEqual({ collateral: -1.2, positions: [{ symbol: 'ETH-USDC-PERP', size: 0, margin: 0, realized_pnl: 0, fees: 1.2 }] });
    // committed batches are announced per account (SSE notifications) and per settled position (positions channel)
    expect(announced.map((x) => x.user_id).sort()).toEqual([a, b, v1, v2].map((x) => x.user_id).sort());
    expect(announced.find((x) => x.user_id === b.user_id)).toMatchObject({
      batch_id: id, status: 'committed',
      detail: { commitment: e.commitment, block_height: d.chain.block_height, collateral: '-1.2', positions: [{ symbol: 'ETH-USDC-PERP', size: '0', margin: '0', realized_pnl: '0', fees: '1.2' }] },
    });
    expect(settledPositions).toContain(`${v2.user_id} BTC-USDC-PERP`);
    const chainText = readFileSync(join(rig.env.config.dataDir, 'public-chain.jsonl'), 'utf8');
    const block = JSON.parse(chainText.trim().split('\n').at(-1)!);
    expect(block.tx).toMatchObject({ batch_id: id, commitments_root: d.commitments_root, shielded_pool_total: '40001000000000' });
    expect(block.tx.commitments).toContain(e.commitment);
    expect(block.hash).toBe(d.chain.block_hash);
    // only aggregates are public: no account, salt or delta on chain
    for (const secret of [a.user_id, b.user_id, e.salt, e.delta_json]) expect(chainText).not.toContain(secret);
    // an account without changes in the batch sees the batch but no entry
    expect(expectOk(await get(rig, `/settlement/status/${id}`, c)).account).toBeNull();
    expect(expectOk(await get(rig, '/settlement/batches', b)).batches.map((x: any) => x.batch_id)).toEqual([id]);
    // nothing new: no batch; a new fill: the next batch holds only the change
    expect(await rig.gw.venue.settlement.closeBatch()).toBeNull();
    await place(rig, a, O({ side: 'sell', quantity: 0.5 }));
    await place(rig, b, O({ side: 'buy', quantity: 0.5 }));
    await settled(rig);
    const next = await rig.gw.venue.settlement.closeBatch();
    const d2 = expectOk(await get(rig, `/settlement/status/${next!.batch_id}`, b));
    expect(d2.chain.block_height).toBe(d.chain.block_height + 1);
    expect(d2.account.delta).toEqual({ collateral: -300.3, positions: [{ symbol: 'ETH-USDC-PERP', size: 0.5, margin: 300, realized_pnl: 0, fees: 0.3 }] });
    expect(expectOk(await get(rig, `/settlement/status/${id}`, b)).chain.confirmations).toBe(2);
    expect(expectOk(await get(rig, '/settlement/batches?limit=1', b)).batches.map((x: any) => x.batch_id)).toEqual([next!.batch_id]);
    // bad ids and parameters
    expectError(await get(rig, '/settlement/status/999', b), 404, 'not_found', /no settlement batch 999/);
    for (const bad of ['abc', '0', '01', '-1', '1.5']) expectError(await get(rig, `/settlement/status/${bad}`, b), 400, 'invalid_request', /positive decimal integer/);
    expectError(await get(rig, '/settlement/batches?limit=0', b), 400, 'invalid_request', /limit must be an integer from 1 to 100/);
  });

  it('serves its OpenAPI description without a token', async () => {
    const r = await get(rig, '/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    for (const p of ['/account', '/account/vip', '/vip/tiers', '/positions', '/positions/{symbol}/leverage', '/positions/{symbol}/margin', '/stats/platform/overview', '/stats/platform/series', '/settlement/status/{batchId}']) expect(r.body.paths[p], p).toBeDefined();
    expect(r.body.paths['/account'].get['x-required-scope']).toBe('read');
  });
});

describe('two environments', () => {
  let test: Rig;
  let prod: Rig;
  beforeAll(async () => {
    test = await startRig();
    prod = await startRig();
    // a second gateway of the production environment (its own data folder and JWT secret)
    await prod.gw.stop();
    prod.env.config.env = 'production';
    await prod.restart();
  });
  afterAll(async () => {
    await test?.close();
    await prod?.close();
  });

  it('refuses the other environment\'s tokens and credentials; balances are separate', async () => {
    const [t, p] = await Promise.all([newAccount(test, 'Core', '1000'), newAccount(prod, 'Core', '2000')]);
    expect(expectOk(await get(test, '/account', t))).toMatchObject({ environment: 'test', balance: 1000 });
    expect(expectOk(await get(prod, '/account', p))).toMatchObject({ environment: 'production', balance: 2000 });
    expectError(await get(test, '/account', p), 401, 'invalid_token');
    expectError(await get(prod, '/account', t), 401, 'invalid_token');
    const login = await call(prod.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: t.api_key, client_secret: t.api_secret, passphrase: t.passphrase });
    expectError(login, 401, 'invalid_client');
    // even a token signed with this gateway's own secret is refused when it names the other environment
    const forged = await new SignJWT({ scope: 'trade read', env: 'production' }).setProtectedHeader({ alg: 'HS256' }).setSubject(t.user_id)
      .setJti('x1').setIssuer('tenebra-gateway').setAudience('tenebra:test').setIssuedAt().setExpirationTime('5m')
      .sign(new TextEncoder().encode(test.env.jwtSecret));
    expectError(await get(test, '/account', { token: forged }), 401, 'invalid_token', /another environment/);
    // revoking a token at the other environment does nothing to it
    await call(prod.gw, 'POST', '/api/v1/auth/token/revoke', { token: t.token });
    expectOk(await get(test, '/account', t));
  });
});
