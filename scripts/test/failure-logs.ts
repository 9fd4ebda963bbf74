// Setup file of the cluster tests: when a test fails, print what every process of the running test
// clusters logged last, so a failure in CI (which keeps no data folder) can be explained.
import { beforeEach } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { liveDataDirs } from './harness';

const WARN = 40; // pino's level number for warn
const MAX_LINE = 600;

/** The last `warnings` lines at warn or above and the last `recent` lines of one log. */
export function logExcerpt(text: string, warnings = 15, recent = 6): string[] {
  const lines = text.split('\n').filter((l) => l.length > 0);
  const level = (l: string): number => Number(/"level":(\d+)/.exec(l)?.[1] ?? 0);
  const warned = lines.filter((l) => level(l) >= WARN).slice(-warnings);
  const last = lines.slice(-recent).filter((l) => !warned.includes(l));
  return [...warned, '...', ...last].map((l) => (l.length > MAX_LINE ? `${l.slice(0, MAX_LINE)}...` : l));
}

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    for (const dir of liveDataDirs) {
      const logs = join(dir, 'logs');
      if (!existsSync(logs)) continue;
      const out = [`--- logs of the test cluster in ${dir} at the failure ---`];
      for (const f of readdirSync(logs).sort()) {
        out.push(`[${f}]`, ...logExcerpt(readFileSync(join(logs, f), 'utf8')));
      }
      process.stderr.write(`${out.join('\n')}\n`);
    }
  });
});
