// Wiring of the account-side services behind the REST interface (issue 5), composed once by
// gateway.ts: the fill ledger (statistics, VIP volume, open interest), VIP tiers, settlement on the
// simulated public chain, persistent rate-limit windows, venue admission of trading requests, and
// their routes. Everything here consumes committed state (GatewayEvents, read-only store accessors);
// it never changes clearing's records except an account's `tier` (vip/service.ts).
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { GatewayDb } from './store/db';
import type { InstrumentRegistry } from './instruments';
import type { GatewayEvents } from './events';
import type { GatewayClock } from './clock';
import { RateLimitPersistence, TradingGuard, type RateLimiter } from './ratelimit';
import { SYSTEM_CAPS } from './tiers';
import { StatsStore } from './stats/store';
import { FillLedger } from './stats/ledger';
import { StatsService } from './stats/service';
import { VipService } from './vip/service';
import { SimulatedChain } from './settlement/chain';
import { SettlementService } from './settlement/service';
import { WithdrawalService } from './settlement/withdrawals';
import { registerAccountRoutes } from './http/routes-account';
import { registerPositionRoutes } from './http/routes-positions';
import { registerStatsRoutes } from './http/routes-stats';
import { registerVipRoutes } from './http/routes-vip';
import { registerSettlementRoutes } from './http/routes-settlement';
import { registerWithdrawalRoutes } from './http/routes-withdrawals';
import { registerTradingLimits } from './http/trading-limits';
import { registerDocsRoutes } from './http/openapi';
import type { MarkSource } from './risk-monitor/mark-book';
import { fundingPaidBetween } from './risk-monitor/funding-ledger';

export interface VenueOptions {
  /** settlement batch interval (ms); default 2000 */
  settlementIntervalMs?: number;
  /** accounts per settlement batch; default 1000 */
  settlementMaxAccounts?: number;
  /** system caps in weighted milli-actions per second (tests lower them) */
  systemCaps?: { globalMilliPerSecond: number; perSymbolMilliPerSecond: number };
  /** fills per published pool of the public statistics (stats/ledger.ts, release rule); default 10, 1 = every fill at once */
  statsReleaseFills?: number;
  /** a released pool's largest fill is at most this share (percent) of its traded notional; default 50, 100 = off */
  statsDominancePercent?: number;
}

export interface VenueDeps {
  app: FastifyInstance;
  db: GatewayDb;
  registry: InstrumentRegistry;
  events: GatewayEvents;
  limiter: RateLimiter;
  clock: GatewayClock;
  log: Logger;
  env: string;
  dataDir: string;
  adminSecret: string;
  /** current marks of the risk monitor (GET /positions, GET /account) */
  marks?: MarkSource;
}

export interface Venue {
  readonly ledger: FillLedger;
  readonly stats: StatsService;
  readonly vip: VipService;
  readonly settlement: SettlementService;
  readonly withdrawals: WithdrawalService;
  readonly guard: TradingGuard;
  /** Starts the timers (settlement batches, rate-limit persistence, daily tier sweep). */
  start(): void;
  /** Stops the timers and writes what is pending. */
  stop(): Promise<void>;
}

/** Builds the services, reconciles them with the committed store and registers their routes. */
export function createVenue(d: VenueDeps, opts: VenueOptions = {}): Venue {
  const log = d.log.child({ component: 'venue' });
  const store = new StatsStore(d.db);
  const ledger = new FillLedger(d.db, store, d.registry, d.clock, log.child({ part: 'ledger' }), opts.statsReleaseFills, opts.statsDominancePercent);
  ledger.reconcile();
  ledger.attach(d.events);
  const stats = new StatsService(ledger, store, d.registry, d.clock, (from, to) => fundingPaidBetween(d.db, from, to));
  const vip = new VipService(d.db, store, d.clock, log.child({ part: 'vip' }));
  ledger.onFlush((f) => {
    for (const u of f.users) void vip.refresh(u).catch((e: unknown) => log.error({ err: String(e), user_id: u }, 'tier refresh failed'));
  });
  const chain = new SimulatedChain(join(d.dataDir, 'public-chain.jsonl'));
  const settlement = new SettlementService(d.db, chain, d.registry, d.clock, log.child({ part: 'settlement' }), {
    ...(opts.settlementIntervalMs !== undefined ? { intervalMs: opts.settlementIntervalMs } : {}),
    ...(opts.settlementMaxAccounts !== undefined ? { maxAccounts: opts.settlementMaxAccounts } : {}),
  });
  settlement.attach(d.events);
  const withdrawals = new WithdrawalService(d.db, chain, d.clock, log.child({ part: 'withdrawals' }));
  const persistence = new RateLimitPersistence(d.db, d.limiter);
  const restored = persistence.load();
  if (restored > 0) log.info({ keys: restored }, 'rate-limit windows restored');
  const guard = new TradingGuard(d.limiter, () => d.clock.nowNs(), opts.systemCaps ?? SYSTEM_CAPS);

  registerTradingLimits(d.app, { guard, db: d.db, registry: d.registry });
  registerAccountRoutes(d.app, { db: d.db, vip, clock: d.clock, env: d.env, registry: d.registry, ...(d.marks ? { marks: d.marks } : {}) });
  registerPositionRoutes(d.app, { db: d.db, registry: d.registry, events: d.events, clock: d.clock, ...(d.marks ? { marks: d.marks } : {}) });
  registerVipRoutes(d.app, { vip, clock: d.clock, adminSecret: d.adminSecret });
  registerStatsRoutes(d.app, stats);
  registerSettlementRoutes(d.app, { settlement, registry: d.registry, network: `tenebra-sim-${d.env}` });
  registerWithdrawalRoutes(d.app, { withdrawals, db: d.db });
  registerDocsRoutes(d.app);

  const timers: NodeJS.Timeout[] = [];
  let started = false;
  return {
    ledger, stats, vip, settlement, withdrawals, guard,
    start() {
      if (started) return;
      started = true;
      settlement.start(); // opens the chain
      withdrawals.start();
      void vip.sweep().catch((e: unknown) => log.error({ err: String(e) }, 'tier sweep failed'));
      const every = (ms: number, fn: () => Promise<unknown>, what: string) => {
        const t = setInterval(() => void fn().catch((e: unknown) => log.error({ err: String(e) }, `${what} failed`)), ms);
        t.unref();
        timers.push(t);
      };
      every(1_000, () => persistence.flush(), 'persisting rate-limit windows');
      every(60_000, () => vip.sweepIfNewDay(), 'daily tier sweep');
    },
    async stop() {
      for (const t of timers) clearInterval(t);
      await ledger.stop();
      await persistence.flush();
      await withdrawals.stop();
      if (started) settlement.stop();
    },
  };
}
