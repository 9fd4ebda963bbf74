import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LINK_SETTINGS_FILE, loadLinkSettings, runIdOf, saveLinkSettings } from '../src/link-persist';

const dirs: string[] = [];
const dir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'link-persist-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('link settings kept across a restart', () => {
  it('gives back the settings saved in the same run, as an update', () => {
    const d = dir();
    const run = runIdOf('token-a');
    saveLinkSettings(d, run, { latencyMs: 12, jitterMs: 3, bandwidthMbps: 50, blockedPeers: [2, 4] });
    expect(loadLinkSettings(d, run)).toEqual({ latencyMs: 12, jitterMs: 3, bandwidthMbps: 50, blockedPeers: [2, 4] });
    // unlimited bandwidth comes back as null, which clears a config's bandwidth
    saveLinkSettings(d, run, { latencyMs: 0, jitterMs: 0, blockedPeers: [] });
    expect(loadLinkSettings(d, run)).toEqual({ latencyMs: 0, jitterMs: 0, bandwidthMbps: null, blockedPeers: [] });
  });

  it('ignores another run\'s settings (a cluster started afresh has a new operator token)', () => {
    const d = dir();
    saveLinkSettings(d, runIdOf('token-a'), { latencyMs: 12, jitterMs: 0, blockedPeers: [3] });
    expect(loadLinkSettings(d, runIdOf('token-b'))).toBeUndefined();
    expect(loadLinkSettings(dir(), runIdOf('token-a'))).toBeUndefined(); // no file at all
  });

  it('writes the token\'s digest only, never the token', () => {
    const d = dir();
    saveLinkSettings(d, runIdOf('very-secret-token'), { latencyMs: 1, jitterMs: 0, blockedPeers: [] });
    expect(readFileSync(join(d, LINK_SETTINGS_FILE), 'utf8')).not.toContain('very-secret-token');
  });

  it('refuses a damaged file loudly, naming it', () => {
    const d = dir();
    const run = runIdOf('t');
    writeFileSync(join(d, LINK_SETTINGS_FILE), '{"run":');
    expect(() => loadLinkSettings(d, run)).toThrow(/link-settings\.json is not valid JSON/);
    writeFileSync(join(d, LINK_SETTINGS_FILE), JSON.stringify({ run, settings: { latencyMs: 'x', jitterMs: 0, blockedPeers: [] } }));
    expect(() => loadLinkSettings(d, run)).toThrow(/malformed link settings/);
    writeFileSync(join(d, LINK_SETTINGS_FILE), JSON.stringify([1, 2]));
    expect(() => loadLinkSettings(d, run)).toThrow(/does not hold link settings/);
  });
});
