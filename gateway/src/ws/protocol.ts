// The WebSocket protocol of {ws_url} = /ws/v1: frame shapes, the error catalogue (names and numeric
// codes), channel names and the constants of docs/websocket.md. Pure: no sockets, no state.
import { TIER_INFO, type Tier } from '../tiers';

export const WS_PATH = '/ws/v1';
/**
 * The spec also names separate socket paths (/ws/orders, /ws/trading, /ws/user, /ws/gomarket) and
 * leaves their shapes "not shown". Each answers exactly the protocol of WS_PATH (one socket carries
 * every channel and the trading ops), so a client written against any of them connects and works;
 * docs/websocket.md, "Where".
 */
export const WS_ALIAS_PATHS: readonly string[] = ['/ws/orders', '/ws/trading', '/ws/user', '/ws/gomarket'];

/** Ops a client may send. */
export const OPS = [
  'login', 'logout', 'ping', 'pong', 'subscribe', 'unsubscribe', 'account.info', 'session.setup',
  'order.place', 'order.cancel', 'order.modify',
] as const;
export type Op = (typeof OPS)[number];

/**
 * Channels: orders and positions are encrypted per account, margin_alerts plain per account,
 * instruments and transparency public (no login).
 */
export const CHANNELS = ['orders', 'positions', 'margin_alerts', 'instruments', 'transparency'] as const;
export type Channel = (typeof CHANNELS)[number];
export const ENCRYPTED_CHANNELS: ReadonlySet<Channel> = new Set(['orders', 'positions']);
export const PUBLIC_CHANNELS: ReadonlySet<Channel> = new Set(['instruments', 'transparency']);

/**
 * The `channel` of system_health pushes. Not a channel one subscribes to: every encrypted session
 * gets them (once after each session.setup, then on every change of the venue's health).
 */
export const SYSTEM_HEALTH_CHANNEL = 'system_health';

/**
 * Error names a response frame can carry, with their numeric `code`. REST names keep their REST
 * numbers; the encrypted channel's codes of the spec (Errors: Encrypted channel errors) get 401xx.
 */
export const WS_ERRORS = {
  invalid_request: 40000,
  invalid_token: 40103,
  token_expired: 40101,
  token_revoked: 40102,
  insufficient_scope: 40300,
  payload_too_large: 41300,
  rate_limited: 42900,
  limit_exceeded: 42910,
  internal_error: 50000,
  session_required: 40110,
  session_expired: 40111,
  invalid_public_key: 40112,
  decrypt_failed: 40113,
  nonce_out_of_order: 40114,
  nonce_overflow: 40115,
  rekey_required: 40116,
} as const;
export type WsErrorName = keyof typeof WS_ERRORS;

/** A refusal of one client frame; becomes `{id, op, code, message: "name: detail", error: name}`. */
export class WsError extends Error {
  constructor(
    readonly error: WsErrorName,
    readonly detail: string,
  ) {
    super(`${error}: ${detail}`);
    this.name = 'WsError';
  }
}

/** The error response frame for a refusal of request (id, op). */
export function errorFrame(id: string | null, op: string | null, e: WsError): Record<string, unknown> {
  return { id, op, code: WS_ERRORS[e.error], message: e.message, error: e.error };
}

/** A success response frame. */
export function responseFrame(id: string, op: string, data: unknown): Record<string, unknown> {
  return { id, op, code: 0, data };
}

/** A server event frame (auth_expired, rekey_required, session_expired, ...). */
export function eventFrame(event: string, data: Record<string, unknown>): Record<string, unknown> {
  return { event, data };
}

/** Per-tier WebSocket budgets (spec: Limits, per-tier budgets): TIER_INFO[tier].ws of tiers.ts. */
export function wsTierLimits(tier: Tier): { msgPerSec: number; connections: number; subscriptions: number } {
  const w = TIER_INFO[tier].ws;
  return { msgPerSec: w.msgPerSecond, connections: w.connections, subscriptions: w.subscriptions };
}

/** Budget of a socket that has not logged in (per socket) and open sockets per client IP. */
export const ANONYMOUS_LIMITS = { msgPerSec: 10, subscriptions: 1 } as const;

/** Tunables of the WebSocket server (defaults in DEFAULT_WS_OPTIONS; tests shorten the timers). */
export interface WsOptions {
  /** frames above this many bytes are refused with payload_too_large, the socket stays open */
  maxFrameBytes: number;
  /** frames above this many bytes close the socket (1009); ws never buffers more */
  hardMaxFrameBytes: number;
  /** open sockets per client IP (logged in or not) */
  maxSocketsPerIp: number;
  /** a socket that has not logged in after this long is closed (4401) */
  loginTimeoutMs: number;
  /** how often timers are checked: auth expiry, rekey schedule, throttled pushes, instrument changes, health, statistics */
  sweepMs: number;
  /** auth_expired is sent this long before the token's expiry */
  authWarningMs: number;
  /** rekey_required is sent when a session is this old */
  rekeyAfterMs: number;
  /** after rekey_required, the session is retired (session_expired) if not set up again within this */
  rekeyGraceMs: number;
  /** mark_price position updates: at most one per position per this many ms */
  markPriceThrottleMs: number;
  /** pushes are dropped (seq consumed, the client sees a gap) while the socket buffers more than this */
  softBufferBytes: number;
  /** the socket is closed (1013) when it buffers more than this */
  hardBufferBytes: number;
  /** protocol-level ping every this many ms; no pong by the next one closes the socket */
  heartbeatMs: number;
  /** client frames beyond this multiple of the tier's msg/sec within one second close the socket (1008) */
  floodFactor: number;
  /** system_health: at most one push per session per this many ms (a flapping link is coalesced) */
  healthMinIntervalMs: number;
  /** system_health: results_stalled once sequenced ops have had no outcome for this long */
  healthStallMs: number;
  /** system_health: journal_slow once an op has waited this long for the sequencer's journal ack */
  healthJournalSlowMs: number;
  /** test only: the first session of each socket starts its send counter here (to provoke nonce_overflow) */
  firstSessionSendCounter?: number;
}

export const DEFAULT_WS_OPTIONS: WsOptions = {
  maxFrameBytes: 16 * 1024,
  hardMaxFrameBytes: 256 * 1024,
  maxSocketsPerIp: 64,
  loginTimeoutMs: 30_000,
  sweepMs: 250,
  authWarningMs: 60_000,
  rekeyAfterMs: 3_600_000,
  rekeyGraceMs: 60_000,
  markPriceThrottleMs: 1_000,
  softBufferBytes: 1 << 20,
  hardBufferBytes: 8 << 20,
  heartbeatMs: 30_000,
  floodFactor: 10,
  healthMinIntervalMs: 250,
  healthStallMs: 2_000,
  healthJournalSlowMs: 1_000,
};

/** Send counter values left below which the server asks for a rekey (rekey_required) ... */
export const REKEY_COUNTER_HEADROOM = 1 << 20;
/** ... and below which it refuses trading ops (nonce_overflow) so an ack can always be sealed. */
export const MIN_COUNTER_HEADROOM = 64;

/** WebSocket close codes the server uses. */
export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  policy: 1008,
  tooBig: 1009,
  tryAgainLater: 1013,
  tokenExpired: 4001,
  tokenRevoked: 4002,
  loginTimeout: 4401,
} as const;
