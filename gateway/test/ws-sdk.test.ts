// The SDK (@tenebra/client) against the real gateway, not a mock: the README's quick start
// (packages/client/examples/quickstart.ts), encrypted trading with channel events, gap recovery,
// cancel-on-disconnect, and, on a manual clock, re-login on auth_expired and rekey on rekey_required.
import net from 'node:net';
import { describe, it, expect, beforeAll, afterAll, vi } from 'vitest';
import { TenebraRestClient, TenebraSocket, type OrderEvent, type Position, type SocketOptions, type SystemHealth } from '@tenebra/client';
import { main as quickstart } from '../../packages/client/examples/quickstart';
import { ManualClock } from '../src/clock';
import { createSimulatedOracle } from '../src/orders/oracle';
import { startRig, call, newAccount, bearer, type Rig, type Account } from './harness';
import { until } from './fakes';

const open: TenebraSocket[] = [];

function clients(rig: Rig, acct: Account, extra: Partial<SocketOptions> = {}): { rest: TenebraRestClient; socket: TenebraSocket; errors: Error[] } {
  const rest = new TenebraRestClient({ baseUrl: rig.gw.urls.baseUrl, credentials: { apiKey: acct.api_key, apiSecret: acct.api_secret, passphrase: acct.passphrase } });
  const socket = new TenebraSocket({ url: rig.gw.urls.wsUrl, rest, heartbeat: false, reconnect: { initialDelayMs: 20, maxDelayMs: 200 }, requestTimeoutMs: 8_000, ...extra });
  const errors: Error[] = [];
  socket.on('error', (e) => errors.push(e));
  open.push(socket);
  return { rest, socket, errors };
}

afterAll(async () => {
  await Promise.all(open.map((s) => s.close().catch(() => undefined)));
});

describe('on a gateway with the system clock', () => {
  let rig: Rig;
  let a: Account;
  let b: Account;
  beforeAll(async () => {
    rig = await startRig();
    [a, b] = await Promise.all([newAccount(rig), newAccount(rig)]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("the README's quick start runs end to end", async () => {
    const q = await newAccount(rig, 'Select', '20000');
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    let out;
    try {
      out = await quickstart({
        TENEBRA_BASE_URL: rig.gw.urls.baseUrl, TENEBRA_WS_URL: rig.gw.urls.wsUrl,
        TENEBRA_API_KEY: q.api_key, TENEBRA_API_SECRET: q.api_secret, TENEBRA_PASSPHRASE: q.passphrase,
      });
    } finally {
      log.mockRestore();
    }
    const rest = await call(rig.gw, 'GET', `/api/v1/orders/${out.restOrder}`, undefined, bearer(q));
    expect(rest.body.data).toMatchObject({ symbol: 'ETH-USDC-PERP', side: 'buy', price: 3000, quantity: 0.5 });
    const ws = await call(rig.gw, 'GET', `/api/v1/orders/${out.wsOrder}`, undefined, bearer(q));
    expect(ws.body.data).toMatchObject({ side: 'sell', price: 3100.5, quantity: 0.25, status: 'NEW' });
    expect(out.events.find((e) => e.order_id === out.wsOrder)).toMatchObject({ message_type: 'open', status: 'NEW', price: '3100.5' });
  });

  it('one JSON type per field: every decimal of every typed answer is a string, whole or not (issue 24)', async () => {
    const [c, d] = await Promise.all([newAccount(rig, 'Apex', '100000'), newAccount(rig)]);
    const { rest, socket } = clients(rig, c);
    const { rest: restD } = clients(rig, d);
    /** Walks an answer and returns the paths of numbers (the SDK's decimals are strings; counts are numbers). */
    const numbers = (v: unknown, path = ''): string[] =>
      typeof v === 'number' ? [path] : v && typeof v === 'object' ? Object.entries(v).flatMap(([k, x]) => numbers(x, `${path}.${k}`)) : [];
    const COUNTS = ['.open_orders', '.open_positions', '.config.leverage', '.config.max_open_orders', '.config.max_open_orders_per_symbol', '.volume_window_days'];
    const before = await rest.account();
    expect(before.balance).toBe('100000'); // a whole amount: still a string
    await rest.placeOrder({ symbol: 'SOL-USDC-PERP', side: 'sell', type: 'limit', quantity: '1', price: '150.37', time_in_force: 'GTC' }, { maxAgeMs: 10_000 });
    await restD.placeOrder({ symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '150.37', time_in_force: 'IOC' }, { maxAgeMs: 10_000 });
    await until(async () => (await rest.fills()).length === 1, 5_000, 'the fill');
    const after = await rest.account();
    expect(after.balance).toMatch(/^\d+\.\d+$/); // fee and margin make it fractional: the same type
    expect(numbers(before).filter((p) => !COUNTS.includes(p))).toEqual([]);
    expect(numbers(after).filter((p) => !COUNTS.includes(p))).toEqual([]);
    expect(numbers(await rest.accountVip()).filter((p) => !COUNTS.includes(p))).toEqual([]);
    expect(numbers(await rest.fills())).toEqual([]);
    expect(numbers(await rest.closedOrders())).toEqual([]);
    expect(numbers(await rest.positions())).toEqual([]);
    expect(numbers(await rest.marketReference())).toEqual([]);
    await socket.connect();
    const info = await socket.accountInfo();
    expect(Object.keys(info).sort()).toEqual(Object.keys(after).sort()); // account.info answers GET /account's fields
  });

  it("system_health: the state right after connect, then every change, as 'systemHealth' events; socket.health keeps the last", async () => {
    const { socket, errors } = clients(rig, a);
    const seen: SystemHealth[] = [];
    socket.on('systemHealth', (h) => seen.push(h));
    await socket.connect();
    await until(() => seen.length >= 1, 5_000, 'first system_health');
    expect(seen[0]).toMatchObject({ status: 'ok', live_nodes: 5, nodes_total: 5, nodes_needed: 3, sequencer_link: true, reasons: [] });
    expect(socket.health).toEqual(seen[0]);
    rig.committee.node(2).close();
    await until(() => socket.health?.status === 'degraded', 5_000, 'degraded');
    expect(socket.health).toMatchObject({ live_nodes: 4, reasons: ['nodes_missing'] });
    await rig.committee.connect(rig.gw.urls.internalUrl, [2]);
    await until(() => socket.health?.status === 'ok', 5_000, 'ok again');
    // a rekey is a new session: the state again at once
    const before = seen.length;
    await socket.rekey('test');
    await until(() => seen.length > before, 5_000, 'system_health after the rekey');
    expect(errors).toEqual([]);
  });

  it('trades over the encrypted socket and follows orders and positions', async () => {
    const { socket, errors } = clients(rig, a);
    const orders: OrderEvent[] = [];
    const positions: Position[] = [];
    socket.on('order', (o) => orders.push(o));
    socket.on('position', (p) => positions.push(p));
    const snapshots: string[] = [];
    socket.on('snapshot', (s) => snapshots.push(s.channel));
    await socket.connect();
    expect(socket.userUuid).toMatch(/^[0-9a-f]{32}$/);
    await socket.subscribe('orders');
    await socket.subscribe('positions');
    expect(snapshots).toEqual(['orders', 'positions']);
    const ack = await socket.placeOrder({ symbol: 'SOL-USDC-PERP', side: 'sell', type: 'limit', quantity: '2', price: '150.5', time_in_force: 'GTC', client_order_id: 'sdk-1' });
    expect(ack).toMatchObject({ code: 0, status: 'NEW', client_order_id: 'sdk-1' });
    await until(() => orders.find((o) => o.order_id === ack.order_id && o.message_type === 'open'), 5_000, 'open');
    const taker = await call(rig.gw, 'POST', '/api/v1/orders', { symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '150.5', time_in_force: 'GTC' }, bearer(b));
    expect(taker.status).toBe(200);
    await until(() => orders.find((o) => o.order_id === ack.order_id && o.message_type === 'partial_fill'), 5_000, 'partial fill');
    expect(orders.find((o) => o.message_type === 'partial_fill')).toMatchObject({ filled_quantity: '1', remaining_quantity: '1', last_fill_price: '150.5' });
    // the fill's own update: the risk monitor's timer reads committed positions from the store and
    // can mark the new position (update_reason mark_price, same state) before the results pipeline
    // announces its fill (seen once with two test files at a time, 2026-12-02; left as it is)
    const fill = await until(() => positions.find((p) => p.symbol === 'SOL-USDC-PERP' && p.update_reason === 'fill'), 5_000, 'position');
    expect(fill).toMatchObject({ side: 'short', size: '1', update_reason: 'fill', entry_price: '150.5' });
    expect(positions.filter((p) => p.update_reason !== 'mark_price').indexOf(fill)).toBe(0); // no other change before it
    const cancel = await socket.cancelOrder({ client_order_id: 'sdk-1', symbol: 'SOL-USDC-PERP' });
    expect(cancel).toMatchObject({ code: 0, status: 'CANCELLED', order_id: ack.order_id });
    await until(() => orders.find((o) => o.order_id === ack.order_id && o.message_type === 'cancelled'), 5_000, 'cancelled');
    const info = await socket.accountInfo();
    expect(info).toMatchObject({ user_id: a.user_id, vip_tier: 'Apex', open_orders: 0 });
    expect(await socket.ping()).toBeGreaterThanOrEqual(0);
    const refused = await socket.placeOrder({ symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: '100000', price: '150', time_in_force: 'GTC' });
    expect(refused).toMatchObject({ code: 1403, status: 'REJECTED' });
    expect(errors).toEqual([]);
  });

  it('recovers from a sequence gap: gap, unsubscribe + subscribe, fresh snapshot', async () => {
    const { socket } = clients(rig, a);
    await socket.connect();
    await socket.subscribe('orders');
    const gaps: unknown[] = [];
    const snaps: OrderEvent[][] = [];
    socket.on('gap', (g) => gaps.push(g));
    socket.on('ordersSnapshot', (s) => snaps.push(s));
    const resubscribed = new Promise((r) => socket.once('resubscribed', r));
    rig.gw.ws.dropNextPushes(a.user_id, 'orders', 1);
    const lost = await socket.placeOrder({ symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '140', time_in_force: 'GTC' });
    await new Promise((r) => setTimeout(r, 5));
    await socket.placeOrder({ symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '140.01', time_in_force: 'GTC' });
    await resubscribed;
    expect(gaps).toHaveLength(1);
    await until(() => snaps.at(-1)?.some((o) => o.order_id === lost.order_id), 5_000, 'the lost order in the fresh snapshot');
  });

  it('a burst above the tier frame rate (Core: 5/s) is refused unexecuted and resent by the SDK with backoff', async () => {
    const core = await newAccount(rig, 'Core', '10000');
    const { socket } = clients(rig, core);
    await socket.connect();
    const legs: [string, string, string][] = [
      ['BTC-USDC-PERP', '0.001', '61750'], ['ETH-USDC-PERP', '0.02', '2850'], ['SOL-USDC-PERP', '0.5', '142.5'], ['BNB-USDC-PERP', '0.1', '570'],
      ['AVAX-USDC-PERP', '2', '28.5'], ['LINK-USDC-PERP', '4', '14.25'], ['AAVE-USDC-PERP', '0.25', '237.5'], ['DOT-USDC-PERP', '10', '5.7'],
    ];
    // a 10 s maximum age: the resends of this burst (250 ms, 500 ms, 1 s) may go out past the default 500 ms
    const acks = await Promise.all(legs.map(([symbol, quantity, price]) => socket.placeOrder({ symbol, side: 'buy', type: 'limit', quantity, price, time_in_force: 'GTC' }, { maxAgeMs: 10_000 })));
    for (const ack of acks) expect(ack.code, ack.message).toBe(0);
    expect(new Set(acks.map((x) => x.order_id)).size).toBe(8);
    const info = await socket.accountInfo();
    expect(info.open_orders).toBe(8); // each executed exactly once
  });

  it('a channel the server refuses is not kept (so not asked again on every reconnect)', async () => {
    const { socket } = clients(rig, a);
    await socket.connect();
    await socket.subscribe('orders');
    await expect(socket.subscribe('order' as never)).rejects.toMatchObject({ op: 'subscribe' }); // a typo
    expect(socket.subscriptions).toEqual(['orders']);
  });

  it('paced by the tier table (tier option), a burst of frames goes out at the tier rate without a refusal', async () => {
    const core = await newAccount(rig, 'Core', '10000');
    const { socket } = clients(rig, core, { tier: 'Core' });
    await socket.connect();
    const t0 = Date.now();
    const pings = await Promise.all(Array.from({ length: 8 }, () => socket.ping().then(() => Date.now() - t0)));
    // login and session.setup spent 2 of the 5 tokens: 3 pings at once, then one per 200 ms
    expect(Math.max(...pings)).toBeGreaterThanOrEqual(900);
  });

  it('after a gateway restart, reports fills whose pushes were lost, from the open and closed listings (issue 24)', async () => {
    const [m, t] = await Promise.all([newAccount(rig), newAccount(rig)]);
    const { socket } = clients(rig, m);
    const { rest: takerRest } = clients(rig, t);
    const events: { e: OrderEvent; recovered: boolean }[] = [];
    const fills: string[] = [];
    socket.on('order', (e, meta) => events.push({ e, recovered: meta.recovered === true }));
    socket.on('fill', (f) => fills.push(`${f.order_id}:${f.quantity}`));
    await socket.connect();
    await socket.subscribe('orders');
    const ids: string[] = [];
    // priced at DOT's mark (about 6.006): a buy far above it would book a loss the fill-loss check
    // refuses; 20 each to clear the 100 USDC minimum notional
    for (const price of ['6.01', '6.02', '6.03']) {
      ids.push((await socket.placeOrder({ symbol: 'DOT-USDC-PERP', side: 'sell', type: 'limit', quantity: '20', price, time_in_force: 'GTC' }, { maxAgeMs: 10_000 })).order_id);
    }
    await until(() => events.filter(({ e }) => e.message_type === 'open').length === 3, 5_000, 'three open events');
    rig.gw.ws.dropNextPushes(m.user_id, 'orders', 10); // the pushes of the fills are lost
    await takerRest.placeOrder({ symbol: 'DOT-USDC-PERP', side: 'buy', type: 'limit', quantity: '30', price: '6.02', time_in_force: 'IOC' }, { maxAgeMs: 10_000 });
    await until(() => rig.gw.resultsCursor === BigInt(rig.seq.journal.length + 1), 10_000, 'the fills applied');
    const reconciled = new Promise<{ orders: number; fills: number }>((r) => socket.once('reconciled', r));
    rig.env.config.port = Number(new URL(rig.gw.urls.baseUrl).port); // the restarted gateway listens where the socket reconnects
    await rig.restart();
    expect(await reconciled).toEqual({ orders: 2, fills: 2 });
    const recovered = events.filter((x) => x.recovered).map(({ e }) => [e.order_id, e.message_type, e.status, e.last_fill_qty]);
    expect(recovered).toEqual([[ids[0], 'filled', 'FILLED', '20'], [ids[1], 'partial_fill', 'PARTIALLY_FILLED', '10']]);
    expect(fills).toEqual([`${ids[0]}:20`, `${ids[1]}:10`]);
  });

  it('cancel_on_disconnect: a socket that drops without logout cancels the live orders', async () => {
    const raw: net.Socket[] = [];
    const { socket, rest } = clients(rig, b, {
      cancelOnDisconnect: true,
      reconnect: false,
      wsOptions: { createConnection: ((opts: net.NetConnectOpts) => { const s = net.connect(opts); raw.push(s); return s; }) as never },
    });
    await socket.connect();
    const ack = await socket.placeOrder({ symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '120', time_in_force: 'GTC' });
    expect(ack.code).toBe(0);
    for (const s of raw) s.destroy(); // the network goes away
    await until(async () => (await rest.getOrder(ack.order_id)).status === 'CANCELLED', 10_000, 'cancelled');
    expect(await rest.getOrder(ack.order_id)).toMatchObject({ cancel_reason: 'CANCEL_ON_DISCONNECT' });
  });
});

describe('on a gateway with a manual clock', () => {
  let rig: Rig;
  let a: Account;
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 9, 0, 0));
  beforeAll(async () => {
    rig = await startRig({ clock, oracle: createSimulatedOracle(clock, { staleAfterMs: 1e12, walk: false }).oracle, ws: { sweepMs: 10, rekeyAfterMs: 300_000, rekeyGraceMs: 30_000 } });
    a = await newAccount(rig);
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('answers rekey_required with a new session and auth_expired with a new login; subscriptions and trading go on', async () => {
    const { socket, errors } = clients(rig, a);
    const orders: OrderEvent[] = [];
    socket.on('order', (o) => orders.push(o));
    await socket.connect();
    await socket.subscribe('orders');
    const sid = socket.sessionId;
    const rekeyed = new Promise<{ reason: string }>((r) => socket.once('rekeyed', r));
    clock.advance(300_000);
    expect((await rekeyed).reason).toBe('rekey_required');
    expect(socket.sessionId).not.toBe(sid);
    const ack1 = await socket.placeOrder({ symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '130', time_in_force: 'GTC' });
    await until(() => orders.find((o) => o.order_id === ack1.order_id), 5_000, 'event after rekey');

    const relogged = new Promise<void>((r) => socket.once('reauthenticated', () => r()));
    clock.advance(900_000 - 300_000 - 59_000); // about 59 s before the login token expires
    await relogged;
    clock.advance(120_000); // past the first token's expiry: the socket stays (a new token is bound)
    await new Promise((r) => setTimeout(r, 50));
    expect(socket.state).toBe('ready');
    clock.advance(2);
    const ack2 = await socket.placeOrder({ symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '131', time_in_force: 'GTC' });
    await until(() => orders.find((o) => o.order_id === ack2.order_id), 5_000, 'event after re-login');
    expect(socket.subscriptions).toEqual(['orders']);
    expect(errors).toEqual([]);
  });
});
