// The WebSocket client: one socket at {ws_url} that logs in, sets up the encrypted session, sends
// encrypted order.place / order.cancel / order.modify, keeps channel subscriptions consistent
// (snapshot buffering, seq gap → unsubscribe + subscribe), re-logs in on auth_expired, rekeys on
// rekey_required, answers and sends heartbeats, and reconnects with backoff, resubscribing.
//
// Ordering rule: every encrypted frame is decrypted synchronously in the message handler, in wire
// order, with the cipher in force at that moment. A session.setup response installs the new cipher
// in the same handler, so frames before it open with the old key and frames after it with the new.
// Encrypted ops are sealed and sent in one synchronous step, so counters go out in order.
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import {
  completeSessionSetup,
  createSetupRequest,
  decryptPush,
  decryptResponse,
  encryptRequest,
  isEncryptedBody,
  isSessionError,
  parseUserUuid,
  toHex,
  type Ack,
  type CancelOrder,
  type ClientSessionCipher,
  type EdgeSequencerRequest,
  type ModifyOrder,
  type PlaceOrder,
  type SystemHealth,
} from '@tenebra/session';
import { ChannelTracker, type PushMeta } from './channel';
import { toDecimal, type DecimalInput } from './decimal';
import { ConnectionClosedError, RequestTimeoutError, SocketRequestError, StaleOrderError } from './errors';
import { OrderBook } from './reconcile';
import { DEFAULT_PLACEMENT_MAX_AGE_MS } from './rest';
import { parseJson } from './json';
import { orderEventFromUpdate, toOrder, toPosition } from './normalize';
import { newClientOrderId, type TenebraRestClient } from './rest';
import { jittered, TIER_LIMITS, TokenBucket } from './pacing';
import type { Channel, Fill, Order, SocketAck, TierName, JsonObject, OrderEvent, PlaceOrderRequest, Position, TimeInForce } from './types';

export const DEFAULT_WS_URL = 'ws://127.0.0.1:8080/ws/v1';

/** A token, or a function giving one valid for at least minValidityMs (a new one when forceRefresh). */
export type TokenSource = string | ((opts: { minValidityMs: number; forceRefresh: boolean }) => Promise<string>);

export interface SocketOptions {
  /** WebSocket root including /ws/v1 (default ws://127.0.0.1:8080/ws/v1). */
  url?: string;
  /** Where login tokens come from; defaults to `rest.accessToken`. */
  token?: TokenSource;
  /** REST client: token source and symbol_id lookup (GET /instruments) when not given otherwise. */
  rest?: TenebraRestClient;
  /** symbol → symbol_id for the encrypted header; defaults to `rest.symbolId`. */
  resolveSymbolId?: (symbol: string) => number | Promise<number>;
  /** Per-request timeout (default 10 s). */
  requestTimeoutMs?: number;
  /**
   * Reconnect with exponential backoff and jitter (default on: 100 ms doubling to 1 s, no attempt
   * limit). The short cap is deliberate: a reconnect that waits seconds after the gateway is back
   * costs more than one refused connection a second.
   */
  reconnect?: false | { initialDelayMs?: number; maxDelayMs?: number; maxAttempts?: number };
  /** App-level ping every intervalMs; no answer within timeoutMs drops the socket (default 15 s / 10 s). */
  heartbeat?: false | { intervalMs?: number; timeoutMs?: number };
  /** Bound on snapshot items + buffered updates per channel (default 10,000). */
  maxBufferedUpdates?: number;
  /** Bound on requests in flight (default 1,000). */
  maxPendingRequests?: number;
  /** Passed to the `ws` constructor. */
  wsOptions?: WebSocket.ClientOptions;
  /**
   * Ask the gateway to cancel every live order of the account when this socket drops without a
   * logout (login arg `cancel_on_disconnect`; cancel_reason CANCEL_ON_DISCONNECT). Default false.
   * `close()` logs out first, so a deliberate close keeps the orders.
   */
  cancelOnDisconnect?: boolean;
  /**
   * Open the socket without a login: only the public channels (`instruments`, `transparency`) can be
   * subscribed; trading, account.info and system_health need a login and refuse. Default false.
   */
  anonymous?: boolean;
  /**
   * Maximum age of a placement (order.place), default 500 ms: one queued during a reconnect, a
   * rekey or a frame-budget backoff is not sent later than this after the call; StaleOrderError
   * instead. Per call: `placeOrder(input, {maxAgeMs})`.
   */
  placementMaxAgeMs?: number;
  /**
   * The account's tier: frames are paced client-side at the tier table's WebSocket messages per
   * second (a token bucket, its capacity one second's worth), instead of being refused with
   * rate_limited and resent. Absent: no client-side pacing.
   */
  tier?: TierName;
  /**
   * After every reconnect, read each order this client knew as live (GET /orders/{id}) and the
   * account's fills since the last event seen (GET /fills), and emit what it missed as `order`
   * events (`recovered: true`) and `fill` events; `reconciled` when done. Needs `rest`. Default true.
   */
  reconcile?: boolean;
}

/** order.place input: the same fields as POST /orders (decimals as strings, numbers or bigints; client_order_id generated when absent). */
export type SocketPlaceOrder = PlaceOrderRequest;

/** order.cancel input: one of order_id / client_order_id; symbol fills the header's symbol_id (else 0). */
export interface SocketCancelOrder {
  order_id?: string;
  client_order_id?: string;
  symbol?: string;
}

/** order.modify input. */
export interface SocketModifyOrder extends SocketCancelOrder {
  price?: DecimalInput;
  quantity?: DecimalInput;
  time_in_force?: TimeInForce;
  expiry_time?: bigint | string | number;
}

export type SocketState = 'idle' | 'connecting' | 'ready' | 'reconnecting' | 'closed';

export interface SocketEvents {
  /** Logged in with an encrypted session (or, `anonymous`, just open); after connect() and after every reconnect. */
  ready: [{ userUuid: string; sessionId: string; reconnect: boolean }];
  /** An orders-channel update (every message_type), after its snapshot; after a reconnect also each change missed meanwhile (meta.recovered). */
  order: [OrderEvent, PushMeta];
  /** A fill found by the reconciliation after a reconnect (GET /fills), each fill_id once. */
  fill: [Fill];
  /** The reconciliation after a reconnect is done: how many missed order changes and fills it reported. */
  reconciled: [{ orders: number; fills: number }];
  /** A positions-channel update, after its snapshot. */
  position: [Position, PushMeta];
  /** The complete snapshot of a channel (also after every resubscribe). */
  snapshot: [{ channel: string; items: unknown[] }];
  ordersSnapshot: [OrderEvent[]];
  positionsSnapshot: [Position[]];
  /** Every update of every channel, public ones included. */
  update: [{ channel: string; seq: number; data: unknown }];
  /**
   * The venue's health (docs/websocket.md, system_health): once after every session.setup (connect,
   * rekey, reconnect), then on every change. Each message is the whole state; `health` keeps the last.
   */
  systemHealth: [SystemHealth];
  /** The public platform overview (GET /stats/platform/overview): the snapshot, then each update. */
  transparency: [JsonObject];
  gap: [{ channel: string; expected: number; received: number }];
  resubscribed: [{ channel: string; reason: string }];
  authExpired: [unknown];
  reauthenticated: [];
  rekeyed: [{ sessionId: string; reason: string }];
  reconnecting: [{ attempt: number; delayMs: number; error?: Error }];
  disconnected: [{ code: number; reason: string }];
  /** A server frame that is none of the above (e.g. margin alerts). */
  serverEvent: [{ name: string; frame: JsonObject }];
  error: [Error];
}

/** Session-level refusals after which a rekey and one resend is safe (the op did not execute). */
const RESEND_AFTER_REKEY = new Set(['rekey_required', 'session_expired', 'session_required', 'nonce_out_of_order', 'decrypt_failed', 'nonce_overflow']);
const LOGIN_MIN_VALIDITY_MS = 120_000;
/** Resends of a frame refused with `rate_limited` (250 ms, 500 ms, 1 s apart). */
const MAX_THROTTLED_RETRIES = 3;
const LATE_LIMIT = 256;

interface Pending {
  op: string;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  /** Runs synchronously in the message handler (decryption, cipher installation). */
  transform: ((data: unknown) => unknown) | undefined;
  trading: boolean;
}

type Waiter = { resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

export class TenebraSocket extends EventEmitter {
  readonly url: string;
  readonly #o: SocketOptions;
  readonly #timeoutMs: number;
  #ws: WebSocket | undefined;
  #state: SocketState = 'idle';
  #closing = false;
  #ids = 0;
  #pending = new Map<string, Pending>();
  /** Ids that timed out: a late response is still decrypted (its counter consumed) and dropped. */
  #late = new Map<string, Pending['transform']>();
  #waiters = new Set<Waiter>();
  #cipher: ClientSessionCipher | undefined;
  #userUuid: string | undefined;
  #loginToken: string | undefined;
  #rekeying: Promise<void> | undefined;
  #relogging: Promise<void> | undefined;
  #wanted = new Set<string>();
  #channels = new Map<string, ChannelTracker<unknown>>();
  #heartbeat: NodeJS.Timeout | undefined;
  #health: SystemHealth | undefined;
  readonly #book = new OrderBook();
  readonly #frames: TokenBucket | undefined;
  /** fills are looked for from here when no order event was seen yet (first connect, ns) */
  #firstReadyNs: bigint | undefined;

  constructor(options: SocketOptions = {}) {
    super();
    this.#o = options;
    this.url = options.url ?? DEFAULT_WS_URL;
    this.#timeoutMs = options.requestTimeoutMs ?? 10_000;
    if (options.tier) {
      const rate = TIER_LIMITS[options.tier].wsFramesPerSecond;
      this.#frames = new TokenBucket(rate, rate / 1000, Date.now);
    }
  }

  /** Waits for a frame token of the tier's budget (no-op without `tier`); the token is taken at once. */
  async #pace(): Promise<void> {
    const b = this.#frames;
    if (!b) return;
    const wait = b.waitMs();
    b.take(); // taken now, so concurrent senders queue behind each other
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }

  override on<K extends keyof SocketEvents>(event: K, listener: (...args: SocketEvents[K]) => void): this {
    return super.on(event, listener as (...args: unknown[]) => void);
  }
  override once<K extends keyof SocketEvents>(event: K, listener: (...args: SocketEvents[K]) => void): this {
    return super.once(event, listener as (...args: unknown[]) => void);
  }
  override off<K extends keyof SocketEvents>(event: K, listener: (...args: SocketEvents[K]) => void): this {
    return super.off(event, listener as (...args: unknown[]) => void);
  }
  override emit<K extends keyof SocketEvents>(event: K, ...args: SocketEvents[K]): boolean {
    return super.emit(event, ...args);
  }

  get state(): SocketState {
    return this.#state;
  }
  /** The login-bound account (32 hex characters). */
  get userUuid(): string | undefined {
    return this.#userUuid;
  }
  /** The current encrypted session id (decimal string). */
  get sessionId(): string | undefined {
    return this.#cipher?.sessionId.toString();
  }
  /** The venue's health as last pushed on this client's session (undefined before the first push). */
  get health(): SystemHealth | undefined {
    return this.#health;
  }
  /** Channels this client keeps subscribed (across reconnects). */
  get subscriptions(): string[] {
    return [...this.#wanted];
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle

  /** Opens the socket, logs in and sets up the encrypted session; rejects if any step fails. */
  async connect(): Promise<void> {
    if (this.#state !== 'idle' && this.#state !== 'closed') throw new Error(`connect() while ${this.#state}`);
    this.#closing = false;
    try {
      await this.#establish(false);
    } catch (e) {
      this.#ws?.terminate();
      this.#state = 'closed';
      this.#rejectWaiters(e as Error);
      throw e;
    }
  }

  /** Logs out (best effort), closes the socket and stops reconnecting. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#stopHeartbeat();
    const ws = this.#ws;
    if (ws && ws.readyState === WebSocket.OPEN && this.#state === 'ready' && !this.#o.anonymous) {
      await this.#request('logout', {}, 1000).catch(() => undefined);
    }
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          ws.terminate();
          resolve();
        }, 1000);
        ws.once('close', () => {
          clearTimeout(t);
          resolve();
        });
        ws.close(1000, 'client close');
      });
    }
    this.#state = 'closed';
    this.#rejectWaiters(new Error('socket closed by the client'));
  }

  async #establish(reconnect: boolean): Promise<void> {
    this.#state = 'connecting';
    this.#cipher = undefined;
    await this.#open();
    if (!this.#o.anonymous) {
      await this.#login();
      await this.#setupSession();
    }
    this.#state = 'ready';
    this.#startHeartbeat();
    this.emit('ready', { userUuid: this.#userUuid ?? '', sessionId: this.sessionId ?? '', reconnect });
    // A refused subscription is reported, not fatal: the session itself is up.
    await Promise.all(
      [...this.#wanted].map((ch) =>
        this.#subscribeChannel(ch).catch((e: Error) => {
          if (e instanceof ConnectionClosedError) throw e;
          if (refusedChannel(e)) this.#wanted.delete(ch);
          this.#emitError(new Error(`resubscribe to '${ch}' failed: ${e.message}`));
        }),
      ),
    );
    this.#flushWaiters();
    this.#firstReadyNs ??= BigInt(Date.now()) * 1_000_000n;
    if (reconnect && this.#o.rest && this.#o.reconcile !== false && !this.#o.anonymous) {
      void this.#reconcile(this.#o.rest).catch((e: Error) => this.#emitError(new Error(`reconciliation after reconnect failed: ${e.message}`)));
    }
  }

  /** Reports what happened to the orders this client knew as live while it was disconnected. */
  async #reconcile(rest: TenebraRestClient): Promise<void> {
    let orders = 0;
    let fills = 0;
    const since = this.#book.resumeNs ?? this.#firstReadyNs!;
    // Two listings cover every order that was live: still open, or finished since the last event seen
    // (a page of 500; an order in neither is read by id).
    const ids = this.#book.liveIds;
    const byId = new Map<string, Order>();
    if (ids.length > 2) {
      for (const o of await rest.openOrders()) byId.set(o.order_id, o);
      for (const o of await rest.closedOrders({ since_ns: since, limit: 500 })) byId.set(o.order_id, o);
    }
    for (const id of ids) {
      const o = byId.get(id) ?? (await rest.getOrder(id));
      const missed = this.#book.recover(o);
      if (missed) {
        orders++;
        this.emit('order', missed, { channel: 'orders', seq: 0, recovered: true });
      }
    }
    // newest first: emit oldest first, each fill id once (GET /fills is inclusive of since_ns)
    for (const f of (await rest.fills({ since_ns: since, limit: 500 })).reverse()) {
      if (!this.#book.newFill(f)) continue;
      fills++;
      this.emit('fill', f);
    }
    this.emit('reconciled', { orders, fills });
  }

  #open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url, this.#o.wsOptions);
      this.#ws = ws;
      const failed = (e: Error) => reject(e);
      ws.once('error', failed);
      ws.once('open', () => {
        ws.off('error', failed);
        // After open, errors are followed by 'close', which drives reconnection.
        ws.on('error', (e) => this.#emitError(e));
        resolve();
      });
      ws.on('message', (data) => this.#onMessage(ws, data));
      ws.on('close', (code, reason) => this.#onClose(ws, code, reason.toString()));
    });
  }

  #onClose(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.#ws) return;
    this.#ws = undefined;
    this.#cipher = undefined;
    this.#stopHeartbeat();
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      p.reject(new ConnectionClosedError(p.op, p.trading));
      this.#pending.delete(id);
    }
    this.#late.clear();
    for (const t of this.#channels.values()) t.reset();
    this.emit('disconnected', { code, reason });
    const wasReady = this.#state === 'ready';
    if (this.#closing) {
      this.#state = 'closed';
      this.#rejectWaiters(new Error('socket closed by the client'));
    } else if (wasReady) {
      void this.#reconnectLoop();
    }
  }

  async #reconnectLoop(): Promise<void> {
    const cfg = this.#o.reconnect;
    if (cfg === false) {
      this.#state = 'closed';
      this.#rejectWaiters(new Error('socket closed and reconnect is off'));
      return;
    }
    this.#state = 'reconnecting';
    const initial = cfg?.initialDelayMs ?? 100;
    const max = cfg?.maxDelayMs ?? 1000;
    const maxAttempts = cfg?.maxAttempts ?? Number.POSITIVE_INFINITY;
    let delay = initial;
    let lastError: Error | undefined;
    for (let attempt = 1; !this.#closing; attempt++) {
      if (attempt > maxAttempts) {
        this.#state = 'closed';
        const e = new Error(`gave up reconnecting after ${maxAttempts} attempts${lastError ? `: ${lastError.message}` : ''}`);
        this.#rejectWaiters(e);
        this.#emitError(e);
        return;
      }
      const wait = Math.round(delay * (0.8 + Math.random() * 0.4));
      this.emit('reconnecting', { attempt, delayMs: wait, ...(lastError ? { error: lastError } : {}) });
      await new Promise((r) => setTimeout(r, wait));
      if (this.#closing) return;
      try {
        await this.#establish(true);
        return;
      } catch (e) {
        lastError = e as Error;
        const ws = this.#ws;
        this.#ws = undefined;
        ws?.terminate();
        this.#state = 'reconnecting';
        delay = Math.min(delay * 2, max);
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Login and session

  async #token(minValidityMs: number, forceRefresh: boolean): Promise<string> {
    const t = this.#o.token;
    if (typeof t === 'string') return t;
    if (typeof t === 'function') return t({ minValidityMs, forceRefresh });
    if (this.#o.rest) return this.#o.rest.accessToken({ minValidityMs, forceRefresh });
    throw new Error('no token source: pass {token} or {rest}');
  }

  /** Logs in; `fresh` demands a token other than the one the socket logged in with (auth_expired). */
  async #login(fresh = false): Promise<void> {
    let token = await this.#token(LOGIN_MIN_VALIDITY_MS, false);
    if (fresh && token === this.#loginToken) {
      token = await this.#token(LOGIN_MIN_VALIDITY_MS, true);
      if (token === this.#loginToken) throw new Error('auth_expired but the token source has no newer token (a fixed token string cannot be refreshed)');
    }
    const data = (await this.#request('login', { token, ...(this.#o.cancelOnDisconnect ? { cancel_on_disconnect: true } : {}) })) as JsonObject | undefined;
    this.#loginToken = token;
    const uuid = toHex(parseUserUuid(String(data?.['user_uuid'] ?? '')));
    if (this.#userUuid !== undefined && this.#userUuid !== uuid) {
      throw new Error(`login answered for account ${uuid}, this socket belongs to ${this.#userUuid}`);
    }
    this.#userUuid = uuid;
  }

  /** Runs session.setup with a fresh key; the new cipher is installed when its response is handled. */
  async #setupSession(): Promise<void> {
    const id = this.#nextId();
    const { keyPair, frame } = createSetupRequest(id);
    this.#frames?.take(); // a frame of the budget too (not waited for: nothing else may go out before it)
    await this.#send(frame, 'session.setup', {
      transform: (data) => {
        this.#cipher = completeSessionSetup(keyPair, data, this.#userUuid as string);
        return undefined;
      },
    });
  }

  /**
   * Reruns session.setup on the same socket (fresh key pair, counters from 0); encrypted ops wait
   * meanwhile. Login and subscriptions stay. Concurrent calls share one rekey.
   */
  rekey(reason = 'client'): Promise<void> {
    if (this.#state !== 'ready' || this.#o.anonymous) return Promise.resolve();
    this.#rekeying ??= (async () => {
      await this.#setupSession();
      this.emit('rekeyed', { sessionId: this.sessionId as string, reason });
    })().finally(() => {
      this.#rekeying = undefined;
      this.#flushWaiters();
    });
    return this.#rekeying;
  }

  /** Logs in again on this socket with a fresh token (after auth_expired); subscriptions stay. */
  relogin(): Promise<void> {
    this.#relogging ??= (async () => {
      await this.#login(true);
      this.emit('reauthenticated');
    })().finally(() => (this.#relogging = undefined));
    return this.#relogging;
  }

  // ------------------------------------------------------------------------------------------
  // Trading

  /** Encrypted order.place; resolves with the decrypted ack (check ack.code / ack.status). */
  async placeOrder(input: SocketPlaceOrder, opts: { maxAgeMs?: number } = {}): Promise<SocketAck> {
    const place: PlaceOrder = {
      symbol: input.symbol,
      side: input.side,
      type: input.type,
      quantity: toDecimal(input.quantity, 'quantity'),
      time_in_force: input.time_in_force,
      client_order_id: input.client_order_id ?? newClientOrderId(),
      ...(input.price === undefined ? {} : { price: toDecimal(input.price, 'price') }),
      ...(input.peg_reference === undefined ? {} : { peg_reference: input.peg_reference }),
      ...(input.expiry_time === undefined ? {} : { expiry_time: BigInt(input.expiry_time).toString() }),
      ...(input.aon === undefined ? {} : { aon: input.aon }),
      ...(input.min_fill_size === undefined ? {} : { min_fill_size: toDecimal(input.min_fill_size, 'min_fill_size') }),
      ...(input.leverage === undefined ? {} : { leverage: input.leverage }),
    };
    const maxAgeMs = opts.maxAgeMs ?? this.#o.placementMaxAgeMs ?? DEFAULT_PLACEMENT_MAX_AGE_MS;
    const ack = await this.#trade({ place }, input.symbol, false, 0, { at: Date.now(), maxAgeMs, clientOrderId: place.client_order_id });
    if (ack.code === 0 || ack.code === 1502) this.#book.placed(ack.order_id);
    return toSocketAck(ack);
  }

  /** Encrypted order.cancel by order_id or client_order_id. */
  async cancelOrder(input: SocketCancelOrder): Promise<SocketAck> {
    const cancel: CancelOrder = { ...target(input), ...(input.symbol ? { symbol: input.symbol } : {}) };
    return toSocketAck(await this.#trade({ cancel }, input.symbol));
  }

  /** Encrypted order.modify. */
  async modifyOrder(input: SocketModifyOrder): Promise<SocketAck> {
    const modify: ModifyOrder = {
      ...target(input),
      ...(input.symbol ? { symbol: input.symbol } : {}),
      ...(input.price === undefined ? {} : { price: toDecimal(input.price, 'price') }),
      ...(input.quantity === undefined ? {} : { quantity: toDecimal(input.quantity, 'quantity') }),
      ...(input.time_in_force === undefined ? {} : { time_in_force: input.time_in_force }),
      ...(input.expiry_time === undefined ? {} : { expiry_time: BigInt(input.expiry_time).toString() }),
    };
    return toSocketAck(await this.#trade({ modify }, input.symbol));
  }

  async #trade(request: EdgeSequencerRequest, symbol: string | undefined, resent = false, throttled = 0, age?: { at: number; maxAgeMs: number; clientOrderId: string | undefined }, sentBefore = false): Promise<Ack> {
    this.#requireLogin('trading');
    const symbolId = symbol === undefined ? 0 : await this.#symbolId(symbol);
    const stale = (cause?: unknown) => new StaleOrderError(Object.keys(request)[0] === 'place' ? 'order.place' : 'order', age?.clientOrderId, age!.maxAgeMs, Date.now() - age!.at, sentBefore, cause);
    for (;;) {
      // a placement waits for the session (reconnect, rekey) only as long as its maximum age allows
      const left = age ? age.at + age.maxAgeMs - Date.now() : undefined;
      if (left !== undefined && left <= 0) throw stale();
      try {
        await this.#whenReady(left);
      } catch (e) {
        if (age && e instanceof RequestTimeoutError) throw stale(e);
        throw e;
      }
      if (this.#cipher && !this.#cipher.exhausted) break;
      await this.rekey('nonce_overflow');
    }
    if (this.#frames) {
      if (age && Date.now() + this.#frames.waitMs() - age.at > age.maxAgeMs) throw stale();
      await this.#pace();
      // pacing may have waited across a reconnect or rekey: the session must be ready again
      if (this.#state !== 'ready' || !this.#cipher || this.#rekeying) return this.#trade(request, symbol, resent, throttled, age, sentBefore);
    }
    if (age && Date.now() - age.at > age.maxAgeMs) throw stale();
    // From here to send() nothing awaits: the frame's counter is the next one on the wire.
    const id = this.#nextId();
    const frame = encryptRequest(this.#cipher as ClientSessionCipher, id, symbolId, request);
    try {
      return (await this.#send(frame, frame.op, {
        trading: true,
        transform: (data) => {
          if (!this.#cipher) throw new Error('response arrived without a session');
          return decryptResponse(this.#cipher, data).ack;
        },
      })) as Ack;
    } catch (e) {
      if (!resent && e instanceof SocketRequestError && e.error !== undefined && RESEND_AFTER_REKEY.has(e.error)) {
        await this.rekey(e.error);
        return this.#trade(request, symbol, true, throttled, age, sentBefore);
      }
      // Over the socket's frame budget: the frame was refused unexecuted; back off (jittered) and send it again.
      if (throttled < MAX_THROTTLED_RETRIES && e instanceof SocketRequestError && e.error === 'rate_limited') {
        const wait = jittered(250 * 2 ** throttled);
        if (age && Date.now() + wait - age.at > age.maxAgeMs) throw stale(e);
        await new Promise((r) => setTimeout(r, wait));
        return this.#trade(request, symbol, resent, throttled + 1, age, sentBefore);
      }
      // The socket closed with the frame in flight: it may have executed. A placement is not resent here
      // (ConnectionClosedError tells the caller to look it up by client_order_id).
      throw e;
    }
  }

  #requireLogin(what: string): void {
    if (this.#o.anonymous) throw new Error(`${what} needs a login; this socket was opened with {anonymous: true} (public channels only)`);
  }

  async #symbolId(symbol: string): Promise<number> {
    if (this.#o.resolveSymbolId) return this.#o.resolveSymbolId(symbol);
    if (this.#o.rest) return this.#o.rest.symbolId(symbol);
    throw new Error('cannot resolve symbol_id: pass {resolveSymbolId} or {rest}');
  }

  // ------------------------------------------------------------------------------------------
  // Other ops

  /** account.info: the same content as GET /account. */
  async accountInfo(): Promise<JsonObject> {
    this.#requireLogin('account.info');
    await this.#whenReady();
    return (await this.#request('account.info', {})) as JsonObject;
  }

  /** Round trip of an app-level ping, in ms. */
  async ping(timeoutMs = this.#timeoutMs): Promise<number> {
    const t0 = performance.now();
    await this.#request('ping', {}, timeoutMs);
    return performance.now() - t0;
  }

  // ------------------------------------------------------------------------------------------
  // Channels

  /** Subscribes (now if ready, else on connect) and keeps the subscription across reconnects. */
  async subscribe(channel: Channel): Promise<void> {
    this.#wanted.add(channel);
    if (this.#state !== 'ready') return;
    try {
      await this.#subscribeChannel(channel);
    } catch (e) {
      // refused by the server: not kept, so it is not asked again on every reconnect
      if (refusedChannel(e)) this.#wanted.delete(channel);
      throw e;
    }
  }

  /** Unsubscribes and forgets the channel. */
  async unsubscribe(channel: Channel): Promise<void> {
    this.#wanted.delete(channel);
    const t = this.#channels.get(channel);
    if (!t) return;
    t.beginUnsubscribe();
    if (this.#state === 'ready') await this.#request('unsubscribe', { channel });
    t.reset();
  }

  async #subscribeChannel(channel: string): Promise<void> {
    let t = this.#channels.get(channel);
    if (!t) {
      t = new ChannelTracker<unknown>(channel, this.#o.maxBufferedUpdates ?? 10_000);
      this.#channels.set(channel, t);
    }
    t.beginSubscribe(1);
    const data = (await this.#request('subscribe', { channel })) as JsonObject | undefined;
    const seqStart = data?.['seq_start'];
    t.subscribed(typeof seqStart === 'number' ? seqStart : 1);
  }

  /** Gap recovery (spec: Events): unsubscribe, subscribe again, take the fresh snapshot. */
  async #resync(channel: string, reason: string): Promise<void> {
    const t = this.#channels.get(channel);
    if (!t || t.phase === 'unsubscribing' || t.phase === 'idle') return;
    t.beginUnsubscribe(); // synchronously: frames still in flight from the old series are dropped
    try {
      await this.#request('unsubscribe', { channel });
    } catch (e) {
      if (e instanceof ConnectionClosedError) return; // the reconnect resubscribes
      // Any other refusal (e.g. not subscribed) still lets us subscribe afresh.
    }
    if (!this.#wanted.has(channel)) {
      t.reset();
      return;
    }
    try {
      await this.#subscribeChannel(channel);
      this.emit('resubscribed', { channel, reason });
    } catch (e) {
      if (!(e instanceof ConnectionClosedError)) this.#emitError(e as Error);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Frames in

  #onMessage(ws: WebSocket, raw: WebSocket.RawData): void {
    if (ws !== this.#ws) return;
    let frame: unknown;
    try {
      frame = parseJson(raw.toString());
    } catch (e) {
      this.#emitError(new Error(`unparseable frame from the server: ${(e as Error).message}`));
      return;
    }
    if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) return;
    const f = frame as JsonObject;
    try {
      if (typeof f['channel'] === 'string' && typeof f['seq'] === 'number') this.#onPush(f);
      else if (typeof f['id'] === 'string' && 'code' in f && (this.#pending.has(f['id']) || this.#late.has(f['id']))) this.#onResponse(f);
      else this.#onServerEvent(f);
    } catch (e) {
      this.#emitError(e as Error);
    }
  }

  #onResponse(f: JsonObject): void {
    const id = f['id'] as string;
    const p = this.#pending.get(id);
    if (!p) {
      // A response to a timed-out request: still decrypt it so the receive counter stays in step.
      const transform = this.#late.get(id);
      this.#late.delete(id);
      if (f['code'] === 0 && transform) {
        try {
          transform(f['data']);
        } catch {
          // nobody is waiting for it any more
        }
      }
      return;
    }
    this.#pending.delete(id);
    clearTimeout(p.timer);
    if (f['code'] === 0) {
      try {
        p.resolve(p.transform ? p.transform(f['data']) : f['data']);
      } catch (e) {
        // An authentic frame of a moved fencing epoch: this session is over; set up a new one.
        if (isSessionError(e, 'session_expired')) void this.rekey('session_expired').catch((err: Error) => this.#emitError(err));
        p.reject(e as Error);
      }
      return;
    }
    const message = typeof f['message'] === 'string' ? f['message'] : `code ${String(f['code'])}`;
    const name = typeof f['error'] === 'string' ? f['error'] : typeof f['code'] === 'string' ? f['code'] : /^([a-z_]+):/.exec(message)?.[1];
    p.reject(new SocketRequestError(p.op, f['code'] as number | string, message, name));
  }

  #onServerEvent(f: JsonObject): void {
    const name = [f['event'], f['type'], f['op']].find((v): v is string => typeof v === 'string') ?? '';
    switch (name) {
      case 'auth_expired':
        this.emit('authExpired', f['data']);
        void this.relogin().catch((e: Error) => this.#emitError(e));
        return;
      case 'rekey_required':
      case 'session_expired':
        void this.rekey(name).catch((e: Error) => this.#emitError(e));
        return;
      case 'ping':
        this.#sendRaw({ id: typeof f['id'] === 'string' ? f['id'] : this.#nextId(), op: 'pong', args: {} });
        return;
      case 'pong':
        return;
      default:
        this.emit('serverEvent', { name, frame: f });
    }
  }

  #onPush(f: JsonObject): void {
    const channel = f['channel'] as string;
    const frame = { type: String(f['type']), seq: f['seq'] as number, snapshot_complete: f['snapshot_complete'] === true };
    let item: unknown;
    const data = f['data'];
    if (isEncryptedBody(data)) {
      if (!this.#cipher) throw new Error(`encrypted push on '${channel}' without a session`);
      let msg;
      try {
        msg = decryptPush(this.#cipher, data);
      } catch (e) {
        // The event is lost to us: report it and resynchronise the channel like a gap (after a new
        // session.setup first when the session itself is over).
        this.#emitError(e as Error);
        if (isSessionError(e, 'session_expired')) {
          void this.rekey('session_expired')
            .then(() => this.#resync(channel, `push of a moved fencing epoch: ${(e as Error).message}`))
            .catch((err: Error) => this.#emitError(err));
        } else void this.#resync(channel, `undecryptable push: ${(e as Error).message}`);
        return;
      }
      if ('order_update' in msg) item = orderEventFromUpdate(msg.order_update);
      else if ('position_update' in msg) item = toPosition(msg.position_update);
      else {
        // Not a subscription: every frame is the whole state, so there is nothing to buffer or resync.
        this.#health = msg.system_health;
        this.emit('systemHealth', msg.system_health);
        return;
      }
    } else if (data !== null && data !== undefined && !(typeof data === 'object' && Object.keys(data).length === 0)) {
      if (channel === 'orders') item = { message_type: (data as JsonObject)['message_type'], ...toOrder(data) };
      else if (channel === 'positions') item = toPosition(data);
      else item = data;
    }
    const t = this.#channels.get(channel);
    if (!t) return;
    for (const a of t.onFrame(frame, item)) {
      switch (a.kind) {
        case 'snapshot':
          if (channel === 'orders') for (const o of a.items as OrderEvent[]) this.#book.saw(o, true);
          this.emit('snapshot', { channel, items: a.items });
          if (channel === 'orders') this.emit('ordersSnapshot', a.items as OrderEvent[]);
          if (channel === 'positions') this.emit('positionsSnapshot', a.items as Position[]);
          if (channel === 'transparency') for (const o of a.items) this.emit('transparency', o as JsonObject);
          break;
        case 'update':
          this.emit('update', { channel, seq: a.meta.seq, data: a.item });
          if (channel === 'orders') {
            this.#book.saw(a.item as OrderEvent);
            this.emit('order', a.item as OrderEvent, a.meta);
          }
          if (channel === 'positions') this.emit('position', a.item as Position, a.meta);
          if (channel === 'transparency') this.emit('transparency', a.item as JsonObject);
          break;
        case 'gap':
          this.emit('gap', { channel, expected: a.expected, received: a.received });
          void this.#resync(channel, 'gap');
          break;
        case 'overflow':
          void this.#resync(channel, `more than ${a.limit} buffered items`);
          break;
        case 'dropped':
          break;
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Frames out

  #nextId(): string {
    return `c${++this.#ids}`;
  }

  /** A plain request; one refused with `rate_limited` (never executed) is sent again with backoff. */
  async #request(op: string, args: JsonObject, timeoutMs = this.#timeoutMs): Promise<unknown> {
    for (let throttled = 0; ; throttled++) {
      try {
        await this.#pace();
        return await this.#send({ id: this.#nextId(), op, args }, op, { timeoutMs });
      } catch (e) {
        if (throttled >= MAX_THROTTLED_RETRIES || !(e instanceof SocketRequestError) || e.error !== 'rate_limited') throw e;
        await new Promise((r) => setTimeout(r, 250 * 2 ** throttled));
      }
    }
  }

  #send(
    frame: { id: string; op: string; args: unknown },
    op: string,
    opts: { transform?: (data: unknown) => unknown; trading?: boolean; timeoutMs?: number } = {},
  ): Promise<unknown> {
    const ws = this.#ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return Promise.reject(new ConnectionClosedError(op, false));
    if (this.#pending.size >= (this.#o.maxPendingRequests ?? 1000)) return Promise.reject(new Error('too many requests in flight'));
    const timeoutMs = opts.timeoutMs ?? this.#timeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const p = this.#pending.get(frame.id);
        this.#pending.delete(frame.id);
        if (p?.transform) {
          if (this.#late.size >= LATE_LIMIT) this.#late.delete(this.#late.keys().next().value as string);
          this.#late.set(frame.id, p.transform);
        }
        reject(new RequestTimeoutError(op, timeoutMs));
      }, timeoutMs);
      this.#pending.set(frame.id, { op, resolve, reject, timer, transform: opts.transform, trading: opts.trading ?? false });
      ws.send(JSON.stringify(frame));
    });
  }

  #sendRaw(frame: JsonObject): void {
    if (this.#ws?.readyState === WebSocket.OPEN) this.#ws.send(JSON.stringify(frame));
  }

  // ------------------------------------------------------------------------------------------
  // Readiness, heartbeat, errors

  #whenReady(timeoutMs = this.#timeoutMs): Promise<void> {
    if (this.#state === 'ready' && !this.#rekeying) return Promise.resolve();
    if (this.#state === 'closed' || this.#state === 'idle') return Promise.reject(new Error(`socket is ${this.#state}; call connect()`));
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(w);
          reject(new RequestTimeoutError('wait for session', timeoutMs));
        }, timeoutMs),
      };
      this.#waiters.add(w);
    });
  }

  #flushWaiters(): void {
    if (this.#state !== 'ready' || this.#rekeying) return;
    for (const w of this.#waiters) {
      clearTimeout(w.timer);
      w.resolve();
    }
    this.#waiters.clear();
  }

  #rejectWaiters(e: Error): void {
    for (const w of this.#waiters) {
      clearTimeout(w.timer);
      w.reject(e);
    }
    this.#waiters.clear();
  }

  #startHeartbeat(): void {
    this.#stopHeartbeat();
    const hb = this.#o.heartbeat;
    if (hb === false) return;
    const interval = hb?.intervalMs ?? 15_000;
    const timeout = hb?.timeoutMs ?? 10_000;
    let inFlight = false;
    this.#heartbeat = setInterval(() => {
      if (inFlight || this.#state !== 'ready') return;
      inFlight = true;
      const ws = this.#ws;
      this.ping(timeout)
        .catch((e: Error) => {
          // A silent server: drop the socket so the reconnect logic takes over.
          if (e instanceof RequestTimeoutError && ws === this.#ws) ws?.terminate();
        })
        .finally(() => (inFlight = false));
    }, interval);
    this.#heartbeat.unref();
  }

  #stopHeartbeat(): void {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  #emitError(e: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', e);
    else console.warn(`[tenebra socket] ${e.message}`);
  }
}

function toSocketAck(a: Ack): SocketAck {
  return { ...a, reject_reason: a.reject_reason === '' ? null : a.reject_reason, client_order_id: a.client_order_id === '' ? null : a.client_order_id };
}

/** A subscribe the server refused for good (unknown channel, scope, limits), as opposed to a dropped socket. */
function refusedChannel(e: unknown): boolean {
  return e instanceof SocketRequestError && e.error !== 'rate_limited' && !(e.error !== undefined && RESEND_AFTER_REKEY.has(e.error));
}

function target(input: SocketCancelOrder): { order_id: string } | { client_order_id: string } {
  if ((input.order_id === undefined) === (input.client_order_id === undefined)) throw new TypeError('give exactly one of order_id and client_order_id');
  return input.order_id !== undefined ? { order_id: input.order_id } : { client_order_id: input.client_order_id as string };
}
