// The contract the rest of Tenebra codes against. The engine (runtime.ts etc.) implements it.
// Values are elements of the prime field of field.ts; "signed" means the representative in (-p/2, p/2).

/** This party's shares of a vector of field elements. Immutable; opaque outside the engine. */
export interface Sec {
  readonly length: number;
}

/**
 * Everything a job may do. Local operations return at once; interactive ones are vectorised
 * elementwise and batched automatically: all operations issued by all concurrently running code of
 * a job before the runtime's next deferred flush travel in ONE message per peer per round.
 * Preprocessing is assigned in issue order, which is deterministic because round results are
 * delivered to waiting operations in issue order.
 */
export interface JobContext {
  readonly party: number;
  readonly n: number;
  readonly t: number;

  /** Wraps shares this party received for a value it did not compute (e.g. an input from the gateway). */
  fromShares(shares: readonly bigint[]): Sec;
  /** A public vector as a (degree-0) sharing. */
  constant(values: readonly bigint[]): Sec;
  /** This party's shares of x (to store, or to send to an outside recipient such as the gateway). */
  sharesOf(x: Sec): bigint[];
  concat(parts: readonly Sec[]): Sec;
  slice(x: Sec, start: number, end?: number): Sec;

  add(a: Sec, b: Sec): Sec;
  sub(a: Sec, b: Sec): Sec;
  neg(a: Sec): Sec;
  addPublic(a: Sec, c: readonly bigint[] | bigint): Sec;
  mulPublic(a: Sec, c: readonly bigint[] | bigint): Sec;

  /** The engine's comparison bound: lt, le, eq, min and max take signed integers |x| < 2^L (default 48). */
  readonly L: number;

  /** Elementwise product (Beaver triple each). */
  mul(a: Sec, b: Sec): Promise<Sec>;
  /**
   * [a < b] in {0,1}; a and b are signed integers with |a|,|b| < 2^bits (default L). A wider bound
   * (e.g. for a sum of many values) costs 4 random bits more per 4 bits of width, and no more rounds
   * up to 63 bits (one more from 64); it must fit the field for (n, t) (assertComparisonFits), else
   * a RangeError.
   */
  lt(a: Sec, b: Sec, bits?: number): Promise<Sec>;
  /** [a <= b], with lt's bound. */
  le(a: Sec, b: Sec, bits?: number): Promise<Sec>;
  /** [a == b] in {0,1} for signed integers with |a|,|b| < 2^L. */
  eq(a: Sec, b: Sec): Promise<Sec>;
  min(a: Sec, b: Sec): Promise<Sec>;
  max(a: Sec, b: Sec): Promise<Sec>;
  /** c ? x : y, with c in {0,1}. */
  select(c: Sec, x: Sec, y: Sec): Promise<Sec>;

  /** Opens x to every party (a deliberate leak: callers label why). Field values in [0, p). */
  open(x: Sec): Promise<bigint[]>;
  /** Opens x to one party only; resolves to the values there and to null everywhere else. */
  openTo(recipient: number, x: Sec): Promise<bigint[] | null>;

  // ---- added by the engine (compatible extension) ----

  /** The id this job runs under (identical at every party). */
  readonly jobId: string;
  /**
   * [a < 0] for signed |a| < 2^width (default L + 1; lt(a, b) is ltz(a - b)). Catrina-de Hoogh needs
   * a bound on the compared difference only: for a, b in [0, 2^B), ltz(a - b, B) costs ceil(B / 4)
   * random nibbles where lt(a, b, B) costs ceil((B + 1) / 4). The caller guarantees the bound: a
   * value outside it gives a wrong bit, silently.
   */
  ltz(a: Sec, width?: number): Promise<Sec>;
  /**
   * rho * x per element for a fresh uniform secret rho (one Beaver triple, one round, no random bits):
   * zero iff x is (error 1/p), otherwise uniform on the nonzero elements, so opening it reveals
   * exactly [x == 0]. For a zero test whose outcome is opened anyway (self-trade, equal quantities).
   */
  randomMultiple(x: Sec): Promise<Sec>;
  /**
   * Preprocessing items this job has consumed so far, per kind (nibbles are 4 random bits each),
   * and the rounds it has run. Identical at every party: items are assigned in issue order. Lets a
   * host budget its spending.
   */
  consumed(): { triples: number; lex4: number; prod4: number; nibbles: number; rounds: number };

  /**
   * Transactional store of named secret values that survives across jobs and is covered by share
   * recovery. Writes become visible to later jobs only if this job completes; a job that throws
   * leaves the store as it was, identically at every party.
   */
  load(name: string): Sec | undefined;
  save(name: string, x: Sec): void;
  remove(name: string): void;
  /** Names of stored secret values, sorted. */
  names(): string[];
  /** Public metadata (JSON text), transactional like the secret store. */
  loadPublic(name: string): string | undefined;
  savePublic(name: string, json: string): void;
  removePublic(name: string): void;
  publicNames(): string[];
}

/**
 * Raised when an opening holds more than t+1 shares that do not lie on one degree-t polynomial.
 * party is null when the bad share is detected but cannot be named (only t+2 shares, or several bad).
 */
export class InconsistentSharesError extends Error {
  constructor(readonly party: number | null, readonly index: number) {
    super(
      party === null
        ? `shares at index ${index} do not lie on one degree-t polynomial (the bad party cannot be named)`
        : `share from party ${party} at index ${index} is not on the degree-t polynomial of the others`,
    );
    this.name = 'InconsistentSharesError';
  }
}

/** Raised when an operation needs preprocessing, the reserve is empty and fewer than 2t+1 parties are alive. */
export class PreprocessingExhaustedError extends Error {
  constructor(readonly kind: string, readonly needed: number, readonly available: number, readonly alive: number) {
    super(`preprocessing exhausted: need ${needed} ${kind}, reserve holds ${available}, ${alive} parties alive (production needs 2t+1)`);
    this.name = 'PreprocessingExhaustedError';
  }
}

/**
 * Raised when a job's round can never complete here: the parties whose shares this party lacks have
 * finished the job and no longer keep its messages (this party fell behind for good, e.g. its links
 * were cut while the others ran more jobs than they keep for re-sending). Its state is behind theirs:
 * it must recover() its shares (the party also emits 'stale').
 */
export class JobMessagesGoneError extends Error {
  constructor(readonly job: string, readonly round: number, readonly gone: readonly number[]) {
    super(`job ${job}, round ${round}: parties ${gone.join(', ')} have finished this job and no longer keep its messages, and too few others can send the shares still missing; this party is behind for good and must recover its shares`);
    this.name = 'JobMessagesGoneError';
  }
}

/** Raised (or reported) when fewer than t+1 parties are alive: nothing can be opened. */
export class QuorumLostError extends Error {
  constructor(readonly alive: number, readonly needed: number) {
    super(`quorum lost: ${alive} parties alive, ${needed} needed`);
    this.name = 'QuorumLostError';
  }
}
