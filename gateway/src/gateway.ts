// Composition of the gateway process: storage, auth, REST server, sequencer link, results listener.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { checkCommitteeSize, withDealerLabel, type GatewayConfig } from '@tenebra/config';
import { fromHex, readKeyFile } from '@tenebra/seal';
import { SequencerClient } from '@tenebra/wire';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { createLogger } from './log';
import { systemClock, type GatewayClock } from './clock';
import { GatewayDb } from './store/db';
import { TokenService } from './auth/tokens';
import { AccountService } from './accounts';
import { InstrumentRegistry } from './instruments';
import { RateLimiter } from './ratelimit';
import { OpSealer, ResultOpener } from './sharing';
import { GatewayEvents } from './events';
import { Clearing } from './results/clearing';
import { ResultCollector } from './results/collector';
import { OutcomeWaiters, ResultPipeline } from './results/pipeline';
import { nodeLinkKeys, ResultServer } from './results/server';
import { SubmissionTracker } from './results/submissions';
import { CapacityBoard } from './results/capacity';
import { OrderService, type SequencerPort } from './orders/service';
import { createSimulatedOracle, type PriceOracle } from './orders/oracle';
import { buildApp } from './http/app';
import { registerPublicRoutes } from './http/routes-public';
import { registerMarketDataRoutes } from './http/routes-market-data';
import { registerHealthRoutes } from './http/routes-health';
import { registerOrderRoutes } from './http/routes-orders';
import { registerFillRoutes } from './http/routes-history';
import { backfillOrderIndex } from './store/history';
import { registerAdminRoutes } from './http/routes-admin';
import { accountView } from './account/view';
import { positionsOf } from './positions/view';
import { ApiError } from './errors';
import type { EdgeOptions } from './http/edge';
import { WsServer } from './ws/server';
import type { WsOptions } from './ws/protocol';
import { SseServer, type SseOptions } from './sse/routes';
import type { RestLimits } from './tiers';
import { createVenue, type Venue, type VenueOptions } from './venue';
import { HourlyBonus, type HourlyBonusOptions } from './bonus/hourly';
import { Repegger, type RepegOptions } from './orders/repeg';
import { registerBonusRoutes } from './http/routes-bonus';
import type { PriceBand } from './orders/risk';
import { RestingOrderGuard } from './orders/resting-guard';
import { MarkBook } from './risk-monitor/mark-book';
import { RiskMonitor, type RiskMonitorOptions } from './risk-monitor/monitor';
import { accountUnrealizedMicro } from './risk-monitor/account-marks';
import { GatewayMetrics } from './metrics';

/** A sequencer link the gateway owns: SequencerClient of @tenebra/wire, or a stand-in in tests. */
export interface SequencerLink extends SequencerPort {
  connect(): Promise<void>;
  close(): Promise<void>;
}

/** Optional overrides, mostly for tests. */
export interface GatewayOptions {
  log?: Logger;
  clock?: GatewayClock;
  /** replaces the SequencerClient (default: attested SequencerClient to config.sequencerUrl) */
  sequencer?: SequencerLink;
  /** per-IP budget for requests without a valid token */
  publicLimits?: RestLimits;
  ackTimeoutMs?: number;
  cancelTimeoutMs?: number;
  /** grace for the remaining nodes once t+1 results agree (ms; default 0: decide with the first t+1, check later ones after) */
  resultGraceMs?: number;
  /** first sequencer connection: how long to keep trying (ms) */
  sequencerConnectTimeoutMs?: number;
  /** reference prices (mark, pegs); default: the simulated oracle of orders/oracle.ts */
  oracle?: PriceOracle;
  /** per-symbol book depth cap (default 100,000) */
  maxBookDepth?: number;
  /** limit prices must lie within the mark ± this many basis points, or each instrument's band ('instrument'; default 0 = no check; gateway/src/main.ts, the process, uses 'instrument') */
  priceBandBps?: PriceBand;
  /** HTTP server timeouts and per-address connection cap (http/edge.ts) */
  edge?: Partial<EdgeOptions>;
  /** WebSocket server tunables (timers, limits; see ws/protocol.ts) */
  ws?: Partial<WsOptions>;
  /** server-sent events tunables (heartbeat, polling, stream caps; see sse/routes.ts) */
  sse?: Partial<SseOptions>;
  /** statistics, VIP, settlement and venue-limit tunables (see venue.ts) */
  venue?: VenueOptions;
  /** hourly taker bonus payout tunables (bonus/hourly.ts) */
  bonus?: HourlyBonusOptions;
  /** mark-to-market / liquidation monitor tunables (risk-monitor/monitor.ts; intervalMs 0: no timer) */
  risk?: Partial<RiskMonitorOptions>;
  /** peg re-pricing: enabled, poll, per-order throttle (orders/repeg.ts) */
  repeg?: RepegOptions;
  /** where the gateway's Prometheus series go (main.ts passes the process's registry; default a private one) */
  metrics?: Registry;
}

export interface GatewayUrls {
  baseUrl: string;
  wsUrl: string;
  adminUrl: string;
  internalUrl: string;
}

export interface Gateway {
  /** Listens (REST and results), connects to the sequencer (attested), resubmits unacknowledged ops. */
  start(): Promise<void>;
  /** Stops serving and closes every connection and the store. */
  stop(): Promise<void>;
  /** Where it listens (after start(); ports chosen by the OS when configured as 0). */
  readonly urls: GatewayUrls;
  /** The fastify instance (inject() works before start()). */
  readonly app: FastifyInstance;
  readonly events: GatewayEvents;
  readonly log: Logger;
  /** Next sequence number whose outcome will be applied. */
  readonly resultsCursor: bigint;
  /** The WebSocket server at /ws/v1 (channels, encrypted sessions). */
  readonly ws: WsServer;
  /** Reference prices: the mark of pre-trade checks and the price of peg orders. */
  readonly oracle: PriceOracle;
  /** Placement, cancel, modify, mass quote (REST and WebSocket use the same service). */
  readonly orders: OrderService;
  /** The server-sent event streams (/events/stats, /events/notifications). */
  readonly sse: SseServer;
  /** Fill ledger, statistics, VIP tiers, settlement, venue admission (venue.ts). */
  readonly venue: Venue;
  /** Hourly taker bonus payouts (bonus/hourly.ts). */
  readonly bonus: HourlyBonus;
  /** Mark-to-market, funding, health tiers and the liquidation ladder (risk-monitor/, docs/risk.md). */
  readonly risk: RiskMonitor;
  /** Moves resting peg orders with their reference (orders/repeg.ts). */
  readonly repegger: Repegger;
  /** The registry holding the gateway's Prometheus series (metrics.ts). */
  readonly metrics: Registry;
}

/** Builds a gateway from its config file contents; nothing listens until start(). */
export function createGateway(config: GatewayConfig, opts: GatewayOptions = {}): Gateway {
  checkConfig(config);
  // a dealer-mode committee (not private) labels every line, a logger passed in too (config dealer.ts)
  const log = withDealerLabel(opts.log ?? createLogger(config.logLevel ?? 'info', config.env, config.committeePreprocessing), config.committeePreprocessing);
  const clock = opts.clock ?? systemClock();
  const jwtSecret = readSecret(config.jwtSecretFile, 'jwtSecretFile');
  const adminSecret = readSecret(config.adminSecretFile, 'adminSecretFile');
  const gatewayKey = readKeyFile(config.gatewayKeyFile, 'x25519');

  const db = new GatewayDb(config.dataDir);
  // A store from before the order listing existed gets its index once (store/history.ts).
  const indexed = backfillOrderIndex(db);
  if (indexed > 0) log.info({ orders: indexed }, 'order history index built');
  const events = new GatewayEvents();
  const registry = new InstrumentRegistry(db);
  const tokens = new TokenService(new TextEncoder().encode(jwtSecret), config.env, db, clock);
  const accounts = new AccountService(db, clock);
  const limiter = new RateLimiter(() => clock.nowMs());
  const nodeKeys = config.nodes.map((nd) => ({ index: nd.index, publicKey: fromHex(nd.x25519PublicKey) }));
  const sealer = new OpSealer(nodeKeys, config.n, config.t, gatewayKey.privateKey);
  const waiters = new OutcomeWaiters();
  const clearing = new Clearing(db, registry, clock, log.child({ component: 'clearing' }));
  const collector = new ResultCollector(
    { n: config.n, t: config.t, opener: new ResultOpener(nodeKeys, config.n, gatewayKey.privateKey), ...(opts.resultGraceMs !== undefined ? { graceMs: opts.resultGraceMs } : {}) },
    log.child({ component: 'results' }),
  );
  const pipeline = new ResultPipeline(collector, clearing, waiters, events, clock, log.child({ component: 'results' }));
  // The gateway's link key proves it to the sequencer and to each node on the results link.
  const linkKey = readKeyFile(config.linkKeyFile, 'ed25519').privateKey;
  // What the nodes' preprocessing reserve still covers (their capacity reports; decision 0016).
  const capacity = new CapacityBoard(config.t);
  const committeeCapacity = () => capacity.read(pipeline.nodes);
  const resultServer = new ResultServer(config.n, pipeline, log.child({ component: 'results' }), nodeLinkKeys(config.nodes), linkKey, (f) => capacity.report(f));
  const link = opts.sequencer ?? attestedSequencer(config, log, linkKey, opts.sequencerConnectTimeoutMs);
  // Every submit's ack is watched for system_health (the results backlog, slow journal acks).
  const submissions = new SubmissionTracker(() => clock.nowMs());
  const sequencer: SequencerLink = {
    get connected() {
      return link.connected;
    },
    submit: (op, o) => submissions.track(link.submit(op, o)),
    connect: () => link.connect(),
    close: () => link.close(),
  };
  const oracle = opts.oracle ?? createSimulatedOracle(clock).oracle;
  const marks = new MarkBook(oracle);
  const orders = new OrderService({ db, registry, sealer, sequencer, waiters, events, clock, log: log.child({ component: 'orders' }), oracle }, {
    ...(opts.ackTimeoutMs !== undefined ? { ackTimeoutMs: opts.ackTimeoutMs } : {}),
    ...(opts.cancelTimeoutMs !== undefined ? { cancelTimeoutMs: opts.cancelTimeoutMs } : {}),
    ...(opts.maxBookDepth !== undefined ? { maxBookDepth: opts.maxBookDepth } : {}),
    ...(opts.priceBandBps !== undefined ? { priceBandBps: opts.priceBandBps } : {}),
    matchingPaused: () => (committeeCapacity().preprocessing === 'exhausted'
      ? 'the committee ran out of preprocessing while nodes are down, so matching is paused (acknowledged orders wait and are matched once every node is back)'
      : null),
  });

  const repegger = new Repegger(db, oracle, orders, clock, events, log.child({ component: 'repeg' }), opts.repeg);

  const app = buildApp({ log, tokens, accounts, limiter, ...(opts.publicLimits ? { publicLimits: opts.publicLimits } : {}), ...(opts.edge ? { edge: opts.edge } : {}) });
  registerPublicRoutes(app, { tokens, accounts, registry, clock });
  registerMarketDataRoutes(app, { registry, oracle });
  registerOrderRoutes(app, orders, limiter, { db, registry }, (id) => {
    const rec = db.orders.get(id);
    if (rec) ws.hub.live.addPlaced(rec); // ws exists before any request is served
  });
  registerFillRoutes(app, { db, registry });
  registerAdminRoutes(app, { adminSecret, accounts, registry, db, clock });
  const venue = createVenue({ app, db, registry, events, limiter, clock, log, env: config.env, dataDir: config.dataDir, adminSecret, marks }, opts.venue);
  const ws = new WsServer(app, {
    log, clock, db, tokens, accounts, registry, events, limiter, orders,
    // account.info answers what GET /account answers; trading ops pass the venue admission of the REST order routes.
    accountInfo: async (a, tokenScopes) => {
      const acct = (await venue.vip.refresh(a.user_id)) ?? a;
      const positions = positionsOf(db, acct.user_id);
      const unrealizedPnl = accountUnrealizedMicro(positions, (s) => registry.get(s), marks);
      return accountView({ acct, positions, env: config.env, tokenScopes, vip: venue.vip.status(acct), unrealizedPnl });
    },
    admit: (a, kind, symbol) => {
      const r = venue.guard.admit(a.user_id, a.tier, kind, symbol);
      return r.ok ? null : new ApiError(r.error, r.detail);
    },
    cancelOnDisconnect: (a, orderId) => orders.cancel(a, orderId, 'CANCEL_ON_DISCONNECT'),
    // metrics is made below; a placement can only arrive once the gateway has started
    onPlacement: (http, code, seconds) => metrics.placement('ws', http, code, seconds),
    marks,
    health: {
      n: config.n, t: config.t,
      liveNodes: () => pipeline.nodes.size,
      sequencerUp: () => sequencer.connected,
      cursor: () => pipeline.cursor,
      backlog: (cursor) => submissions.backlog(cursor),
      oldestJournalWaitMs: (now) => submissions.oldestWaitMs(now),
      onNodesChanged: (fn) => pipeline.onNodesChanged(fn),
      capacity: committeeCapacity,
    },
    // The transparency channel serves exactly GET /stats/platform/overview (default range).
    transparency: { overview: () => venue.stats.overview({}), onLedgerFlush: (fn) => venue.ledger.onFlush(fn) },
  }, opts.ws);
  registerHealthRoutes(app, {
    health: () => {
      ws.health.refresh();
      return ws.health.current;
    },
  });
  const risk = new RiskMonitor({
    db, registry, events, clock, log: log.child({ component: 'risk' }), marks, orders,
    liveOrders: (userId) => ws.hub.live.liveOrders(userId),
    venueFees: () => clearing.venueFees(),
    restingOrders: new RestingOrderGuard({
      db, registry, oracle, log: log.child({ component: 'resting-guard' }),
      live: ws.hub.live,
      livePosition: (userId, symbol) => ws.hub.live.position(userId, symbol),
      cancel: (acct, orderId, reason) => orders.cancel(acct, orderId, reason),
    }),
  }, opts.risk);
  const bonus = new HourlyBonus(db, clock, events, log.child({ component: 'bonus' }), opts.bonus);
  registerBonusRoutes(app, { db, hourly: bonus });
  const sse = new SseServer({ log, clock, db, events, registry, stats: venue.stats, epoch: ws.fencingEpoch }, opts.sse);
  sse.register(app);
  const metricsRegistry = opts.metrics ?? new Registry();
  const metrics = new GatewayMetrics(metricsRegistry, {
    resultsCursor: () => pipeline.cursor, wsSessions: () => ws.size, health: () => ws.health.current.status,
    liveNodes: () => pipeline.nodes.size, sequencerUp: () => sequencer.connected, capacity: committeeCapacity,
  });
  metrics.watchPlacements(app);
  metrics.watchFills(events);

  let httpPort = config.port;
  let internalPort = config.internalPort;
  let pruneTimer: NodeJS.Timeout | null = null;
  let state: 'new' | 'started' | 'stopped' = 'new';

  const stop = async (): Promise<void> => {
    if (state === 'stopped') return;
    state = 'stopped';
    if (pruneTimer) clearInterval(pruneTimer);
    await risk.stop();
    repegger.stop();
    orders.stop();
    bonus.stop();
    oracle.stop();
    pipeline.stop();
    await app.close();
    await resultServer.close();
    await sequencer.close();
    await orders.flushAcks();
    await venue.stop();
    await db.close();
    log.info('gateway stopped');
  };

  return {
    app, events, log, ws, oracle, orders, sse, venue, bonus, risk, repegger, metrics: metricsRegistry,
    get resultsCursor() {
      return pipeline.cursor;
    },
    get urls(): GatewayUrls {
      const h = config.host;
      return {
        baseUrl: `http://${h}:${httpPort}/api/v1`, wsUrl: `ws://${h}:${httpPort}/ws/v1`,
        adminUrl: `http://${h}:${httpPort}/admin`, internalUrl: `ws://${h}:${internalPort}`,
      };
    },
    async start() {
      if (state !== 'new') throw new Error('gateway: start() called twice');
      state = 'started';
      try {
        internalPort = await resultServer.listen(config.host, config.internalPort);
        await app.listen({ host: config.host, port: config.port });
        const addr = app.server.address();
        if (addr && typeof addr === 'object') httpPort = addr.port;
        log.info({ ...this.urls, cursor: pipeline.cursor.toString() }, 'gateway listening; connecting to the sequencer');
        oracle.start();
        await sequencer.connect();
        orders.resubmitOutbox();
        orders.start();
        repegger.start();
        venue.start();
        bonus.start();
        risk.start();
        pruneTimer = setInterval(() => {
          try {
            tokens.pruneRevoked();
          } catch (e) {
            log.warn({ err: String(e) }, 'pruning revoked tokens failed');
          }
        }, 60_000);
        pruneTimer.unref();
        log.info({ ...this.urls }, 'gateway ready');
      } catch (e) {
        await stop().catch(() => undefined);
        throw e;
      }
    },
    stop,
  };
}

/** The production sequencer link: SequencerClient, which verifies the enclave's quote and proof and
 *  proves the gateway's link key. */
function attestedSequencer(config: GatewayConfig, log: Logger, authKey: Uint8Array, firstConnectTimeoutMs?: number): SequencerLink {
  const client = new SequencerClient();
  return {
    get connected() {
      return client.connected;
    },
    submit: (op, o) => client.submit(op, o),
    connect: () => client.connect({
      url: config.sequencerUrl,
      platformPublicKey: fromHex(config.platformPublicKey),
      expectedMeasurement: config.expectedMeasurement,
      authKey,
      log: log.child({ component: 'sequencer-client' }),
      ...(firstConnectTimeoutMs !== undefined ? { firstConnectTimeoutMs } : {}),
    }),
    close: () => client.close(),
  };
}

function readSecret(file: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new Error(`gateway config: cannot read ${what} ${file}: ${(e as Error).message}`);
  }
  if (text.length < 32) throw new Error(`gateway config: ${what} ${file} must hold at least 32 characters`);
  return text;
}

/** Throws naming the first problem of a gateway config. */
export function checkConfig(c: GatewayConfig): void {
  if (c.role !== 'gateway') throw new Error(`gateway config: role is '${String(c.role)}'`);
  if (c.env !== 'production' && c.env !== 'test') throw new Error(`gateway config: env must be production or test`);
  checkCommitteeSize(c.n, c.t);
  for (const [k, v] of [['port', c.port], ['internalPort', c.internalPort]] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 65535) throw new Error(`gateway config: ${k} must be a TCP port`);
  }
  if (!Array.isArray(c.nodes) || c.nodes.length !== c.n) throw new Error(`gateway config: nodes must list ${c.n} committee nodes`);
  for (const nd of c.nodes) {
    if (!/^[0-9a-f]{64}$/.test(nd.x25519PublicKey ?? '')) throw new Error(`gateway config: node ${nd.index} x25519PublicKey must be 64 hex chars`);
    if (!/^[0-9a-f]{64}$/.test(nd.linkPublicKey ?? '')) throw new Error(`gateway config: node ${nd.index} linkPublicKey must be 64 hex chars (npm start adds it to older data folders)`);
  }
  if (!/^[0-9a-f]{64}$/.test(c.platformPublicKey ?? '')) throw new Error('gateway config: platformPublicKey must be 64 hex chars');
  if (!/^[0-9a-f]{64}$/.test(c.expectedMeasurement ?? '')) throw new Error('gateway config: expectedMeasurement must be 64 hex chars');
  for (const k of ['dataDir', 'host', 'sequencerUrl', 'gatewayKeyFile', 'linkKeyFile', 'jwtSecretFile', 'adminSecretFile'] as const) {
    if (typeof c[k] !== 'string' || c[k] === '') throw new Error(`gateway config: ${k} is required`);
  }
}
