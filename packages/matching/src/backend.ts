// Matching is written once against this interface. PlaintextBackend (the reference) and MpcBackend
// (shares, via @tenebra/mpc's JobContext) implement it. Every value the algorithm compares is a
// secret S; control flow may depend only on values passed through reveal(), and every reveal is a
// leak to the committee nodes that docs/leakage.md must list under its label.

/** Names of deliberate leaks to the nodes. Each must have a row in docs/leakage.md. */
export type LeakLabel = string;

/** leWide's headroom over the comparison bound: it compares sums of up to 2^16 − 1 book values. */
export const SUM_EXTRA_BITS = 16;

export interface Arith<S> {
  readonly kind: 'plaintext' | 'mpc';
  constant(v: bigint): S;
  add(a: S, b: S): S;
  sub(a: S, b: S): S;
  lt(a: S, b: S): Promise<S>;
  le(a: S, b: S): Promise<S>;
  /**
   * [a <= b] for |a|, |b| < 2^(L + SUM_EXTRA_BITS), L the bound of lt and le: for a sum of book
   * values, compared once instead of capped at every step. Costs more random bits, no more rounds.
   */
  leWide(a: S, b: S): Promise<S>;
  eq(a: S, b: S): Promise<S>;
  min(a: S, b: S): Promise<S>;
  mul(a: S, b: S): Promise<S>;
  select(c: S, x: S, y: S): Promise<S>;
  /**
   * Opens b (0 or 1, or a small public count) to the nodes; recorded in the leak transcript.
   * `scope` (added by matching: the book's symbol) tags the record so transcripts of books that run
   * concurrently can be compared per book, whatever the interleaving of their rounds.
   */
  reveal(b: S, label: LeakLabel, scope?: string): Promise<bigint>;
}

/** One revealed value, in order; both backends must produce identical transcripts for one stream. */
export interface LeakRecord {
  label: LeakLabel;
  value: bigint;
  /** The book (symbol) whose matching revealed it, when the caller said so. */
  scope?: string;
}
