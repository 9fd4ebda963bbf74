// The WebSocket server at /ws/v1 on the gateway's HTTP port (fastify's node server, 'upgrade' event):
// per-IP socket cap, per-account connection and subscription caps, the timers (auth_expired, rekey,
// throttled pushes, instrument changes, statistics, health, heartbeats), the gateway's fencing epoch,
// and cancel-on-disconnect. Frame handling lives in connection.ts, fan-out in hub.ts, the venue's
// health in health.ts, the public statistics feed in transparency.ts.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from 'pino';
import type { GatewayClock } from '../clock';
import type { TokenService } from '../auth/tokens';
import type { AccountService } from '../accounts';
import type { InstrumentRegistry } from '../instruments';
import type { GatewayEvents } from '../events';
import type { RateLimiter } from '../ratelimit';
import type { GatewayDb } from '../store/db';
import type { AccountRec, Scope } from '../store/records';
import { ChannelHub } from './hub';
import { ApiError } from '../errors';
import type { MarkSource } from '../risk-monitor/mark-book';
import { WsConnection } from './connection';
import { SocketTrading, type Admit, type OrderPort } from './trading';
import { CLOSE, DEFAULT_WS_OPTIONS, WS_ALIAS_PATHS, WS_PATH, type Channel, type WsOptions } from './protocol';
import { HealthMonitor, type HealthSource } from './health';
import { TransparencyFeed, type TransparencySource } from './transparency';

const EPOCH_KEY = 'ws_fencing_epoch';

export interface WsDeps {
  log: Logger;
  clock: GatewayClock;
  db: GatewayDb;
  tokens: TokenService;
  accounts: AccountService;
  registry: InstrumentRegistry;
  events: GatewayEvents;
  limiter: RateLimiter;
  orders: OrderPort;
  /** account.info data: the content of GET /account for the account and the socket token's scopes */
  accountInfo: (acct: AccountRec, tokenScopes: readonly Scope[]) => Promise<Record<string, unknown>>;
  /** venue admission of trading actions, as the REST order routes apply it */
  admit?: Admit;
  /** cancels one order because a cancel_on_disconnect socket dropped (cancel_reason CANCEL_ON_DISCONNECT) */
  cancelOnDisconnect: (acct: AccountRec, orderId: string) => Promise<unknown>;
  /** current marks (risk-monitor/mark-book.ts) the positions channel shows */
  marks?: MarkSource;
  /** what the system_health pushes are derived from (results links, sequencer link, cursor, submits) */
  health: HealthSource;
  /** the public statistics the transparency channel serves (GET /stats/platform/overview) */
  transparency: TransparencySource;
  /** told of every order.place answer (metrics: GatewayMetrics.placement) */
  onPlacement?: (http: number, code: number | undefined, seconds: number) => void;
}

/** What a connection needs from the server. */
export interface WsContext {
  options: WsOptions;
  clock: GatewayClock;
  db: GatewayDb;
  tokens: TokenService;
  accounts: AccountService;
  hub: ChannelHub;
  trading: SocketTrading;
  accountInfo: WsDeps['accountInfo'];
  server: WsServer;
  health: HealthMonitor;
}

export class WsServer {
  readonly options: WsOptions;
  readonly hub: ChannelHub;
  /** the venue's health as pushed to every encrypted session (system_health) */
  readonly health: HealthMonitor;
  private readonly wss: WebSocketServer;
  private readonly conns = new Set<WsConnection>();
  private readonly perIp = new Map<string, number>();
  private readonly ctx: WsContext;
  private epoch: number;
  private nextId = 1;
  private sweepTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  /** cancel-on-disconnect runs in flight (awaited by stop so the store is not closed under them) */
  private readonly codRuns = new Set<Promise<void>>();
  private readonly offNodes: () => void;

  constructor(
    private readonly app: FastifyInstance,
    private readonly deps: WsDeps,
    options: Partial<WsOptions> = {},
  ) {
    this.options = { ...DEFAULT_WS_OPTIONS, ...options };
    this.epoch = deps.db.tx(() => {
      const next = (((deps.db.meta.get(EPOCH_KEY) as number | undefined) ?? 0) + 1) >>> 0;
      deps.db.meta.putSync(EPOCH_KEY, next);
      return next;
    });
    const log = deps.log.child({ component: 'ws' });
    const transparency = new TransparencyFeed(deps.transparency, deps.clock);
    this.hub = new ChannelHub(deps.db, deps.registry, deps.events, deps.clock, log, this.options.markPriceThrottleMs, transparency, deps.marks ?? null);
    this.health = new HealthMonitor(deps.health, deps.clock, { stallMs: this.options.healthStallMs, journalSlowMs: this.options.healthJournalSlowMs });
    // A node's link coming or going is announced at once (within each session's rate limit); the
    // sweep catches the rest: the sequencer link, stalls and slow journal acks.
    this.offNodes = deps.health.onNodesChanged(() => {
      if (this.health.refresh()) this.logHealth();
      for (const c of this.conns) c.offerHealth();
    });
    const trading = new SocketTrading({
      orders: deps.orders, registry: deps.registry, limiter: deps.limiter, db: deps.db, hub: this.hub, clock: deps.clock, log,
      ...(deps.admit ? { admit: deps.admit } : {}),
      ...(deps.onPlacement ? { onPlacement: deps.onPlacement } : {}),
    });
    this.ctx = {
      options: this.options, clock: deps.clock, db: deps.db, tokens: deps.tokens, accounts: deps.accounts, hub: this.hub, trading,
      accountInfo: deps.accountInfo, server: this, health: this.health,
    };
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.options.hardMaxFrameBytes, perMessageDeflate: false });
    // A handshake ws refuses (method, Upgrade, key, version, subprotocol) gets the envelope too.
    this.wss.on('wsClientError', (err: Error, socket: Duplex) => {
      const msg = err.message;
      if (/method/i.test(msg)) return app.refuseRaw(socket, new ApiError('method_not_allowed', `${msg}: a WebSocket handshake is a GET`), { Allow: 'GET' });
      const extra = /version/i.test(msg) ? { 'Sec-WebSocket-Version': '13' } : undefined;
      app.refuseRaw(socket, new ApiError('invalid_request', `${msg}: send a WebSocket handshake (RFC 6455) to ${WS_PATH}`), extra);
    });
    app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket, head));
    app.addHook('onListen', async () => this.startTimers());
    app.addHook('preClose', async () => this.stop());
  }

  /** The fencing epoch written into every ResponseHeader: +1 at every gateway start, +1 at every fence(). */
  get fencingEpoch(): number {
    return this.epoch;
  }

  /** Open sockets. */
  get size(): number {
    return this.conns.size;
  }

  /** Logged-in sockets of the account. */
  loggedInCount(userId: string): number {
    return this.hub.subscribersOf(userId).size;
  }

  /** Channel subscriptions of the account over all its sockets. */
  subscriptionCount(userId: string): number {
    let n = 0;
    for (const s of this.hub.subscribersOf(userId)) n += (s as WsConnection).countedSubscriptions;
    return n;
  }

  /**
   * Fences every live session: the epoch rises and each session is retired (session_expired event);
   * clients rerun session.setup and are pinned to the new epoch, so no frame of an older session or
   * gateway run is accepted by them again. Use when sessions may have been exposed (e.g. failover).
   */
  fence(): number {
    this.epoch = this.deps.db.tx(() => {
      const next = (this.epoch + 1) >>> 0;
      this.deps.db.meta.putSync(EPOCH_KEY, next);
      return next;
    });
    for (const c of this.conns) c.retire(`fenced: the gateway moved to fencing epoch ${this.epoch}`);
    return this.epoch;
  }

  /** Test/chaos hook: the account's next n pushes on channel are lost on every socket (seq consumed: a gap). */
  dropNextPushes(userId: string, channel: Channel, n = 1): void {
    for (const s of this.hub.subscribersOf(userId)) (s as WsConnection).dropNext(channel, n);
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = (req.url ?? '').split('?')[0];
    // Refusals carry the REST error envelope (http/edge.ts), as every other answer of this port.
    const refuse = (e: ApiError, extra?: Record<string, string>) => this.app.refuseRaw(socket, e, extra);
    if (path !== WS_PATH && !WS_ALIAS_PATHS.includes(path ?? '')) return refuse(new ApiError('not_found', `no WebSocket endpoint at ${String(path).slice(0, 64)}; connect to ${WS_PATH}`));
    if (this.stopping) return refuse(new ApiError('service_unavailable', 'the gateway is shutting down; reconnect shortly'));
    const ip = req.socket.remoteAddress ?? 'unknown';
    if ((this.perIp.get(ip) ?? 0) >= this.options.maxSocketsPerIp) return refuse(new ApiError('rate_limited', `at most ${this.options.maxSocketsPerIp} WebSockets per address`));
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, ip));
  }

  private onConnection(ws: WebSocket, ip: string): void {
    const log = this.deps.log.child({ component: 'ws' });
    const conn = new WsConnection(this.nextId++, ws, ip, this.ctx, log);
    this.conns.add(conn);
    this.perIp.set(ip, (this.perIp.get(ip) ?? 0) + 1);
    this.hub.join(conn);
    ws.on('message', (data, isBinary) => conn.onMessage(toBuffer(data), isBinary));
    conn.greet();
    ws.on('pong', () => (conn.alive = true));
    ws.on('error', (e) => log.debug({ conn: conn.id, err: e.message }, 'socket error'));
    ws.on('close', () => {
      this.conns.delete(conn);
      const left = (this.perIp.get(ip) ?? 1) - 1;
      if (left > 0) this.perIp.set(ip, left);
      else this.perIp.delete(ip);
      const { acct, cancel } = conn.markClosed();
      if (cancel && acct && !this.stopping) this.runCancelOnDisconnect(acct, conn.id);
    });
  }

  /** Cancels every live order of the account (cancel_reason CANCEL_ON_DISCONNECT). */
  private runCancelOnDisconnect(acct: AccountRec, connId: number): void {
    const log = this.deps.log.child({ component: 'ws' });
    const ids = this.hub.live.liveOrders(acct.user_id).map((o) => o.order_id);
    log.info({ conn: connId, user_id: acct.user_id, orders: ids.length }, 'cancel on disconnect');
    const run = Promise.allSettled(ids.map((id) => this.deps.cancelOnDisconnect(acct, id))).then((rs) => {
      const failed = rs.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
      if (failed.length) log.warn({ user_id: acct.user_id, failed }, 'cancel on disconnect: some orders were not cancelled');
    });
    this.codRuns.add(run);
    void run.finally(() => this.codRuns.delete(run));
  }

  private startTimers(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => {
      try {
        if (this.health.refresh()) this.logHealth();
        this.hub.sweep();
        const now = this.deps.clock.nowMs();
        for (const c of this.conns) c.sweep(now);
      } catch (e) {
        this.deps.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'ws sweep failed');
      }
    }, this.options.sweepMs);
    this.sweepTimer.unref();
    this.heartbeatTimer = setInterval(() => {
      for (const c of this.conns) {
        if (!c.alive) {
          c.ws.terminate();
          continue;
        }
        c.alive = false;
        c.ws.ping();
      }
    }, this.options.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  private logHealth(): void {
    const h = this.health.current;
    const log = this.deps.log.child({ component: 'ws' });
    const o = { status: h.status, reasons: h.reasons, live_nodes: h.live_nodes, sequencer_link: h.sequencer_link };
    if (h.status === 'ok') log.info(o, 'venue health: ok');
    else log.warn(o, `venue health: ${h.status}: ${h.message}`);
  }

  /** Closes every socket (1001, no cancel-on-disconnect: the gateway is going away, not the client). */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.offNodes();
    for (const c of this.conns) {
      c.close(CLOSE.goingAway, 'gateway shutting down');
      c.ws.terminate();
    }
    this.hub.close();
    await Promise.allSettled([...this.codRuns]);
    await new Promise<void>((r) => this.wss.close(() => r()));
  }
}

function toBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
