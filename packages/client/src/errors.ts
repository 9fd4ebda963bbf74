// Typed errors of the SDK.

/** An error envelope from the REST API: {code, message, error?, request_id} plus the HTTP status. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly httpStatus: number,
    /** The envelope's numeric code (e.g. 1410), or 0 when the body had none. */
    readonly code: number,
    message: string,
    readonly requestId: string | undefined,
    /** The spec's string name when the server sends one (e.g. token_expired, MARGIN_INSUFFICIENT). */
    readonly error: string | undefined = undefined,
    readonly data: unknown = undefined,
    /** For 429: how long the server asked us to wait. */
    readonly retryAfterMs: number | undefined = undefined,
    /**
     * True when this error answers a retry and an earlier attempt of the same call may have reached
     * the venue (its connection failed or timed out after sending). The error is then the retry's
     * answer, not the call's: e.g. a cancel's 409 ORDER_NOT_LIVE may mean the earlier attempt
     * cancelled the order. Read the order (status, cancel_reason) to know (ADR 0050).
     */
    readonly earlierAttemptMaybeExecuted = false,
  ) {
    super(message);
  }

  /** True for code 1502 / HTTP 202: the venue queued the order; do not resubmit it. */
  get queued(): boolean {
    return this.code === 1502 || this.httpStatus === 202;
  }
}

/** A transport failure (connection refused, reset, timeout) before any HTTP answer. */
export class NetworkError extends Error {
  override name = 'NetworkError';
  constructor(
    message: string,
    /** True when the request may have reached the server (it was sent before the failure). */
    readonly maybeExecuted: boolean,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** An error response on the WebSocket: {id, op, code != 0, message, error?}. */
export class SocketRequestError extends Error {
  override name = 'SocketRequestError';
  constructor(
    readonly op: string,
    readonly code: number | string,
    message: string,
    /** String code: the frame's `error`, or the leading "name:" of its message (e.g. session_required). */
    readonly error: string | undefined,
  ) {
    super(message);
  }
}

/** The socket closed while a request was in flight; a trading op may or may not have executed. */
export class ConnectionClosedError extends Error {
  override name = 'ConnectionClosedError';
  constructor(
    readonly op: string,
    readonly maybeExecuted: boolean,
  ) {
    super(`socket closed while '${op}' was in flight${maybeExecuted ? '; it may have executed (look it up by client_order_id)' : ''}`);
  }
}

/** No response within the request timeout. */
export class RequestTimeoutError extends Error {
  override name = 'RequestTimeoutError';
  constructor(
    readonly op: string,
    readonly timeoutMs: number,
  ) {
    super(`'${op}' got no response within ${timeoutMs} ms`);
  }
}

/**
 * A placement the SDK did not send (or send again) because it would have gone out later than the
 * caller's maximum age (`maxAgeMs`): a reconnect, a retry or a spent budget would have placed it
 * late. When `maybePlaced` is true an earlier attempt may have reached the venue: look it up (or
 * cancel it) by `clientOrderId`, which stays its idempotency key.
 */
export class StaleOrderError extends Error {
  override name = 'StaleOrderError';
  constructor(
    readonly op: string,
    readonly clientOrderId: string | undefined,
    readonly maxAgeMs: number,
    /** How old the request was when the SDK gave up. */
    readonly ageMs: number,
    readonly maybePlaced: boolean,
    override readonly cause?: unknown,
  ) {
    super(`${op} not sent: it would be older than its maximum age of ${maxAgeMs} ms (now ${ageMs} ms)${maybePlaced ? `; an earlier attempt may have placed it: look up client_order_id ${clientOrderId}` : ''}`);
  }
}
