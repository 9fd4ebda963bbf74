// Small byte helpers shared by the modules of this package.

/** Lower-case hex of bytes. */
export function toHex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/** Bytes of an even-length hex string; throws on anything else. */
export function fromHex(s: string): Uint8Array {
  if (typeof s !== 'string' || s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) {
    throw new TypeError('not a hex string');
  }
  return new Uint8Array(Buffer.from(s, 'hex'));
}

/** Concatenation of byte arrays (the noble library's, always a new array). */
export { concatBytes } from '@noble/hashes/utils.js';

/** UTF-8 bytes of a string. */
export function utf8(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}
