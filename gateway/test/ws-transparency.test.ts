// The public transparency channel (docs/websocket.md) on a manual clock: no login; the snapshot is
// exactly GET /stats/platform/overview; an update (seq + 1) goes out when REST would serve a new
// overview, i.e. when as_of passes released statistics; fills still pending under the release rule,
// and pools released after as_of, push nothing. The SDK's anonymous socket gets the same.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { TenebraSocket } from '@tenebra/client';
import { ManualClock } from '../src/clock';
import type { OrderRec } from '../src/store/records';
import { startRig, call, newAccount, type Rig, type Account } from './harness';
import { RawWs } from './ws-helpers';

const T = (iso: string): number => Date.parse(iso);
const clock = new ManualClock(T('2026-01-01T00:05:00Z'));
let rig: Rig;
let m: Account;
let t: Account;
const sockets: RawWs[] = [];
let n = 0;

/** The bare overview GET /stats/platform/overview serves now. */
async function restOverview(): Promise<Record<string, unknown>> {
  const r = await call(rig.gw, 'GET', '/api/v1/stats/platform/overview');
  expect(r.status, r.raw).toBe(200);
  return r.body.data as Record<string, unknown>;
}

/** Both sides of one ETH trade of `qty` steps at `ticks`, filled now, as clearing emits them (no matching). */
function trade(qty: bigint, ticks: bigint): void {
  const ns = (BigInt(clock.nowMs()) * 1_000_000n).toString();
  for (const [user, side] of [[m.user_id, 'buy'], [t.user_id, 'sell']] as const) {
    const order = {
      order_id: `transparency-${++n}`, user_id: user, client_order_id: null, symbol: 'ETH-USDC-PERP', side, type: 'limit', time_in_force: 'GTC',
      price_ticks: ticks.toString(), qty_steps: qty.toString(), filled_steps: qty.toString(), notional_ts: (qty * ticks).toString(),
      last_fill_steps: qty.toString(), last_fill_ticks: ticks.toString(), status: 'FILLED', cancel_reason: null, reject_reason: null,
      in_time_ns: ns, out_time_ns: ns, leverage: 5, fee_pips: '0', reserved: '0', journaled: true, seq: null, placed: true,
    } as unknown as OrderRec;
    rig.gw.events.emit('order', { message_type: 'filled', order });
  }
}

/** Lets the ledger commit and a few ws sweeps (every 20 ms) look at the feed. */
async function settle(): Promise<void> {
  await rig.gw.venue.ledger.idle();
  await new Promise((r) => setTimeout(r, 150));
}

beforeAll(async () => {
  // the default release rule: pools of ten fills (five trades), no fill above half of a pool
  rig = await startRig({ clock, risk: { intervalMs: 0 }, ws: { sweepMs: 20 }, publicLimits: { perMinute: 100_000, perSecond: 100_000, burst: 100_000 } });
  [m, t] = await Promise.all([newAccount(rig), newAccount(rig)]);
});
afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await rig?.close();
});

describe('transparency channel', () => {
  it('no login: the snapshot is the REST overview; updates only when REST would serve a new one', async () => {
    const c = await RawWs.open(rig.gw.urls.wsUrl);
    sockets.push(c);
    const sub = await c.request('subscribe', { channel: 'transparency' });
    expect(sub.f).toMatchObject({ op: 'subscribe', code: 0, data: { channel: 'transparency', seq_start: 1 } });
    const snap = await c.waitFor((r) => r.f.channel === 'transparency', 'snapshot');
    expect(snap.f).toMatchObject({ type: 'snapshot', seq: 1, snapshot_complete: true });
    expect(snap.f.data).toEqual(await restOverview());
    expect(snap.f.data).toMatchObject({ as_of: '2025-12-31T23:50:00.000Z', volume_24h: '0' });

    // Four trades (eight fills): pending under the release rule. Nothing is pushed.
    for (let i = 0; i < 4; i++) trade(1000n, 300_000n);
    await settle();
    expect(c.pushes('transparency')).toHaveLength(1);

    // as_of passes the fills' slot: REST serves a new as_of, but still no volume; so does the update.
    clock.advance(20 * 60_000);
    const u2 = await c.waitFor((r) => r.f.channel === 'transparency' && r.f.seq === 2, 'update after as_of moved');
    expect(u2.f).toMatchObject({ type: 'update', snapshot_complete: false });
    expect(u2.f.data).toEqual(await restOverview());
    expect(u2.f.data).toMatchObject({ as_of: '2026-01-01T00:10:00.000Z', volume_24h: '0', all_time_volume: '0' });

    // The fifth trade releases the pool (ten fills, none above half): it lies after as_of, so REST
    // does not show it yet and nothing is pushed at the moment of the release.
    trade(1000n, 300_000n);
    await settle();
    expect(c.pushes('transparency')).toHaveLength(2);
    expect((await restOverview()).all_time_volume).toBe('0');

    // Once as_of passes the release, REST shows the pool and the channel pushes it: seq + 1.
    clock.advance(20 * 60_000);
    const u3 = await c.waitFor((r) => r.f.channel === 'transparency' && r.f.seq === 3, 'update with the released pool');
    const rest = await restOverview();
    expect(u3.f.data).toEqual(rest);
    expect(rest.all_time_volume).not.toBe('0');
    expect(rest.all_time_users).toBe('2');
    await settle();
    expect(c.pushes('transparency')).toHaveLength(3);
  });

  it('a pool one trade dominates is not published, so nothing of it is pushed', async () => {
    const c = await RawWs.open(rig.gw.urls.wsUrl);
    sockets.push(c);
    expect((await c.request('subscribe', { channel: 'transparency' })).f.code).toBe(0);
    const snap = await c.waitFor((r) => r.f.channel === 'transparency', 'snapshot');
    // four small trades and one far larger one: ten fills, but one is above half of the pool
    for (let i = 0; i < 4; i++) trade(1000n, 300_000n);
    trade(100_000n, 300_000n);
    await settle();
    clock.advance(20 * 60_000);
    const u = await c.waitFor((r) => r.f.channel === 'transparency' && r.f.seq === 2, 'as_of update');
    expect(u.f.data).toEqual(await restOverview());
    // only as_of moved: the volume is what the first test's released pool made it
    expect((u.f.data as Record<string, unknown>).all_time_volume).toBe((snap.f.data as Record<string, unknown>).all_time_volume);
  });

  it("the SDK's anonymous socket: snapshot and updates as 'transparency' events, no login", async () => {
    const s = new TenebraSocket({ url: rig.gw.urls.wsUrl, anonymous: true, heartbeat: false, reconnect: false });
    try {
      const got: Record<string, unknown>[] = [];
      s.on('transparency', (o) => got.push(o));
      await s.connect();
      expect(s.userUuid).toBeUndefined();
      await s.subscribe('transparency');
      const end = Date.now() + 3_000;
      while (got.length < 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      expect(got[0]).toEqual(await restOverview());
      clock.advance(10 * 60_000);
      while (got.length < 2 && Date.now() < end + 3_000) await new Promise((r) => setTimeout(r, 10));
      expect(got[1]).toEqual(await restOverview());
      await expect(s.placeOrder({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '1', time_in_force: 'GTC' }))
        .rejects.toThrow(/needs a login; this socket was opened with \{anonymous: true\}/);
    } finally {
      await s.close();
    }
  });
});
