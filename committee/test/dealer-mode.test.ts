// Dealer-mode preprocessing is not private (@tenebra/config dealer.ts): every line the node logs
// says so, and a node whose config says dealer in the production environment refuses to start.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEALER_LABEL } from '@tenebra/config';
import { createNodeLogger } from '../src/log';

/** Logs a few lines through the node's root logger and a child (as the node, engine and transport do). */
function lines(mode: 'committee' | 'dealer'): Record<string, unknown>[] {
  const out: string[] = [];
  const log = createNodeLogger({ index: 3, logLevel: 'debug', preprocessing: { mode, targetTriples: 1, targetBits: 1 } }, { write: (s: string) => void out.push(s) });
  log.info('node ready');
  log.debug({ mpc: { ev: 'prep-decided' } }, 'mpc');
  log.child({ part: 'transport' }).warn('transport: reset');
  return out.map((s) => JSON.parse(s) as Record<string, unknown>);
}

describe('dealer mode at the node', () => {
  it('labels every line of the root logger and its children, and only in dealer mode', () => {
    const dealer = lines('dealer');
    expect(dealer).toHaveLength(3);
    for (const l of dealer) expect(l).toMatchObject({ role: 'committee', node: 3, insecure: DEALER_LABEL });
    const committee = lines('committee');
    expect(committee).toHaveLength(3);
    for (const l of committee) expect(l).not.toHaveProperty('insecure');
  });

  it('the node process refuses a dealer config in the production environment, with the reason', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tenebra-dealer-'));
    try {
      // the check runs before anything else reads the config: a minimal one is enough
      const file = join(dir, 'node-1.json');
      writeFileSync(file, JSON.stringify({ role: 'committee', env: 'production', index: 1, n: 5, t: 2, logLevel: 'info', preprocessing: { mode: 'dealer', targetTriples: 1, targetBits: 1 } }));
      const r = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'src', 'main.ts'), '--config', file], { encoding: 'utf8', timeout: 30_000 });
      expect(r.status).toBe(2);
      const fatal = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
      expect(fatal).toMatchObject({ level: 60, msg: 'refusing to start', insecure: DEALER_LABEL });
      expect(String(fatal.err)).toMatch(/dealer preprocessing is refused with --env production: it is not private/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
