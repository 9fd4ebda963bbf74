// Enclave measurement (modelled): a hash over the enclave's code and configuration, like MRENCLAVE.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, toHex, utf8 } from './bytes';

/** JSON with object keys sorted at every depth (bigints as decimal strings); same value, same text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError('canonicalJson: non-finite number');
    return JSON.stringify(value);
  }
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
  }
  throw new TypeError(`canonicalJson: cannot encode ${typeof value}`);
}

/**
 * Hex sha256 over the files (sorted by base name, each framed by name and length, so moving bytes
 * between files changes the result) followed by the canonical JSON of config.
 */
export function measureFiles(files: string[], config: unknown): string {
  const entries = files.map((f) => ({ name: basename(f), path: f })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (let i = 1; i < entries.length; i++) {
    if (entries[i]!.name === entries[i - 1]!.name) throw new Error(`measureFiles: duplicate file name ${entries[i]!.name}`);
  }
  const h = sha256.create();
  h.update(utf8('tenebra-measurement-v1\n'));
  for (const e of entries) {
    const body = new Uint8Array(readFileSync(e.path));
    h.update(concatBytes(utf8(`file ${e.name} ${body.length}\n`), body, utf8('\n')));
  }
  h.update(utf8(`config ${canonicalJson(config)}\n`));
  return toHex(h.digest());
}
