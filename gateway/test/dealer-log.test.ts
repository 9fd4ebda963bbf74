// A dealer-mode committee (not private) labels the whole cluster's logs: the gateway's lines too.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEALER_LABEL } from '@tenebra/config';
import { createLogger } from '../src/log';

function lines(committeePreprocessing?: 'committee' | 'dealer'): Record<string, unknown>[] {
  const out: string[] = [];
  const log = createLogger('info', 'test', committeePreprocessing, { write: (s: string) => void out.push(s) });
  log.info('gateway listening');
  log.child({ route: '/orders' }).error('order refused');
  return out.map((s) => JSON.parse(s) as Record<string, unknown>);
}

describe('gateway logger', () => {
  it('carries the dealer label on every line when the committee runs dealer mode, and not otherwise', () => {
    const dealer = lines('dealer');
    expect(dealer).toHaveLength(2);
    for (const l of dealer) expect(l).toMatchObject({ role: 'gateway', env: 'test', insecure: DEALER_LABEL });
    for (const l of [...lines('committee'), ...lines()]) expect(l).not.toHaveProperty('insecure');
  });

  it('the gateway process refuses a dealer-mode committee in the production environment, with the reason', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tenebra-gw-dealer-'));
    try {
      // the check runs before anything else reads the config: a minimal one is enough
      const file = join(dir, 'gateway.json');
      writeFileSync(file, JSON.stringify({ role: 'gateway', env: 'production', committeePreprocessing: 'dealer', logLevel: 'info' }));
      const r = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'src', 'main.ts'), '--config', file], { encoding: 'utf8', timeout: 60_000 });
      expect(r.status).toBe(2);
      const fatal = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
      expect(fatal).toMatchObject({ level: 60, msg: 'refusing to start', insecure: DEALER_LABEL });
      expect(String(fatal.err)).toMatch(/dealer preprocessing is refused with --env production/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
