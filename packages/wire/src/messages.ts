// Internal frames between gateway, sequencer-enclave and committee nodes. JSON text frames over
// WebSocket (ws). Large integers (sequence numbers, nanosecond times) travel as decimal strings.
// Secret values never appear here in plaintext: they travel as `sealed` blobs (see @tenebra/seal),
// each readable only by its one recipient.

/** Fields the committee nodes see in plaintext for one operation (docs/leakage.md lists each). */
export type PublicFields = Record<string, string | number | boolean | null>;

/** An operation as the gateway submits it: public fields plus one sealed share blob per node. */
export interface SealedOp {
  /** 'place' | 'cancel' | 'modify' | 'expire' (see PlacePub, ModifyPub, ExpirePub below). */
  kind: string;
  symbol: string;
  pub: PublicFields;
  /** sealed[i] is for committee node i+1: base64 of a pair box (gateway -> node i+1, @tenebra/seal PairBox) of encodeFieldVector(shares). */
  sealed: string[];
}

/** Enclave attestation quote (modelled): the platform key signs the measurement and the enclave key. */
export interface Quote {
  measurement: string; // hex sha256 of the enclave's code and configuration
  enclave_pubkey: string; // hex Ed25519 public key of this enclave instance
  issued_at: string; // RFC 3339
  platform_signature: string; // hex Ed25519 signature by the platform (vendor) key
}

// gateway -> sequencer
export interface SubmitFrame { t: 'submit'; rid: string; op: SealedOp }
// sequencer -> gateway
export interface AckFrame { t: 'ack'; rid: string; seq: string; ts_ns: string }
export interface NackFrame { t: 'nack'; rid: string; code: string; message: string }
// sequencer -> anyone, first frame of every connection
export interface QuoteFrame { t: 'quote'; quote: Quote }

// node -> sequencer: start (or resume) the feed at from_seq (inclusive)
export interface FeedHelloFrame { t: 'feed'; node: number; from_seq: string }
/**
 * node -> sequencer, on the feed connection: every op up to `taken` (inclusive; '0' for none) is in
 * an MPC job this node has started. The sequencer closes the next job when the committee has taken
 * the last one it closed (docs/decisions/0008-job-boundaries.md).
 */
export interface ProgressFrame { t: 'progress'; taken: string }

/**
 * Kind of the record the sequencer itself journals to close a job when no op arrives to carry the
 * boundary: it has a seq of its own, no share (`sealed` is '') and batch_end true; nodes answer it
 * with a result whose outcome is `{ kind: 'job_end' }`, which the gateway applies as nothing.
 */
export const JOB_END_KIND = 'job_end';
// sequencer -> node: one journaled operation, with only this node's sealed share
export interface SequencedFrame {
  t: 'op';
  seq: string;
  ts_ns: string;
  kind: string;
  symbol: string;
  pub: PublicFields;
  sealed: string;
  /**
   * True on the last op of an MPC job. The sequencer decides where jobs end from the nodes' progress
   * (ProgressFrame): while the committee is busy, ops gather into the next job. Stored in the
   * journal, so every node sees the same boundaries, also on replay: nodes cut MPC jobs there
   * deterministically (and after 256 ops without one).
   */
  batch_end: boolean;
}

// ---- Link authentication (docs/decisions/0003-internal-authentication.md) ----
/** What a client connection is for; signed, so a proof made for one link is useless on another. */
export type LinkPurpose = 'results' | 'feed' | 'submit';
/** Who a client claims to be: a committee node (id = its index) or the gateway (id = 0). */
export type LinkRole = 'node' | 'gateway';
// server -> client, first (gateway) or second (sequencer, after the quote) frame: a fresh nonce
export interface AuthChallengeFrame { t: 'auth_challenge'; nonce: string }
// client -> sequencer: Ed25519 signature by the client's link key over linkAuthMessage(...)
export interface AuthFrame { t: 'auth'; role: LinkRole; id: number; purpose: LinkPurpose; key: string; nonce: string; sig: string }
// sequencer -> client: the auth frame verified; the connection may now submit or feed
export interface AuthOkFrame { t: 'auth_ok'; role: LinkRole; id: number }
// server -> client, then the server closes: why the client was refused (LinkAuthCode)
export interface AuthRefusedFrame { t: 'auth_refused'; code: string; message: string }

// node -> gateway (gateway's internal listener), answering the gateway's auth_challenge: the node's
// link key signs the nonce (purpose 'results'), the same proof as AuthFrame with role 'node', id node.
// `challenge` is the node's own fresh nonce, which the gateway signs back in its resume frame.
export interface ResultHelloFrame {
  t: 'hello'; node: number; purpose: LinkPurpose; key: string; nonce: string; sig: string; challenge: string;
}
// gateway -> node: send results from from_seq (inclusive). key/sig: the gateway's link key and its
// signature over the node's hello challenge (see gatewayResultsProof), so the node knows it is the gateway.
export interface ResumeFrame { t: 'resume'; from_seq: string; key: string; sig: string }
/** The outcome of one sequenced op at one node: what the nodes revealed, plus this node's output shares. */
export interface ResultFrame {
  t: 'result';
  node: number;
  seq: string;
  /** JSON outcome the nodes revealed among themselves, e.g. PlaceOutcome / CancelOutcome below. */
  pub: Record<string, unknown>;
  /** base64 of a pair box (this node -> gateway, @tenebra/seal PairBox) of encodeFieldVector(output shares); empty string when no secret output. */
  sealed: string;
  /**
   * The MPC job attempt that produced it (the engine's job id, e.g. `batch:40-40:1`): the gateway
   * combines only results of one attempt, since a party outside the quorum may release results of an
   * attempt that the others retried under a new id (ADR 0009, 0023).
   */
  job: string;
}

/**
 * node -> gateway, on the results link every few seconds and when it changes: what this node's
 * preprocessing reserve still covers (docs/decisions/0016-outage-capacity.md). `production`:
 * `running` (making items), `idle` (reserve at target), `stopped` (fewer nodes alive than production
 * needs: the reserve only shrinks); `exhausted`: the node's current job failed for want of
 * preprocessing and waits for production to resume. `orders_left`: ops the reserve covers at the
 * measured cost per applied op (decimal), '' before any cost is known.
 */
export interface CapacityFrame {
  t: 'capacity';
  node: number;
  production: 'running' | 'idle' | 'stopped';
  exhausted: boolean;
  orders_left: string;
}

// client -> sequencer, after the quote: prove that you hold the quoted enclave key (anti-replay).
export interface ChallengeFrame { t: 'challenge'; nonce: string }
// sequencer -> client: hex Ed25519 signature by the enclave key over the challenge (see @tenebra/seal).
export interface ProofFrame { t: 'proof'; nonce: string; sig: string }

/** Frames of the sequencer's mutual-authentication step, sent to either kind of client. */
export type SequencerAuthFrame = AuthChallengeFrame | AuthOkFrame | AuthRefusedFrame;
export type GatewayToSequencer = SubmitFrame | ChallengeFrame | AuthFrame;
export type SequencerToGateway = AckFrame | NackFrame | QuoteFrame | ProofFrame | SequencerAuthFrame;
export type NodeToSequencer = FeedHelloFrame | ProgressFrame | ChallengeFrame | AuthFrame;
/** NackFrame here (rid '') reports a refused feed request, e.g. from_seq beyond the journal. */
export type SequencerToNode = QuoteFrame | ProofFrame | SequencedFrame | NackFrame | SequencerAuthFrame;
export type NodeToGateway = ResultHelloFrame | ResultFrame | CapacityFrame;
export type GatewayToNode = ResumeFrame | AuthChallengeFrame | AuthRefusedFrame;

/** Outcome of a 'place' op. Secret output vector (sealed to the gateway): per fill, [qty_steps, price_ticks]. */
export interface PlaceOutcome {
  kind: 'place';
  order_id: string;
  /** maker order ids, in fill order; fill i's qty and price are secret outputs 2i and 2i+1 */
  fills: string[];
  rested: boolean;
  /** why an unfilled remainder was cancelled (e.g. 'IOC_REMAINDER'), or null */
  cancel_reason: string | null;
  /** set when the committee rejected the op (e.g. 'INVALID_PRICE'), or null */
  reject_reason: string | null;
  /** machine code of the reject (e.g. 'MARKET_TIF'), or null (issue 4) */
  reject_code?: string | null;
  reject_detail?: string | null;
  /** resting orders cancelled by self-trade prevention on the way (issue 4) */
  self_trade_cancelled?: string[];
  /** GTT orders of the book expired at the op's sequenced time before it ran */
  expired?: string[];
}

/** Outcome of a 'cancel' op. No secret output. */
export interface CancelOutcome {
  kind: 'cancel';
  order_id: string;
  found: boolean;
  expired?: string[];
}

// ---- Order operations of issue 4: the public fields of each kind and its secret vector. ----
// Every kind's secret vector has a fixed length; pub flags say which elements carry a value (the
// others are 0). docs/orders.md of the project describes the layout; gateway/src/sharing.ts writes
// it and committee/src/apply.ts reads it.

/** Secret vector of a 'place' op: [price_ticks, qty_steps, owner_id, min_fill_steps]. */
export const PLACE_VECTOR = ['price_ticks', 'qty_steps', 'owner_id', 'min_fill_steps'] as const;
/** Secret vector of a 'modify' op: [qty_delta_steps (signed), new_price_ticks]. */
export const MODIFY_VECTOR = ['qty_delta_steps', 'new_price_ticks'] as const;

/** Public fields of a 'place' op (what every node sees). */
export interface PlacePub {
  order_id: string;
  side: 'buy' | 'sell';
  type: 'limit' | 'market' | 'peg';
  time_in_force: 'GTC' | 'GTT' | 'IOC' | 'FOK';
  /** market only: true when element 0 holds a price cap (default false) */
  market_cap?: boolean;
  /** peg only: the price in ticks the gateway derived from the oracle reference (decimal string) */
  peg_price_ticks?: string;
  /** GTT only: expiry, ns since the epoch (decimal string) */
  expires_at_ns?: string;
  /** all-or-none (default false) */
  aon?: boolean;
  /** true when element 3 holds min_fill_size in steps (default false) */
  min_fill?: boolean;
  /** false when element 2 carries no owner (no self-trade prevention; default true) */
  owner?: boolean;
}

/** Public fields of a 'modify' op. */
export interface ModifyPub {
  order_id: string;
  /** reduce: quantity down, priority kept; replace: new price and/or quantity up, priority lost */
  mode: 'reduce' | 'replace';
  /** replace only: true when element 1 holds a new price */
  price_change: boolean;
}

/** Public fields of an 'expire' op (its symbol may be '' for every book). Secret vector: empty. */
export interface ExpirePub {
  order_id: '';
}

/** Outcome of a 'modify' op. Secret outputs: per fill of a replace, [qty_steps, price_ticks]. */
export interface ModifyOutcome {
  kind: 'modify';
  order_id: string;
  mode: 'reduce' | 'replace';
  /** the order was live */
  found: boolean;
  /** the new remaining quantity was <= 0: the order left the book */
  exhausted: boolean;
  /** replace: the new order's fills (maker ids), else [] */
  fills: string[];
  /** replace: whether the remainder rests (null for reduce or when nothing was executed) */
  rested: boolean | null;
  cancel_reason: string | null;
  self_trade_cancelled: string[];
  reject_reason: string | null;
  reject_code?: string | null;
  expired: string[];
}

/** Outcome of an 'expire' op. No secret output. */
export interface ExpireOutcome {
  kind: 'expire';
  /** the sequenced time the op ran at (ns, decimal string) */
  now_ns: string;
  /** expired GTT order ids (ids are unique across symbols) */
  expired: string[];
}
