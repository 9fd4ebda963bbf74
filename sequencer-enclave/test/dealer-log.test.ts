// A dealer-mode committee (not private) labels the whole cluster's logs: the sequencer's lines too.
import { describe, expect, it } from 'vitest';
import { DEALER_LABEL } from '@tenebra/config';
import { createSequencerLogger } from '../src/log';

function lines(committeePreprocessing?: 'committee' | 'dealer'): Record<string, unknown>[] {
  const out: string[] = [];
  const log = createSequencerLogger({ logLevel: 'info', ...(committeePreprocessing ? { committeePreprocessing } : {}) }, { write: (s: string) => void out.push(s) });
  log.info('sequencer listening');
  log.child({ sub: 1 }).warn('feed lagging');
  return out.map((s) => JSON.parse(s) as Record<string, unknown>);
}

describe('sequencer logger', () => {
  it('carries the dealer label on every line when the committee runs dealer mode, and not otherwise', () => {
    const dealer = lines('dealer');
    expect(dealer).toHaveLength(2);
    for (const l of dealer) expect(l).toMatchObject({ role: 'sequencer', insecure: DEALER_LABEL });
    for (const l of [...lines('committee'), ...lines()]) expect(l).not.toHaveProperty('insecure');
  });
});
