// The launcher's operator token: owner-only, new at every start, and what the nodes get.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layout } from '@tenebra/config';
import { writeOperatorToken } from '../src/operator-token';

describe('operator token', () => {
  it('is written to <data>/operator-token with mode 0600, a new one per start', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tenebra-token-'));
    try {
      const file = layout(dir).operatorToken;
      writeFileSync(file, 'old\n', { mode: 0o644 }); // a previous run's file, made too open by hand
      const a = writeOperatorToken(dir);
      expect(readFileSync(file, 'utf8')).toBe(`${a}\n`);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes
      const b = writeOperatorToken(dir);
      expect(b).not.toBe(a);
      expect(readFileSync(file, 'utf8').trim()).toBe(b);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
