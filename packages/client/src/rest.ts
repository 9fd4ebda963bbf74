// Typed REST client for every endpoint of the spec's REST summary.
//
// Retries: a 429 is retried after Retry-After (else X-RateLimit-Reset), a 401 token_expired after one
// token refresh — both mean the request did nothing. Network failures and 503 (venue at capacity) are
// retried, with exponential backoff starting at 1 s, only for requests that are safe to repeat: reads,
// cancels, and placements, because every placement carries a client_order_id (generated when absent)
// and a repeat with the same id returns the original order instead of placing a second one. A 202 /
// code 1502 (queued) is never resubmitted: it is an ApiError with `queued` true.
import { randomUUID } from 'node:crypto';
import { decimalLiteral, type DecimalInput } from './decimal';
import { ApiError, NetworkError, StaleOrderError } from './errors';
import { jittered, RestPacer, type TradingAction } from './pacing';
import { parseJson, stringifyJson } from './json';
import { toAccount, toAccountVip, toFill, toInstrument, toInstrumentList, toMarketReference, toOrder, toOrderLike, toPositions, toServerTime, toWithdrawal } from './normalize';
import type {
  Account,
  AccountVip,
  Fill,
  HistoryQuery,
  MarketReference,
  MassQuoteResult,
  TierName,
  Withdrawal,
  Instrument,
  InstrumentList,
  JsonObject,
  LeverageSetting,
  MassQuoteRequest,
  ModifyOrderRequest,
  Order,
  OrderLike,
  PlaceOrderRequest,
  PlaceOrderResult,
  PlatformOverview,
  PlatformSeries,
  Position,
  RateLimitState,
  SeriesQuery,
  ServerTime,
  StatsQuery,
  TokenResponse,
} from './types';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080/api/v1';
export const MAX_CLIENT_ORDER_ID = 64;
export const MAX_MASS_QUOTE_LEGS = 20;

/** The long-lived API key triple (spec: Authentication, credential model). */
export interface Credentials {
  apiKey: string;
  apiSecret: string;
  passphrase: string;
  /** Space-separated scopes to request (default: all the key allows). */
  scope?: string;
}

export interface RestClientOptions {
  /** REST root including /api/v1 (default http://127.0.0.1:8080/api/v1). */
  baseUrl?: string;
  /** Credentials for the token exchange and automatic refresh. */
  credentials?: Credentials;
  /** A ready access token, used when no credentials are given (it cannot be refreshed). */
  accessToken?: string;
  /** Refresh the token when less than this is left (default 60 s). */
  refreshMarginMs?: number;
  /** Per-request timeout (default 10 s). */
  timeoutMs?: number;
  /**
   * Per-request timeout of the calls that wait for the committee's outcome: cancels, modifies and
   * mass quotes (default 20 s). The gateway answers them within its journal wait (5 s) plus its
   * outcome wait (10 s), with 202 / 1502 QUEUED when the outcome is late; a shorter timeout would
   * end the attempt just before that answer and retry a cancel whose outcome is unknown (ADR 0050).
   */
  outcomeTimeoutMs?: number;
  /** Retries per call for 429, 503 and network failures (default 4). */
  maxRetries?: number;
  /** A 429 asking to wait longer than this is thrown instead of waited out (default 30 s). */
  maxRetryDelayMs?: number;
  /** First backoff for 503 / network failures, doubled per attempt (default 1000 ms, the spec's). */
  backoffStartMs?: number;
  /**
   * Maximum age of a placement (POST /orders, mass quote), default 500 ms: no attempt (first send
   * after client-side pacing, or a retry) starts later than this after the call; the SDK throws
   * StaleOrderError instead. Per call: `placeOrder(req, {maxAgeMs})`. Infinity restores retrying
   * until maxRetries.
   */
  placementMaxAgeMs?: number;
  /**
   * The account's tier: paces requests client-side with the tier table's token buckets (REST per
   * second and minute, weighted trading actions per minute), so the budget is spent evenly instead
   * of answered with 429s. Absent: no client-side pacing (set it later with setTier()).
   */
  tier?: TierName;
  fetch?: typeof fetch;
  /** Clock, sleep and randomness (jitter), replaceable in tests. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** Default maximum age of a placement (RestClientOptions.placementMaxAgeMs). */
export const DEFAULT_PLACEMENT_MAX_AGE_MS = 500;

/** Default RestClientOptions.outcomeTimeoutMs: above the gateway's 5 s + 10 s waits before a 202. */
export const DEFAULT_OUTCOME_TIMEOUT_MS = 20_000;

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

interface Call {
  method: Method;
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  auth: boolean;
  /** 'envelope': {code, data}; 'bare': the object itself; 'either': whichever arrives. */
  shape: 'envelope' | 'bare' | 'either';
  /** May be re-sent after a network failure or 503 without risk of doing it twice. */
  repeatable: boolean;
  headers?: Record<string, string>;
  /** The trading action the request is (client-side pacing of the weighted action budget). */
  action?: TradingAction;
  /** No attempt starts later than this many ms after the call (placements): StaleOrderError instead. */
  maxAgeMs?: number;
  clientOrderId?: string;
  /** The call waits for the committee's outcome at the gateway (outcomeTimeoutMs, not timeoutMs). */
  waitsOutcome?: boolean;
}

interface Answer {
  status: number;
  data: unknown;
  headers: Headers;
}

/** A fresh client_order_id (a UUID: 36 characters, within the 64 allowed). */
export function newClientOrderId(): string {
  return randomUUID();
}

const sleepReal = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Delay a 429 asks for: Retry-After-Ms (the gateway's precise wait), Retry-After (seconds or HTTP date), else X-RateLimit-Reset (unix seconds). */
export function rateLimitDelayMs(headers: Headers, nowMs: number): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+$/.test(ms.trim())) return Number(ms.trim());
  const ra = headers.get('retry-after');
  if (ra !== null) {
    if (/^\d+$/.test(ra.trim())) return Number(ra.trim()) * 1000;
    const at = Date.parse(ra);
    if (!Number.isNaN(at)) return Math.max(0, at - nowMs);
  }
  const reset = headers.get('x-ratelimit-reset');
  if (reset !== null && /^\d+(\.\d+)?$/.test(reset.trim())) return Math.max(0, Number(reset) * 1000 - nowMs);
  return undefined;
}

function intHeader(h: Headers, name: string): number | null {
  const v = h.get(name);
  return v !== null && /^\d+$/.test(v.trim()) ? Number(v) : null;
}

function expiryLiteral(v: bigint | string | number): bigint {
  const b = typeof v === 'bigint' ? v : BigInt(typeof v === 'number' ? Math.trunc(v) : v);
  if (b < 0n) throw new TypeError('expiry_time must be a non-negative nanosecond timestamp');
  return b;
}

/** The JSON body of a placement: decimals as exact number literals, the client_order_id set. */
export function placementBody(req: PlaceOrderRequest & { client_order_id: string }): JsonObject {
  if (req.client_order_id.length === 0 || req.client_order_id.length > MAX_CLIENT_ORDER_ID) {
    throw new TypeError(`client_order_id must be 1 to ${MAX_CLIENT_ORDER_ID} characters`);
  }
  return {
    symbol: req.symbol,
    side: req.side,
    type: req.type,
    quantity: decimalLiteral(req.quantity, 'quantity'),
    price: req.price === undefined ? undefined : decimalLiteral(req.price, 'price'),
    peg_reference: req.peg_reference,
    time_in_force: req.time_in_force,
    expiry_time: req.expiry_time === undefined ? undefined : expiryLiteral(req.expiry_time),
    aon: req.aon,
    min_fill_size: req.min_fill_size === undefined ? undefined : decimalLiteral(req.min_fill_size, 'min_fill_size'),
    client_order_id: req.client_order_id,
    leverage: req.leverage,
  };
}

export class TenebraRestClient {
  readonly baseUrl: string;
  /** Rate-limit headers of the most recent response. */
  readonly rateLimit: RateLimitState = { limit: null, remaining: null, reset: null };
  readonly #o: Required<Pick<RestClientOptions, 'refreshMarginMs' | 'timeoutMs' | 'outcomeTimeoutMs' | 'maxRetries' | 'maxRetryDelayMs' | 'backoffStartMs'>>;
  readonly #credentials: Credentials | undefined;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  readonly #placementMaxAgeMs: number;
  #pacer: RestPacer | undefined;
  #token: { value: string; expiresAt: number; scope: string } | undefined;
  #staticToken: string | undefined;
  #refreshing: Promise<string> | undefined;
  #instruments: { etag: string; list: InstrumentList } | undefined;

  constructor(options: RestClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.#credentials = options.credentials;
    this.#staticToken = options.accessToken;
    this.#fetch = options.fetch ?? fetch;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? sleepReal;
    this.#random = options.random ?? Math.random;
    this.#placementMaxAgeMs = options.placementMaxAgeMs ?? DEFAULT_PLACEMENT_MAX_AGE_MS;
    if (options.tier) this.#pacer = new RestPacer(options.tier, this.#now);
    this.#o = {
      refreshMarginMs: options.refreshMarginMs ?? 60_000,
      timeoutMs: options.timeoutMs ?? 10_000,
      outcomeTimeoutMs: options.outcomeTimeoutMs ?? DEFAULT_OUTCOME_TIMEOUT_MS,
      maxRetries: options.maxRetries ?? 4,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
      backoffStartMs: options.backoffStartMs ?? 1000,
    };
  }

  // ------------------------------------------------------------------------------------------
  // Tokens

  /** POST /auth/token with the configured credentials; the new token becomes current. */
  async exchangeToken(): Promise<TokenResponse> {
    const c = this.#credentials;
    if (!c) throw new Error('no credentials configured: pass {credentials: {apiKey, apiSecret, passphrase}}');
    const startedAt = this.#now();
    const ans = await this.#call({
      method: 'POST',
      path: '/auth/token',
      body: { grant_type: 'client_credentials', client_id: c.apiKey, client_secret: c.apiSecret, passphrase: c.passphrase, scope: c.scope },
      auth: false,
      shape: 'bare',
      repeatable: true,
    });
    const t = ans.data as TokenResponse;
    if (typeof t?.access_token !== 'string' || typeof t.expires_in !== 'number') throw new ApiError(ans.status, 0, 'token response lacks access_token/expires_in', undefined);
    this.#token = { value: t.access_token, expiresAt: startedAt + t.expires_in * 1000, scope: t.scope };
    return t;
  }

  /**
   * A bearer token valid for at least max(refreshMarginMs, minValidityMs) more, exchanging a new one
   * when needed (concurrent callers share one exchange).
   */
  async accessToken(opts: { minValidityMs?: number; forceRefresh?: boolean } = {}): Promise<string> {
    if (!this.#credentials) {
      if (this.#staticToken) return this.#staticToken;
      throw new Error('no access token: pass {credentials} or {accessToken}');
    }
    const need = Math.max(this.#o.refreshMarginMs, opts.minValidityMs ?? 0);
    const t = this.#token;
    if (!opts.forceRefresh && t && t.expiresAt - this.#now() > need) return t.value;
    this.#refreshing ??= this.exchangeToken()
      .then((r) => r.access_token)
      .finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  /** Unix ms at which the current token expires, if one was exchanged. */
  get tokenExpiresAt(): number | undefined {
    return this.#token?.expiresAt;
  }

  /** POST /auth/token/revoke (204; unknown or expired tokens are a no-op). Defaults to the current token. */
  async revokeToken(token?: string): Promise<void> {
    const value = token ?? this.#token?.value ?? this.#staticToken;
    if (!value) return;
    await this.#call({ method: 'POST', path: '/auth/token/revoke', body: { token: value }, auth: false, shape: 'bare', repeatable: true });
    if (this.#token?.value === value) this.#token = undefined;
    if (this.#staticToken === value) this.#staticToken = undefined;
  }

  // ------------------------------------------------------------------------------------------
  // Public data

  /** GET /instruments, revalidated with If-None-Match: an unchanged list (304) is served from the cache. */
  async listInstruments(): Promise<InstrumentList> {
    const cached = this.#instruments;
    const ans = await this.#call({
      method: 'GET',
      path: '/instruments',
      auth: false,
      shape: 'envelope',
      repeatable: true,
      headers: cached ? { 'If-None-Match': `"${cached.etag}"` } : {},
    });
    if (ans.status === 304) {
      if (!cached) throw new ApiError(304, 0, '304 without a cached instrument list', undefined);
      return cached.list;
    }
    const list = toInstrumentList(ans.data);
    const etag = (ans.headers.get('etag') ?? String(list.version)).replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
    this.#instruments = { etag, list };
    return list;
  }

  /** GET /instruments/{symbol}. */
  async getInstrument(symbol: string): Promise<Instrument> {
    const ans = await this.#call({ method: 'GET', path: `/instruments/${encodeURIComponent(symbol)}`, auth: false, shape: 'envelope', repeatable: true });
    return toInstrument(ans.data);
  }

  /** The numeric symbol_id of a symbol (for encrypted WebSocket headers), from the cached list. */
  async symbolId(symbol: string): Promise<number> {
    const find = () => this.#instruments?.list.instruments.find((i) => i.symbol === symbol)?.symbol_id;
    const hit = find();
    if (hit !== undefined) return hit;
    await this.listInstruments();
    const again = find();
    if (again === undefined) throw new TypeError(`unknown symbol '${symbol}'`);
    return again;
  }

  /** GET /vip/tiers: the fee schedule of all tiers. */
  async vipTiers(): Promise<JsonObject> {
    return (await this.#call({ method: 'GET', path: '/vip/tiers', auth: false, shape: 'envelope', repeatable: true })).data as JsonObject;
  }

  /** GET /stats/platform/overview. */
  async statsOverview(q: StatsQuery = {}): Promise<PlatformOverview> {
    const ans = await this.#call({ method: 'GET', path: '/stats/platform/overview', query: { range: q.range, from: q.from, to: q.to }, auth: false, shape: 'either', repeatable: true });
    return ans.data as PlatformOverview;
  }

  /** GET /stats/platform/series. */
  async statsSeries(q: SeriesQuery): Promise<PlatformSeries> {
    const ans = await this.#call({
      method: 'GET',
      path: '/stats/platform/series',
      query: { metric: q.metric, range: q.range, from: q.from, to: q.to, assets: q.assets?.join(',') },
      auth: false,
      shape: 'either',
      repeatable: true,
    });
    return ans.data as PlatformSeries;
  }

  // ------------------------------------------------------------------------------------------
  // Orders

  /**
   * POST /orders. A client_order_id is generated when absent and re-sent unchanged on every retry,
   * so the order is placed at most once. Resolves when the order passed pre-trade checks (status NEW).
   */
  async placeOrder(req: PlaceOrderRequest, opts: { maxAgeMs?: number } = {}): Promise<PlaceOrderResult> {
    const client_order_id = req.client_order_id ?? newClientOrderId();
    const ans = await this.#call({
      method: 'POST', path: '/orders', body: placementBody({ ...req, client_order_id }), auth: true, shape: 'envelope', repeatable: true,
      action: 'place', maxAgeMs: opts.maxAgeMs ?? this.#placementMaxAgeMs, clientOrderId: client_order_id,
    });
    const d = ans.data as JsonObject;
    return { order_id: String(d['order_id']), client_order_id: typeof d['client_order_id'] === 'string' ? d['client_order_id'] : client_order_id, status: d['status'] as PlaceOrderResult['status'] };
  }

  /** GET /orders/{orderId}. */
  async getOrder(orderId: string): Promise<Order> {
    return toOrder((await this.#call({ method: 'GET', path: `/orders/${encodeURIComponent(orderId)}`, auth: true, shape: 'envelope', repeatable: true })).data);
  }

  /** GET /orders?client_order_id=... */
  async getOrderByClientId(clientOrderId: string): Promise<Order> {
    return toOrder((await this.#call({ method: 'GET', path: '/orders', query: { client_order_id: clientOrderId }, auth: true, shape: 'envelope', repeatable: true })).data);
  }

  /** GET /orders?status=open: the live orders (NEW, including committee-pending, and PARTIALLY_FILLED), oldest first. */
  async openOrders(q: { symbol?: string } = {}): Promise<Order[]> {
    const ans = await this.#call({ method: 'GET', path: '/orders', query: { status: 'open', symbol: q.symbol }, auth: true, shape: 'envelope', repeatable: true });
    return (ans.data as unknown[]).map(toOrder);
  }

  /** GET /orders?status=closed: FILLED, CANCELLED and REJECTED orders, newest first (out_time_ns >= since_ns). */
  async closedOrders(q: HistoryQuery = {}): Promise<Order[]> {
    const ans = await this.#call({ method: 'GET', path: '/orders', query: { status: 'closed', ...historyQuery(q) }, auth: true, shape: 'envelope', repeatable: true });
    return (ans.data as unknown[]).map(toOrder);
  }

  /** GET /fills: the account's fills, newest first (time_ns >= since_ns; dedupe by fill_id). */
  async fills(q: HistoryQuery = {}): Promise<Fill[]> {
    const ans = await this.#call({ method: 'GET', path: '/fills', query: historyQuery(q), auth: true, shape: 'envelope', repeatable: true });
    return (ans.data as unknown[]).map(toFill);
  }

  /** Paces later requests with the tier table's buckets for `tier` (null: no client-side pacing). */
  setTier(tier: TierName | null): void {
    this.#pacer = tier === null ? undefined : new RestPacer(tier, this.#now);
  }

  /** DELETE /orders/{orderId}. The spec leaves the body open: order fields present are normalised. */
  async cancelOrder(orderId: string): Promise<OrderLike> {
    return toOrderLike((await this.#call({ method: 'DELETE', path: `/orders/${encodeURIComponent(orderId)}`, auth: true, shape: 'envelope', repeatable: true, action: 'cancel', waitsOutcome: true })).data);
  }

  /** DELETE /orders?client_order_id=... */
  async cancelOrderByClientId(clientOrderId: string): Promise<OrderLike> {
    return toOrderLike((await this.#call({ method: 'DELETE', path: '/orders', query: { client_order_id: clientOrderId }, auth: true, shape: 'envelope', repeatable: true, action: 'cancel', waitsOutcome: true })).data);
  }

  /** PATCH /orders/{orderId}. Not repeated after a network failure (only after 429/401). */
  async modifyOrder(orderId: string, changes: ModifyOrderRequest): Promise<OrderLike> {
    const body = {
      price: changes.price === undefined ? undefined : decimalLiteral(changes.price, 'price'),
      quantity: changes.quantity === undefined ? undefined : decimalLiteral(changes.quantity, 'quantity'),
      time_in_force: changes.time_in_force,
      expiry_time: changes.expiry_time === undefined ? undefined : expiryLiteral(changes.expiry_time),
    };
    return toOrderLike((await this.#call({ method: 'PATCH', path: `/orders/${encodeURIComponent(orderId)}`, body, auth: true, shape: 'envelope', repeatable: false, action: 'modify', waitsOutcome: true })).data);
  }

  /** POST /orders/mass-quote (Prime and Apex): at most 20 cancel-replace legs; place legs get client_order_ids. */
  async massQuote(req: MassQuoteRequest, opts: { maxAgeMs?: number } = {}): Promise<MassQuoteResult> {
    if (!Array.isArray(req.legs) || req.legs.length === 0 || req.legs.length > MAX_MASS_QUOTE_LEGS) {
      throw new TypeError(`a mass quote holds 1 to ${MAX_MASS_QUOTE_LEGS} legs`);
    }
    const legs = req.legs.map((l) => ({
      cancel_order_id: l.cancel_order_id,
      cancel_client_order_id: l.cancel_client_order_id,
      place: l.place ? placementBody({ ...l.place, client_order_id: l.place.client_order_id ?? newClientOrderId() }) : undefined,
    }));
    const ans = await this.#call({ method: 'POST', path: '/orders/mass-quote', body: { legs }, auth: true, shape: 'envelope', repeatable: true, action: 'massQuote', waitsOutcome: true, maxAgeMs: opts.maxAgeMs ?? this.#placementMaxAgeMs });
    return ans.data as MassQuoteResult;
  }

  // ------------------------------------------------------------------------------------------
  // Account

  /** GET /positions: the open positions. */
  async positions(): Promise<Position[]> {
    return toPositions((await this.#call({ method: 'GET', path: '/positions', auth: true, shape: 'envelope', repeatable: true })).data);
  }

  /** GET /positions/{symbol}/leverage: the leverage new orders on the symbol use, and the maximum. */
  async leverage(symbol: string): Promise<LeverageSetting> {
    return (await this.#call({ method: 'GET', path: `/positions/${encodeURIComponent(symbol)}/leverage`, auth: true, shape: 'envelope', repeatable: true })).data as unknown as LeverageSetting;
  }

  /** POST /positions/{symbol}/leverage: sets it for new orders and the open position (above max_leverage: LEVERAGE_EXCEEDED). */
  async setLeverage(symbol: string, leverage: number): Promise<LeverageSetting> {
    return (await this.#call({ method: 'POST', path: `/positions/${encodeURIComponent(symbol)}/leverage`, body: { leverage }, auth: true, shape: 'envelope', repeatable: true })).data as unknown as LeverageSetting;
  }

  /** POST /positions/{symbol}/margin: adds or removes isolated margin (not retried: an add is not idempotent). */
  async adjustMargin(symbol: string, action: 'add' | 'remove', amount: DecimalInput): Promise<Position> {
    const body = { action, amount: decimalLiteral(amount, 'amount') };
    return toPositions([(await this.#call({ method: 'POST', path: `/positions/${encodeURIComponent(symbol)}/margin`, body, auth: true, shape: 'envelope', repeatable: false })).data])[0]!;
  }

  /** GET /account: balance, VIP tier and account config (fields left open by the spec). */
  async account(): Promise<Account> {
    return toAccount((await this.#call({ method: 'GET', path: '/account', auth: true, shape: 'envelope', repeatable: true })).data);
  }

  /** GET /account/vip: current tier, effective fees, rolling 30-day volume. */
  async accountVip(): Promise<AccountVip> {
    return toAccountVip((await this.#call({ method: 'GET', path: '/account/vip', auth: true, shape: 'envelope', repeatable: true })).data);
  }

  /** GET /settlement/status/{batchId}. */
  async settlementStatus(batchId: string): Promise<JsonObject> {
    return (await this.#call({ method: 'GET', path: `/settlement/status/${encodeURIComponent(batchId)}`, auth: true, shape: 'envelope', repeatable: true })).data as JsonObject;
  }

  /**
   * POST /account/withdrawals: releases `amount` USDC of free collateral to `recipient`, which must be
   * an address no withdrawal has paid (make one with newWithdrawalAddress()). A client_withdrawal_id is
   * generated when absent and re-sent unchanged on every retry, so the withdrawal happens at most once.
   */
  async withdraw(req: { amount: DecimalInput; recipient: string; client_withdrawal_id?: string }): Promise<Withdrawal> {
    const body = { amount: decimalLiteral(req.amount, 'amount'), recipient: req.recipient, client_withdrawal_id: req.client_withdrawal_id ?? newClientOrderId() };
    return toWithdrawal((await this.#call({ method: 'POST', path: '/account/withdrawals', body, auth: true, shape: 'envelope', repeatable: true })).data);
  }

  /** GET /account/withdrawals: the caller's withdrawals, newest first (at most `limit`, 1..100). */
  async withdrawals(limit?: number): Promise<Withdrawal[]> {
    const query = { limit: limit === undefined ? undefined : String(limit) };
    const d = (await this.#call({ method: 'GET', path: '/account/withdrawals', query, auth: true, shape: 'envelope', repeatable: true })).data as JsonObject;
    return (d['withdrawals'] as unknown[]).map(toWithdrawal);
  }

  /** GET /account/withdrawals/{withdrawalId}. */
  async getWithdrawal(withdrawalId: string): Promise<Withdrawal> {
    return toWithdrawal((await this.#call({ method: 'GET', path: `/account/withdrawals/${encodeURIComponent(withdrawalId)}`, auth: true, shape: 'envelope', repeatable: true })).data);
  }

  /**
   * GET /market-data/reference[/{symbol}] (no token): the oracle reference the venue prices against
   * (mid, bid, ask, source, as_of; status stale or missing with null prices when no feed is fresh).
   * With a symbol, that instrument's object; without, the list for every instrument.
   */
  marketReference(symbol: string): Promise<MarketReference>;
  marketReference(): Promise<MarketReference[]>;
  async marketReference(symbol?: string): Promise<MarketReference | MarketReference[]> {
    if (symbol !== undefined) {
      return toMarketReference((await this.#call({ method: 'GET', path: `/market-data/reference/${encodeURIComponent(symbol)}`, auth: false, shape: 'envelope', repeatable: true })).data);
    }
    const d = (await this.#call({ method: 'GET', path: '/market-data/reference', auth: false, shape: 'envelope', repeatable: true })).data as JsonObject;
    return (d['references'] as unknown[]).map(toMarketReference);
  }

  /** GET /time. */
  async time(): Promise<ServerTime> {
    return toServerTime((await this.#call({ method: 'GET', path: '/time', auth: true, shape: 'envelope', repeatable: true })).data);
  }

  // ------------------------------------------------------------------------------------------
  // Transport

  async #call(c: Call): Promise<Answer> {
    const url = new URL(this.baseUrl + c.path);
    for (const [k, v] of Object.entries(c.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const body = c.body === undefined ? undefined : stringifyJson(c.body);
    let refreshed = false;
    let backoff = this.#o.backoffStartMs;
    const startedAt = this.#now();
    /** An earlier attempt may have reached the venue (a network failure after sending). */
    let maybeSent = false;
    // Waits (pacing, retry) that would start an attempt past the request's maximum age end it instead.
    const waitOrStale = async (ms: number, cause?: unknown): Promise<void> => {
      if (c.maxAgeMs !== undefined && this.#now() + ms - startedAt > c.maxAgeMs) {
        throw new StaleOrderError(`${c.method} ${c.path}`, c.clientOrderId, c.maxAgeMs, this.#now() + ms - startedAt, maybeSent, cause);
      }
      if (ms > 0) await this.#sleep(ms);
    };
    for (let attempt = 0; ; attempt++) {
      const retriesLeft = attempt < this.#o.maxRetries;
      // the tier's budgets count authenticated requests (the others count against the caller's IP)
      if (this.#pacer && c.auth) {
        await waitOrStale(this.#pacer.waitMs(c.action));
        this.#pacer.take(c.action);
      }
      const headers: Record<string, string> = { Accept: 'application/json', ...c.headers };
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      if (c.auth) headers['Authorization'] = `Bearer ${await this.accessToken()}`;

      let res: Response;
      try {
        res = await this.#fetch(url, { method: c.method, headers, body, signal: AbortSignal.timeout(c.waitsOutcome ? this.#o.outcomeTimeoutMs : this.#o.timeoutMs) });
      } catch (e) {
        // Refused connections never reached the server; anything else (reset, timeout) may have.
        const code = (e as { cause?: { code?: string } }).cause?.code;
        const sent = code !== 'ECONNREFUSED' && code !== 'ENOTFOUND';
        maybeSent ||= sent;
        if (retriesLeft && (c.repeatable || !sent)) {
          await waitOrStale(jittered(backoff, this.#random), e);
          backoff *= 2;
          continue;
        }
        // maybeSent, not this attempt's sent: an earlier attempt that timed out may have executed
        throw new NetworkError(`${c.method} ${c.path} failed: ${(e as Error).message}`, maybeSent, e);
      }
      this.#noteRateLimit(res.headers);
      if (res.status === 304 || res.status === 204) {
        await res.body?.cancel();
        return { status: res.status, data: undefined, headers: res.headers };
      }
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : parseJson(text);
      } catch {
        throw new ApiError(res.status, 0, `non-JSON response: ${text.slice(0, 200)}`, res.headers.get('x-request-id') ?? undefined, undefined, undefined, undefined, maybeSent);
      }
      const env = parsed !== null && typeof parsed === 'object' ? (parsed as JsonObject) : {};
      const isEnvelope = c.shape === 'envelope' || (typeof env['code'] === 'number' && ('data' in env || env['code'] !== 0 || 'request_id' in env));
      const requestId = (typeof env['request_id'] === 'string' ? env['request_id'] : undefined) ?? res.headers.get('x-request-id') ?? undefined;
      const code = typeof env['code'] === 'number' ? env['code'] : 0;
      const ok = res.status >= 200 && res.status < 300 && res.status !== 202 && (!isEnvelope || code === 0);
      if (ok) return { status: res.status, data: c.shape === 'bare' || !isEnvelope ? parsed : env['data'], headers: res.headers };

      const message = typeof env['message'] === 'string' ? env['message'] : `HTTP ${res.status}`;
      const name = typeof env['error'] === 'string' ? env['error'] : /^([A-Za-z_]+):/.exec(message)?.[1];
      if (res.status === 429) {
        const wait = rateLimitDelayMs(res.headers, this.#now()) ?? backoff;
        if (retriesLeft && wait <= this.#o.maxRetryDelayMs) {
          // never earlier than asked (jitter only adds), at least 1 ms
          await waitOrStale(Math.max(1, Math.round(wait * (1 + this.#random() * 0.25))), new ApiError(429, code, message, requestId, name, env['data'], wait));
          backoff *= 2;
          continue;
        }
        throw new ApiError(429, code, message, requestId, name, env['data'], wait, maybeSent);
      }
      if (res.status === 401 && c.auth && !refreshed && this.#credentials && (name === 'token_expired' || name === 'invalid_token' || name === undefined)) {
        refreshed = true;
        await this.accessToken({ forceRefresh: true });
        continue;
      }
      if (res.status === 503 && c.repeatable && retriesLeft) {
        await waitOrStale(jittered(backoff, this.#random), new ApiError(res.status, code, message, requestId, name, env['data']));
        backoff *= 2;
        continue;
      }
      // an answer to a retry: if an earlier attempt may have executed, the caller must be told (ADR 0050)
      throw new ApiError(res.status, code, message, requestId, name, env['data'], undefined, maybeSent);
    }
  }

  #noteRateLimit(h: Headers): void {
    const limit = intHeader(h, 'x-ratelimit-limit');
    if (limit === null) return;
    this.rateLimit.limit = limit;
    this.rateLimit.remaining = intHeader(h, 'x-ratelimit-remaining');
    this.rateLimit.reset = intHeader(h, 'x-ratelimit-reset');
  }
}


function historyQuery(q: HistoryQuery): Record<string, string | undefined> {
  return {
    symbol: q.symbol,
    since_ns: q.since_ns === undefined ? undefined : String(q.since_ns),
    limit: q.limit === undefined ? undefined : String(q.limit),
  };
}
