// Matching is written once against this interface. PlaintextBackend (the reference) and MpcBackend
// (shares, via @tenebra/mpc's JobContext) implement it. Every value the algorithm compares is a
// secret S; control flow may depend only on values passed through reveal(), and every reveal is a
// leak to the committee nodes that docs/leakage.md must list under its label.

/** Names of deliberate leaks to the nodes. Each must have a row in docs/leakage.md. */
export type LeakLabel = string;

/** leWide's headroom over the comparison bound: it compares sums of up to 2^16 − 1 book values. */
export const SUM_EXTRA_BITS = 16;

/**
 * Public bounds of one book's values, declared by whoever admits them (the gateway refuses larger
 * ones): comparisons at these widths take fewer random bits than at the backend's bound L.
 */
export interface BookWidths {
  /** Every price the book compares (resting, limit, cap; ticks) lies in [0, 2^priceBits). */
  priceBits: number;
  /** Every quantity the book compares (resting, incoming, remaining; steps) lies in [0, 2^qtyBits). */
  qtyBits: number;
  /**
   * Every two prices the book compares differ by less than 2^bandBits (<= priceBits): the admitting
   * gateway keeps all of a book's live prices (resting, limits, caps in flight) inside one window of
   * that width, which moves with the mark (docs/decisions/0024-price-window.md). Price comparisons
   * then run at bandBits (Catrina-de Hoogh bounds the difference only). Absent: at priceBits.
   */
  bandBits?: number;
}

/**
 * [a <= b] between two of a book's prices: at the window's width (leD) when the book has one, at the
 * ceiling's (leU) when it has only that, at the backend's bound L without widths.
 */
export function priceLeOf<S>(arith: Arith<S>, w: BookWidths | undefined): (a: S, b: S) => Promise<S> {
  if (!w) return (a, b) => arith.le(a, b);
  if (w.bandBits !== undefined) {
    const bits = w.bandBits;
    return (a, b) => arith.leD(a, b, bits);
  }
  return (a, b) => arith.leU(a, b, w.priceBits);
}

/** The width price comparisons of a book run at: the window's when it has one, else the ceiling's. */
export function priceWidth(w: BookWidths): number {
  return w.bandBits ?? w.priceBits;
}

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
  /**
   * [a < b] for integers a, b in [0, 2^bits): Catrina-de Hoogh needs a bound on a - b only
   * (|a - b| < 2^bits), so ceil(bits / 4) random nibbles where lt at bound L takes ceil((L + 1) / 4).
   * The plaintext backend refuses inputs outside [0, 2^bits); on shares they give a wrong bit.
   */
  ltU(a: S, b: S, bits: number): Promise<S>;
  /** [a <= b] for integers a, b in [0, 2^bits) (as ltU). */
  leU(a: S, b: S, bits: number): Promise<S>;
  /**
   * [a <= b] for integers with |a - b| < 2^bits, wherever they lie (prices inside a moving window):
   * ceil(bits / 4) random nibbles, as leU. The plaintext backend refuses a pair further apart.
   */
  leD(a: S, b: S, bits: number): Promise<S>;
  /**
   * rho (a - b) for a fresh secret uniform rho: zero iff a == b (error 1/p), otherwise uniform on the
   * nonzero values. Only for revealZero / revealOrder, which open it. One product, no random bits.
   */
  zeroMask(a: S, b: S): Promise<S>;
  min(a: S, b: S): Promise<S>;
  mul(a: S, b: S): Promise<S>;
  select(c: S, x: S, y: S): Promise<S>;
  /**
   * Opens b (0 or 1, or a small public count) to the nodes; recorded in the leak transcript.
   * `scope` (added by matching: the book's symbol) tags the record so transcripts of books that run
   * concurrently can be compared per book, whatever the interleaving of their rounds.
   */
  reveal(b: S, label: LeakLabel, scope?: string): Promise<bigint>;
  /** Opens a zeroMask(a, b) to the nodes and records [a == b] under label (what the opening tells). */
  revealZero(z: S, label: LeakLabel, scope?: string): Promise<bigint>;
  /**
   * Opens lt = [a < b] and z = zeroMask(a, b) in one round, and records [a <= b] = lt or [z = 0] under
   * leLabel, then [b <= a] = not lt under geLabel: the same information as the two bits, one
   * comparison instead of two. Returns [a <= b, b <= a].
   */
  revealOrder(lt: S, z: S, leLabel: LeakLabel, geLabel: LeakLabel, scope?: string): Promise<[bigint, bigint]>;
}

/** [a <= b], [b <= a] from lt = [a < b] and isZero = [a == b] (revealOrder's public pair); throws on an impossible pair. */
export function orderPair(lt: bigint, isZero: boolean, what: string): [bigint, bigint] {
  if (lt !== 0n && lt !== 1n) throw new RangeError(`${what}: less-than opened ${lt}, not a bit`);
  if (lt === 1n && isZero) throw new RangeError(`${what}: a < b and a == b both opened`);
  return [lt === 1n || isZero ? 1n : 0n, 1n - lt];
}

/**
 * revealOrder's common tail for both backends: the pair from the opened lt and zero test, recorded
 * under leLabel then geLabel; an impossible pair throws `error`'s kind.
 */
export function recordOrder(
  rec: { record(r: LeakRecord): void }, lt: bigint, isZero: boolean, leLabel: LeakLabel, geLabel: LeakLabel,
  scope: string | undefined, error: new (message: string) => Error,
): [bigint, bigint] {
  let pair: [bigint, bigint];
  try {
    pair = orderPair(lt, isZero, `reveal '${leLabel}'/'${geLabel}'`);
  } catch (e) {
    throw new error((e as Error).message);
  }
  for (const [label, value] of [[leLabel, pair[0]], [geLabel, pair[1]]] as const) {
    rec.record(scope === undefined ? { label, value } : { label, value, scope });
  }
  return pair;
}

/** One revealed value, in order; both backends must produce identical transcripts for one stream. */
export interface LeakRecord {
  label: LeakLabel;
  value: bigint;
  /** The book (symbol) whose matching revealed it, when the caller said so. */
  scope?: string;
}
