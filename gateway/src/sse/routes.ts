// The server-sent event streams (docs/websocket.md, "Server-sent events"):
//   GET {base_url}/events/stats          public platform statistics (aggregates only), event `overview`
//   GET {base_url}/events/notifications  the account's fills, margin alerts and settlements
//   POST {base_url}/events/tickets       a short-lived ticket for browsers (EventSource sends no headers)
// {base_url} includes /api/v1; the same streams also answer at the spec's literal /events/... paths.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiError } from '../errors';
import type { GatewayClock } from '../clock';
import type { GatewayEvents } from '../events';
import type { InstrumentRegistry } from '../instruments';
import type { GatewayDb } from '../store/db';
import { API_PREFIX, requireAuth } from '../http/app';
import { sendData } from '../http/reply';
import { SseStream } from './stream';
import { NotificationLog, type Notification } from './notifications';
import { TicketStore, type Ticket } from './tickets';
import { rejectUnknownParams } from '../http/query';

/** Where statistics come from: the object of GET /stats/platform/overview for query q. */
export interface StatsSource {
  overview(q: Record<string, unknown>): Record<string, unknown>;
}

export interface SseOptions {
  /** comment heartbeat every this many ms */
  heartbeatMs: number;
  /** how often the stats stream checks for a new as_of */
  statsPollMs: number;
  /** EventSource reconnect delay announced with `retry:` */
  retryMs: number;
  /** open notification streams per account */
  maxStreamsPerAccount: number;
  /** open stats streams per client IP */
  maxStatsStreamsPerIp: number;
  /** open streams in all */
  maxStreams: number;
}

export const DEFAULT_SSE_OPTIONS: SseOptions = {
  heartbeatMs: 15_000, statsPollMs: 5_000, retryMs: 3_000, maxStreamsPerAccount: 5, maxStatsStreamsPerIp: 20, maxStreams: 10_000,
};

export interface SseDeps {
  log: Logger;
  clock: GatewayClock;
  db: GatewayDb;
  events: GatewayEvents;
  registry: InstrumentRegistry;
  /** null while no statistics service is wired: /events/stats then answers 503 */
  stats: StatsSource | null;
  /** the id epoch of notifications (distinct per gateway run) */
  epoch: number;
}

/** The SSE side of the gateway; register() adds the routes, close() ends every stream. */
export class SseServer {
  readonly options: SseOptions;
  readonly notifications: NotificationLog;
  readonly tickets: TicketStore;
  private readonly streams = new Set<SseStream>();
  private readonly perAccount = new Map<string, number>();
  private readonly perIp = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private readonly ticks = new Set<(nowMs: number) => void>();

  constructor(private readonly deps: SseDeps, options: Partial<SseOptions> = {}) {
    this.options = { ...DEFAULT_SSE_OPTIONS, ...options };
    this.notifications = new NotificationLog(deps.epoch, deps.registry, deps.events);
    this.tickets = new TicketStore(() => deps.clock.nowMs());
  }

  /** Open streams. */
  get size(): number {
    return this.streams.size;
  }

  register(app: FastifyInstance): void {
    for (const prefix of [API_PREFIX, '']) {
      app.get(`${prefix}/events/stats`, (req, reply) => this.openStats(req, reply));
      app.get(`${prefix}/events/notifications`, (req, reply) => this.openNotifications(req, reply));
      app.post(`${prefix}/events/tickets`, async (req, reply) => {
        const acct = requireAuth(req, 'read');
        rejectUnknownParams(req.query as Record<string, unknown>, []);
        const claims = req.auth.kind === 'ok' ? req.auth.claims : null;
        if (!claims) throw new ApiError('invalid_token', 'a bearer token is required');
        return sendData(req, reply, this.tickets.issue(acct.user_id, claims.jti, claims.exp * 1000));
      });
    }
    app.addHook('onListen', async () => this.start());
    app.addHook('preClose', async () => this.close());
  }

  private start(): void {
    if (this.timer) return;
    let last = 0;
    const every = Math.min(this.options.heartbeatMs, this.options.statsPollMs, 1_000);
    this.timer = setInterval(() => {
      const now = this.deps.clock.nowMs();
      for (const f of this.ticks) f(now);
      if (Date.now() - last >= this.options.heartbeatMs) {
        last = Date.now();
        const text = `heartbeat ${new Date(now).toISOString()}`;
        for (const s of this.streams) s.comment(text);
      }
    }, every);
    this.timer.unref();
  }

  /** Ends every stream (gateway stop). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const s of [...this.streams]) s.close();
    this.notifications.close();
  }

  /** Hijacks the reply into an event stream with the headers onRequest already set. */
  private openStream(reply: FastifyReply, release: () => void): SseStream {
    reply.hijack();
    const headers: Record<string, string | number | string[]> = {};
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = v as string | number | string[];
    const s = new SseStream(reply.raw, headers, this.options.retryMs);
    this.streams.add(s);
    s.whenClosed(() => {
      this.streams.delete(s);
      release();
    });
    return s;
  }

  private async openStats(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    rejectUnknownParams(req.query as Record<string, unknown>, ['last_event_id']);
    const stats = this.deps.stats;
    if (!stats) throw new ApiError('internal_error', 'statistics are not available on this gateway');
    const ip = req.ip;
    if ((this.perIp.get(ip) ?? 0) >= this.options.maxStatsStreamsPerIp) throw new ApiError('rate_limited', `at most ${this.options.maxStatsStreamsPerIp} statistics streams per client`);
    if (this.streams.size >= this.options.maxStreams) throw new ApiError('rate_limited', 'the gateway serves its maximum number of event streams; retry later');
    const first = stats.overview({}); // before hijacking: a failure is still an ordinary error reply
    this.perIp.set(ip, (this.perIp.get(ip) ?? 0) + 1);
    const s = this.openStream(reply, () => dec(this.perIp, ip));
    let asOf = '';
    const send = (o: Record<string, unknown>) => {
      const id = String(o.as_of);
      if (id !== asOf) s.event('overview', id, o);
      asOf = id;
    };
    asOf = lastEventId(req) ?? '';
    send(first);
    let lastPoll = this.deps.clock.nowMs();
    const tick = (now: number) => {
      if (now - lastPoll < this.options.statsPollMs) return;
      lastPoll = now;
      try {
        send(stats.overview({}));
      } catch (e) {
        this.deps.log.warn({ err: String(e) }, 'statistics stream: overview failed');
      }
    };
    this.ticks.add(tick);
    s.whenClosed(() => this.ticks.delete(tick));
  }

  private async openNotifications(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const grant = this.authorize(req);
    rejectUnknownParams(req.query as Record<string, unknown>, ['ticket', 'last_event_id']);
    const userId = grant.userId;
    if ((this.perAccount.get(userId) ?? 0) >= this.options.maxStreamsPerAccount) {
      throw new ApiError('rate_limited', `at most ${this.options.maxStreamsPerAccount} notification streams per account`);
    }
    if (this.streams.size >= this.options.maxStreams) throw new ApiError('rate_limited', 'the gateway serves its maximum number of event streams; retry later');
    const resumeFrom = lastEventId(req);
    this.perAccount.set(userId, (this.perAccount.get(userId) ?? 0) + 1);
    const s = this.openStream(reply, () => dec(this.perAccount, userId));
    const send = (n: Notification) => s.event(n.event, n.id, n.data);
    // Replay first, then live: both run in this one synchronous step, so nothing falls between.
    if (resumeFrom !== null) {
      const missed = this.notifications.since(userId, resumeFrom);
      if (missed === null) s.event('reset', this.notifications.currentId, { reason: 'the events after your Last-Event-ID are not available (another gateway run, or too old); reload state over REST' });
      else for (const n of missed) send(n);
    }
    s.whenClosed(this.notifications.listen(userId, send));
    const tick = (now: number) => {
      if (now < grant.tokenExpMs && this.deps.db.revoked.get(grant.jti) === undefined) return;
      s.event('auth_expired', null, { reason: 'the token behind this stream expired or was revoked; reconnect with a new token or ticket and last_event_id' });
      s.close();
    };
    this.ticks.add(tick);
    s.whenClosed(() => this.ticks.delete(tick));
  }

  /** The account of a notifications request: a bearer header, or a ticket query parameter. */
  private authorize(req: FastifyRequest): Pick<Ticket, 'userId' | 'jti' | 'tokenExpMs'> {
    const q = req.query as Record<string, unknown>;
    if (req.auth.kind !== 'none' || q.ticket === undefined) {
      const acct = requireAuth(req, 'read');
      const claims = req.auth.kind === 'ok' ? req.auth.claims : null;
      return { userId: acct.user_id, jti: claims!.jti, tokenExpMs: claims!.exp * 1000 };
    }
    const t = typeof q.ticket === 'string' ? this.tickets.check(q.ticket) : null;
    if (!t) throw new ApiError('invalid_token', 'unknown or expired ticket; get one from POST /events/tickets with your bearer token');
    if (this.deps.db.revoked.get(t.jti) !== undefined) throw new ApiError('token_revoked', 'the token that issued this ticket has been revoked');
    return t;
  }
}

/** Last-Event-ID header, or the last_event_id query parameter (a new EventSource cannot set the header). */
function lastEventId(req: FastifyRequest): string | null {
  const h = req.headers['last-event-id'];
  if (typeof h === 'string' && h !== '') return h.slice(0, 64);
  const q = (req.query as Record<string, unknown>).last_event_id;
  return typeof q === 'string' && q !== '' ? q.slice(0, 64) : null;
}

function dec(m: Map<string, number>, k: string): void {
  const v = (m.get(k) ?? 1) - 1;
  if (v > 0) m.set(k, v);
  else m.delete(k);
}
