// Dealer-mode preprocessing (`npm start -- --dealer`): what it is, its log label, and where it is refused.
//
// It is not a dealer: every node derives all triples, random bits and their sharing polynomials
// from one fixed public seed (@tenebra/mpc preprocessing.ts, dealBatch), so any one node, or anyone
// who reads the code, knows every mask and can unmask every value opened during matching (the
// comparison's masked difference, each Beaver opening), hence every price and quantity compared.
// It exists to measure the online protocol without paying for preprocessing. So it is never silent
// (every log line of every process of such a cluster carries DEALER_LABEL) and never production.
import type { Env } from './cluster';

export type PreprocessingMode = 'committee' | 'dealer';

/** The log field that carries the label. */
export const DEALER_LOG_KEY = 'insecure';

/** The label on every log line of every process of a dealer-mode cluster. */
export const DEALER_LABEL =
  'DEALER-MODE: NOT PRIVATE, experiments only: every node derives all preprocessing from a fixed public seed, so any node (or anyone) can unmask every opened value';

/** Throws unless preprocessing `mode` may run in `env`: dealer mode never runs in production. */
export function checkPreprocessingMode(env: Env, mode: PreprocessingMode | undefined): void {
  if (mode === 'dealer' && env === 'production') {
    throw new Error(
      'dealer preprocessing is refused with --env production: it is not private (every node derives all preprocessing from a fixed public seed, so any node can unmask every opened value); use --env test for experiments',
    );
  }
}

/** Base bindings for a process's root logger: the label when the committee runs dealer mode, else none. */
export function dealerLogBindings(mode: PreprocessingMode | undefined): Record<string, string> {
  return mode === 'dealer' ? { [DEALER_LOG_KEY]: DEALER_LABEL } : {};
}

/** The part of a pino logger withDealerLabel needs. */
export interface BindableLog<L> {
  bindings(): Record<string, unknown>;
  child(bindings: Record<string, unknown>): L;
}

/** `log`, or a child of it carrying the label when `mode` is dealer and `log` does not carry it yet. */
export function withDealerLabel<L extends BindableLog<L>>(log: L, mode: PreprocessingMode | undefined): L {
  if (mode !== 'dealer' || log.bindings()[DEALER_LOG_KEY] !== undefined) return log;
  return log.child(dealerLogBindings(mode));
}
