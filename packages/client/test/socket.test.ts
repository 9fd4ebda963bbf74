// The WebSocket client against the mock gateway's WebSocket (built on @tenebra/session's server side).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectionClosedError,
  TenebraRestClient,
  TenebraSocket,
  type OrderEvent,
  type Position,
  type SocketEvents,
  type SocketOptions,
} from '@tenebra/client';
import { API_KEY, MockGateway, USER_UUID } from './mock-gateway';

const gw = new MockGateway();
let urls: { baseUrl: string; wsUrl: string };
const open: TenebraSocket[] = [];

beforeAll(async () => {
  urls = await gw.start();
});
afterAll(() => gw.stop());
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  gw.interleaveUpdates = 0;
  gw.answerPings = true;
  gw.orders.clear();
});

async function connect(extra: Partial<SocketOptions> = {}): Promise<{ socket: TenebraSocket; rest: TenebraRestClient; errors: Error[] }> {
  const rest = new TenebraRestClient({ baseUrl: urls.baseUrl, credentials: API_KEY });
  const socket = new TenebraSocket({ url: urls.wsUrl, rest, heartbeat: false, reconnect: { initialDelayMs: 20, maxDelayMs: 100 }, requestTimeoutMs: 3000, ...extra });
  const errors: Error[] = [];
  socket.on('error', (e) => errors.push(e));
  open.push(socket);
  await socket.connect();
  return { socket, rest, errors };
}

/** Resolves with the args of the next `event` that satisfies `pred`. */
function next<K extends keyof SocketEvents>(s: TenebraSocket, event: K, pred: (...a: SocketEvents[K]) => boolean = () => true, ms = 3000): Promise<SocketEvents[K]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no '${event}' within ${ms} ms`)), ms);
    const l = (...a: SocketEvents[K]) => {
      if (!pred(...a)) return;
      clearTimeout(timer);
      s.off(event, l);
      resolve(a);
    };
    s.on(event, l);
  });
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const limit = (price: string, qty = '0.01') => ({ symbol: 'BTC-USDC-PERP', side: 'buy' as const, type: 'limit' as const, quantity: qty, price, time_in_force: 'GTC' as const });

describe('login and session.setup', () => {
  it('logs in with the REST token, learns user_uuid, sets up an encrypted session', async () => {
    const { socket } = await connect();
    expect(socket.state).toBe('ready');
    expect(socket.userUuid).toBe(USER_UUID);
    const conn = gw.last;
    expect(conn.ops.slice(0, 2)).toEqual(['login', 'session.setup']);
    expect(conn.cipher?.sessionId.toString()).toBe(socket.sessionId);
    expect(await socket.accountInfo()).toEqual({ balance: '1000000.123456', tier: 'Core' });
    expect(await socket.ping()).toBeGreaterThanOrEqual(0);
  });
});

describe('system_health', () => {
  it("decodes each push into a 'systemHealth' event and keeps the last in socket.health; subscriptions untouched", async () => {
    const { socket, errors } = await connect();
    const seen: unknown[] = [];
    socket.on('systemHealth', (h) => seen.push(h));
    expect(socket.health).toBeUndefined();
    const ok = { status: 'ok' as const, message: '', time_ns: '1', live_nodes: 5, nodes_total: 5, nodes_needed: 3, sequencer_link: true, results_backlog: '0', reasons: [] };
    const down = { ...ok, status: 'down' as const, message: 'sequencer link down', time_ns: '2', sequencer_link: false, results_backlog: '20', reasons: ['sequencer_down'] };
    gw.pushHealth(gw.last, ok, 1);
    gw.pushHealth(gw.last, down, 2);
    await until(() => seen.length === 2);
    expect(seen).toEqual([ok, down]);
    expect(socket.health).toEqual(down);
    expect(socket.subscriptions).toEqual([]);
    // the session's receive counter stayed in step: encrypted acks still open
    expect((await socket.placeOrder(limit('14'))).code).toBe(0);
    expect(errors).toEqual([]);
  });
});

describe('encrypted trading', () => {
  it('order.place → encrypted ack; the gateway decrypts exact decimals', async () => {
    const { socket } = await connect();
    const ack = await socket.placeOrder({ ...limit('65000.1'), quantity: 0.001 });
    expect(ack).toMatchObject({ code: 0, status: 'NEW' });
    expect(ack.client_order_id).toMatch(/^[0-9a-f-]{36}$/);
    const o = gw.orders.get(ack.order_id)!;
    expect(o).toMatchObject({ price: '65000.1', quantity: '0.001', client_order_id: ack.client_order_id });
    expect(gw.last.cipher!.recvCounter).toBe(1);
    expect(ack.reject_reason).toBeNull(); // a success has no reject_reason (the wire's '' is protobuf's default)
    const cancel = await socket.cancelOrder({ client_order_id: ack.client_order_id!, symbol: 'BTC-USDC-PERP' });
    expect(cancel).toMatchObject({ code: 0, status: 'CANCELLED', order_id: ack.order_id, reject_reason: null });
    const missing = await socket.modifyOrder({ order_id: 'nope', price: '1' });
    expect(missing).toMatchObject({ code: 1420, reject_reason: 'ORDER_NOT_FOUND' });
  });

  it('many concurrent ops keep the counters in wire order', async () => {
    const { socket } = await connect();
    const acks = await Promise.all(Array.from({ length: 30 }, (_, i) => socket.placeOrder(limit(String(60000 + i)), { maxAgeMs: 30_000 })));
    expect(new Set(acks.map((a) => a.order_id)).size).toBe(30);
    expect(gw.last.cipher!.recvCounter).toBe(30);
  });

  it('a session-level refusal (rekey_required) → rekey, then the op is sent once more and succeeds', async () => {
    const { socket } = await connect();
    const before = socket.sessionId;
    gw.rejectNextTradeWith = 'rekey_required';
    const ack = await socket.placeOrder(limit('100'));
    expect(ack.code).toBe(0);
    expect(socket.sessionId).not.toBe(before);
    expect(gw.last.setups).toBe(2);
    expect([...gw.orders.values()].filter((o) => o.client_order_id === ack.client_order_id)).toHaveLength(1);
  });
});

describe('channels', () => {
  it('an empty snapshot (one frame, data {} or an older gateway\'s null) is a snapshot of no items', async () => {
    const { socket, errors } = await connect();
    for (const data of [{}, null]) {
      gw.orders.clear();
      gw.emptySnapshotData = data;
      const snap = next(socket, 'ordersSnapshot');
      await socket.subscribe('orders');
      expect((await snap)[0]).toEqual([]);
      await socket.unsubscribe('orders');
    }
    gw.emptySnapshotData = {};
    expect(errors).toEqual([]);
  });

  it('buffers updates that race the snapshot and applies them after snapshot_complete', async () => {
    const { socket } = await connect();
    await socket.placeOrder(limit('1'));
    await socket.placeOrder(limit('2'));
    gw.interleaveUpdates = 2;
    const seen: string[] = [];
    socket.on('ordersSnapshot', (items) => seen.push(`snapshot:${items.length}`));
    socket.on('order', (o, meta) => seen.push(`${o.message_type}:${meta.seq}:${o.filled_quantity}`));
    const done = next(socket, 'order', (_o, m) => m.seq === 3);
    await socket.subscribe('orders');
    await done;
    // Frames on the wire: snapshot(1), update(2), update(3), snapshot(4, complete).
    expect(seen).toEqual(['snapshot:2', 'partial_fill:2:0.001', 'partial_fill:3:0.002']);
  });

  it('delivers every order message_type and position updates', async () => {
    const { socket } = await connect();
    const ack = await socket.placeOrder(limit('5'));
    const positions: Position[] = [];
    socket.on('position', (p) => positions.push(p));
    const snap = next(socket, 'positionsSnapshot');
    await socket.subscribe('positions');
    expect((await snap)[0][0]).toMatchObject({ position_id: 'p1', entry_price: '65000.1', margin: '3250.005' });
    const ordersSnap = next(socket, 'ordersSnapshot');
    await socket.subscribe('orders');
    await ordersSnap;
    const types = ['open', 'partial_fill', 'filled', 'cancelled', 'rejected', 'modified', 'cancel_rejected', 'modify_rejected'] as const;
    const got: OrderEvent[] = [];
    socket.on('order', (o) => got.push(o));
    const conn = gw.last;
    const o = gw.orders.get(ack.order_id)!;
    for (const t of types) gw.pushOrder(conn, o, t, t === 'rejected' ? { reject_reason: 'INVALID_PRICE' } : {});
    gw.pushPosition(conn, '65100.5');
    await until(() => got.length === types.length && positions.length === 1);
    expect(got.map((g) => g.message_type)).toEqual([...types]);
    expect(got[4]).toMatchObject({ reject_reason: 'INVALID_PRICE', average_fill_price: null, in_time_ns: '1736899200123456789' });
    expect(positions[0]).toMatchObject({ update_reason: 'mark_price', mark_price: '65100.5' });
  });

  it('a seq gap → unsubscribe + subscribe, a fresh snapshot, then updates from the new series', async () => {
    const { socket } = await connect();
    const ack = await socket.placeOrder(limit('7'));
    const first = next(socket, 'ordersSnapshot');
    await socket.subscribe('orders');
    await first;
    const conn = gw.last;
    const o = gw.orders.get(ack.order_id)!;
    const gap = next(socket, 'gap');
    const fresh = next(socket, 'ordersSnapshot');
    const resub = next(socket, 'resubscribed');
    gw.skipSeq(conn, 'orders');
    gw.pushOrder(conn, o, 'partial_fill'); // seq 3 where 2 was expected
    expect((await gap)[0]).toEqual({ channel: 'orders', expected: 2, received: 3 });
    expect((await fresh)[0]).toHaveLength(1);
    await resub;
    expect(conn.ops.slice(-2)).toEqual(['unsubscribe', 'subscribe']);
    const after = next(socket, 'order');
    gw.pushOrder(conn, o, 'filled');
    expect((await after)[1].seq).toBe(2); // the new series: snapshot 1, this update 2
  });

  it('an altered push is reported and the channel resynchronised', async () => {
    const { socket, errors } = await connect();
    const ack = await socket.placeOrder(limit('8'));
    const first = next(socket, 'ordersSnapshot');
    await socket.subscribe('orders');
    await first;
    const fresh = next(socket, 'ordersSnapshot');
    gw.corruptPush(gw.last, gw.orders.get(ack.order_id)!);
    await fresh;
    expect(errors.some((e) => /decrypt_failed/.test(e.message))).toBe(true);
    // The session still works: the next op and push open normally.
    expect((await socket.placeOrder(limit('9'))).code).toBe(0);
  });
});

describe('session upkeep', () => {
  it('auth_expired → re-login on the same socket with a fresh token; subscriptions kept', async () => {
    const { socket } = await connect();
    const ack = await socket.placeOrder(limit('3'));
    const snap = next(socket, 'ordersSnapshot');
    await socket.subscribe('orders');
    await snap;
    const conn = gw.last;
    const subscribes = conn.ops.filter((x) => x === 'subscribe').length;
    const re = next(socket, 'reauthenticated');
    gw.expireTokens(); // the REST client must fetch a new token, the old one no longer logs in
    gw.event(conn, 'auth_expired', { expires_in: 60 });
    await re;
    expect(conn.logins).toBe(2);
    expect(gw.conns.at(-1)).toBe(conn);
    expect(conn.ops.filter((x) => x === 'subscribe').length).toBe(subscribes);
    const upd = next(socket, 'order');
    gw.pushOrder(conn, gw.orders.get(ack.order_id)!, 'partial_fill');
    expect((await upd)[1].seq).toBe(2); // the same series continues after the snapshot (seq 1)
  });

  it('rekey_required → new session on the same socket, counters from 0, login and subscriptions kept', async () => {
    const { socket } = await connect();
    await socket.placeOrder(limit('4'));
    const snap = next(socket, 'positionsSnapshot');
    await socket.subscribe('positions');
    await snap;
    const conn = gw.last;
    const oldSession = socket.sessionId;
    const rekeyed = next(socket, 'rekeyed');
    gw.event(conn, 'rekey_required');
    expect((await rekeyed)[0].reason).toBe('rekey_required');
    expect(socket.sessionId).not.toBe(oldSession);
    expect(conn.setups).toBe(2);
    expect(conn.logins).toBe(1);
    expect(conn.cipher!.recvCounter).toBe(0);
    // Pushes on the kept subscription open under the new key.
    const pos = next(socket, 'position');
    gw.pushPosition(conn, '1.5');
    expect((await pos)[0].mark_price).toBe('1.5');
    // Ops issued while a rekey is in flight wait for it and go out under the new key, from counter 0.
    const again = socket.rekey('test');
    const during = Promise.all([socket.placeOrder(limit('10')), socket.placeOrder(limit('11'))]);
    await again;
    expect((await during).map((a) => a.code)).toEqual([0, 0]);
    expect(conn.setups).toBe(3);
    expect(conn.cipher!.recvCounter).toBe(2);
    expect(conn.ops.filter((o) => o === 'subscribe')).toHaveLength(1);
  });

  it('reconnects with backoff after a drop: login, setup, resubscribe, fresh snapshots', async () => {
    const { socket } = await connect();
    await socket.placeOrder(limit('6'));
    await socket.subscribe('orders');
    await socket.subscribe('positions');
    const first = gw.last;
    const reconnecting = next(socket, 'reconnecting');
    const ready = next(socket, 'ready', (r) => r.reconnect);
    const snapshots = next(socket, 'ordersSnapshot');
    first.ws.terminate();
    expect((await reconnecting)[0].attempt).toBe(1);
    await ready;
    await snapshots;
    const second = gw.last;
    expect(second).not.toBe(first);
    expect(second.ops.slice(0, 2)).toEqual(['login', 'session.setup']);
    await until(() => second.ops.filter((x) => x === 'subscribe').length === 2);
    expect((await socket.placeOrder(limit('12'))).code).toBe(0);
  });

  it('an op in flight when the socket drops fails with ConnectionClosedError (maybe executed)', async () => {
    const { socket } = await connect();
    const conn = gw.last;
    const back = next(socket, 'ready', (r) => r.reconnect);
    const pending = socket.placeOrder(limit('13'));
    conn.ws.terminate();
    const e = await pending.catch((x: unknown) => x);
    // Either the ack won the race or the drop did; if the drop did, the error says it may have executed.
    if (e instanceof Error) {
      expect(e).toBeInstanceOf(ConnectionClosedError);
      expect((e as ConnectionClosedError).maybeExecuted).toBe(true);
    }
    await back;
  });

  it('heartbeat: pings go out; a silent server gets the socket dropped and reconnected', async () => {
    const { socket } = await connect({ heartbeat: { intervalMs: 30, timeoutMs: 60 } });
    const conn = gw.last;
    await until(() => conn.ops.includes('ping'));
    gw.answerPings = false;
    await next(socket, 'disconnected');
    gw.answerPings = true;
    await next(socket, 'ready', (r) => r.reconnect);
    expect(gw.last).not.toBe(conn);
  });

  it('answers a server ping with pong', async () => {
    await connect();
    const conn = gw.last;
    gw.serverPing(conn, 's1');
    await until(() => conn.ops.includes('pong'));
  });
});
