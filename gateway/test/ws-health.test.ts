// system_health on the encrypted session (docs/websocket.md): the assessment itself (pure), then a
// real in-process gateway pushing it once after every session.setup and on every change of its
// committee links, sequencer link, stalled results and slow journal acks, at most one push per
// 250 ms per session however the links flap.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { SystemHealth } from '@tenebra/session';
import { startRig, call, newAccount, bearer, type Rig, type Account } from './harness';
import { until } from './fakes';
import { RawWs, type Received } from './ws-helpers';
import { assessHealth, type HealthReading } from '../src/ws/health';

const TH = { stallMs: 2_000, journalSlowMs: 1_000 };
const base: HealthReading = { n: 5, t: 2, liveNodes: 5, sequencerUp: true, backlog: 0n, stalledMs: 0, journalWaitMs: null };

describe('assessHealth', () => {
  it('ok with every node and the sequencer up; counts and an exact-to-ten backlog', () => {
    expect(assessHealth({ ...base, backlog: 37n, stalledMs: 100 }, TH, 5n)).toEqual({
      status: 'ok', message: '', time_ns: '5', live_nodes: 5, nodes_total: 5, nodes_needed: 3, sequencer_link: true, results_backlog: '30', reasons: [],
    });
    expect(assessHealth({ ...base, backlog: 9n }, TH, 5n).results_backlog).toBe('0');
  });

  it('degraded: a node missing, results stalled, the journal slow; down: quorum lost or the sequencer link down', () => {
    const h = (r: Partial<HealthReading>) => assessHealth({ ...base, ...r }, TH, 1n);
    expect(h({ liveNodes: 4 })).toMatchObject({ status: 'degraded', reasons: ['nodes_missing'], live_nodes: 4 });
    expect(h({ liveNodes: 4 }).message).toMatch(/4 of 5 committee nodes connected: trading goes on; 1 more may fail/);
    expect(h({ liveNodes: 3 }).message).toMatch(/0 more may fail/);
    expect(h({ liveNodes: 2 })).toMatchObject({ status: 'down', reasons: ['quorum_lost'] });
    expect(h({ liveNodes: 2 }).message).toMatch(/2 of 5 committee nodes connected, 3 needed/);
    expect(h({ backlog: 4n, stalledMs: 2_000 })).toMatchObject({ status: 'degraded', reasons: ['results_stalled'] });
    expect(h({ backlog: 4n, stalledMs: 1_999 }).status).toBe('ok');
    expect(h({ journalWaitMs: 1_000 })).toMatchObject({ status: 'degraded', reasons: ['journal_slow'] });
    expect(h({ journalWaitMs: 1_000 }).message).toMatch(/202 \/ 1502/);
    expect(h({ sequencerUp: false })).toMatchObject({ status: 'down', reasons: ['sequencer_down'], sequencer_link: false });
    // a stall explained by the lost quorum, or a journal wait by the down link, is not named twice
    expect(h({ liveNodes: 1, backlog: 4n, stalledMs: 60_000 }).reasons).toEqual(['quorum_lost']);
    expect(h({ sequencerUp: false, journalWaitMs: 60_000 }).reasons).toEqual(['sequencer_down']);
    expect(h({ sequencerUp: false, liveNodes: 4 })).toMatchObject({ status: 'down', reasons: ['sequencer_down', 'nodes_missing'] });
  });
});

let rig: Rig;
let a: Account;
const sockets: RawWs[] = [];

async function ready(acct: Account): Promise<RawWs> {
  const c = await RawWs.open(rig.gw.urls.wsUrl);
  sockets.push(c);
  expect((await c.login(acct.token)).f.code).toBe(0);
  expect((await c.setup()).f.code).toBe(0);
  return c;
}

const health = (r: Received): SystemHealth => (r.plain as { system_health: SystemHealth }).system_health;
const healthPushes = (c: RawWs): Received[] => c.pushes('system_health');
/** Waits for a system_health push after index `from` whose payload satisfies pred. */
const waitHealth = (c: RawWs, pred: (h: SystemHealth) => boolean, what: string, from = 0, ms = 5_000) =>
  c.waitFor((r) => r.f.channel === 'system_health' && r.plain !== undefined && pred(health(r)), what, ms, from);

beforeAll(async () => {
  rig = await startRig({ risk: { intervalMs: 0 }, ws: { sweepMs: 20, healthStallMs: 300, healthJournalSlowMs: 300 } });
  a = await newAccount(rig);
});
afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await rig?.close();
});

describe('system_health on the encrypted session', () => {
  it('comes right after session.setup: sealed, message_type system_health, seq 1 snapshot, the whole state', async () => {
    const c = await RawWs.open(rig.gw.urls.wsUrl);
    sockets.push(c);
    expect((await c.login(a.token)).f.code).toBe(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(healthPushes(c)).toHaveLength(0); // nothing before a session exists
    const s = await c.setup();
    const i = c.frames.indexOf(s);
    const h = await c.waitFor((r) => r.f.channel === 'system_health', 'system_health after setup');
    expect(c.frames.indexOf(h)).toBe(i + 1);
    expect(h.f).toMatchObject({ channel: 'system_health', type: 'snapshot', seq: 1, snapshot_complete: true });
    expect(h.f.data.header).toMatchObject({ message_type: 'system_health', fencing_epoch: rig.gw.ws.fencingEpoch });
    expect(h.decryptError).toBeUndefined();
    expect(health(h)).toMatchObject({
      status: 'ok', message: '', live_nodes: 5, nodes_total: 5, nodes_needed: 3, sequencer_link: true, results_backlog: '0', reasons: [],
    });
    expect(BigInt(health(h).time_ns)).toBeGreaterThan(0n);
    // the session works on after it: the push used counter 0, the client's window stays in step
    expect((await c.request('ping')).f.code).toBe(0);
    // a rekey is a new session: a new series, starting again with a snapshot at seq 1
    const from = c.frames.length;
    await c.setup();
    const again = await c.waitFor((r) => r.f.channel === 'system_health', 'system_health after rekey', 5_000, from);
    expect(again.f).toMatchObject({ type: 'snapshot', seq: 1 });
    expect(again.decryptError).toBeUndefined();
  });

  it('is not a channel one subscribes to; subscribe refuses unknown arguments', async () => {
    const c = await ready(a);
    const r = await c.request('subscribe', { channel: 'system_health' });
    expect(r.f).toMatchObject({ code: 40000, error: 'invalid_request' });
    expect(r.f.message).toMatch(/every encrypted session gets it after session.setup/);
    const x = await c.request('subscribe', { channel: 'instruments', range: '1d' });
    expect(x.f).toMatchObject({ code: 40000, error: 'invalid_request' });
    expect(x.f.message).toMatch(/unknown subscribe argument 'range'/);
  });

  it('follows the committee links: a node gone → degraded, quorum gone → down, back → ok; seq +1 each', async () => {
    const c = await ready(a);
    await waitHealth(c, (h) => h.status === 'ok', 'ok first');
    const from = c.frames.length;
    rig.committee.node(5).close();
    const d = await waitHealth(c, (h) => h.status === 'degraded', 'degraded', from);
    expect(d.f).toMatchObject({ type: 'update', seq: 2, snapshot_complete: false });
    expect(health(d)).toMatchObject({ live_nodes: 4, reasons: ['nodes_missing'] });
    await new Promise((r) => setTimeout(r, 300)); // past the rate limit, so each change is its own push
    rig.committee.node(4).close();
    rig.committee.node(3).close();
    const down = await waitHealth(c, (h) => h.status === 'down', 'down', from);
    expect(health(down)).toMatchObject({ live_nodes: 2, reasons: ['quorum_lost'] });
    expect(health(down).message).toMatch(/2 of 5 committee nodes connected, 3 needed/);
    await rig.committee.connect(rig.gw.urls.internalUrl, [3, 4, 5]);
    await waitHealth(c, (h) => h.status === 'ok', 'ok again', c.frames.indexOf(down) + 1);
    const seqs = healthPushes(c).map((r) => r.f.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it('a flapping link is coalesced: at most one push per 250 ms per session, and the last state arrives', async () => {
    const c = await ready(a);
    await waitHealth(c, (h) => h.status === 'ok', 'ok first');
    const before = healthPushes(c).length;
    const t0 = Date.now();
    for (let i = 0; i < 10; i++) {
      rig.committee.node(5).close();
      await new Promise((r) => setTimeout(r, 15));
      await rig.committee.connect(rig.gw.urls.internalUrl, [5]);
    }
    const elapsed = Date.now() - t0;
    await new Promise((r) => setTimeout(r, 600));
    const pushes = healthPushes(c).slice(before);
    // 20 changes; pushes are bounded by the interval, not by the changes
    expect(pushes.length).toBeLessThanOrEqual(Math.ceil((elapsed + 600) / 250) + 1);
    expect(pushes.length).toBeLessThan(20);
    const arrivals = pushes.map((r) => c.frames.indexOf(r));
    expect(arrivals).toEqual([...arrivals].sort((x, y) => x - y));
    expect(health(pushes.at(-1)!)).toMatchObject({ status: 'ok', live_nodes: 5 });
  });

  it('results stalled (nodes connected but silent) → degraded results_stalled; slow journal acks → journal_slow', async () => {
    const c = await ready(a);
    await waitHealth(c, (h) => h.status === 'ok', 'ok first');
    for (const i of [3, 4, 5]) rig.committee.node(i).fault = 'silent';
    const place = await call(rig.gw, 'POST', '/api/v1/orders', { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.5, price: 1000, time_in_force: 'GTC' }, bearer(a));
    expect(place.status, place.raw).toBe(200);
    const stalled = await waitHealth(c, (h) => h.reasons.includes('results_stalled'), 'results_stalled');
    expect(health(stalled)).toMatchObject({ status: 'degraded', live_nodes: 5, results_backlog: '0' }); // one op: fewer than ten
    for (const i of [3, 4, 5]) rig.committee.node(i).fault = 'none';
    // the silent nodes hold their results; reconnecting makes them send from the cursor
    for (const i of [3, 4, 5]) rig.committee.node(i).close();
    await rig.committee.connect(rig.gw.urls.internalUrl, [3, 4, 5]);
    await until(() => rig.gw.resultsCursor === BigInt(rig.seq.journal.length + 1), 10_000, 'results applied');
    await waitHealth(c, (h) => h.status === 'ok', 'ok after the stall', c.frames.indexOf(stalled) + 1);

    rig.seq.hold = true;
    const held = call(rig.gw, 'POST', '/api/v1/orders', { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.5, price: 1001, time_in_force: 'GTC' }, bearer(a));
    const slow = await waitHealth(c, (h) => h.reasons.includes('journal_slow'), 'journal_slow');
    expect(health(slow)).toMatchObject({ status: 'degraded', sequencer_link: true });
    rig.seq.release();
    expect((await held).status).toBe(200);
    await waitHealth(c, (h) => h.status === 'ok', 'ok after the journal caught up', c.frames.indexOf(slow) + 1);
  });

  it('the sequencer link down → down with sequencer_down, the same moment REST refuses orders with 503 / 1503', async () => {
    const c = await ready(a);
    await waitHealth(c, (h) => h.status === 'ok', 'ok first');
    await rig.seq.stop();
    const down = await waitHealth(c, (h) => h.reasons.includes('sequencer_down'), 'sequencer_down');
    expect(health(down)).toMatchObject({ status: 'down', sequencer_link: false });
    const r = await call(rig.gw, 'POST', '/api/v1/orders', { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: 0.5, price: 1002, time_in_force: 'GTC' }, bearer(a));
    expect(r.status).toBe(503);
    expect(r.body.code).toBe(1503);
  });
});
