// The operator's link settings (POST /control/links) kept across a node's restart within one run of
// the cluster (docs/decisions/0011-link-emulation.md, "Kept across a restart"). A run is identified by
// its operator token, new at every `Cluster.start`: a node restarted by its supervisor or by a chaos
// test gets the same token and takes the settings back before it dials anyone; a cluster started
// afresh has a new token and starts from its config, as before. Only the token's digest is written.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LinkSettings, LinkUpdate } from '@tenebra/transport';

export const LINK_SETTINGS_FILE = 'link-settings.json';

interface Persisted {
  /** sha256 (hex) of the run's operator token */
  run: string;
  settings: LinkSettings;
}

export const runIdOf = (token: string): string => createHash('sha256').update(`tenebra-run:${token}`).digest('hex');

/** Writes the settings in force (tmp + rename: a crash leaves the old file or the new one, never half). */
export function saveLinkSettings(dataDir: string, run: string, settings: LinkSettings): void {
  const file = join(dataDir, LINK_SETTINGS_FILE);
  const body: Persisted = { run, settings };
  writeFileSync(`${file}.tmp`, JSON.stringify(body), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

/**
 * The update that restores this run's persisted settings, or undefined when there are none for this
 * run (no file, another run's file). A file that cannot be read as settings throws, naming it: the
 * operator set something the node cannot honour, which must not pass unnoticed.
 */
export function loadLinkSettings(dataDir: string, run: string): LinkUpdate | undefined {
  const file = join(dataDir, LINK_SETTINGS_FILE);
  if (!existsSync(file)) return undefined;
  let p: Persisted;
  try {
    p = JSON.parse(readFileSync(file, 'utf8')) as Persisted;
  } catch (e) {
    throw new Error(`${file} is not valid JSON (${(e as Error).message}): remove it to start with the config's link settings`);
  }
  if (typeof p !== 'object' || p === null || typeof p.run !== 'string') throw new Error(`${file} does not hold link settings: remove it to start with the config's link settings`);
  if (p.run !== run) return undefined;
  const s = p.settings;
  const num = (x: unknown): boolean => typeof x === 'number' && Number.isFinite(x);
  if (typeof s !== 'object' || s === null || !num(s.latencyMs) || !num(s.jitterMs) || (s.bandwidthMbps !== undefined && !num(s.bandwidthMbps))
    || !Array.isArray(s.blockedPeers) || !s.blockedPeers.every((x) => Number.isInteger(x))) {
    throw new Error(`${file} holds malformed link settings: remove it to start with the config's link settings`);
  }
  return { latencyMs: s.latencyMs, jitterMs: s.jitterMs, bandwidthMbps: s.bandwidthMbps ?? null, blockedPeers: s.blockedPeers };
}
