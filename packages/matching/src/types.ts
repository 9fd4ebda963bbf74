// Operations the committee applies to books, and their results. Public fields are plain JSON-able
// values (bigint for sequence numbers and times); secret fields are S.

export type Side = 'buy' | 'sell';
export type OrderType = 'limit' | 'market' | 'peg';
export type TimeInForce = 'GTC' | 'GTT' | 'IOC' | 'FOK';

/** Place an order. Preconditions the gateway checks (nodes cannot): 0 < qty, price, min_fill < 2^48, min_fill <= qty. */
export interface PlaceOp<S> {
  kind: 'place';
  symbol: string;
  orderId: string;
  /** Global sequence number: public time priority; strictly increasing per book. */
  seq: bigint;
  /** Sequenced time (ns). When given, GTT orders due at this time are expired first. */
  nowNs?: bigint;
  side: Side;
  type: OrderType;
  tif: TimeInForce;
  /** Ticks. limit: the limit; market: the cap, or null for none; peg: the price the committee driver derived from the public oracle reference. */
  price: S | null;
  /** Steps. */
  qty: S;
  /** Owner (account) id as a secret integer < 2^48; enables self-trade prevention. */
  owner?: S | null;
  /** GTT only: public expiry time (ns). */
  expiresAtNs?: bigint | null;
  /** All-or-none (IOC or FOK only). */
  aon?: boolean;
  /** Minimum quantity of the entry execution (IOC or FOK only); secret. */
  minFill?: S | null;
}

/** Cancel a resting order by id (public lookup). */
export interface CancelOp {
  kind: 'cancel';
  symbol: string;
  orderId: string;
  seq?: bigint;
  nowNs?: bigint;
}

/**
 * Modify a resting order. qtyDelta = new original quantity − old original quantity (secret, signed).
 * 'reduce' keeps time priority (delta is clamped to <= 0 obliviously, price unchanged);
 * 'replace' (price change and/or quantity up) = cancel + a new order with this op's seq, same id.
 */
export interface ModifyOp<S> {
  kind: 'modify';
  symbol: string;
  orderId: string;
  seq: bigint;
  nowNs?: bigint;
  mode: 'reduce' | 'replace';
  qtyDelta: S;
  /** replace only: the new limit price, or null/absent to keep the old one. */
  price?: S | null;
}

/** Expire GTT orders whose expiry <= nowNs, on one symbol or (symbol absent) on every book. */
export interface ExpireOp {
  kind: 'expire';
  symbol?: string;
  nowNs: bigint;
  seq?: bigint;
}

export type Op<S> = PlaceOp<S> | CancelOp | ModifyOp<S> | ExpireOp;

export type RemainderCancelReason = 'IOC_REMAINDER' | 'FOK_NOT_FILLED' | 'GTT_EXPIRED';
export type MatchRejectReason = 'UNSUPPORTED_ORDER' | 'DUPLICATE_ORDER_ID' | 'BOOK_DEPTH_EXCEEDED' | 'UNKNOWN_SYMBOL';

export interface Reject {
  reason: MatchRejectReason;
  /** Machine code (e.g. 'MARKET_TIF') and a sentence for logs. */
  code: string;
  detail: string;
}

/** What the nodes publicly know about one taker execution (a placement or a replace). */
export interface Execution {
  /** Maker order ids in fill order. Fill i's qty and price are secret outputs [base+2i], [base+2i+1]. */
  fills: string[];
  /** Resting orders cancelled with SELF_TRADE_PREVENTION, in the order met. */
  selfTradeCancelled: string[];
  /** The taker's whole quantity was filled. */
  takerFilled: boolean;
  /** The remainder rests in the book. */
  rested: boolean;
  /** Why a remainder was cancelled, or null (filled or rested). */
  cancelReason: RemainderCancelReason | null;
}

export interface PlaceOutcome extends Execution {
  kind: 'place';
  symbol: string;
  orderId: string;
  /** GTT orders of this book expired (GTT_EXPIRED) at nowNs before the placement. */
  expired: string[];
  reject: Reject | null;
}

export interface CancelOutcome {
  kind: 'cancel';
  symbol: string;
  orderId: string;
  /** The order was live and is now cancelled (USER_REQUESTED). */
  found: boolean;
  expired: string[];
}

export interface ModifyOutcome {
  kind: 'modify';
  symbol: string;
  orderId: string;
  mode: 'reduce' | 'replace';
  /** The order was live. */
  found: boolean;
  /** The new remaining quantity was <= 0: the order left the book (the gateway reports it done). */
  exhausted: boolean;
  /** replace: the new order's execution (its fills are the secret outputs); reduce: null. */
  execution: Execution | null;
  expired: string[];
  reject: Reject | null;
}

export interface ExpireOutcome {
  kind: 'expire';
  nowNs: bigint;
  /** Expired GTT orders, per book, in (expiry, seq) order. */
  expired: { symbol: string; orderId: string }[];
}

export type Outcome = PlaceOutcome | CancelOutcome | ModifyOutcome | ExpireOutcome;

/** The public outcome (known to every node) and the secret outputs, opened to the gateway only. */
export interface OpResult<S> {
  outcome: Outcome;
  /** Per fill, in order: [qty (steps), price (ticks, the maker's)]. Nothing else today. */
  outputs: S[];
}

/** Raised for orders the algorithm does not support (see README "Supported orders"). */
export class UnsupportedOrderError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'UnsupportedOrderError';
  }
}

/** Raised when a public invariant of a book is broken (a bug or a misordered feed); fatal for the book. */
export class BookInvariantError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BookInvariantError';
  }
}
