// Key files: one JSON object of hex strings per file, written with mode 0600.
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { fromHex, toHex } from './bytes';

/** A key pair as stored on disk. */
export interface KeyPair {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
}

export type KeyType = 'x25519' | 'ed25519';

/** Writes {privateKey, publicKey[, type]} as hex JSON with mode 0600 (owner read/write only). */
export function writeKeyFile(path: string, keys: KeyPair, type?: KeyType): void {
  const body = JSON.stringify({ type, privateKey: toHex(keys.privateKey), publicKey: toHex(keys.publicKey) }, null, 2);
  writeFileSync(path, `${body}\n`, { mode: 0o600 });
  chmodSync(path, 0o600); // writeFileSync keeps the mode of an existing file
}

/** Reads a key file written by writeKeyFile; throws if group/world readable, or if `type` is given and differs. */
export function readKeyFile(path: string, type?: KeyType): KeyPair {
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) !== 0) throw new Error(`key file ${path} has mode ${mode.toString(8)}; expected 600`);
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`key file ${path}: not a JSON object`);
  const o = parsed as Record<string, unknown>;
  if (type !== undefined && o.type !== undefined && o.type !== type) throw new Error(`key file ${path}: type ${String(o.type)}, expected ${type}`);
  if (typeof o.privateKey !== 'string' || typeof o.publicKey !== 'string') {
    throw new Error(`key file ${path}: privateKey and publicKey must be hex strings`);
  }
  const keys = { privateKey: fromHex(o.privateKey), publicKey: fromHex(o.publicKey) };
  if (keys.privateKey.length !== 32 || keys.publicKey.length !== 32) throw new Error(`key file ${path}: keys must be 32 bytes`);
  return keys;
}

/** Writes only a public key ({type, publicKey}) for distribution; mode 0644 is fine. */
export function writePublicKeyFile(path: string, publicKey: Uint8Array, type?: KeyType): void {
  writeFileSync(path, `${JSON.stringify({ type, publicKey: toHex(publicKey) }, null, 2)}\n`);
}

/** Reads the publicKey of a key file (public-only or full). */
export function readPublicKeyFile(path: string, type?: KeyType): Uint8Array {
  const o = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  if (typeof o.publicKey !== 'string') throw new Error(`key file ${path}: no publicKey`);
  if (type !== undefined && o.type !== undefined && o.type !== type) throw new Error(`key file ${path}: type ${String(o.type)}, expected ${type}`);
  const pk = fromHex(o.publicKey);
  if (pk.length !== 32) throw new Error(`key file ${path}: public key must be 32 bytes`);
  return pk;
}
