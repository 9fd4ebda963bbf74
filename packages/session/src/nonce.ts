// The 96-bit GCM nonce: session_id (8 bytes, big-endian) || counter (4 bytes, big-endian).
import { randomBytes } from 'node:crypto';
import { SessionError } from './errors';

export const MAX_U64 = (1n << 64n) - 1n;
/** The last counter value a frame may use; sending past it is `nonce_overflow`. */
export const MAX_COUNTER = 0xffff_ffff;

/** The session id of a decimal string (canonical: no sign, no leading zeros, at most 2^64-1). */
export function parseSessionId(text: unknown): bigint {
  if (typeof text !== 'string' || !/^(?:0|[1-9][0-9]{0,19})$/.test(text)) {
    throw new SessionError('invalid_frame', 'session_id must be the decimal string of an unsigned 64-bit integer');
  }
  const id = BigInt(text);
  if (id > MAX_U64) throw new SessionError('invalid_frame', 'session_id exceeds 2^64-1');
  return id;
}

/** The decimal string form of a session id. */
export function formatSessionId(id: bigint): string {
  if (id < 0n || id > MAX_U64) throw new RangeError('session id out of u64 range');
  return id.toString(10);
}

/** A fresh random, non-zero 64-bit session id (server side). */
export function newSessionId(): bigint {
  for (;;) {
    const id = randomBytes(8).readBigUInt64BE(0);
    if (id !== 0n) return id;
  }
}

/** The 12-byte GCM nonce for (session id, counter). */
export function buildNonce(sessionId: bigint, counter: number): Uint8Array {
  if (!Number.isInteger(counter) || counter < 0 || counter > MAX_COUNTER) throw new SessionError('nonce_overflow', `counter ${counter} outside 0..2^32-1`);
  const nonce = Buffer.alloc(12);
  nonce.writeBigUInt64BE(sessionId, 0);
  nonce.writeUInt32BE(counter, 8);
  return new Uint8Array(nonce.buffer, nonce.byteOffset, 12);
}
