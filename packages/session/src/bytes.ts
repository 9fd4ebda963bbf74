// Byte helpers: strict standard base64, hex, the 16-byte user uuid, byte-lexicographic compare.
import { SessionError } from './errors';

const B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard base64 (RFC 4648 §4, with padding) of bytes. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Bytes of a standard, padded base64 string; anything else (url alphabet, spaces, bad padding) throws. */
export function fromBase64(text: string, what = 'base64'): Uint8Array {
  if (typeof text !== 'string' || !B64.test(text)) throw new SessionError('invalid_frame', `${what} is not standard base64`);
  const bytes = new Uint8Array(Buffer.from(text, 'base64'));
  // Non-zero padding bits would decode to the same bytes; refuse them so the encoding is canonical.
  if (toBase64(bytes) !== text) throw new SessionError('invalid_frame', `${what} is not canonical base64`);
  return bytes;
}

/** Lower-case hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Bytes of an even-length hex string. */
export function fromHex(hex: string): Uint8Array {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new TypeError('not a hex string');
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** The 16 bytes of a user uuid given as 32 hex characters (dashes allowed, as in 8-4-4-4-12). */
export function parseUserUuid(text: string): Uint8Array {
  const hex = typeof text === 'string' ? text.replace(/-/g, '') : '';
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new SessionError('invalid_frame', 'user_uuid must be 32 hex characters');
  return fromHex(hex);
}

/** Byte-lexicographic comparison: negative if a < b, 0 if equal, positive if a > b. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** a || b as a new array (the noble library's). */
export { concatBytes } from '@noble/hashes/utils.js';

/** True when every byte is zero. Constant in the data (no early exit). */
export function isAllZero(bytes: Uint8Array): boolean {
  let acc = 0;
  for (const b of bytes) acc |= b;
  return acc === 0;
}
