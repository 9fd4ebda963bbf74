// One client socket: parses and rate-limits frames, runs login / logout / session.setup / subscribe /
// unsubscribe / account.info / ping, decrypts trading ops in arrival order, and sends channel pushes
// (encrypted on orders and positions) with a seq that rises by exactly 1 per subscription, and the
// system_health pushes of its encrypted session.
//
// Ordering: frames are handled one after another (a login's token check is awaited before the next
// frame is looked at); a trading op is decrypted in its turn and then executes in the background, so
// a slow placement does not hold up the socket. Every frame to the client is sealed and written in one
// synchronous step, so the server's send counter goes out in wire order.
import type WebSocket from 'ws';
import {
  MAX_COUNTER,
  SessionError,
  acceptSessionSetup,
  decryptRequest,
  encryptPush,
  encryptResponse,
  formatSessionId,
  type ServerSessionCipher,
} from '@tenebra/session';
import type { Logger } from 'pino';
import { stringify } from '../json';
import type { AccountRec } from '../store/records';
import type { TokenClaims } from '../auth/tokens';
import type { Push, Subscriber } from './hub';
import {
  ANONYMOUS_LIMITS, CHANNELS, CLOSE, ENCRYPTED_CHANNELS, MIN_COUNTER_HEADROOM, OPS, PUBLIC_CHANNELS, REKEY_COUNTER_HEADROOM,
  SYSTEM_HEALTH_CHANNEL, wsTierLimits, WsError, errorFrame, eventFrame, responseFrame, type Channel, type Op,
} from './protocol';
import type { WsContext } from './server';

const MAX_ID_CHARS = 64;
/** frames waiting for their turn; the rate limit keeps this far lower in practice */
const MAX_QUEUED_FRAMES = 1024;
const TRADING_OPS: ReadonlySet<string> = new Set(['order.place', 'order.cancel', 'order.modify']);

interface Subscription {
  /** seq of the next push */
  seq: number;
  /** test/chaos hook: pushes to drop (their seq is consumed, so the client sees a gap) */
  drop: number;
}

interface Session {
  cipher: ServerSessionCipher;
  startedMs: number;
  /** when rekey_required was sent, or null */
  rekeyAskedMs: number | null;
  /** seq of the next system_health push (a series per session, starting with a snapshot at 1) */
  healthSeq: number;
  /** HealthMonitor version last pushed, and when (Date.now(): the rate limit is about real time) */
  healthVersion: number;
  healthSentAt: number;
}

interface Frame {
  id: string;
  op: string;
  args: Record<string, unknown>;
}

export class WsConnection implements Subscriber {
  userId: string | null = null;
  private acct: AccountRec | null = null;
  private claims: TokenClaims | null = null;
  private authWarned = false;
  /** cancel the account's live orders if this socket drops while logged in */
  cancelOnDisconnect = false;
  private session: Session | null = null;
  /** a session existed and the gateway retired it (trading ops get session_expired until setup) */
  private retired = false;
  /** the retired session's cipher: seals only the acks of ops that were already running */
  private retiredCipher: ServerSessionCipher | null = null;
  private setups = 0;
  readonly subs = new Map<Channel, Subscription>();
  /**
   * The instruments subscription the socket got on connect (spec: "snapshot on connect"), until the
   * client subscribes to the channel itself or unsubscribes. It does not keep a socket that never
   * logs in open; no instruments subscription counts against a budget.
   */
  private implicitInstruments = false;
  private tokens: number;
  private tokensAtMs: number;
  private floodWindowMs = 0;
  private floodCount = 0;
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;
  private inflight = 0;
  private closed = false;
  alive = true;
  readonly openedMs: number;

  constructor(
    readonly id: number,
    readonly ws: WebSocket,
    readonly ip: string,
    private readonly ctx: WsContext,
    private readonly log: Logger,
  ) {
    this.openedMs = ctx.clock.nowMs();
    this.tokens = ANONYMOUS_LIMITS.msgPerSec;
    this.tokensAtMs = Date.now();
  }

  /** Subscriptions that count against the budgets: instruments never does (every socket gets it on connect). */
  get countedSubscriptions(): number {
    return this.subs.size - (this.subs.has('instruments') ? 1 : 0);
  }

  /** Right after the socket opened: the instruments snapshot, unasked (spec: "snapshot on connect"). */
  greet(): void {
    if (this.closed || this.subs.has('instruments')) return;
    const sub: Subscription = { seq: 1, drop: 0 };
    this.subs.set('instruments', sub);
    this.implicitInstruments = true;
    this.snapshot('instruments', sub);
  }

  get loggedIn(): boolean {
    return this.acct !== null;
  }

  private get limits(): { msgPerSec: number; subscriptions: number } {
    return this.acct ? wsTierLimits(this.acct.tier) : ANONYMOUS_LIMITS;
  }

  // -----------------------------------------------------------------------------------------------
  // Frames in

  /** One client frame as received from ws. */
  onMessage(raw: Buffer, isBinary: boolean): void {
    if (this.closed) return;
    const allowed = this.takeToken(); // every frame counts, malformed ones too
    if (this.closed) return; // a flood closed the socket
    if (this.queued >= MAX_QUEUED_FRAMES) {
      this.close(CLOSE.policy, 'too many frames waiting');
      return;
    }
    // Every frame takes its turn, refusals too: a refused trading frame is still decrypted in its
    // place, so the session's receive counter advances in wire order.
    this.queued++;
    this.chain = this.chain
      .then(() => this.process(raw, isBinary, allowed))
      .catch((e: unknown) => this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'socket frame failed'))
      .finally(() => this.queued--);
  }

  private async process(raw: Buffer, isBinary: boolean, allowed: boolean): Promise<void> {
    if (this.closed) return;
    if (raw.length > this.ctx.options.maxFrameBytes) {
      return this.sendError(null, null, new WsError('payload_too_large', `frames are limited to ${this.ctx.options.maxFrameBytes} bytes; this one has ${raw.length}`));
    }
    let f: unknown;
    try {
      if (isBinary) throw new Error('binary frame');
      f = JSON.parse(raw.toString('utf8'));
    } catch {
      return this.sendError(null, null, new WsError('invalid_request', 'the frame is not a JSON text frame; send {id, op, args}'));
    }
    if (f === null || typeof f !== 'object' || Array.isArray(f)) {
      return this.sendError(null, null, new WsError('invalid_request', 'a frame must be a JSON object {id, op, args}'));
    }
    const o = f as Record<string, unknown>;
    const id = typeof o.id === 'string' ? o.id : null;
    const op = typeof o.op === 'string' ? o.op : null;
    if (!allowed) {
      if (op !== null && TRADING_OPS.has(op)) this.tryDecrypt(op, o.args);
      return this.sendError(id, op, new WsError('rate_limited', `at most ${this.limits.msgPerSec} frames per second on this socket; the frame was not executed`));
    }
    if (id === null || id.length === 0 || id.length > MAX_ID_CHARS) {
      return this.sendError(null, op, new WsError('invalid_request', `'id' must be a string of 1 to ${MAX_ID_CHARS} characters`));
    }
    if (op === null || !(OPS as readonly string[]).includes(op)) {
      return this.sendError(id, op, new WsError('invalid_request', `unknown op '${String(op).slice(0, 40)}'; ops are ${OPS.join(', ')}`));
    }
    const args = o.args === undefined || o.args === null ? {} : o.args;
    if (typeof args !== 'object' || Array.isArray(args)) {
      return this.sendError(id, op, new WsError('invalid_request', "'args' must be an object"));
    }
    const frame: Frame = { id, op, args: args as Record<string, unknown> };
    try {
      await this.handle(frame);
    } catch (e) {
      if (e instanceof WsError) return this.sendError(frame.id, frame.op, e);
      this.log.error({ err: e instanceof Error ? e.stack : String(e), op: frame.op }, 'socket frame failed');
      this.sendError(frame.id, frame.op, new WsError('internal_error', 'the gateway failed to handle the frame; it was logged'));
    }
  }

  /** Token bucket of the tier's msg/sec (capacity = one second's worth); a flood far beyond it closes the socket. */
  private takeToken(): boolean {
    const now = Date.now();
    const rate = this.limits.msgPerSec;
    this.tokens = Math.min(rate, this.tokens + ((now - this.tokensAtMs) / 1000) * rate);
    this.tokensAtMs = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    if (now - this.floodWindowMs >= 1000) {
      this.floodWindowMs = now;
      this.floodCount = 0;
    }
    if (++this.floodCount > rate * this.ctx.options.floodFactor) this.close(CLOSE.policy, 'message rate far above the tier limit');
    return false;
  }

  private async handle(f: Frame): Promise<void> {
    if (this.closed) return;
    switch (f.op as Op) {
      case 'login':
        return this.login(f);
      case 'logout':
        return this.logout(f);
      case 'ping':
        return this.send(responseFrame(f.id, 'pong', { time_ns: this.ctx.clock.nowNs() }));
      case 'pong':
        return; // the answer to a server ping; nothing to say back
      case 'session.setup':
        return this.setup(f);
      case 'subscribe':
        return this.subscribe(f);
      case 'unsubscribe':
        return this.unsubscribe(f);
      case 'account.info': {
        const acct = this.requireLogin('read');
        const data = await this.ctx.accountInfo(this.ctx.accounts.get(acct.user_id) ?? acct, this.claims!.scopes);
        return this.send(responseFrame(f.id, f.op, data));
      }
      case 'order.place':
      case 'order.cancel':
      case 'order.modify':
        return this.trade(f);
    }
  }

  private requireLogin(scope: 'read' | 'trade' | null): AccountRec {
    if (!this.acct || !this.claims) throw new WsError('invalid_token', "log in first: {op: 'login', args: {token}}");
    if (scope !== null && !this.claims.scopes.includes(scope)) {
      throw new WsError('insufficient_scope', `this needs the '${scope}' scope; the token has '${this.claims.scopes.join(' ')}'`);
    }
    return this.acct;
  }

  // -----------------------------------------------------------------------------------------------
  // login / logout

  private async login(f: Frame): Promise<void> {
    const { token, cancel_on_disconnect: cod } = f.args;
    if (typeof token !== 'string' || token.length === 0 || token.length > 4096) throw new WsError('invalid_request', "login needs args {token: '<ACCESS_TOKEN>'}");
    if (cod !== undefined && typeof cod !== 'boolean') throw new WsError('invalid_request', "'cancel_on_disconnect' must be a boolean");
    for (const k of Object.keys(f.args)) {
      if (k !== 'token' && k !== 'cancel_on_disconnect') throw new WsError('invalid_request', `unknown login argument '${k.slice(0, 40)}'`);
    }
    const check = await this.ctx.tokens.verify(token);
    if (this.closed) return;
    if (!check.ok) throw new WsError(check.error, check.detail);
    const acct = this.ctx.accounts.get(check.claims.userId);
    if (!acct) throw new WsError('invalid_token', 'the token belongs to no account');
    if (this.acct && this.acct.user_id !== acct.user_id) {
      throw new WsError('invalid_request', 'this socket is logged in to another account; log out or open another socket');
    }
    if (!this.acct) {
      const max = wsTierLimits(acct.tier).connections;
      if (this.ctx.server.loggedInCount(acct.user_id) >= max) {
        throw new WsError('limit_exceeded', `the ${acct.tier} tier allows ${max} logged-in sockets per account; close one first`);
      }
    }
    const first = this.acct === null;
    this.acct = acct;
    this.claims = check.claims;
    this.userId = acct.user_id;
    this.authWarned = false;
    if (cod !== undefined) this.cancelOnDisconnect = cod;
    if (first) this.ctx.hub.bind(acct.user_id, this);
    const nowS = Math.floor(this.ctx.clock.nowMs() / 1000);
    this.send(responseFrame(f.id, f.op, {
      user_uuid: acct.user_uuid, user_id: acct.user_id, tier: acct.tier, scope: check.claims.scopes.join(' '),
      expires_at: new Date(check.claims.exp * 1000).toISOString(), expires_in: Math.max(0, check.claims.exp - nowS),
      cancel_on_disconnect: this.cancelOnDisconnect, subscriptions: [...this.subs.keys()],
    }));
  }

  private logout(f: Frame): void {
    this.deauthenticate();
    this.send(responseFrame(f.id, f.op, {}));
  }

  /** Forgets the login: session, account channels, cancel-on-disconnect. Public subscriptions stay. */
  private deauthenticate(): void {
    if (this.acct) this.ctx.hub.unbind(this.acct.user_id, this);
    this.acct = null;
    this.claims = null;
    this.userId = null;
    this.session = null;
    this.retired = false;
    this.retiredCipher = null;
    this.cancelOnDisconnect = false;
    for (const ch of [...this.subs.keys()]) if (!PUBLIC_CHANNELS.has(ch)) this.subs.delete(ch);
  }

  // -----------------------------------------------------------------------------------------------
  // session.setup (also the rekey)

  private setup(f: Frame): void {
    const acct = this.requireLogin(null);
    const first = this.setups === 0;
    let accepted;
    try {
      accepted = acceptSessionSetup(f.args, acct.user_uuid, {
        fencingEpoch: this.ctx.server.fencingEpoch,
        ...(first && this.ctx.options.firstSessionSendCounter !== undefined ? { sendCounter: this.ctx.options.firstSessionSendCounter } : {}),
      });
    } catch (e) {
      if (e instanceof SessionError) throw new WsError(e.code === 'invalid_frame' ? 'invalid_request' : e.code, e.message.replace(/^[a-z_]+: /, ''));
      throw e;
    }
    this.setups++;
    // The answer is plain JSON; every frame after it uses the new key (the client switches on it).
    this.send(responseFrame(f.id, f.op, accepted.data));
    this.session = { cipher: accepted.cipher, startedMs: this.ctx.clock.nowMs(), rekeyAskedMs: null, healthSeq: 1, healthVersion: 0, healthSentAt: 0 };
    this.retired = false;
    this.retiredCipher = null;
    // The venue's state at once, so the client never has to guess it (docs/websocket.md, system_health).
    this.pushHealth(this.session, 'snapshot');
  }

  /** The live session, or the spec's error for its absence. */
  private liveSession(): Session {
    if (this.session) return this.session;
    if (this.retired) throw new WsError('session_expired', 'the gateway retired this session; rerun session.setup');
    throw new WsError('session_required', 'run session.setup after login before trading ops and encrypted channels');
  }

  // -----------------------------------------------------------------------------------------------
  // Channels

  private subscribe(f: Frame): void {
    const channel = this.channelArg(f);
    for (const k of Object.keys(f.args)) {
      if (k !== 'channel') throw new WsError('invalid_request', `unknown subscribe argument '${k.slice(0, 40)}'; subscribe takes {channel} only`);
    }
    if (!PUBLIC_CHANNELS.has(channel)) {
      this.requireLogin('read');
      if (ENCRYPTED_CHANNELS.has(channel)) this.liveSession();
    }
    // The connect-time instruments subscription becomes the client's own: a fresh snapshot, seq from 1.
    if (channel === 'instruments' && this.implicitInstruments) {
      this.subs.delete(channel);
      this.implicitInstruments = false;
    }
    if (this.subs.has(channel)) throw new WsError('invalid_request', `already subscribed to '${channel}'; unsubscribe first for a fresh snapshot`);
    const max = this.limits.subscriptions;
    const used = this.acct ? this.ctx.server.subscriptionCount(this.acct.user_id) : this.countedSubscriptions;
    if (channel !== 'instruments' && used >= max) throw new WsError('limit_exceeded', `${this.acct ? `the ${this.acct.tier} tier allows` : 'a socket that has not logged in may hold'} ${max} subscriptions`);
    // A statistics change not announced yet goes to the current subscribers first, so this snapshot
    // is not followed by an update holding the same overview.
    if (channel === 'transparency') this.ctx.hub.announceTransparency();
    const sub: Subscription = { seq: 1, drop: 0 };
    this.subs.set(channel, sub);
    this.send(responseFrame(f.id, f.op, { channel, seq_start: 1 }));
    this.snapshot(channel, sub);
  }

  private unsubscribe(f: Frame): void {
    const channel = this.channelArg(f);
    if (!this.subs.delete(channel)) throw new WsError('invalid_request', `not subscribed to '${channel}'`);
    if (channel === 'instruments') this.implicitInstruments = false;
    this.send(responseFrame(f.id, f.op, { channel }));
  }

  private channelArg(f: Frame): Channel {
    const ch = f.args.channel;
    if (ch === SYSTEM_HEALTH_CHANNEL) {
      throw new WsError('invalid_request', `'${SYSTEM_HEALTH_CHANNEL}' is not subscribed: every encrypted session gets it after session.setup`);
    }
    if (typeof ch !== 'string' || !(CHANNELS as readonly string[]).includes(ch)) {
      throw new WsError('invalid_request', `args.channel must be one of ${CHANNELS.join(', ')}`);
    }
    return ch as Channel;
  }

  /** Sends the whole snapshot now, synchronously: events committed later arrive as later updates. */
  private snapshot(channel: Channel, sub: Subscription): void {
    const hub = this.ctx.hub;
    const uid = this.acct?.user_id ?? '';
    let items: Push[];
    switch (channel) {
      case 'orders':
        items = hub.orderSnapshot(uid).map((update) => ({ kind: 'order', update }));
        break;
      case 'positions':
        items = hub.positionSnapshot(uid).map((update) => ({ kind: 'position', update }));
        break;
      case 'margin_alerts':
        items = hub.alertSnapshot(uid).map((data) => ({ kind: 'plain', data }));
        break;
      case 'instruments':
        items = hub.instrumentSnapshot().map((data) => ({ kind: 'plain', data }));
        break;
      case 'transparency':
        items = [{ kind: 'plain', data: hub.transparencySnapshot() }];
        break;
    }
    // Nothing to show is still one frame, and its data still an object (spec: push data is an
    // object): {} in plain JSON on every channel. It says only what the lone frame already says, so
    // the encrypted channels lose nothing by it, and a client needs no special case for null.
    if (items.length === 0) items = [{ kind: 'plain', data: {} }];
    items.forEach((p, i) => this.push(channel, sub, 'snapshot', i === items.length - 1, p));
  }

  /** Hub entry: an update for channel, if subscribed. */
  deliver(channel: Channel, p: Push): void {
    const sub = this.subs.get(channel);
    if (sub && !this.closed) this.push(channel, sub, 'update', false, p);
  }

  subscribed(channel: Channel): boolean {
    return this.subs.has(channel);
  }

  /** Hub entry: a server event frame (margin alerts of a socket not subscribed to their channel). */
  notify(event: string, data: Record<string, unknown>): void {
    if (!this.closed) this.send(eventFrame(event, data));
  }

  /** Test/chaos hook: the next n pushes of channel are lost (their seq numbers are consumed). */
  dropNext(channel: Channel, n: number): void {
    const sub = this.subs.get(channel);
    if (sub) sub.drop += n;
  }

  private push(channel: Channel, sub: Subscription, type: 'snapshot' | 'update', complete: boolean, p: Push): void {
    const seq = sub.seq++;
    if (sub.drop > 0) {
      sub.drop--;
      return;
    }
    if (type === 'update' && this.ws.bufferedAmount > this.ctx.options.softBufferBytes) {
      // A slow reader loses updates, not the socket: the seq gap makes it resubscribe for a snapshot.
      this.log.warn({ conn: this.id, channel, seq, buffered: this.ws.bufferedAmount }, 'slow socket: update dropped');
      return;
    }
    if (p.kind === 'plain') {
      this.send({ channel, type, seq, snapshot_complete: complete, data: p.data });
      return;
    }
    const s = this.session;
    if (!s || s.cipher.sendCounter > MAX_COUNTER - MIN_COUNTER_HEADROOM) {
      // No key to seal with (retired or exhausted): the push is lost and the seq gap reports it.
      if (s) this.askRekey(s, 'send counter exhausted');
      return;
    }
    const msg = p.kind === 'order' ? { order_update: p.update } : { position_update: p.update };
    this.send(encryptPush(s.cipher, channel, type, seq, complete, msg));
  }

  // -----------------------------------------------------------------------------------------------
  // system_health

  /**
   * Pushes the venue's health if it changed since this session's last push and that push is at least
   * healthMinIntervalMs old; otherwise a later offer (the sweep) sends the state current then, so a
   * flapping link costs a session at most one push per interval and the last state always arrives.
   */
  offerHealth(): void {
    const s = this.session;
    if (!s || this.closed || s.healthVersion === this.ctx.health.version) return;
    if (Date.now() - s.healthSentAt < this.ctx.options.healthMinIntervalMs) return;
    this.pushHealth(s, 'update');
  }

  /** Seals the current health into a system_health push; not sent (and offered again later) on a slow socket. */
  private pushHealth(s: Session, type: 'snapshot' | 'update'): void {
    if (s.cipher.sendCounter > MAX_COUNTER - MIN_COUNTER_HEADROOM) return this.askRekey(s, 'send counter exhausted');
    if (type === 'update' && this.ws.bufferedAmount > this.ctx.options.softBufferBytes) return;
    const health = this.ctx.health;
    s.healthVersion = health.version;
    s.healthSentAt = Date.now();
    this.send(encryptPush(s.cipher, SYSTEM_HEALTH_CHANNEL, type, s.healthSeq++, type === 'snapshot', { system_health: health.current }));
  }

  // -----------------------------------------------------------------------------------------------
  // Trading

  private trade(f: Frame): void {
    const s = this.liveSession();
    const acct = this.acct;
    if (!acct || !this.claims) throw new WsError('session_required', 'log in and run session.setup first');
    const header = (f.args.header ?? null) as Record<string, unknown> | null;
    const nonce = header && typeof header === 'object' ? header.nonce : undefined;
    if (typeof nonce === 'number' && Number.isInteger(nonce) && nonce > MAX_COUNTER) {
      throw new WsError('nonce_overflow', `header.nonce ${nonce} exceeds 2^32-1; the client's send counter is exhausted: rerun session.setup`);
    }
    if (s.cipher.sendCounter > MAX_COUNTER - MIN_COUNTER_HEADROOM) {
      this.askRekey(s, 'send counter exhausted');
      throw new WsError('nonce_overflow', "the gateway's send counter for this session is exhausted; the op was not executed: rerun session.setup");
    }
    let decrypted;
    try {
      decrypted = decryptRequest(s.cipher, { op: f.op, args: f.args });
    } catch (e) {
      if (e instanceof SessionError) throw new WsError(e.code === 'invalid_frame' ? 'invalid_request' : e.code, e.message.replace(/^[a-z_]+: /, ''));
      throw e;
    }
    const ctx = { acct: this.ctx.accounts.get(acct.user_id) ?? acct, scopes: this.claims.scopes, symbolId: decrypted.header.symbol_id };
    this.inflight++;
    void this.ctx.trading
      .execute(ctx, decrypted.request)
      .then((ack) => {
        if (this.closed) return;
        // Sealed with the key in force now (a rekey meanwhile means the new one, as the client expects);
        // if the session was retired and none replaced it yet, with the retired one the client still holds.
        const cipher = this.session?.cipher ?? this.retiredCipher;
        if (!cipher) return this.log.warn({ conn: this.id, op: f.op, code: ack.code }, 'ack lost: the socket logged out while the op ran');
        this.send(encryptResponse(cipher, f.id, f.op, { ack }));
      })
      .catch((e: unknown) => this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'sending an ack failed'))
      .finally(() => this.inflight--);
  }

  /** Decrypts a frame that will not run, only to keep the receive counter in step; errors are ignored. */
  private tryDecrypt(op: string, args: unknown): void {
    try {
      if (this.session) decryptRequest(this.session.cipher, { op, args });
    } catch {
      // the frame is refused anyway
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Timers (called by the server's sweep)

  /** Auth expiry warning and closing, revocation, login timeout, rekey schedule and session retirement. */
  sweep(nowMs: number): void {
    if (this.closed) return;
    const o = this.ctx.options;
    // the connect-time instruments subscription alone does not keep a socket that never logs in open
    if (!this.acct && this.subs.size - (this.implicitInstruments ? 1 : 0) === 0 && nowMs - this.openedMs >= o.loginTimeoutMs) {
      this.close(CLOSE.loginTimeout, 'no login');
      return;
    }
    if (this.claims) {
      const expMs = this.claims.exp * 1000;
      if (nowMs >= expMs) return this.close(CLOSE.tokenExpired, 'token_expired');
      if (this.ctx.db.revoked.get(this.claims.jti) !== undefined) return this.close(CLOSE.tokenRevoked, 'token_revoked');
      if (!this.authWarned && nowMs >= expMs - o.authWarningMs) {
        this.authWarned = true;
        this.send(eventFrame('auth_expired', { expires_at: new Date(expMs).toISOString(), expires_in: Math.max(0, Math.floor((expMs - nowMs) / 1000)) }));
      }
    }
    const s = this.session;
    if (s) {
      const limit = MAX_COUNTER - REKEY_COUNTER_HEADROOM;
      if (s.rekeyAskedMs === null) {
        if (nowMs - s.startedMs >= o.rekeyAfterMs) this.askRekey(s, 'scheduled rotation');
        else if (s.cipher.sendCounter > limit || s.cipher.recvCounter > limit) this.askRekey(s, 'nonce counters near their limit');
      } else if (nowMs - s.rekeyAskedMs >= o.rekeyGraceMs) {
        this.retire('not set up again after rekey_required');
      }
    }
    this.offerHealth();
  }

  private askRekey(s: Session, reason: string): void {
    if (s.rekeyAskedMs !== null) return;
    s.rekeyAskedMs = this.ctx.clock.nowMs();
    this.send(eventFrame('rekey_required', { session_id: formatSessionId(s.cipher.sessionId), reason, retire_in_ms: this.ctx.options.rekeyGraceMs }));
  }

  /**
   * Ends the live session (session_expired event): trading ops and encrypted pushes stop until the
   * client runs session.setup again; acks of ops already running are still sealed for it.
   */
  retire(reason: string): void {
    const s = this.session;
    if (!s) return;
    this.session = null;
    this.retired = true;
    this.retiredCipher = s.cipher;
    this.send(eventFrame('session_expired', { session_id: formatSessionId(s.cipher.sessionId), reason }));
  }

  // -----------------------------------------------------------------------------------------------
  // Frames out

  send(frame: unknown): void {
    if (this.closed || this.ws.readyState !== 1) return;
    if (this.ws.bufferedAmount > this.ctx.options.hardBufferBytes) {
      this.close(CLOSE.tryAgainLater, 'socket not reading');
      return;
    }
    this.ws.send(stringify(frame));
  }

  private sendError(id: string | null, op: string | null, e: WsError): void {
    this.send(errorFrame(id, op, e));
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.ws.close(code, reason);
    this.markClosed();
    // A peer that does not answer the close handshake is cut off.
    setTimeout(() => this.ws.terminate(), 2_000).unref();
  }

  /** The socket is gone: no more frames either way. Returns the account and cancel-on-disconnect flag. */
  markClosed(): { acct: AccountRec | null; cancel: boolean } {
    const out = { acct: this.acct, cancel: this.cancelOnDisconnect && this.acct !== null };
    if (!this.closed) {
      this.closed = true;
      if (this.acct) this.ctx.hub.unbind(this.acct.user_id, this);
      this.ctx.hub.leave(this);
    }
    return out;
  }
}
