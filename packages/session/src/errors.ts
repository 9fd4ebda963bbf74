// Typed errors of the encrypted channel. The first seven codes are the spec's (Errors: Encrypted
// channel errors); `invalid_frame` is local to this package: a JSON envelope or plaintext that does
// not have the required shape (the gateway answers it with its own `invalid_request`).

/** The spec's encrypted-channel error codes, plus the package-local `invalid_frame`. */
export type SessionErrorCode =
  | 'session_required'
  | 'session_expired'
  | 'invalid_public_key'
  | 'decrypt_failed'
  | 'nonce_out_of_order'
  | 'nonce_overflow'
  | 'rekey_required'
  | 'invalid_frame';

export const SESSION_ERROR_CODES: readonly SessionErrorCode[] = [
  'session_required',
  'session_expired',
  'invalid_public_key',
  'decrypt_failed',
  'nonce_out_of_order',
  'nonce_overflow',
  'rekey_required',
  'invalid_frame',
];

/** An encrypted-channel failure; `code` is the string the wire uses. */
export class SessionError extends Error {
  override name = 'SessionError';
  constructor(
    readonly code: SessionErrorCode,
    detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

/** True when `e` is a SessionError (optionally with the given code). */
export function isSessionError(e: unknown, code?: SessionErrorCode): e is SessionError {
  return e instanceof SessionError && (code === undefined || e.code === code);
}
