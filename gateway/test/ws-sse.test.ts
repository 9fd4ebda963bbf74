// Server-sent events on a real gateway: /events/notifications (fills with ids, Last-Event-ID and
// last_event_id resumption, reset, bearer header or ticket, heartbeats, end at token expiry or
// revocation) and /events/stats (the public overview, aggregates only), at both /api/v1/events/...
// and the spec's literal /events/... paths.
import http from 'node:http';
import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { startRig, call, newAccount, bearer, type Rig, type Account } from './harness';
import { until } from './fakes';

interface SseEvent {
  event: string;
  id: string | null;
  data: any;
}

/** A minimal EventSource over node:http: collects events and comment lines. */
class SseClient {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  ended = false;
  private req!: http.ClientRequest;
  private buf = '';

  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const c = new SseClient();
    return new Promise((resolve, reject) => {
      c.req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
        c.status = res.statusCode ?? 0;
        c.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => c.feed(chunk));
        res.on('end', () => (c.ended = true));
        res.on('close', () => (c.ended = true));
        resolve(c);
      });
      c.req.on('error', reject);
    });
  }

  private feed(chunk: string): void {
    this.buf += chunk;
    let i: number;
    while ((i = this.buf.indexOf('\n\n')) >= 0) {
      const block = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 2);
      let event = 'message';
      let id: string | null = null;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length) this.events.push({ event, id, data: JSON.parse(data.join('\n')) });
    }
  }

  /** The body of a non-200 answer. */
  get body(): string {
    return this.buf;
  }

  close(): void {
    this.req.destroy();
  }
}

let rig: Rig;
let a: Account;
let b: Account;
let base: string;
const clients: SseClient[] = [];

async function sse(path: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const c = await SseClient.open(`${base}${path}`, headers);
  clients.push(c);
  return c;
}

/** A resting sell of a and a crossing buy of b on BNB: fills for both. */
async function fill(qty: string): Promise<void> {
  const body = { symbol: 'BNB-USDC-PERP', type: 'limit', quantity: qty, price: '600', time_in_force: 'GTC' };
  expect((await call(rig.gw, 'POST', '/api/v1/orders', { ...body, side: 'sell' }, bearer(a))).status).toBe(200);
  expect((await call(rig.gw, 'POST', '/api/v1/orders', { ...body, side: 'buy' }, bearer(b))).status).toBe(200);
  await until(() => rig.gw.resultsCursor === BigInt(rig.seq.journal.length + 1), 10_000, 'applied');
}

beforeAll(async () => {
  rig = await startRig({ sse: { heartbeatMs: 100, statsPollMs: 50 } });
  [a, b] = await Promise.all([newAccount(rig), newAccount(rig)]);
  base = rig.gw.urls.baseUrl.replace(/\/api\/v1$/, '');
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await until(() => rig.gw.sse.size === 0, 2_000, 'streams closed');
});
afterAll(async () => {
  await rig?.close();
});

describe('/events/notifications', () => {
  it('fills arrive as `fill` events with rising ids; heartbeats are comments; the stream needs a token', async () => {
    const none = await sse('/api/v1/events/notifications');
    expect(none.status).toBe(401);
    const s = await sse('/api/v1/events/notifications', bearer(a));
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.headers['x-request-id']).toBeDefined();
    const other = await sse('/events/notifications', bearer(b)); // the spec's literal path works too
    await fill('1');
    await until(() => s.events.length >= 1 && other.events.length >= 1, 5_000, 'fill events');
    const f = s.events[0]!;
    expect(f.event).toBe('fill');
    expect(f.id).toMatch(/^\d+\.\d+$/);
    expect(f.data).toMatchObject({ symbol: 'BNB-USDC-PERP', side: 'sell', fill_qty: 1, fill_price: 600, status: 'FILLED', remaining_quantity: 0 });
    expect(other.events[0]!.data).toMatchObject({ side: 'buy', fill_qty: 1 });
    expect(s.events.every((e) => e.data.side === 'sell')).toBe(true); // only the account's own
    await until(() => s.comments.some((c) => c.startsWith('heartbeat')), 2_000, 'heartbeat');
  });

  it('Last-Event-ID resumes after the last seen event; an unknown epoch gets `reset`', async () => {
    const s = await sse('/api/v1/events/notifications', bearer(a));
    await fill('0.5');
    await until(() => s.events.length >= 1, 5_000, 'first');
    const lastSeen = s.events.at(-1)!.id!;
    s.close();
    await fill('0.25');
    await fill('0.75');
    const resumed = await sse('/api/v1/events/notifications', { ...bearer(a), 'last-event-id': lastSeen });
    // only the fills: on a slow machine the 2 s settlement batch can add a `settlement` event between them
    const fills = () => resumed.events.filter((e) => e.event === 'fill');
    await until(() => fills().length >= 2, 5_000, 'replayed');
    expect(fills().map((e) => e.data.fill_qty)).toEqual([0.25, 0.75]);
    const [epoch, n] = lastSeen.split('.').map(Number);
    expect(resumed.events.every((e) => e.id!.startsWith(`${epoch}.`) && Number(e.id!.split('.')[1]) > n!)).toBe(true);
    // the query parameter works the same (a new EventSource cannot set the header)
    const byQuery = await sse(`/api/v1/events/notifications?last_event_id=${lastSeen}`, bearer(a));
    await until(() => byQuery.events.length >= 2, 5_000, 'replayed by query');
    const stale = await sse('/api/v1/events/notifications', { ...bearer(a), 'last-event-id': `${epoch! + 7}.1` });
    await until(() => stale.events.length >= 1, 5_000, 'reset');
    expect(stale.events[0]!.event).toBe('reset');
  });

  it('browsers: a ticket from POST /events/tickets opens the stream; bad tickets are refused', async () => {
    const t = await call(rig.gw, 'POST', '/api/v1/events/tickets', undefined, bearer(a));
    expect(t.status).toBe(200);
    expect(t.body.data).toMatchObject({ expires_in: 60 });
    expect(t.body.data.ticket).toMatch(/^st_/);
    const s = await sse(`/api/v1/events/notifications?ticket=${t.body.data.ticket}`);
    expect(s.status).toBe(200);
    const again = await sse(`/events/notifications?ticket=${t.body.data.ticket}`); // reusable within its minute (EventSource reconnects)
    expect(again.status).toBe(200);
    await fill('0.2');
    await until(() => s.events.length >= 1 && again.events.length >= 1, 5_000, 'fill via ticket');
    const bad = await sse('/api/v1/events/notifications?ticket=st_nope');
    expect(bad.status).toBe(401);
    expect((await call(rig.gw, 'POST', '/api/v1/events/tickets')).status).toBe(401);
  });

  it('the stream ends with auth_expired when its token is revoked', async () => {
    const tok = await call(rig.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: a.api_key, client_secret: a.api_secret, passphrase: a.passphrase });
    const token = tok.body.access_token as string;
    const s = await sse('/api/v1/events/notifications', { authorization: `Bearer ${token}` });
    expect(s.status).toBe(200);
    await call(rig.gw, 'POST', '/api/v1/auth/token/revoke', { token });
    await until(() => s.ended, 5_000, 'stream end');
    expect(s.events.at(-1)!.event).toBe('auth_expired');
  });

  it('at most maxStreamsPerAccount notification streams per account (429 beyond)', async () => {
    for (let i = 0; i < 5; i++) expect((await sse('/api/v1/events/notifications', bearer(b))).status).toBe(200);
    const sixth = await sse('/api/v1/events/notifications', bearer(b));
    expect(sixth.status).toBe(429);
    expect(JSON.parse(sixth.body)).toMatchObject({ error: 'rate_limited' });
  });

  it('margin alerts and settlements reach the account stream', async () => {
    const s = await sse('/api/v1/events/notifications', bearer(b));
    rig.gw.events.emit('margin_alert', { user_id: b.user_id, symbol: 'BNB-USDC-PERP', tier: 'Critical120', margin_ratio: '1.12', mark_price: '640', liquidation_price: '655.5', at_ns: 5n });
    rig.gw.events.emit('settlement', { user_id: b.user_id, batch_id: 'b-1', status: 'committed', detail: { realized_pnl: '-1.5' }, at_ns: 6n });
    await until(() => s.events.length >= 2, 5_000, 'alert and settlement');
    expect(s.events[0]).toMatchObject({ event: 'margin_alert', data: { symbol: 'BNB-USDC-PERP', health_tier: 'Critical120', margin_ratio: '1.12' } });
    expect(s.events[1]).toMatchObject({ event: 'settlement', data: { batch_id: 'b-1', status: 'committed', realized_pnl: '-1.5' } });
  });
});

describe('/events/stats', () => {
  it('public: the overview object as `overview`, id = as_of; Last-Event-ID equal to as_of sends nothing new', async () => {
    const s = await sse('/api/v1/events/stats');
    expect(s.status).toBe(200);
    await until(() => s.events.length >= 1, 5_000, 'overview');
    const o = s.events[0]!;
    expect(o.event).toBe('overview');
    const rest = await call(rig.gw, 'GET', '/api/v1/stats/platform/overview');
    expect(o.data).toEqual(rest.body.data); // the object GET /stats/platform/overview answers
    expect(o.id).toBe(rest.body.data.as_of);
    for (const k of Object.keys(o.data)) expect(['as_of', 'volume_24h', 'volume', 'open_interest', 'funding', 'users', 'all_time_volume', 'all_time_users', 'monthly_active_users', 'quarterly_active_users']).toContain(k);
    const same = await sse('/events/stats', { 'last-event-id': o.id! });
    await until(() => same.comments.length >= 2, 2_000, 'heartbeats');
    expect(same.events).toHaveLength(0);
  });
});
