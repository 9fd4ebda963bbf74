// The WebSocket's timers on a gateway with a manual clock: auth_expired about 60 s before expiry and
// re-login on the same socket (subscriptions kept), closing at expiry and on revocation, the login
// timeout, scheduled rekey_required and session retirement (session_expired), the server's own
// nonce_overflow, and the mark_price throttle (one per position per second; other reasons at once).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { MAX_COUNTER } from '@tenebra/session';
import { ManualClock } from '../src/clock';
import { createSimulatedOracle } from '../src/orders/oracle';
import { startRig, call, newAccount, type Rig, type Account } from './harness';
import { until } from './fakes';
import { RawWs, ethLimit, ETH } from './ws-helpers';
import type { PositionRec } from '../src/store/records';

let rig: Rig;
let a: Account;
const clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0));
const sockets: RawWs[] = [];

async function open(): Promise<RawWs> {
  const c = await RawWs.open(rig.gw.urls.wsUrl);
  sockets.push(c);
  return c;
}

async function ready(token: string): Promise<RawWs> {
  const c = await open();
  expect((await c.login(token)).f.code).toBe(0);
  expect((await c.setup()).f.code).toBe(0);
  return c;
}

async function freshToken(acct: Account): Promise<string> {
  const r = await call(rig.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: acct.api_key, client_secret: acct.api_secret, passphrase: acct.passphrase });
  expect(r.status).toBe(200);
  return r.body.access_token;
}

/** Moves the manual clock and lets the sweep (every 10 ms) see it. */
async function advance(ms: number): Promise<void> {
  clock.advance(ms);
  await new Promise((r) => setTimeout(r, 40));
}

beforeAll(async () => {
  // reference prices never go stale on this manual clock (it jumps by minutes)
  rig = await startRig({ clock, oracle: createSimulatedOracle(clock, { staleAfterMs: 1e12, walk: false }).oracle, ws: { sweepMs: 10, rekeyAfterMs: 800_000, rekeyGraceMs: 30_000, loginTimeoutMs: 20_000 } });
  a = await newAccount(rig);
});
afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await rig?.close();
});

describe('token lifetime', () => {
  it('auth_expired about 60 s before expiry; a new login on the same socket keeps the subscriptions', async () => {
    const token = await freshToken(a);
    const c = await ready(token);
    await c.request('subscribe', { channel: 'orders' });
    await c.trade(ethLimit({ price: '1000', client_order_id: 'relogin-1' }), ETH);
    await advance(900_000 - 61_000);
    expect(c.events('auth_expired')).toHaveLength(0);
    await advance(2_000);
    const ev = await c.waitFor((r) => r.f.event === 'auth_expired', 'auth_expired');
    expect(ev.f.data).toMatchObject({ expires_in: 59 });
    expect(ev.f.data.expires_at).toBe(new Date(clock.nowMs() + 59_000).toISOString());
    // the session is older than rekeyAfterMs too: a client answers rekey_required with a new setup
    await c.waitFor((r) => r.f.event === 'rekey_required', 'rekey_required');
    expect((await c.setup()).f.code).toBe(0);
    const again = await c.login(await freshToken(a));
    // instruments: the socket's connect-time subscription (issue 26: snapshot on connect)
    expect(again.f).toMatchObject({ code: 0, data: { subscriptions: ['instruments', 'orders'], expires_in: 900 } });
    await advance(120_000); // past the first token's expiry: the socket stays
    expect(c.closed).toBeNull();
    const ack = await c.trade(ethLimit({ price: '1000', client_order_id: 'relogin-2' }), ETH);
    await c.waitFor((r) => (r.plain as any)?.order_update?.order_id === ack.order_id, 'event after re-login');
    const seqs = c.pushes('orders').map((r) => r.f.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    await advance(900_000);
    expect(await c.closedBy()).toEqual({ code: 4001, reason: 'token_expired' });
  });

  it('a revoked token closes its socket (4002); a socket that never logs in is closed (4401)', async () => {
    const token = await freshToken(a);
    const c = await ready(token);
    expect((await call(rig.gw, 'POST', '/api/v1/auth/token/revoke', { token })).status).toBe(204);
    await advance(10);
    expect((await c.closedBy()).code).toBe(4002);
    const idle = await open();
    await advance(21_000);
    expect((await idle.closedBy()).code).toBe(4401);
  });
});

describe('session lifetime', () => {
  it('rekey_required after rekeyAfterMs; not set up again within the grace: session_expired, then setup recovers', async () => {
    const c = await ready(await freshToken(a));
    const sid = c.cipher!.sessionId.toString();
    await advance(800_000);
    const ev = await c.waitFor((r) => r.f.event === 'rekey_required', 'rekey_required');
    expect(ev.f.data).toMatchObject({ session_id: sid, reason: 'scheduled rotation', retire_in_ms: 30_000 });
    // still usable during the grace
    expect((await c.trade(ethLimit({ price: '1000' }), ETH)).code).toBe(0);
    await advance(30_000);
    await c.waitFor((r) => r.f.event === 'session_expired', 'session_expired event');
    const r = await c.sendSealed(c.seal(ethLimit({ price: '1000' }), ETH));
    expect(r.f).toMatchObject({ code: 40111, error: 'session_expired' });
    expect((await c.request('subscribe', { channel: 'positions' })).f.error).toBe('session_expired');
    expect((await c.setup()).f.code).toBe(0);
    expect((await c.trade(ethLimit({ price: '1000' }), ETH)).code).toBe(0);
  });

  it("the gateway's send counter nearly exhausted: trading ops get nonce_overflow (not executed) and rekey_required", async () => {
    rig.gw.ws.options.firstSessionSendCounter = MAX_COUNTER - 63;
    const c = await ready(await freshToken(a));
    rig.gw.ws.options.firstSessionSendCounter = undefined;
    const journal = rig.seq.journal.length;
    const r = await c.sendSealed(c.seal(ethLimit({ price: '1000', client_order_id: 'ovf-1' }), ETH));
    expect(r.f).toMatchObject({ code: 40115, error: 'nonce_overflow' });
    await c.waitFor((f) => f.f.event === 'rekey_required');
    expect(rig.seq.journal.length).toBe(journal);
    expect((await c.setup()).f.code).toBe(0);
    expect(c.cipher!.sendCounter).toBe(0);
    await advance(5); // placements on one symbol are spaced at least 1 ms apart (spec: per-symbol rules)
    expect((await c.trade(ethLimit({ price: '1000', client_order_id: 'ovf-1' }), ETH)).code).toBe(0);
    expect(rig.seq.journal.length).toBe(journal + 1);
  });
});

describe('positions channel throttle', () => {
  it('mark_price updates: at most one per position per second, the newest wins; other reasons at once', async () => {
    const c = await ready(await freshToken(a));
    await c.request('subscribe', { channel: 'positions' });
    await c.waitFor((r) => r.f.channel === 'positions' && r.f.snapshot_complete);
    const base = c.pushes('positions').length;
    const pos = (marginMicro: number): PositionRec => ({
      user_id: a.user_id, symbol: 'BTC-USDC-PERP', size_steps: '100', basis_ts: String(100 * 650_000), margin: String(marginMicro),
      realized_pnl: '0', fees_paid: '0', leverage: 10, updated_ns: (BigInt(clock.nowMs()) * 1_000_000n).toString(),
    });
    const mark = (m: number) => rig.gw.events.emit('position', { update_reason: 'mark_price', position: pos(m) });
    mark(1_000_000); // sent now
    mark(2_000_000); // held
    mark(3_000_000); // replaces the held one
    await new Promise((r) => setTimeout(r, 50));
    const updates = () => c.pushes('positions').slice(base).map((r) => (r.plain as any).position_update);
    expect(updates().map((u) => u.margin)).toEqual(['1']);
    await advance(999);
    expect(updates()).toHaveLength(1);
    await advance(1);
    await until(() => updates().length === 2, 2_000, 'held mark update');
    expect(updates()[1]).toMatchObject({ update_reason: 'mark_price', margin: '3' });
    mark(4_000_000); // within the second after the last one: held ...
    rig.gw.events.emit('position', { update_reason: 'fill', position: pos(5_000_000) }); // ... and superseded by a fill, sent at once
    await until(() => updates().length === 3, 2_000, 'fill update');
    expect(updates()[2]).toMatchObject({ update_reason: 'fill', margin: '5' });
    await advance(1_500);
    expect(updates()).toHaveLength(3);
    mark(6_000_000);
    await until(() => updates().length === 4, 2_000, 'mark after the window');
    expect(updates().map((u) => u.update_reason)).toEqual(['mark_price', 'mark_price', 'fill', 'mark_price']);
    const seqs = c.pushes('positions').map((r) => r.f.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });
});
