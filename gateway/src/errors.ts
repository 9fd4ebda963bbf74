// Every error the REST interface can answer, with its HTTP status, numeric envelope code and string
// name. The spec's authentication error names (invalid_request, ...) and reject_reason values
// (MARGIN_INSUFFICIENT, ...) are kept as the `error` field and lead the message; gateway/README.md
// lists the whole catalogue.

export interface ErrorKind {
  http: number;
  code: number;
  error: string;
}

function kind(http: number, code: number, error: string): ErrorKind {
  return { http, code, error };
}

export const ERR = {
  // Authentication and request-shape errors (spec: Errors / Authentication errors)
  invalid_request: kind(400, 40000, 'invalid_request'),
  unsupported_grant_type: kind(400, 40001, 'unsupported_grant_type'),
  invalid_scope: kind(400, 40002, 'invalid_scope'),
  insufficient_collateral: kind(400, 40003, 'insufficient_collateral'),
  invalid_client: kind(401, 40100, 'invalid_client'),
  token_expired: kind(401, 40101, 'token_expired'),
  token_revoked: kind(401, 40102, 'token_revoked'),
  invalid_token: kind(401, 40103, 'invalid_token'),
  insufficient_scope: kind(403, 40300, 'insufficient_scope'),
  forbidden: kind(403, 40301, 'forbidden'),
  tier_not_eligible: kind(403, 40302, 'tier_not_eligible'),
  not_found: kind(404, 40400, 'not_found'),
  method_not_allowed: kind(405, 40500, 'method_not_allowed'),
  request_timeout: kind(408, 40800, 'request_timeout'),
  conflict: kind(409, 40900, 'conflict'),
  payload_too_large: kind(413, 41300, 'payload_too_large'),
  unsupported_media_type: kind(415, 41500, 'unsupported_media_type'),
  expectation_failed: kind(417, 41700, 'expectation_failed'),
  rate_limited: kind(429, 42900, 'rate_limited'),
  headers_too_large: kind(431, 43100, 'headers_too_large'),
  internal_error: kind(500, 50000, 'internal_error'),
  service_unavailable: kind(503, 50300, 'service_unavailable'),
  // Trade acknowledgement codes (orders); 1410 is the spec's insufficient-margin code.
  INVALID_ORDER: kind(400, 1400, 'INVALID_ORDER'),
  UNKNOWN_SYMBOL: kind(400, 1401, 'UNKNOWN_SYMBOL'),
  INVALID_PRICE: kind(400, 1402, 'INVALID_PRICE'),
  INVALID_QUANTITY: kind(400, 1403, 'INVALID_QUANTITY'),
  MIN_NOTIONAL: kind(400, 1404, 'MIN_NOTIONAL'),
  UNSUPPORTED_ORDER: kind(400, 1405, 'UNSUPPORTED_ORDER'),
  LEVERAGE_EXCEEDED: kind(400, 1406, 'LEVERAGE_EXCEEDED'),
  INSTRUMENT_HALTED: kind(400, 1407, 'INSTRUMENT_HALTED'),
  MARK_PRICE_UNAVAILABLE: kind(400, 1408, 'MARK_PRICE_UNAVAILABLE'),
  POSITION_LIMIT_EXCEEDED: kind(400, 1409, 'POSITION_LIMIT_EXCEEDED'),
  MARGIN_INSUFFICIENT: kind(400, 1410, 'MARGIN_INSUFFICIENT'),
  ACCOUNT_IN_LIQUIDATION: kind(400, 1411, 'ACCOUNT_IN_LIQUIDATION'),
  OPEN_ORDER_LIMIT: kind(400, 1412, 'OPEN_ORDER_LIMIT'),
  BOOK_DEPTH_EXCEEDED: kind(400, 1413, 'BOOK_DEPTH_EXCEEDED'),
  DUPLICATE_CLIENT_ORDER_ID: kind(409, 1414, 'DUPLICATE_CLIENT_ORDER_ID'),
  ORDER_NOT_FOUND: kind(404, 1420, 'ORDER_NOT_FOUND'),
  ORDER_NOT_LIVE: kind(409, 1421, 'ORDER_NOT_LIVE'),
  ORDER_BUSY: kind(409, 1422, 'ORDER_BUSY'),
  MODIFY_REJECTED: kind(409, 1423, 'MODIFY_REJECTED'),
  SEQUENCER_REJECTED: kind(503, 1501, 'SEQUENCER_REJECTED'),
  QUEUED: kind(202, 1502, 'QUEUED'),
  SEQUENCER_UNAVAILABLE: kind(503, 1503, 'SEQUENCER_UNAVAILABLE'),
  VENUE_AT_CAPACITY: kind(503, 1504, 'VENUE_AT_CAPACITY'),
  // Degraded mode (spec: codes 202 / 1502): the committee's preprocessing reserve ran out while nodes
  // are down, so nothing new can be matched; nothing was submitted (docs/decisions/0016-outage-capacity.md).
  RESERVE_EXHAUSTED: kind(503, 1505, 'RESERVE_EXHAUSTED'),
} as const;

export type ErrorName = keyof typeof ERR;

/** An error the HTTP layer turns into the spec's error envelope (plus optional data and headers). */
export class ApiError extends Error {
  readonly kind: ErrorKind;
  constructor(
    name: ErrorName,
    detail: string,
    readonly data?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(`${ERR[name].error}: ${detail}`);
    this.name = 'ApiError';
    this.kind = ERR[name];
  }
}

/** Shorthand: throws ApiError(name, detail). */
export function fail(name: ErrorName, detail: string): never {
  throw new ApiError(name, detail);
}
