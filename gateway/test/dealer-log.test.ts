// A dealer-mode committee (not private) labels the whole cluster's logs: the gateway's lines too.
import { describe, expect, it } from 'vitest';
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
});
