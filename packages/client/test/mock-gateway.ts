// A small mock of the gateway for the SDK's tests: REST under /api/v1 (node:http, the spec's
// envelope and rate-limit headers) and the WebSocket at /ws/v1 (ws + @tenebra/session's server
// side). It keeps orders in memory and exposes hooks to provoke 429s, 503s, token expiry, seq gaps,
// auth_expired, rekey_required and dropped connections.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  SessionError,
  acceptSessionSetup,
  decryptRequest,
  encryptPush,
  encryptResponse,
  type OrderUpdate,
  type PositionUpdate,
  type SequencerToEdgeMessage,
  type ServerSessionCipher,
  type SystemHealth,
} from '@tenebra/session';

export const API_KEY = { apiKey: 'key-1', apiSecret: 'secret-1', passphrase: 'pass-1' };
export const USER_UUID = '8f2c1a7e4b6d4e0f9a3b5c7d9e1f2a3b';

const INSTRUMENTS_JSON = (version: number) =>
  `{"version":${version},"updated_at":"2025-01-15T00:00:00Z","instruments":[` +
  `{"symbol":"BTC-USDC-PERP","symbol_id":7,"base_asset":"BTC","quote_asset":"USDC","type":"perp","status":"trading","tick_size":0.1,"step_size":0.001,"min_qty":0.001,"max_qty":500,"min_notional":10,"contract_size":1,"margin_asset":"USDC","max_leverage":10,"maker_fee_bps":2,"taker_fee_bps":5,"initial_margin_ratio":0.1,"maintenance_margin_ratio":0.05,"listed_at":"2025-01-15T00:00:00Z","expires_at":null},` +
  `{"symbol":"ETH-USDC-PERP","symbol_id":10,"base_asset":"ETH","quote_asset":"USDC","type":"perp","status":"trading","tick_size":0.01,"step_size":0.001,"min_qty":0.001,"max_qty":5000,"min_notional":10,"contract_size":1,"margin_asset":"USDC","max_leverage":10,"maker_fee_bps":-0.5,"taker_fee_bps":5,"initial_margin_ratio":0.1,"maintenance_margin_ratio":0.05,"listed_at":"2025-01-15T00:00:00Z","expires_at":null}]}`;

export interface MockOrder {
  order_id: string;
  client_order_id: string;
  symbol: string;
  side: 'buy' | 'sell';
  type: 'market' | 'limit' | 'peg';
  time_in_force: 'GTC' | 'GTT' | 'IOC' | 'FOK';
  price: string;
  quantity: string;
  filled_quantity: string;
  status: 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELLED' | 'REJECTED';
  in_time_ns: string;
}

export interface MockConn {
  ws: WebSocket;
  uuid: string | undefined;
  cipher: ServerSessionCipher | undefined;
  /** Next seq per subscribed channel. */
  seq: Map<string, number>;
  ops: string[];
  setups: number;
  logins: number;
}

interface Hook {
  status: number;
  remaining: number;
  headers: Record<string, string>;
  path: RegExp;
}

export class MockGateway {
  readonly server = http.createServer((req, res) => void this.#http(req, res));
  readonly wss = new WebSocketServer({ noServer: true });
  readonly conns: MockConn[] = [];
  readonly orders = new Map<string, MockOrder>();
  /** Every REST request: method, path (with query), raw body. */
  readonly requests: Array<{ method: string; path: string; body: string; auth: string | undefined }> = [];
  tokenLifetimeS = 900;
  instrumentsVersion = 3;
  /** When set, the snapshot of 'orders' is interleaved with this many update frames. */
  interleaveUpdates = 0;
  /** data of an empty snapshot's one frame: {} as the gateway sends it (spec: data is an object); null as older gateways did. */
  emptySnapshotData: Record<string, never> | null = {};
  /** When set, the next trading op is refused with this error name (after decrypting it). */
  rejectNextTradeWith: string | undefined;
  /** When false, pings go unanswered (a silent server). */
  answerPings = true;
  #tokens = new Map<string, { expiresAt: number; valid: boolean }>();
  #hooks: Hook[] = [];
  #orderSeq = 1000;

  async start(): Promise<{ baseUrl: string; wsUrl: string }> {
    this.server.on('upgrade', (req, socket, head) => {
      if (req.url !== '/ws/v1') return socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) => this.#onConnection(ws));
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    const port = (this.server.address() as AddressInfo).port;
    return { baseUrl: `http://127.0.0.1:${port}/api/v1`, wsUrl: `ws://127.0.0.1:${port}/ws/v1` };
  }

  async stop(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** The next `count` requests whose path matches answer `status` with `headers`. */
  failNext(path: RegExp, count: number, status: number, headers: Record<string, string> = {}): void {
    this.#hooks.push({ path, remaining: count, status, headers });
  }

  /** Every issued token now answers 401 token_expired. */
  expireTokens(): void {
    for (const t of this.#tokens.values()) t.valid = false;
  }

  // -------------------------------------------------------------------------------------------
  // REST

  async #http(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname.replace(/^\/api\/v1/, '');
    this.requests.push({ method: req.method ?? '', path: path + url.search, body, auth: req.headers.authorization });
    const requestId = randomUUID();
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('X-RateLimit-Limit', '60');
    res.setHeader('X-RateLimit-Remaining', '59');
    res.setHeader('X-RateLimit-Reset', String(Math.floor(Date.now() / 1000) + 60));
    const send = (status: number, text: string) => {
      res.statusCode = status;
      if (text) res.setHeader('Content-Type', 'application/json');
      res.end(text);
    };
    const ok = (dataJson: string) => send(200, `{"code":0,"data":${dataJson},"timestamp":"${new Date().toISOString()}","request_id":"${requestId}"}`);
    const fail = (status: number, code: number, error: string, detail: string) =>
      send(status, JSON.stringify({ code, message: `${error}: ${detail}`, error, timestamp: new Date().toISOString(), request_id: requestId }));

    const hook = this.#hooks.find((h) => h.remaining > 0 && h.path.test(path));
    if (hook) {
      hook.remaining--;
      for (const [k, v] of Object.entries(hook.headers)) res.setHeader(k, v);
      if (hook.status === 429) return fail(429, 42900, 'rate_limited', 'slow down');
      if (hook.status === 503) return fail(503, 1503, 'SEQUENCER_UNAVAILABLE', 'venue at capacity');
      if (hook.status === 202) return send(202, JSON.stringify({ code: 1502, message: 'QUEUED', data: { client_order_id: 'q' }, timestamp: '', request_id: requestId }));
      return fail(hook.status, hook.status * 100, 'error', 'hooked');
    }

    const m = `${req.method} ${path}`;
    if (m === 'POST /auth/token') {
      const b = JSON.parse(body || '{}') as Record<string, string>;
      if (b.grant_type !== 'client_credentials') return fail(400, 40001, 'unsupported_grant_type', 'use client_credentials');
      if (b.client_id !== API_KEY.apiKey || b.client_secret !== API_KEY.apiSecret || b.passphrase !== API_KEY.passphrase) return fail(401, 40100, 'invalid_client', 'bad credentials');
      const token = `tok-${randomUUID()}`;
      this.#tokens.set(token, { expiresAt: Date.now() + this.tokenLifetimeS * 1000, valid: true });
      return send(200, JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: this.tokenLifetimeS, scope: 'trade read' }));
    }
    if (m === 'POST /auth/token/revoke') {
      const b = JSON.parse(body || '{}') as { token?: string };
      if (b.token) this.#tokens.delete(b.token);
      return send(204, '');
    }
    if (m === 'GET /instruments') {
      res.setHeader('ETag', `"${this.instrumentsVersion}"`);
      const inm = req.headers['if-none-match'];
      if (inm && inm.replace(/"/g, '') === String(this.instrumentsVersion)) return send(304, '');
      return ok(INSTRUMENTS_JSON(this.instrumentsVersion));
    }
    if (m === 'GET /instruments/BTC-USDC-PERP') return ok(INSTRUMENTS_JSON(1).split('"instruments":[')[1]!.split(',{"symbol":"ETH')[0]!);
    if (m === 'GET /vip/tiers') return ok('{"tiers":[{"tier":"Core","maker_fee":0.0002,"taker_fee":0.0005}]}');
    if (m === 'GET /stats/platform/overview')
      return send(200, '{"as_of":"2025-01-15T00:00:00Z","volume_24h":"123.45","volume":{"value":"1000"},"open_interest":{"value":"5"},"funding":{"value":"0.0001"},"users":{"value":"12"},"all_time_volume":"99999","all_time_users":"40","monthly_active_users":"10","quarterly_active_users":"20"}');
    if (m === 'GET /stats/platform/series') return send(200, `{"as_of":"2025-01-15T00:00:00Z","metric":"${url.searchParams.get('metric')}","granularity":"day","points":[{"t":"2025-01-14T00:00:00Z","total":"1.5","by_asset":{"BTC":"1.5"}}],"assets":"${url.searchParams.get('assets')}"}`);

    // Authenticated from here.
    const auth = req.headers.authorization ?? '';
    const token = this.#tokens.get(auth.replace(/^Bearer /, ''));
    if (!token) return fail(401, 40103, 'invalid_token', 'unknown token');
    if (!token.valid || token.expiresAt < Date.now()) return fail(401, 40101, 'token_expired', 'token expired');

    if (m === 'GET /time') return ok('{"server_time":"2025-01-15T00:00:00.123Z","server_time_ns":1736899200123456789}');
    if (m === 'GET /account') return ok('{"balance":1000000.123456,"tier":"Core"}');
    if (m === 'GET /account/vip') return ok('{"tier":"Core","maker_fee_bps":2,"taker_fee_bps":5,"volume_30d":0}');
    if (m === 'GET /positions')
      return ok('{"positions":[{"position_id":"p1","symbol":"BTC-USDC-PERP","side":"long","size":0.5,"entry_price":65000.1,"mark_price":65010,"margin":3250.005,"leverage":10,"unrealized_pnl":4.95,"realized_pnl":0,"funding_accrued":-0.01,"liquidation_price":61905.8,"status":"OPEN","updated_at":"2025-01-15T00:00:00.000Z"}]}');
    if (m.startsWith('GET /settlement/status/')) return ok(`{"batch_id":"${path.split('/').pop()}","status":"confirmed"}`);
    if (m === 'POST /orders') {
      const b = JSON.parse(body) as Record<string, unknown>;
      const cid = String(b['client_order_id']);
      const existing = [...this.orders.values()].find((o) => o.client_order_id === cid);
      if (existing) return ok(JSON.stringify({ order_id: existing.order_id, client_order_id: cid, status: existing.status }));
      // Keep the exact literal of price and quantity from the raw body.
      const lit = (k: string) => new RegExp(`"${k}":(-?[0-9.eE+-]+)`).exec(body)?.[1] ?? '0';
      const o = this.#newOrder({ client_order_id: cid, symbol: String(b['symbol']), side: b['side'] as MockOrder['side'], price: lit('price'), quantity: lit('quantity') });
      return ok(JSON.stringify({ order_id: o.order_id, client_order_id: cid, status: 'NEW' }));
    }
    if (m === 'POST /orders/mass-quote') return ok(`{"legs":${(JSON.parse(body) as { legs: unknown[] }).legs.length}}`);
    const byCid = url.searchParams.get('client_order_id');
    const target = path.startsWith('/orders/') ? this.orders.get(decodeURIComponent(path.slice('/orders/'.length))) : byCid !== null ? [...this.orders.values()].find((o) => o.client_order_id === byCid) : undefined;
    if (path === '/orders' || path.startsWith('/orders/')) {
      if (!target) return fail(404, 1420, 'ORDER_NOT_FOUND', 'no such order');
      if (req.method === 'GET') return ok(orderJson(target));
      if (req.method === 'DELETE') {
        target.status = 'CANCELLED';
        return ok(JSON.stringify({ order_id: target.order_id, status: 'CANCELLED' }));
      }
      if (req.method === 'PATCH') {
        const lit = /"price":(-?[0-9.]+)/.exec(body)?.[1];
        if (lit) target.price = lit;
        return ok(JSON.stringify({ order_id: target.order_id, status: target.status, price: target.price }));
      }
    }
    return fail(404, 40400, 'not_found', `${m} is not a route`);
  }

  #newOrder(p: Pick<MockOrder, 'client_order_id' | 'symbol' | 'side' | 'price' | 'quantity'>): MockOrder {
    const o: MockOrder = { ...p, order_id: String(++this.#orderSeq), type: 'limit', time_in_force: 'GTC', filled_quantity: '0', status: 'NEW', in_time_ns: '1736899200123456789' };
    this.orders.set(o.order_id, o);
    return o;
  }

  // -------------------------------------------------------------------------------------------
  // WebSocket

  #onConnection(ws: WebSocket): void {
    const c: MockConn = { ws, uuid: undefined, cipher: undefined, seq: new Map(), ops: [], setups: 0, logins: 0 };
    this.conns.push(c);
    ws.on('message', (raw) => {
      let f: { id?: string; op?: string; args?: Record<string, unknown> };
      try {
        f = JSON.parse(raw.toString()) as typeof f;
      } catch {
        return this.#send(c, { op: 'error', code: 40000, message: 'invalid_request: malformed JSON' });
      }
      this.#onFrame(c, f);
    });
  }

  #send(c: MockConn, frame: unknown): void {
    c.ws.send(JSON.stringify(frame));
  }

  #error(c: MockConn, id: string | undefined, op: string | undefined, error: string, detail: string): void {
    this.#send(c, { id, op, code: 40000, message: `${error}: ${detail}`, error });
  }

  #onFrame(c: MockConn, f: { id?: string; op?: string; args?: Record<string, unknown> }): void {
    const { id, op } = f;
    c.ops.push(op ?? '?');
    const reply = (data: unknown) => this.#send(c, { id, op, code: 0, data });
    switch (op) {
      case 'login': {
        const t = this.#tokens.get(String(f.args?.['token']));
        if (!t || !t.valid) return this.#error(c, id, op, 'invalid_token', 'bad token');
        c.logins++;
        c.uuid = USER_UUID;
        return reply({ user_uuid: USER_UUID, expires_in: Math.round((t.expiresAt - Date.now()) / 1000) });
      }
      case 'session.setup': {
        if (!c.uuid) return this.#error(c, id, op, 'session_required', 'login first');
        try {
          const { cipher, data } = acceptSessionSetup(f.args, c.uuid, { fencingEpoch: 4 });
          c.setups++;
          reply(data); // sent before the new cipher goes live, as a real gateway must
          c.cipher = cipher;
        } catch (e) {
          this.#error(c, id, op, (e as SessionError).code ?? 'invalid_request', (e as Error).message);
        }
        return;
      }
      case 'order.place':
      case 'order.cancel':
      case 'order.modify': {
        if (!c.cipher) return this.#error(c, id, op, 'session_required', 'run session.setup first');
        let request;
        try {
          request = decryptRequest(c.cipher, { op, args: f.args }).request;
        } catch (e) {
          return this.#error(c, id, op, e instanceof SessionError ? e.code : 'invalid_request', (e as Error).message);
        }
        if (this.rejectNextTradeWith) {
          const name = this.rejectNextTradeWith;
          this.rejectNextTradeWith = undefined;
          return this.#error(c, id, op, name, 'refused by the test');
        }
        if ('place' in request) {
          const p = request.place;
          const o = this.#newOrder({ client_order_id: p.client_order_id ?? '', symbol: p.symbol, side: p.side, price: p.price ?? '0', quantity: p.quantity });
          this.#send(c, encryptResponse(c.cipher, id as string, op, { ack: { code: 0, message: '', order_id: o.order_id, client_order_id: o.client_order_id, status: 'NEW', reject_reason: '' } }));
          this.pushOrder(c, o, 'open');
          return;
        }
        const t = 'cancel' in request ? request.cancel : request.modify;
        const o = [...this.orders.values()].find((x) => x.order_id === t.order_id || x.client_order_id === t.client_order_id);
        if (!o) {
          return this.#send(c, encryptResponse(c.cipher, id as string, op, { ack: { code: 1420, message: 'ORDER_NOT_FOUND', order_id: '', client_order_id: t.client_order_id ?? '', reject_reason: 'ORDER_NOT_FOUND' } }));
        }
        if ('cancel' in request) o.status = 'CANCELLED';
        else if (request.modify.price) o.price = request.modify.price;
        this.#send(c, encryptResponse(c.cipher, id as string, op, { ack: { code: 0, message: '', order_id: o.order_id, client_order_id: o.client_order_id, status: o.status, reject_reason: '' } }));
        this.pushOrder(c, o, 'cancel' in request ? 'cancelled' : 'modified');
        return;
      }
      case 'subscribe': {
        const channel = String(f.args?.['channel']);
        if ((channel === 'orders' || channel === 'positions') && !c.cipher) return this.#error(c, id, op, 'session_required', 'encrypted channels need session.setup');
        c.seq.set(channel, 1);
        reply({ channel, seq_start: 1 });
        this.#snapshot(c, channel);
        return;
      }
      case 'unsubscribe': {
        c.seq.delete(String(f.args?.['channel']));
        return reply({ channel: f.args?.['channel'] });
      }
      case 'ping':
        if (!this.answerPings) return;
        return this.#send(c, { id, op: 'pong', code: 0, data: {} });
      case 'logout':
        return reply({});
      case 'account.info':
        return reply({ balance: 1000000.123456, tier: 'Core' });
      default:
        return this.#error(c, id, op, 'invalid_request', `unknown op '${op}'`);
    }
  }

  #snapshot(c: MockConn, channel: string): void {
    if (channel === 'orders') {
      const mine = [...this.orders.values()].filter((o) => o.status === 'NEW' || o.status === 'PARTIALLY_FILLED');
      if (mine.length === 0) return this.#frame(c, channel, 'snapshot', true, undefined);
      mine.forEach((o, i) => {
        this.#frame(c, channel, 'snapshot', i === mine.length - 1, { order_update: orderUpdate(o, 'open') });
        // Updates that race the snapshot: the client must buffer them until snapshot_complete.
        if (i === 0) for (let k = 0; k < this.interleaveUpdates; k++) this.#frame(c, channel, 'update', false, { order_update: { ...orderUpdate(o, 'partial_fill'), filled_quantity: `0.00${k + 1}` } });
      });
      return;
    }
    if (channel === 'positions') return this.#frame(c, channel, 'snapshot', true, { position_update: position('1') });
    this.#frame(c, channel, 'snapshot', true, undefined);
  }

  /** Sends one push (encrypted on orders/positions); `undefined` message = an empty snapshot's data. */
  #frame(c: MockConn, channel: string, type: 'snapshot' | 'update', complete: boolean, msg: SequencerToEdgeMessage | undefined): void {
    const seq = c.seq.get(channel);
    if (seq === undefined) return;
    c.seq.set(channel, seq + 1);
    if (!msg) return this.#send(c, { channel, type, seq, snapshot_complete: complete, data: this.emptySnapshotData });
    if (!c.cipher) throw new Error('mock: encrypted push without a session');
    this.#send(c, encryptPush(c.cipher, channel, type, seq, complete, msg));
  }

  /** Pushes a system_health message on the connection's session (not a subscription: its own seq series). */
  pushHealth(c: MockConn, health: SystemHealth, seq: number): void {
    if (!c.cipher) throw new Error('mock: system_health without a session');
    this.#send(c, encryptPush(c.cipher, 'system_health', seq === 1 ? 'snapshot' : 'update', seq, seq === 1, { system_health: health }));
  }

  /** Pushes an order event to a connection subscribed to 'orders'. */
  pushOrder(c: MockConn, o: MockOrder, messageType: OrderUpdate['message_type'], extra: Partial<OrderUpdate> = {}): void {
    this.#frame(c, 'orders', 'update', false, { order_update: { ...orderUpdate(o, messageType), ...extra } });
  }

  /** Pushes a position update (mark price move). */
  pushPosition(c: MockConn, mark: string): void {
    this.#frame(c, 'positions', 'update', false, { position_update: { ...position(mark), update_reason: 'mark_price' } });
  }

  /** Sends an order push whose ciphertext was altered in transit. */
  corruptPush(c: MockConn, o: MockOrder): void {
    const seq = c.seq.get('orders');
    if (seq === undefined || !c.cipher) throw new Error('mock: not subscribed');
    c.seq.set('orders', seq + 1);
    const frame = encryptPush(c.cipher, 'orders', 'update', seq, false, { order_update: orderUpdate(o, 'open') });
    const bytes = Buffer.from(frame.data.ciphertext, 'base64');
    bytes[0] = (bytes[0] as number) ^ 1;
    this.#send(c, { ...frame, data: { ...frame.data, ciphertext: bytes.toString('base64') } });
  }

  /** Sends a server-initiated ping. */
  serverPing(c: MockConn, id: string): void {
    this.#send(c, { id, op: 'ping', args: {} });
  }

  /** Loses the next seq of a channel (the client sees a gap). */
  skipSeq(c: MockConn, channel: string): void {
    const s = c.seq.get(channel);
    if (s !== undefined) c.seq.set(channel, s + 1);
  }

  /** Sends a raw server event frame. */
  event(c: MockConn, name: string, data: unknown = {}): void {
    this.#send(c, { event: name, data });
  }

  /** The most recent connection. */
  get last(): MockConn {
    const c = this.conns[this.conns.length - 1];
    if (!c) throw new Error('no connection yet');
    return c;
  }
}

function orderUpdate(o: MockOrder, messageType: OrderUpdate['message_type']): OrderUpdate {
  const remaining = o.status === 'CANCELLED' ? '0' : o.quantity;
  return {
    message_type: messageType, order_id: o.order_id, client_order_id: o.client_order_id, symbol: o.symbol, side: o.side, type: o.type,
    time_in_force: o.time_in_force, price: o.price, quantity: o.quantity, filled_quantity: o.filled_quantity, remaining_quantity: remaining,
    status: o.status, in_time_ns: o.in_time_ns, out_time_ns: '1736899200999999999', ...(o.status === 'CANCELLED' ? { cancel_reason: 'USER_REQUESTED' } : {}),
  };
}

function position(mark: string): PositionUpdate {
  return {
    position_id: 'p1', symbol: 'BTC-USDC-PERP', side: 'long', size: '0.5', entry_price: '65000.1', mark_price: mark, margin: '3250.005',
    leverage: '10', unrealized_pnl: '0', realized_pnl: '0', funding_accrued: '0', liquidation_price: '61905.8', status: 'OPEN', updated_at: '2025-01-15T00:00:00.000Z',
  };
}

function orderJson(o: MockOrder): string {
  // Written by hand so the exact number literals (and a >2^53 nanosecond time) reach the client.
  return (
    `{"order_id":"${o.order_id}","client_order_id":"${o.client_order_id}","symbol":"${o.symbol}","side":"${o.side}","type":"${o.type}",` +
    `"time_in_force":"${o.time_in_force}","price":${o.price},"quantity":${o.quantity},"filled_quantity":${o.filled_quantity},` +
    `"remaining_quantity":${o.quantity},"average_fill_price":null,"last_fill_qty":null,"last_fill_price":null,"status":"${o.status}",` +
    `"in_time_ns":${o.in_time_ns},"out_time_ns":1736899200999999999,"cancel_reason":null,"reject_reason":null}`
  );
}
