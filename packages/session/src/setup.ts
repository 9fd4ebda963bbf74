// session.setup on both sides (spec: Authentication, Encrypted WebSocket session, steps 2-4).
import { encodePublicKey, decodePublicKey, deriveSessionKey, generateSessionKeyPair, type SessionKeyPair } from './keys';
import { ClientSessionCipher, ServerSessionCipher, type CipherOptions } from './cipher';
import { formatSessionId, newSessionId, parseSessionId } from './nonce';
import { SessionError } from './errors';

export const SESSION_SETUP_OP = 'session.setup';

/** args of the client's session.setup request. */
export interface SessionSetupArgs {
  client_ecdh_pubkey: string;
}

/** data of the server's session.setup response. `fencing_epoch` is Tenebra's addition (optional). */
export interface SessionSetupData {
  session_id: string;
  server_ecdh_pubkey: string;
  fencing_epoch?: number;
}

/** A fresh key pair and the session.setup frame that announces it (client side, step 2). */
export function createSetupRequest(id: string): { keyPair: SessionKeyPair; frame: { id: string; op: 'session.setup'; args: SessionSetupArgs } } {
  const keyPair = generateSessionKeyPair();
  return { keyPair, frame: { id, op: 'session.setup', args: { client_ecdh_pubkey: encodePublicKey(keyPair.publicKey) } } };
}

/**
 * The client's cipher from its key pair and the server's session.setup data (step 4).
 * Throws invalid_public_key (bad server key / zero secret) or invalid_frame (bad session_id).
 */
export function completeSessionSetup(
  keyPair: SessionKeyPair,
  data: unknown,
  userUuid: Uint8Array | string,
  options: CipherOptions = {},
): ClientSessionCipher {
  if (data === null || typeof data !== 'object') throw new SessionError('invalid_frame', 'session.setup data must be an object');
  const d = data as Record<string, unknown>;
  const sessionId = parseSessionId(d['session_id']);
  const serverPublic = decodePublicKey(d['server_ecdh_pubkey']);
  const epoch = d['fencing_epoch'];
  if (epoch !== undefined && (typeof epoch !== 'number' || !Number.isInteger(epoch) || epoch < 0 || epoch > 0xffff_ffff)) {
    throw new SessionError('invalid_frame', 'fencing_epoch must be a uint32');
  }
  const key = deriveSessionKey(keyPair, serverPublic);
  return new ClientSessionCipher(key, sessionId, userUuid, { ...options, ...(epoch === undefined ? {} : { fencingEpoch: epoch }) });
}

export interface AcceptOptions extends CipherOptions {
  /** Session id to use (default: a fresh random non-zero u64). */
  sessionId?: bigint;
  /** Server key pair (default: fresh; pass one only for test vectors). */
  keyPair?: SessionKeyPair;
  /** Fencing epoch of the gateway (default 0). */
  fencingEpoch?: number;
}

/**
 * The server's answer to session.setup args (step 3): a new cipher bound to the login's user_uuid and
 * the response data. Throws invalid_public_key for a key that is not 32 bytes, a low-order point or
 * an all-zero shared secret.
 */
export function acceptSessionSetup(
  args: unknown,
  userUuid: Uint8Array | string,
  options: AcceptOptions = {},
): { cipher: ServerSessionCipher; data: SessionSetupData } {
  if (args === null || typeof args !== 'object') throw new SessionError('invalid_public_key', 'client_ecdh_pubkey is missing');
  const clientPublic = decodePublicKey((args as Record<string, unknown>)['client_ecdh_pubkey']);
  const keyPair = options.keyPair ?? generateSessionKeyPair();
  const key = deriveSessionKey(keyPair, clientPublic);
  const sessionId = options.sessionId ?? newSessionId();
  const { sessionId: _s, keyPair: _k, ...cipherOptions } = options;
  const cipher = new ServerSessionCipher(key, sessionId, userUuid, cipherOptions);
  return {
    cipher,
    data: { session_id: formatSessionId(sessionId), server_ecdh_pubkey: encodePublicKey(keyPair.publicKey), fencing_epoch: cipher.fencingEpoch },
  };
}
