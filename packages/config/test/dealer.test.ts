// Dealer-mode preprocessing is not private: refused in production, labelled everywhere else.
import { describe, it, expect } from 'vitest';
import { checkPreprocessingMode, dealerLogBindings, withDealerLabel, DEALER_LABEL, DEALER_LOG_KEY, type BindableLog } from '../src';

/** A logger's binding chain, as pino keeps it (child() adds to the parent's bindings). */
class FakeLog implements BindableLog<FakeLog> {
  constructor(readonly b: Record<string, unknown>) {}
  bindings(): Record<string, unknown> {
    return this.b;
  }
  child(more: Record<string, unknown>): FakeLog {
    return new FakeLog({ ...this.b, ...more });
  }
}

describe('dealer mode', () => {
  it('is refused in production with the reason, allowed in test; committee preprocessing runs anywhere', () => {
    expect(() => checkPreprocessingMode('production', 'dealer')).toThrow(/refused with --env production: it is not private.*fixed public seed.*any node can unmask every opened value/);
    expect(() => checkPreprocessingMode('test', 'dealer')).not.toThrow();
    for (const env of ['production', 'test'] as const) {
      expect(() => checkPreprocessingMode(env, 'committee')).not.toThrow();
      expect(() => checkPreprocessingMode(env, undefined)).not.toThrow();
    }
  });

  it('puts the label in the base bindings of a dealer cluster only', () => {
    expect(dealerLogBindings('dealer')).toEqual({ [DEALER_LOG_KEY]: DEALER_LABEL });
    expect(DEALER_LABEL).toMatch(/^DEALER-MODE: NOT PRIVATE/);
    expect(dealerLogBindings('committee')).toEqual({});
    expect(dealerLogBindings(undefined)).toEqual({});
  });

  it('labels a logger that lacks the label, once, and leaves others as they are', () => {
    const plain = new FakeLog({ role: 'committee' });
    const labelled = withDealerLabel(plain, 'dealer');
    expect(labelled.bindings()).toEqual({ role: 'committee', insecure: DEALER_LABEL });
    expect(withDealerLabel(labelled, 'dealer')).toBe(labelled);
    expect(withDealerLabel(plain, 'committee')).toBe(plain);
    expect(withDealerLabel(plain, undefined)).toBe(plain);
  });
});
