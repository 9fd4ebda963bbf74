// Preprocessing: Beaver triples and random nibbles, made by the committee itself (default) or by a
// seeded dealer (INSECURE, experiments only), kept in a Reserve (reserve.ts).
//
// Committee production (a batch's participant set S: all n parties, or, with n >= 2t+2, the parties
// its proposer saw up, at least max(2t+1, majority); degree reduction of a product needs 2t+1 of
// them; "participants" below and docs/decisions/0017-production-with-parties-down.md):
//  - triples: a, b from PRSS (prss.ts), c = a*b by Gennaro, Rabin, Rabin (PODC 1998) resharing of
//    the local degree-2t product: each party Shamir-shares its product share, everyone combines the
//    received shares with the degree-2t Lagrange coefficients at 0 (over S). Seeded (grr.ts): a
//    dealer's shares for the t members after it in S come from a key stream the two share, so only
//    |S|-1-t rows are sent. Scaled (grr.ts, dealGrr): each dealer reshares D h (one denominator D for
//    the set), so its shares are integer combinations, and each party scales its sum by D^-1 once.
//  - random bits (the square-root trick, e.g. Damgard, Fitzi, Kiltz, Nielsen, Toft, TCC 2006): r from
//    PRSS, y = r^2 (degree 2t), index e opened only by the member at position e mod |S| of S (party
//    e mod n + 1 when S is everyone) from every member's term lambda_i r_i^2, masked by pair streams
//    that cancel in its sum (squareTerms), which sends 1/s, s = sqrt(y) the canonical root, to all
//    members; bit = (r/s + 1)/2. Nobody learns r, so r/s = +-1 is uniform. The root is a public function of a
//    public value: one party computes it.
//  - nibbles: 4 values r0..r3, their 6 pair products in the first GRR layer (round 0, beside the
//    squares) and their 5 higher products in the second (round 1, beside the roots); with the signs
//    b_i = r_i/s_i every product of bits is the public multiple r_T / s_T of one of them, so the
//    stored form ([v > j] and v) is local at the end (nibblesFromSigns). Two rounds; the products of
//    the bits x_i themselves took two more, after the roots, until 2026-12-02 (ADR 0027).
//  - closure items (closure.ts: LEX4 for less-than's tree, PROD4 for equality's): masks from PRSS,
//    the products of two masks in the first GRR layer (with the triples), the products of three or
//    four masks (a pair product times a mask or another pair) in the second.
// No single party learns any triple or bit: every value is a sum over PRSS subsets or a resharing.
// Phase A is deterministic per party (GRR seeds from PRSS-keyed pair streams under the batch's
// nonce), so a party that recomputes a batch after a restart sends the messages the peers already
// used.
// All of it computes on encoded vectors (16 bytes per element) in the WebAssembly field kernel
// (kernel.ts): no BigInt per element, which made production about 5x faster.
//
// Consistency across failures (batch b; all parties run batches in number order, one at a time):
// whether b is committed or dropped is decided by Fast Paxos, one instance per batch, all n parties
// acceptors (docs/decisions/0009-preprocessing-termination.md has the argument).
//  - Ballot 0, the path without failures: phase A computes the items; the party stages them and
//    sends ready(b) (a vote "commit" at ballot 0). Ready from all n (all of S) decides commit at once. A party
//    that has not sent ready may veto b instead (a vote "drop" at ballot 0; it then never sends
//    ready): when a peer it lost in phase A is still down 1 s later (a reset stream or a short
//    freeze costs nothing), or when an operation needs production and it does not see all n up. A
//    veto only rules out the fast path; it drops nothing by itself.
//  - Classic ballots (k*n + party): when the fast path cannot finish (a veto or an abstention was
//    heard, or an operation waits for b while some party is down), a party coordinates: prepare,
//    promises from a majority (each promiser never votes at ballot 0 afterwards and reports its
//    ballot-0 vote, its last accepted value and the vetoes it heard), then accept. The value is the
//    last accepted one if any promiser accepted one, "commit" if every promiser voted commit at
//    ballot 0 and no veto is known (it may have been decided there, and those t+1 parties hold the
//    items), "drop" otherwise: a known veto rules commit out at ballot 0, and dropping spares the
//    vetoer, which cannot stage b, from ending stale. Accepted from a majority decides it. So the
//    three parties left after two deaths decide every batch.
//  - Every vote (ready, veto, promise, accept) goes out only once the state holding it is durable
//    (PrepHost.persistVote), so a party restarted from its own state never votes twice. A party
//    recovered from a memory loss abstains on the batch then in flight (its votes are gone): it never
//    votes on it, only learns the outcome (it may still compute and stage it: phase A is
//    deterministic).
//  - A party that keeps no phase-A messages for b (restored with b staged, or past b) answers a
//    peer's phase-A message of b with rounds-gone(b); a party that lacks one of its messages then
//    vetoes b at once (or is stale if b was decided commit) instead of waiting out the silence.
//  - A decision reaches everyone through decided messages (committed(b), dropped(b)) and through the
//    piggybacked log of every message; committed(b) goes only to a peer that no other message of
//    ours reaches within 50 ms of the commit (announceCommit, ADR 0040). A commit decided where this party never staged b makes it
//    stale (recover()); a party still in phase A with every missing sender up stages and commits.
//  - A party stale for lack of exactly one committed batch b while fewer than t+1 other parties are
//    up (share recovery cannot find helpers) asks to void b: one more Paxos instance per batch over
//    the same acceptors and ballots (void.ts; the "voiding" section below). Void drops b's items at
//    the same position of every reserve; it is chosen only while no finished job consumed any of b.
//  Consumption is FIFO over committed batches only. An operation that would exhaust the reserve waits
//  for the batch in flight to be decided; with none it produces inline if it sees all n up; otherwise
//  (or if the batch it waited for is dropped) it throws PreprocessingExhaustedError. Every party
//  decides identically: the committed reserve is the same everywhere, and so is every decision.
//
// Composition (what a batch makes): the party that starts a batch proposes it, making the full
// per-batch count of each kind below its target (or below what a waiting operation needs) and none
// of the others, so a kind that consumption does not use stops being made once it reaches its
// target (with a fixed mix, unused triples piled up without bound under sustained load). Parties
// start batches at different moments, so proposals can differ. Every PrepRound message carries its
// composition; a party in round 0 that hears a larger one (a total order on the counts) switches to
// it and computes round 0 again, with PRSS nonces that include the composition (fresh masks); a
// smaller one is ignored, since its proposer switches on hearing ours. Leaving round 0 needs all n
// parties' round-0 messages under one composition, so once anyone has left it nobody can still be
// on another (a party only ever switches up, and a proposer of a larger one would never have sent
// ours). Ready, commit and veto are unchanged.

import { PreprocessingExhaustedError } from './api';
import { ELEMENT_BYTES, P, copyElement, decodeFieldVector, encodeFieldVector, inv, mod, reduce, reduceWide, words } from './field';
import {
  invEncoded, lincombEncoded, markCanonical, mulEncoded, nibblesFromSignsEncoded, productsCount, sqrtEncoded, type ProductsSpec,
} from './kernel';
import { dealGrrProductsSending, grrRecombine, seededPeers } from './grr';
import { Msg, type Envelope } from './messages';
import { KINDS, NIBBLE_VALUE, NIBBLE_WIDTH, Reserve, countsOf, emptyItems, zeroCounts, type Counts, type ItemVectors, type Kind } from './reserve';
import { LEX4, PROD4, closureItemOf, closurePlan, type ClosurePlan, type ClosureShape } from './closure';
import { lagrange, type FieldRng } from './shamir';
import type { Prss } from './prss';
import type { PrepLog } from './state';
import { chooseVoid, newVoid, parsePrepare, parsePromise, parseValueKey, prepareKey, promiseKey, valueKey, type VoidInst, type VoidPromise, type VoidValue } from './void';
import { createCipheriv, createHash } from 'node:crypto';

const EMPTY = new Uint8Array(0);

/** Elements [from, to) of an encoded vector. */
function slice(v: Uint8Array, from: number, to: number): Uint8Array {
  return v.subarray(from * ELEMENT_BYTES, to * ELEMENT_BYTES);
}

/** Items of width vs.length from equally long encoded vectors: [vs[0][i], vs[1][i], ...] for each i. */
function interleave(vs: readonly Uint8Array[]): Uint8Array {
  const w = vs.length;
  const m = vs[0]!.length / ELEMENT_BYTES;
  const out = new Uint8Array(m * w * ELEMENT_BYTES);
  const o32 = words(out);
  vs.forEach((v, k) => {
    if (v.length !== m * ELEMENT_BYTES) throw new Error('internal: interleave of unequal vectors');
    const s32 = words(v);
    for (let i = 0; i < m; i++) copyElement(s32, i, o32, i * w + k);
  });
  return out;
}

/**
 * Elements pos, pos+s, pos+2s, ... of an encoded vector: the squares whose roots the member at
 * position pos (0-based) of a participant set of s members takes (with S all n: party pos+1).
 */
function rootPart(v: Uint8Array, pos: number, s: number): Uint8Array {
  const count = v.length / ELEMENT_BYTES;
  const out = new Uint8Array(Math.ceil(Math.max(0, count - pos) / s) * ELEMENT_BYTES);
  const o32 = words(out);
  const s32 = words(v);
  for (let e = pos, k = 0; e < count; e += s, k++) copyElement(s32, e, o32, k);
  return out;
}

/** The last phase-A round of a batch (its messages are the last a member sends before ready). */
export const LAST_PREP_ROUND = 1;
/** Batch.round once staged. */
const STAGED_ROUND = LAST_PREP_ROUND + 1;

/** The 16 bytes at o are all zero (any offset: no 32-bit view, which wire vectors may not allow). */
function isZeroElement(v: Uint8Array, o: number): boolean {
  for (let i = 0; i < ELEMENT_BYTES; i++) if (v[o + i] !== 0) return false;
  return true;
}

/**
 * The nibbles' stored form from the r values, their pair and higher products (degree t) and the
 * public inverse roots 1/s (every party holds the same ones, so every party takes the same path):
 * the field kernel, or, when some root is 0 (r = 0, probability 2^-127 per bit; sent as 0), the
 * BigInt formula, where that bit is 0 (r itself shares 0, as before).
 */
function nibblesOfSigns(r: Uint8Array, p2: Uint8Array, p3: Uint8Array, roots: Uint8Array): Uint8Array {
  let zero = false;
  for (let o = 0; o < roots.length && !zero; o += ELEMENT_BYTES) zero = isZeroElement(roots, o);
  if (!zero) return nibblesFromSignsEncoded(r, p2, p3, roots);
  const dec = (v: Uint8Array): bigint[] => decodeFieldVector(v);
  return encodeFieldVector(nibblesFromSigns(dec(r), dec(p2), dec(p3), dec(roots), roots.length / ELEMENT_BYTES / 4));
}

function planOf(kind: ClosureKind): ClosurePlan {
  return CLOSURES.find((c) => c.kind === kind)!.plan;
}

/**
 * Parties that must be up for a preprocessing batch to start (docs/decisions/0017): all n when
 * n = 2t + 1 (degree reduction needs 2t + 1), else max(2t + 1, majority), the least participant set.
 */
export function productionQuorum(n: number, t: number): number {
  const least = Math.max(2 * t + 1, Math.floor(n / 2) + 1);
  return least < n ? least : n;
}

/** Preprocessing options (identical at every party). */
export interface PreprocessingOptions {
  /** 'committee' (default): the parties make their own material. 'dealer': a seeded dealer, INSECURE. */
  mode?: 'committee' | 'dealer';
  /** Background production keeps at least this many triples (default 2048). */
  targetTriples?: number;
  /** Background production keeps at least this many random bits (stored as 4-bit nibbles; default 4096). */
  targetBits?: number;
  /**
   * LEX4 closure items (less-than's tree: 4 per comparison of 13 blocks at L = 48, 3 of 9 at L = 32;
   * default that share of the nibbles, as if every comparison were a less-than).
   */
  targetLex4?: number;
  /** PROD4 closure items (equality's tree, as many per equality test as lex4 per less-than; default a quarter of targetLex4). */
  targetProd4?: number;
  /**
   * Items per batch of the kind with the largest target (default 256); the other kinds in proportion
   * to their targets, so a batch matches the configured mix.
   */
  batch?: number;
  /** Dealer mode seed (default 'tenebra-insecure-dealer'). */
  dealerSeed?: string;
  /** Produce in the background between jobs (default true); false: only inline, when a job needs it. */
  background?: boolean;
  /**
   * Run each phase-A step in pieces (default false): between pieces the step gives the event loop
   * back (PrepHost.defer), so an online round's messages and flush run in between, and a job that
   * starts mid-step parks the rest of it like a whole step (see "when phase-A work runs"). Every
   * value and message is the one the unsplit step makes. Without a host defer hook it has no effect.
   */
  pieces?: boolean;
}

/** The label used wherever dealer mode is on. */
export const DEALER_LABEL = 'dealer (INSECURE, experiments only)';

/** What one operation (or a whole round) consumes, per kind. */
export type Needs = Counts;

type BatchState = 'running' | 'staged' | 'committed' | 'dropped';
type Decision = 'commit' | 'drop';

/** This party's votes on the batch in flight (persisted with it: a restart must not vote twice). */
export interface BatchVote {
  /** Ballot 0: 'commit' once ready was sent, 'drop' once vetoed. */
  vote0?: Decision;
  /** Highest classic ballot promised (0: none); no ballot-0 vote after a promise. */
  promised: number;
  /** Highest classic ballot accepted, with its value. */
  accepted?: { ballot: number; value: Decision };
  /** The batch's participant set when not all n (ADR 0017): a ballot must read our commit vote against it. */
  members?: number[];
  /** We are outside that set: we never vote at ballot 0 on it. */
  outsider?: boolean;
}

interface Batch {
  id: number;
  state: BatchState;
  /** Items of each kind this batch makes: the largest proposal heard (see "Composition" in the header). */
  per: Counts;
  /**
   * The participant set S of the proposal (sorted party ids), undefined when it is all n parties
   * (always so when n = 2t+1). Only S computes, votes ready and holds the items (ADR 0017).
   */
  members?: number[];
  /** This party is not in the proposal's S: it never computes b nor votes at ballot 0 (an acceptor and learner only). */
  outsider: boolean;
  /** Set EXCLUDED_BUSY_MS after b started: a recovery request from a party outside S is answered from then on. */
  busyOver?: boolean;
  readies: Set<number>;
  /** Phase-A round currently computed (0: first GRR layer + squares, 1: roots + second GRR layer), STAGED_ROUND when staged. */
  round: number;
  incoming: Map<number, Map<number, Envelope>>;
  sent: Map<number, Map<number, Uint8Array>>; // round -> to -> bytes (for re-sends)
  items?: ItemVectors;
  // phase-A intermediates
  // (all encoded, 16 bytes big-endian per element: the field kernel computes on them as they are)
  a?: Uint8Array;
  b?: Uint8Array;
  /** This party's GRR rows (row j-1 goes to party j). */
  ownGrr?: Uint8Array[];
  r?: Uint8Array;
  /** This party's shares of the squares, all of them (degree 2t); each party gets the part it takes the roots of. */
  y?: Uint8Array;
  /** The opened squares whose roots this party takes (indices self-1, self-1+n, ...). */
  Y?: Uint8Array;
  ownRoots?: Uint8Array;
  /** The nibbles' pair products r_i r_j (degree t, after the first GRR layer). */
  p2?: Uint8Array;
  waiters: { resolve: () => void }[];
  /** closure kinds: the masks (one vector per factor) and, after the first GRR round, the pair products */
  closures?: { kind: ClosureKind; masks: Uint8Array[]; pairs?: Uint8Array[] }[];
  /** messages received for this batch (a re-send fires only when it stops growing) */
  heard: number;
  // ---- deciding it (Fast Paxos; see the header) ----
  vote0?: Decision;
  promised: number;
  accepted?: { ballot: number; value: Decision };
  /** Parties known to have vetoed b or to abstain on it: ready from all n will not come. */
  noFast: Set<number>;
  /**
   * Parties known to have vetoed b (a ballot-0 vote "drop", durable and final): with any, commit was
   * not decided at ballot 0, so a ballot is free to drop b. Not abstainers: their votes are unknown.
   */
  vetoes: Set<number>;
  /** Largest ballot heard of (our next one is above it). */
  maxBallot: number;
  /** Learner: accepted(ballot, value) senders per ballot. */
  learned: Map<number, { value: Decision; from: Set<number> }>;
  /** Our classic round as coordinator. */
  coord?: {
    ballot: number;
    promises: Map<number, PromiseVotes>;
    proposed?: Decision;
    /** Waiting (PROMISE_WAIT_MS at most) for the promises of every party seen up before choosing commit. */
    waitingAll?: boolean;
    waitedAll?: boolean;
  };
  /** A coordination attempt is scheduled. */
  termScheduled: boolean;
  /** Decided commit while we were still in phase A: commit as soon as it is staged. */
  decidedCommit: boolean;
  /** A veto is due if a peer lost in phase A has not come back by then (PEER_DOWN_VETO_MS). */
  vetoArmed: boolean;
  /** Consecutive re-send periods in which nothing new arrived for b (see armResend). */
  silentPeriods: number;
  /** Peers that said they keep no phase-A messages for b (rounds-gone) while we still lacked theirs. */
  roundsGone: Set<number>;
  /** Rebuilt by restore() from a persisted state: our previous incarnation may have gone past it. */
  restored: boolean;
  /** We do not compute this batch (we vetoed it, or know it only from votes): we vote and learn. */
  inert: boolean;
  /** Our votes on it were lost with our memory: never vote, only learn. */
  abstain: boolean;
  /** Bumped whenever b's phase-A data is thrown away (a switch of proposal, going inert): a step in pieces begun before stops. */
  epoch: number;
  /** The phase-A step under way in pieces, between two of them (see runPhaseAStep). */
  step?: StepInPieces;
}

/** A phase-A step that gives the event loop back between its pieces (PreprocessingOptions.pieces). */
interface StepInPieces {
  gen: Generator<void, void, void>;
  /** b.epoch when it began: a different one means b's data was reset under it. */
  epoch: number;
  round: number;
  busy: boolean;
  /** performance.now() at its first piece. */
  t0: number;
  /** Summed piece time, the longest piece, the piece count. */
  ms: number;
  maxMs: number;
  pieces: number;
  /** How the next piece runs: from host.defer, from the parked slot (a job started), or it is running now. */
  wait: 'deferred' | 'parked' | 'running';
  /** Something arrived for b while the step was under way: try the round again once it ends. */
  again: boolean;
}

/** What the preprocessor needs from its party. */
export interface PrepHost {
  readonly n: number;
  readonly t: number;
  readonly self: number;
  /** What one less-than consumes at the party's L (its declared cost: sizes the default lex4 target). */
  readonly lessThan: { nibbles: number; lex4: number };
  prss(): Prss;
  allUp(): boolean;
  aliveCount(): number;
  send(to: number, bytes: Uint8Array): void;
  /** Encodes a message with the piggybacked preprocessing log. */
  envelope(m: { type: Msg; a?: number; b?: number; key?: string; vectors?: readonly (readonly bigint[] | Uint8Array)[]; extra?: Uint8Array }): Uint8Array;
  log(ev: Record<string, unknown>): void;
  emitBatch(ev: { batch: number; state: 'staged' | 'committed' | 'dropped' } & Counts): void;
  /** True while no job is running (background batches start only then). */
  idle(): boolean;
  /** Runs fn after ms on the party's clock (simulated or real); returns a cancel function. */
  setTimer(fn: () => void, ms: number): () => void;
  /**
   * Runs fn once what is already pending has run (real clock: setImmediate, after the I/O that came
   * in meanwhile; simulated: deterministically, at the current virtual time). Phase-A pieces
   * (PreprocessingOptions.pieces) resume from here; without it a step runs whole.
   */
  defer?: (fn: () => void) => void;
  isUp(peer: number): boolean;
  /**
   * Called before this party sends a vote on batch b (ready, veto, promise, accept); the vote waits
   * until it resolves (PartyOptions.beforePrepVote: make the state as of now durable first, which
   * holds a staged batch and every vote).
   */
  persistVote?: (batch: number) => Promise<void>;
  /** Reserve positions consumed by finished jobs (the cursor at the last job boundary; default: the cursor). */
  boundaryCursor?: () => Counts;
  /**
   * A void instance was decided here. `touched`: the running job took items of the voided batch
   * (fail it, PreprocessingExhaustedError); otherwise a round held by the instance's lock may go on.
   */
  onVoidDecided?: (value: VoidValue, touched: boolean) => void;
}

/** b is past phase A here with none of its own phase-A messages kept (restored staged from a state). */
function keepsNoRounds(b: Batch): boolean {
  return b.state !== 'running' && b.sent.size === 0;
}

/** Persisted form of the preprocessing log. */
export interface PrepSnapshot {
  resolved: number;
  committed: number;
  staged?: { id: number; items: ItemVectors };
  running?: number;
  /** Our votes on the batch in flight (staged or running). */
  vote?: BatchVote;
  /** The batch we abstain on (recovered from a memory loss while it was in flight). */
  abstain?: number;
  /** Our votes in an undecided void instance (see void.ts). */
  voidVote?: VoidVote;
  /** Our last committed batch (a void instance names it; see void.ts). */
  last?: { id: number; c: number; start: Counts; count: Counts };
}

/** An acceptor's memory of a void instance (durable before each promise or accept goes out). */
export interface VoidVote {
  c: number;
  start: Counts;
  promised: number;
  accepted?: { ballot: number; value: VoidValue };
  locked: boolean;
}

type ClosureKind = 'lex4' | 'prod4';
/** The closure kinds, their shapes and production plans. */
const CLOSURES: readonly { kind: ClosureKind; shape: ClosureShape; plan: ClosurePlan }[] = [
  { kind: 'lex4', shape: LEX4, plan: closurePlan(LEX4) },
  { kind: 'prod4', shape: PROD4, plan: closurePlan(PROD4) },
];

/**
 * A batch's proposal as its PrepRound messages carry it: key "triples,lex4,prod4,nibbles", followed by
 * "/i.j.k..." (the participant set) only when that is not all n parties, so the n = 2t+1 wire is
 * unchanged.
 */
function tagKey(per: Counts, members?: readonly number[]): string {
  const counts = KINDS.map((k) => per[k]).join(',');
  return members ? `${counts}/${members.join('.')}` : counts;
}

/** A proposal: composition and participant set (undefined: all n). */
interface Proposal {
  per: Counts;
  members?: number[];
}

function parseTag(key: string, n: number, minMembers: number): Proposal | undefined {
  const [countsText, membersText, ...rest] = key.split('/');
  if (rest.length > 0 || !/^\d+(,\d+)*$/.test(countsText!)) return undefined;
  const counts = countsText!.split(',').map(Number);
  if (counts.length !== KINDS.length || counts.some((c) => !Number.isSafeInteger(c) || c > 1 << 20)) return undefined;
  const per = zeroCounts();
  KINDS.forEach((k, i) => (per[k] = counts[i]!));
  if (membersText === undefined) return { per };
  if (!/^\d+(\.\d+)*$/.test(membersText)) return undefined;
  const members = membersText.split('.').map(Number);
  // sorted, distinct, in 1..n, a proper subset no smaller than the minimum (ADR 0017)
  if (members.some((j, i) => j < 1 || j > n || (i > 0 && j <= members[i - 1]!)) || members.length >= n || members.length < minMembers) return undefined;
  return { per, members };
}

/** A total order on compositions (by kind, in KINDS order): every party converges on the largest proposal. */
function compareCounts(x: Counts, y: Counts): number {
  for (const k of KINDS) if (x[k] !== y[k]) return x[k] - y[k];
  return 0;
}

/**
 * A total order on proposals: more participants first (fewer parties left to recover the batch
 * later), then the composition, then the set itself. With all n always in S (n = 2t+1) it is the
 * composition order alone, as before.
 */
function compareProposals(x: Proposal, y: Proposal, n: number): number {
  const sx = x.members?.length ?? n;
  const sy = y.members?.length ?? n;
  if (sx !== sy) return sx - sy;
  const c = compareCounts(x.per, y.per);
  if (c !== 0 || !x.members || !y.members) return c;
  for (let i = 0; i < x.members.length; i++) if (x.members[i] !== y.members[i]) return y.members[i]! - x.members[i]!;
  return 0;
}

/** What an exhausted kind is called in PreprocessingExhaustedError. */
const KIND_NAMES: Record<Kind, string> = { triples: 'triples', lex4: 'comparison closure items (lex4)', prod4: 'equality closure items (prod4)', nibbles: 'random bits' };

const MAX_FUTURE_BATCH_MESSAGES = 256;
/**
 * The round number of a proposal notice: a PrepRound without vectors that a member of a batch's
 * participant set sends to a party outside it (ADR 0017), which then stays out of the batch.
 */
const NOTICE_ROUND = 0xffff;
/** See Preprocessor.excludes (below the committee node's 15 s wait for recovery helpers). */
const EXCLUDED_BUSY_MS = 5_000;
/** A party's first coordination attempt waits (party - 1) times this, so party 1 usually leads alone. */
const TERM_STAGGER_MS = 20;
/** An undecided batch is coordinated again, with a higher ballot, after this (plus the stagger). */
const TERM_RETRY_MS = 500;
/**
 * A coordinator about to choose commit from ballot-0 votes waits at most this long for the promises
 * of every party it sees up (a promise takes one round trip plus a durable write).
 */
const PROMISE_WAIT_MS = 150;
/** A batch that has heard nothing new for this long re-sends what it sent (duplicates are ignored). */
const PREP_RESEND_MS = 3_000;
/** How long committed(b) waits for another message of ours to carry the commit to a peer (announceCommit). */
const COMMIT_NOTICE_MS = 50;
/**
 * A party that loses a peer in phase A vetoes the batch only if the peer is still down this much
 * later: a reset stream or a short freeze then costs nothing (the peer's messages are re-sent on
 * reconnect and phase A goes on), while a real death is decided by a ballot soon after. An operation
 * waiting for the batch does not wait for this: it starts a ballot itself.
 */
const PEER_DOWN_VETO_MS = 1_000;
/** A batch in phase A that hears nothing new for this many re-send periods while all n are up is vetoed. */
const SILENT_PERIODS_TO_VETO = 2;
/** A holder locked by its "ok" promise coordinates the void instance itself if it is still undecided this much later. */
const VOID_TAKEOVER_MS = 3_000;

/** Owns the reserve, batch production and the commit protocol of one party. */
export class Preprocessor {
  readonly reserve = new Reserve();
  readonly mode: 'committee' | 'dealer';
  readonly target: Counts;
  /** Items of each kind per batch. */
  readonly per: Counts;
  private readonly dealerSeed: string;
  /** Batches 0..resolved-1 are committed or dropped here. */
  resolved = 0;
  /** Committed batches among 0..resolved-1. */
  committed = 0;
  private current: Batch | undefined;
  private readonly futureMsgs: { from: number; env: Envelope }[] = [];
  /** Vetoes and abstentions heard for batches not started here (id -> parties). */
  private readonly vetoedAhead = new Map<number, { noFast: Set<number>; vetoes: Set<number> }>();
  /** The batch this party abstains on (see the header), if any. */
  private abstainId = -1;
  /** `batch:peer` pairs told rounds-gone already (tellRoundsGone; bounded). */
  private readonly goneTold = new Set<string>();
  /** Votes restored with the batch in flight, acted on at enable() (the party is not running before). */
  private restoredVotes = false;
  private stopped = false;
  private enabled = false;
  /** Set when a peer's log shows a committed batch this party never had: only recovery helps. */
  stale = false;
  // ---- voiding an unconsumed batch (void.ts; decision 0009) ----
  /** The last batch committed here since this party started: a void instance names it by `c`. */
  private lastCommitted: { id: number; c: number; start: Counts; count: Counts } | undefined;
  /** Stale for lack of exactly one committed batch, the one after `c` committed ones (it would start at `start`). */
  private missing: { c: number; id?: number; start: Counts } | undefined;
  /** The void instance in progress, or the last one decided. */
  private voidInst: VoidInst | undefined;
  /** A batch voided here whose first would-be consumer has not run yet (see ensure). */
  private voided: { start: Counts; count: Counts } | undefined;
  /** Counters for status() and benchmarks. */
  readonly stats = { batches: 0, made: zeroCounts(), productionMs: 0, dropped: 0 };
  /** Per peer, the freshSendCount of the last fresh envelope sent to it (sendFresh; announceCommit). */
  private readonly freshSends: number[] = [];
  private freshSendCount = 0;

  constructor(private readonly host: PrepHost, opts: PreprocessingOptions = {}) {
    this.mode = opts.mode ?? 'committee';
    if (this.mode !== 'committee' && this.mode !== 'dealer') throw new Error(`preprocessing mode must be 'committee' or 'dealer', got ${String(opts.mode)}`);
    const batch = opts.batch ?? 256;
    if (!Number.isInteger(batch) || batch < 1 || batch > 65536) throw new Error(`preprocessing batch must be in 1..65536, got ${opts.batch}`);
    const bits = opts.targetBits ?? 4096;
    const nibbles = Math.ceil(bits / 4);
    const lex4 = opts.targetLex4 ?? Math.ceil((nibbles * host.lessThan.lex4) / host.lessThan.nibbles);
    this.target = { triples: opts.targetTriples ?? 2048, lex4, prod4: opts.targetProd4 ?? Math.ceil(lex4 / 4), nibbles };
    for (const k of KINDS) if (!(this.target[k] >= 0)) throw new Error('preprocessing targets must be >= 0');
    const top = Math.max(1, ...KINDS.map((k) => this.target[k]));
    this.per = zeroCounts();
    for (const k of KINDS) this.per[k] = this.target[k] === 0 ? 0 : Math.max(1, Math.ceil((batch * this.target[k]) / top));
    if (KINDS.every((k) => this.per[k] === 0)) for (const k of KINDS) this.per[k] = batch;
    this.dealerSeed = opts.dealerSeed ?? 'tenebra-insecure-dealer';
    this.background = opts.background ?? true;
    this.pieces = (opts.pieces ?? false) && host.defer !== undefined;
  }
  private readonly background: boolean;
  /** Phase-A steps run in pieces (PreprocessingOptions.pieces, and the host can defer). */
  private readonly pieces: boolean;

  /** Produces up to the targets now (dealer: locally; committee: batches while all n are up). Resolves when reached or impossible. */
  async fill(): Promise<void> {
    for (;;) {
      if (!this.low() || this.stopped) return;
      if (this.mode === 'dealer') {
        this.dealBatch();
        continue;
      }
      let b = this.current;
      if (!b) {
        if (!this.canProduce()) return;
        b = this.startBatch(this.resolved);
      }
      const done = this.waitResolved(b);
      this.resumeParked();
      await done;
    }
  }

  /** Label for status() and logs. */
  get modeLabel(): string {
    return this.mode === 'dealer' ? DEALER_LABEL : 'committee';
  }

  /** Allows background production (after setup or recovery). */
  enable(): void {
    this.enabled = true;
    this.actOnRestoredVotes();
    this.maybeVoid();
    // A peer may have started the next batch while we were setting up: join it.
    const canJoin = this.canProduce() || this.resolved === this.abstainId;
    if (this.mode === 'committee' && !this.current && canJoin && this.futureMsgs.some((m) => m.env.type === Msg.PrepRound && m.env.b === this.resolved)) {
      this.startBatch(this.resolved);
    }
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    this.wakeAll();
  }

  /** Number of a batch in flight here, if any. */
  get inFlight(): number | undefined {
    return this.current?.id;
  }

  /**
   * The batch in flight if it was restored staged from a state (we keep none of its phase-A
   * messages). A party recovering from a memory loss would abstain on it and could never compute it
   * (it would end stale), so helpers decide it before they answer (runtime answerRecovery).
   */
  restoredStaged(): number | undefined {
    const b = this.current;
    return b && b.state === 'staged' && keepsNoRounds(b) ? b.id : undefined;
  }

  /**
   * A party recovering from a memory loss will not vote on the batch in flight (it abstains once
   * recovered): the fast path cannot finish, so a ballot decides it without that party.
   */
  notVoting(party: number): void {
    const b = this.current;
    if (!b || b.state === 'committed' || b.state === 'dropped' || b.noFast.has(party)) return;
    b.noFast.add(party);
    this.wantTermination(b);
  }

  /**
   * The batch an operation waits for while some party is down: it is decided by a classic ballot
   * (see the header), which needs a majority up; with fewer the operation waits for them.
   */
  blocked(): { batch: number; state: string; missingReadies: number[]; down: number[]; ballot: number } | undefined {
    const b = this.current;
    if (!b || b.waiters.length === 0 || this.membersUp(b)) return undefined;
    const missing = this.membersOf(b).filter((j) => !b.readies.has(j));
    const down = allParties(this.host.n).filter((j) => j !== this.host.self && !this.host.isUp(j));
    return { batch: b.id, state: b.inert ? 'inert' : b.state, missingReadies: missing, down, ballot: b.coord?.ballot ?? 0 };
  }

  /** Logs (once per batch) that an operation waits for a batch while some party is down. */
  private reportBlocked(): void {
    const info = this.blocked();
    if (!info || this.reportedBlocked === info.batch) return;
    this.reportedBlocked = info.batch;
    this.host.log({ ev: 'prep-blocked', ...info, note: 'an operation waits for this batch while parties are down: a classic ballot decides it (with a majority up)' });
  }
  private reportedBlocked = -1;

  // ---- consumption ----

  /**
   * Resolves when the committed reserve holds `need`, producing inline if needed and possible;
   * throws PreprocessingExhaustedError (identically at every party, see header) otherwise.
   */
  async ensure(need: Needs): Promise<void> {
    // The common case, checked before any closure is made: each closure below costs a call to the
    // loader's keep-names helper (tsx) per round of every job.
    if (this.holds(need)) return;
    const enough = (): boolean => this.holds(need);
    const exhausted = (): PreprocessingExhaustedError => {
      const k: Kind = KINDS.find((x) => this.reserve.available(x) < need[x]) ?? 'triples';
      const alive = this.host.aliveCount();
      const unit = k === 'nibbles' ? 4 : 1; // nibbles are counted as bits
      return new PreprocessingExhaustedError(KIND_NAMES[k], need[k] * unit, this.reserve.available(k) * unit, alive);
    };
    // Giving up vetoes the next batch: a peer that still sees all n up and produces inline for this
    // operation then cannot commit what it makes, so it gives up too (nobody proceeds past an
    // operation another party failed).
    const giveUp = (): PreprocessingExhaustedError => {
      this.veto(this.resolved);
      return exhausted();
    };
    let drops = 0;
    for (;;) {
      if (enough()) return;
      if (this.stopped) throw new Error('party stopped');
      if (this.stale) {
        // stale for lack of one unconsumed batch while parties are down: the void instance decides
        const v = this.voidInst;
        if (this.voiding && v) {
          await new Promise<void>((resolve) => v.waiters.push(resolve));
          continue;
        }
        throw new Error('preprocessing log is stale (a committed batch is missing here): recover() this party');
      }
      if (this.mode === 'dealer') {
        this.dealBatch();
        continue;
      }
      let b = this.current;
      if (!b && this.voidedRound(need)) throw exhausted();
      if (!b) {
        if (!this.canProduce()) throw giveUp();
        b = this.startBatch(this.resolved, undefined, need);
      }
      const done = this.waitResolved(b);
      this.resumeParked(); // a job now waits for this batch: its phase-A work runs at once
      if (!this.membersUp(b)) this.wantTermination(b);
      this.reportBlocked();
      await done;
      // A batch dropped after a restart or a transient loss: produce once more if enough are up.
      if (b.state === 'dropped' && this.voidedRound(need)) throw exhausted();
      if (b.state === 'dropped' && (++drops > 1 || !this.canProduce())) throw giveUp();
    }
  }

  /** True when the committed reserve holds `need`. */
  private holds(need: Needs): boolean {
    for (const k of KINDS) if (this.reserve.available(k) < need[k]) return false;
    return true;
  }

  /**
   * True (and the items before the voided batch are burned) for the first round, in job order, that
   * needs items at or past a voided batch's start while it would have fit with the batch: at a holder
   * that took the batch's items before the void was decided, that round's job fails at the decision
   * (decideVoid, `touched`), so it must fail at every party, with the same cursor (the voided
   * batch's start, all kinds). Rounds are the same everywhere and so is the reserve before the
   * batch, so every party fails the same round. Cleared once a batch is committed after it.
   */
  private voidedRound(need: Needs): boolean {
    const vd = this.voided;
    if (!vd) return false;
    if (KINDS.some((k) => this.reserve.end[k] !== vd.start[k])) {
      this.voided = undefined;
      return false;
    }
    if (!KINDS.every((k) => need[k] <= this.reserve.available(k) + vd.count[k])) return false;
    this.voided = undefined;
    this.reserve.burnTo(vd.start);
    this.host.log({ ev: 'prep-void-burn', start: vd.start, note: 'the first round that would have used the voided batch fails here as at its holders' });
    return true;
  }

  // ---- background production ----

  /** Starts a background batch if idle, all n up and the reserve is below target. */
  kick(): void {
    if (this.host.idle()) this.resumeParked();
    if (!this.enabled || !this.background || this.stopped || this.stale || this.current) return;
    if (!this.low()) return;
    if (this.mode === 'dealer') {
      while (this.low()) this.dealBatch();
      return;
    }
    if (!this.host.idle() || !this.canProduce()) return;
    this.startBatch(this.resolved);
  }

  /** True while some kind is below its target. */
  private low(): boolean {
    return KINDS.some((k) => this.reserve.available(k) < this.target[k]);
  }

  /** Some kind is below a quarter of its target: production must keep pace with a sustained load. */
  private urgent(): boolean {
    return KINDS.some((k) => this.reserve.available(k) < this.target[k] / 4);
  }

  private countMade(per: Counts): void {
    this.stats.batches++;
    for (const k of KINDS) this.stats.made[k] += per[k];
  }

  private waitResolved(b: Batch): Promise<void> {
    if (b.state === 'committed' || b.state === 'dropped') return Promise.resolve();
    return new Promise((resolve) => b.waiters.push({ resolve }));
  }

  private wakeAll(): void {
    const b = this.current;
    if (b) for (const w of b.waiters.splice(0)) w.resolve();
  }

  // ---- dealer ----

  private dealBatch(): void {
    const id = this.resolved;
    const { t, self } = this.host;
    const rng = seededRng(`${this.dealerSeed}:${id}`);
    const { triples: T, nibbles: U } = this.per;
    const plain = emptyItems();
    const a = rng(T);
    const b = rng(T);
    for (let i = 0; i < T; i++) plain.triples.push(a[i]!, b[i]!, reduce(a[i]! * b[i]!));
    for (const { kind, shape } of CLOSURES) {
      const masks = rng(this.per[kind] * shape.factors);
      for (let i = 0; i < this.per[kind]; i++) plain[kind].push(...closureItemOf(shape, masks.slice(i * shape.factors, (i + 1) * shape.factors)));
    }
    const vals = rng(U);
    for (let u = 0; u < U; u++) {
      const v = Number(vals[u]! & 15n);
      for (let j = 0; j < 15; j++) plain.nibbles.push(v > j ? 1n : 0n);
      plain.nibbles.push(BigInt(v));
    }
    const items = emptyItems();
    for (const k of KINDS) items[k] = shareOf(plain[k], t, self, rng);
    this.reserve.append(items);
    this.resolved++;
    this.committed++;
    this.countMade(this.per);
    this.host.emitBatch({ batch: id, state: 'committed', ...this.per });
  }

  // ---- participants (docs/decisions/0017-production-with-parties-down.md) ----
  //
  // A batch is computed by its participant set S, fixed in its proposal: the parties its proposer
  // saw up. Degree reduction of a product needs 2t+1 of them; S must also meet every classic
  // quorum (a majority), so that a ballot's promisers include a member of S whenever S's readies
  // decided commit at ballot 0. With n = 2t+1 the minimum is n: S is always everyone, as before.

  /** Smallest participant set: max(2t+1, a majority). */
  private minMembers(): number {
    return Math.max(2 * this.host.t + 1, this.majority());
  }

  /** Whether a batch can start now: all n up, or (n >= 2t+2) at least minMembers() up. */
  private canProduce(): boolean {
    return this.host.allUp() || this.host.aliveCount() >= productionQuorum(this.host.n, this.host.t);
  }

  /** The participant set of a batch this party proposes now: undefined (all n) when all are up. */
  private upMembers(): number[] | undefined {
    if (this.host.allUp()) return undefined;
    return allParties(this.host.n).filter((j) => j === this.host.self || this.host.isUp(j));
  }

  /** S of batch b (all n when it is unknown or everyone). */
  private membersOf(b: Batch): readonly number[] {
    return b.members ?? allParties(this.host.n);
  }

  private isMember(b: Batch, j: number): boolean {
    return !b.members || b.members.includes(j);
  }

  /** Every member of b other than us is up. */
  private membersUp(b: Batch): boolean {
    return b.members ? b.members.every((j) => j === this.host.self || this.host.isUp(j)) : this.host.allUp();
  }

  /**
   * The batch in flight excludes `party` (made without it: it would not hold the items), for at
   * most EXCLUDED_BUSY_MS after the batch started: a helper answers that party's recovery request
   * "busy" until then. Not longer: while it recovers the party is no acceptor, and if members died
   * meanwhile the batch may need it (or its return) to be decided; answered, it is stale once the
   * batch commits and recovers again.
   */
  excludes(party: number): number | undefined {
    const b = this.current;
    if (!b || b.outsider || b.busyOver || b.state === 'committed' || b.state === 'dropped') return undefined;
    return this.isMember(b, party) ? undefined : b.id;
  }

  /** Becomes an outsider of b under proposal `prop` (which excludes us): no computing, no ballot-0 vote. */
  private goOutsider(b: Batch, prop: Proposal, from: number): void {
    this.host.log({ ev: 'prep-outsider', batch: b.id, from, per: prop.per, members: prop.members });
    b.per = prop.per;
    b.members = prop.members;
    b.outsider = true;
    this.goInert(b);
  }

  // ---- committee batches ----

  private newBatch(id: number, per: Counts): Batch {
    return {
      id, per, outsider: false, state: 'running', readies: new Set(), round: 0, incoming: new Map(), sent: new Map(), waiters: [], heard: 0,
      promised: 0, noFast: new Set(), vetoes: new Set(), maxBallot: 0, learned: new Map(), termScheduled: false, decidedCommit: false, vetoArmed: false, silentPeriods: 0, roundsGone: new Set(), restored: false, inert: false,
      abstain: id === this.abstainId, epoch: 0,
    };
  }

  /** A batch in flight that this party does not compute (it votes and learns only). */
  private inertBatch(id: number): Batch {
    const b = this.newBatch(id, zeroCounts());
    b.inert = true;
    this.current = b;
    this.armResend(b, 0);
    return b;
  }

  /** Stops computing b (its phase-A data goes). */
  private goInert(b: Batch): void {
    b.inert = true;
    b.epoch++;
    b.incoming.clear();
    b.sent.clear();
    b.a = b.b = b.r = b.y = b.Y = b.ownRoots = b.p2 = b.ownGrr = b.closures = undefined;
    if (b.state === 'running') b.items = undefined;
    if (this.parked === b) this.parked = undefined;
  }

  /**
   * This party's proposal for a batch it starts: the kinds below their target (or below `need`, for
   * an operation waiting on it) at the full per-batch count, the others not at all. Every kind when
   * none is short (a fill at target, which does not happen in practice).
   */
  private compose(need?: Needs): Counts {
    const per = zeroCounts();
    for (const k of KINDS) {
      const have = this.reserve.available(k);
      if (have < this.target[k] || (need !== undefined && have < need[k])) per[k] = this.per[k];
    }
    return KINDS.some((k) => per[k] > 0) ? per : { ...this.per };
  }

  /**
   * Starts batch id with our own proposal, or joining a peer's (from its first message); a proposal
   * whose participant set excludes us makes us an outsider of the batch.
   */
  private startBatch(id: number, join?: Proposal, need?: Needs): Batch {
    if (this.current) throw new Error('internal: batch already in flight');
    const prop: Proposal = join ?? { per: this.compose(need), ...this.membersField(this.upMembers()) };
    const b = this.newBatch(id, prop.per);
    if (prop.members) b.members = prop.members;
    this.current = b;
    const vetoed = this.vetoedAhead.get(id);
    for (const k of [...this.vetoedAhead.keys()]) if (k <= id) this.vetoedAhead.delete(k);
    if (!this.isMember(b, this.host.self)) this.goOutsider(b, prop, 0);
    if (vetoed) {
      // the fast path cannot finish (a member vetoed or abstains): vote drop and let a classic ballot decide
      for (const j of vetoed.noFast) if (this.isMember(b, j)) b.noFast.add(j);
      for (const j of vetoed.vetoes) b.vetoes.add(j);
      if (b.noFast.size > 0 && !b.outsider) {
        this.veto(id);
        if (b.inert) return b;
      }
    }
    if (b.outsider) {
      this.armResend(b, 0);
      this.adoptFuture(id);
      return b;
    }
    if (this.minMembers() < this.host.n) this.host.setTimer(() => (b.busyOver = true), EXCLUDED_BUSY_MS); // S may become partial by a switch
    this.host.log({ ev: 'prep-start', batch: id, per: b.per, joined: join !== undefined, ...(b.members ? { members: b.members } : {}) });
    this.armResend(b, 0);
    this.schedulePhaseA(b);
    this.adoptFuture(id);
    return b;
  }

  /** `{ members }` for a proposal, or nothing when S is everyone. */
  private membersField(members: number[] | undefined): { members?: number[] } {
    return members ? { members } : {};
  }

  /** Handles the messages of batch id that arrived before we started it. */
  private adoptFuture(id: number): void {
    // adopt messages that arrived before we started
    const adopt: { from: number; env: Envelope }[] = [];
    const keep: { from: number; env: Envelope }[] = [];
    for (const m of this.futureMsgs.splice(0)) {
      if (m.env.b === id) adopt.push(m);
      else if (m.env.b > id) keep.push(m);
    }
    this.futureMsgs.push(...keep);
    for (const m of adopt) this.onMessage(m.from, m.env);
  }

  /**
   * Liveness: while b is in flight and nothing new arrives for PREP_RESEND_MS, re-send our phase-A
   * messages and our ready to every peer. A message can be lost for good without a reconnect (e.g.
   * a peer was still recovering when it came), and then nobody would ever re-send it.
   */
  private armResend(b: Batch, heardBefore: number): void {
    this.host.setTimer(() => {
      if (this.current !== b || this.stopped || (b.state !== 'running' && b.state !== 'staged')) return;
      if (b.heard === heardBefore) {
        // Silence counts only while we are idle or an operation waits on b: during a job the peers
        // park their phase-A steps until the job ends, and a long job is no failure.
        b.silentPeriods = this.host.idle() || b.waiters.length > 0 ? b.silentPeriods + 1 : 0;
        if ((b.inert && !b.outsider) || this.needsTermination(b)) this.wantTermination(b);
        this.host.log({ ev: 'prep-resend', batch: b.id, round: b.round, state: b.state });
        for (let j = 1; j <= this.host.n; j++) if (j !== this.host.self) this.resendTo(b, j);
        // Still in phase A with everyone up and nothing new for SILENT_PERIODS_TO_VETO periods
        // despite our re-sends: the peers cannot send what we lack (a peer restored with b staged
        // keeps no phase-A messages, e.g. after the whole committee restarted from states of
        // different ages), so b can never be staged here. Veto it, so that a ballot drops it.
        if (b.silentPeriods >= SILENT_PERIODS_TO_VETO && b.state === 'running' && !b.inert && this.parked !== b && this.membersUp(b)) {
          this.host.log({ ev: 'prep-silent', batch: b.id, round: b.round, periods: b.silentPeriods, decidedCommit: b.decidedCommit });
          // Decided commit, but what we lack will not come (peers re-send only the batch they still
          // have in flight): we can never stage it, so we are behind for good.
          if (b.decidedCommit) this.goStale(b);
          else this.veto(b.id);
        }
      } else b.silentPeriods = 0;
      this.armResend(b, b.heard);
    }, PREP_RESEND_MS);
  }

  /** Our messages of batch b so far, to one peer: phase-A rounds, and ready if staged. */
  private resendTo(b: Batch, peer: number): void {
    for (const [, sent] of b.sent) {
      const bytes = sent.get(peer);
      if (bytes) this.host.send(peer, bytes);
    }
    if (b.vote0 === 'commit') this.host.send(peer, this.host.envelope({ type: Msg.PrepReady, b: b.id }));
    if (b.vote0 === 'drop') this.host.send(peer, this.host.envelope({ type: Msg.PrepVeto, b: b.id }));
    if (b.abstain) this.host.send(peer, this.host.envelope({ type: Msg.PrepAbstain, b: b.id }));
  }

  // The phase-A computations are generators: each `yield` ends a piece of a step (runPhaseAStep),
  // where a step in pieces gives the event loop back. A yield sits only between two computations,
  // never inside one, so the values and messages are the unsplit step's; whatever an event between
  // pieces may change (b reset or gone inert, decided, the party stopped) ends the step there.
  private *phaseA(b: Batch): Generator<void, void, void> {
    if (b.round === 0) yield* this.round0(b);
    else if (b.round === 1) yield* this.round1(b);
  }

  private nonce(b: Batch, what: string): string {
    // the composition too: a party that switches to a larger proposal draws fresh masks
    return `prep:${b.id}:${tagKey(b.per, b.members)}:${what}`;
  }

  /** Encodes our message of a phase-A round for every other member (per(j): its vectors); sends nothing. */
  private encodeRound(b: Batch, round: number, per: (j: number) => (readonly bigint[] | Uint8Array)[]): Map<number, Uint8Array> {
    const out = new Map<number, Uint8Array>();
    const key = tagKey(b.per, b.members);
    for (const j of this.membersOf(b)) if (j !== this.host.self) out.set(j, this.host.envelope({ type: Msg.PrepRound, a: round, b: b.id, key, vectors: per(j) }));
    return out;
  }

  /** Sends a round's encoded messages and keeps them for re-sends. */
  private sendEncoded(b: Batch, round: number, msgs: Map<number, Uint8Array>): void {
    b.sent.set(round, msgs);
    for (const [j, bytes] of msgs) this.sendFresh(j, bytes);
  }

  /**
   * GRR: shares of each local product value for every party (encoded rows, by the field kernel); own
   * row kept. Seeded (grr.ts): the rows of our t seeded peers are empty, since they compute their
   * shares from the pair stream we share with them; the others' rows follow from those seeds and h.
   * The seeds are keyed streams under the batch's nonce, not fresh randomness: a party that restarts
   * from a state older than the batch rejoins it from the peers' re-sent messages and must send the
   * rows it sent before, which the peers have already combined into their items. Inputs are fixed by
   * the nonce too (PRSS values and the batch's earlier rounds), so a nonce never shares two
   * different vectors.
   */
  /**
   * Deals h (grr) and sends the round: every other member's message holds vectors(j, its row); the
   * rows are encoded into the messages straight from the kernel's memory (grr.ts,
   * dealGrrProductsSending: the peers' rows are never copied out), and only our own row is kept
   * (b.ownGrr, the other entries empty). The messages are sent once all are encoded.
   */
  private *grrSend(h: ProductsSpec, b: Batch, round: number, vectors: (j: number, row: Uint8Array) => Uint8Array[]): Generator<void, void, void> {
    const { n, t, self } = this.host;
    const m = productsCount(h);
    const seeds = seededPeers(n, t, self, b.members).map((s) => this.grrSeed(b, round, self, s, m));
    yield;
    let msgs = new Map<number, Uint8Array>();
    const own = dealGrrProductsSending(h, seeds, n, t, self, b.members, (rows) => {
      msgs = this.encodeRound(b, round, (j) => vectors(j, rows[j - 1]!));
    });
    const kept: Uint8Array[] = Array.from({ length: n }, () => EMPTY);
    kept[self - 1] = own;
    b.ownGrr = kept;
    this.sendEncoded(b, round, msgs);
  }

  /** The m seeded shares that `dealer` deals to `peer` in GRR round `round` of b (both compute them). */
  private grrSeed(b: Batch, round: number, dealer: number, peer: number, m: number): Uint8Array {
    const other = dealer === this.host.self ? peer : dealer;
    return this.host.prss().pairStream(other, this.nonce(b, `grr${round}:${dealer}>${peer}`), m);
  }

  /**
   * Member i's GRR row for us in the current round: sent (the message's first vector), or, when we
   * are one of i's seeded peers (the t members after i in S), computed from our pair stream with i
   * (its message then carries an empty vector there).
   */
  private grrRowFrom(b: Batch, i: number, sent: Uint8Array, m: number): Uint8Array {
    const { n, t, self } = this.host;
    if (!seededPeers(n, t, i, b.members).includes(self)) return sent;
    if (sent.length !== 0) throw new Error(`prep batch ${b.id}: party ${i} sent ${sent.length / ELEMENT_BYTES} products to a seeded peer, expected none`);
    return this.grrSeed(b, b.round, i, self, m);
  }

  /**
   * Our degree-t shares of the products from the GRR rows of every member of S (rows in S's order;
   * grr.ts's scaled dealing: the seeded rows are raw pair streams and the sum is scaled once).
   */
  private recombine(rows: Uint8Array[], b: Batch): Uint8Array {
    const members = this.membersOf(b);
    const m = rows[members.indexOf(this.host.self)]!.length;
    rows.forEach((r, k) => {
      if (r.length !== m) throw new Error(`prep batch ${b.id}: party ${members[k]} sent ${r.length / ELEMENT_BYTES} products, expected ${m / ELEMENT_BYTES}`);
    });
    const { n, t, self } = this.host;
    return grrRecombine(rows, n, t, self, b.members);
  }

  private *round0(b: Batch): Generator<void, void, void> {
    const prss = this.host.prss();
    const { triples: T, nibbles: U } = b.per;
    const nb = 4 * U;
    // every degree-t PRSS vector of the batch from one key stream per subset (one AES-CTR setup per
    // subset, not per vector): [a | b | each closure's masks, one vector per factor | r]
    const closureKinds = CLOSURES.filter(({ kind }) => b.per[kind] > 0);
    const counts = [T, T, ...closureKinds.flatMap(({ kind, shape }) => Array.from({ length: shape.factors }, () => b.per[kind])), nb];
    const vs = prss.randomSharesManyEncoded(this.nonce(b, 'prss'), counts);
    b.a = vs[0]!;
    b.b = vs[1]!;
    let v = 2;
    b.closures = closureKinds.map(({ kind, shape }) => ({ kind, masks: Array.from({ length: shape.factors }, () => vs[v++]!) }));
    b.r = vs[v]!;
    yield;
    // local degree-2t products, then GRR: [a*b for triples | each closure's pair products]
    const xs = [b.a];
    const ys = [b.b];
    for (const c of b.closures) {
      for (const [i, j] of planOf(c.kind).pairs) {
        xs.push(c.masks[i]!);
        ys.push(c.masks[j]!);
      }
    }
    // [a*b for triples | each closure's pair products | the nibbles' pair products r_i r_j]: the bits
    // are signs r/s of public roots s, so every product of bits is a public multiple of a product of
    // r values, which needs no root and goes into this first layer (nibblesOfSigns)
    // the squares y = r^2 first: each member gets our masked terms of the ones it takes the roots of
    const members = this.membersOf(b);
    const squares = this.squareTerms(b, members);
    b.y = squares.own;
    yield;
    // built and dealt in the kernel (grr.ts): no concatenation in JavaScript, and the peers' rows
    // go from kernel memory into the messages
    yield* this.grrSend({ xs, ys, ...(U > 0 ? { nibbles: { r: b.r, first: false } } : {}) }, b, 0, (j, row) => [row, squares.to.get(j)!]);
    yield* this.tryAdvance(b);
  }

  /**
   * Our terms of the squares y = r^2 (degree 2t) for the member at each position of S, which opens
   * the indices e = position mod |S| (rootPart): lambda_self * r_self^2 (lambda the Lagrange weight
   * at 0 over S) plus a pair stream with every other member but the opener, added by the lower party
   * and subtracted by the higher, so the masks cancel in the opener's sum: it gets
   * y = sum of the terms it receives + lambda_j * (its own r_j^2), and nothing else. Privacy (semi-
   * honest, any t parties C with the opener among them): the members outside C (|S| - t >= t + 1 >= 2
   * of them) send terms that are uniform given C's view except for their sum, which y and C's own
   * terms fix anyway, since each pair of them adds a stream uniform to C (pairStream: C misses the
   * key of a subset holding both); so C learns y and no more, as with a degree-2t zero sharing.
   * Three key-stream values per square sent, where a PRSS zero sharing of degree 2t took t per PRSS
   * subset of the party (12 at n = 5, t = 2) for every square (the additive masks of e.g. Araki,
   * Furukawa, Lindell, Nof, Ohara, CCS 2016, on the terms of a Lagrange sum).
   */
  private squareTerms(b: Batch, members: readonly number[]): { own: Uint8Array; to: Map<number, Uint8Array> } {
    const self = this.host.self;
    const prss = this.host.prss();
    const size = members.length;
    const lambda = lagrange([...members], 0)[members.indexOf(self)]!;
    const to = new Map<number, Uint8Array>();
    let own: Uint8Array = EMPTY;
    // every r^2 in one kernel call, then each opener's part of them (the same elements as squaring each part)
    const squares = b.r!.length === 0 ? EMPTY : mulEncoded(b.r!, b.r!);
    members.forEach((j, pos) => {
      // canonical (elements of a kernel output): marked, so the kernel's callers do not scan it again
      const square = markCanonical(rootPart(squares, pos, size));
      const m = square.length / ELEMENT_BYTES;
      if (j === self) {
        own = square;
        return;
      }
      if (m === 0) {
        to.set(j, EMPTY);
        return;
      }
      const rows = [square];
      const w = [lambda];
      for (const i of members) {
        if (i === self || i === j) continue;
        rows.push(prss.pairStream(i, this.nonce(b, `sq>${j}`), m));
        w.push(self < i ? 1n : P - 1n);
      }
      to.set(j, lincombEncoded(rows, w));
    });
    return { own, to };
  }

  /**
   * Round 1: the square roots of the squares this member opened (indices pos, pos+|S|, ..., pos its
   * position in S; with S everyone, self-1, self-1+n, ...), sent to every member: a root is a public
   * function of an opened value, so one party computes it and the others take it (docs/leakage.md).
   * It sends 1/s, which is all the others use (b = r/s), and a public function of s: the inversion
   * is done once, by the opener, not by every member. y = 0 (r = 0, probability 2^-127) has the
   * root 0 and is sent as 0. With them, the second GRR layer: the nibbles' products of three and
   * four r values (a pair product times an r, or two pairs) and the closure items' products of
   * three and four masks.
   */
  private *round1(b: Batch): Generator<void, void, void> {
    // 125 squarings each, then their inverses (one batch inversion): the others need only 1/s
    const roots = sqrtEncoded(b.Y!);
    yield;
    b.ownRoots = invEncoded(roots);
    const xs: Uint8Array[] = [];
    const ys: Uint8Array[] = [];
    for (const c of b.closures!) {
      for (const h of planOf(c.kind).higher) {
        xs.push(c.pairs![h.pair]!);
        ys.push(h.mask !== undefined ? c.masks[h.mask]! : c.pairs![h.otherPair!]!);
      }
    }
    // [the nibbles' higher products | the closures' higher products], built and dealt in the kernel
    yield* this.grrSend({ xs, ys, nibbles: { r: b.r!, p2: b.p2!, first: true } }, b, 1, (_, row) => [row, b.ownRoots!]);
    yield* this.tryAdvance(b);
  }

  /**
   * Completes the current phase-A round if every peer's message for it is here. The round's
   * messages stay in b.incoming until the round is consumed (they were removed at once when the
   * completion could not be interrupted): between pieces, canStillStage and needsFrom must still
   * see them.
   */
  private *tryAdvance(b: Batch): Generator<void, void, void> {
    if (b.state !== 'running' || this.current !== b || !b.sent.has(b.round)) return;
    const got = b.incoming.get(b.round);
    const members = this.membersOf(b);
    const n = members.length;
    if ((got?.size ?? 0) < n - 1) return;
    const self = this.host.self;
    const enc = (i: number, k: number): Uint8Array => got!.get(i)!.vectors[k] ?? EMPTY;
    const own = b.ownGrr![self - 1]!;
    const rows = members.map((i) => (i === self ? own : this.grrRowFrom(b, i, enc(i, 0), own.length / ELEMENT_BYTES)));
    yield;
    const prod = this.recombine(rows, b);
    yield;
    if (b.round === 0) {
      // the squares whose roots we take: the terms of every member of S (squareTerms) and our own
      const lambda = lagrange([...members], 0)[members.indexOf(self)]!;
      const want = b.y!.length;
      const ys = members.map((i) => (i === self ? b.y! : enc(i, 1)));
      ys.forEach((v, k) => {
        if (v.length !== want) throw new Error(`prep batch ${b.id}: party ${members[k]} sent ${v.length / ELEMENT_BYTES} squares, expected ${want / ELEMENT_BYTES}`);
      });
      b.Y = want === 0 ? EMPTY : lincombEncoded(ys, members.map((i) => (i === self ? lambda : 1n)));
      const T = b.per.triples;
      let at = T;
      for (const c of b.closures!) {
        const Q = b.per[c.kind];
        c.pairs = planOf(c.kind).pairs.map(() => slice(prod, at, (at += Q)));
      }
      b.p2 = slice(prod, at, at + 6 * b.per.nibbles);
      b.items = { triples: interleave([b.a!, b.b!, slice(prod, 0, T)]), lex4: EMPTY, prod4: EMPTY, nibbles: EMPTY };
      b.a = b.b = b.y = undefined;
      b.incoming.delete(0);
      b.round = 1;
      yield;
      yield* this.round1(b);
      return;
    }
    // round 1: inverse roots from every member, interleaved by index (the member at position p took p, p+|S|, ...)
    const count = 4 * b.per.nibbles;
    const roots = new Uint8Array(count * ELEMENT_BYTES);
    const r32 = words(roots);
    members.forEach((i, pos) => {
      const r = i === self ? b.ownRoots! : enc(i, 1);
      const want = Math.ceil(Math.max(0, count - pos) / n);
      if (r.length !== want * ELEMENT_BYTES) throw new Error(`prep batch ${b.id}: party ${i} sent ${r.length / ELEMENT_BYTES} inverse roots, expected ${want}`);
      // 32-bit copies where the vector allows a view; a vector decoded from the wire may sit at any
      // offset, then bytes (not a subarray and a set per element: a tenth of a batch's JavaScript)
      if (r.byteOffset % 4 === 0) {
        const s32 = words(r);
        for (let k = 0, e = pos; e < count; k++, e += n) copyElement(s32, k, r32, e);
      } else {
        for (let k = 0, e = pos; e < count; k++, e += n) {
          const from = k * ELEMENT_BYTES;
          const to = e * ELEMENT_BYTES;
          for (let i = 0; i < ELEMENT_BYTES; i++) roots[to + i] = r[from + i]!;
        }
      }
    });
    const U = b.per.nibbles;
    const p3 = slice(prod, 0, 5 * U);
    let at = 5 * U;
    for (const c of b.closures!) {
      const Q = b.per[c.kind];
      const higher = planOf(c.kind).higher.map(() => slice(prod, at, (at += Q)));
      b.items![c.kind] = interleave([...c.masks, ...c.pairs!, ...higher]);
    }
    yield;
    b.items!.nibbles = nibblesOfSigns(b.r!, b.p2!, p3, roots);
    b.closures = b.r = b.Y = b.ownRoots = b.p2 = b.ownGrr = undefined;
    b.incoming.delete(b.round);
    b.round = STAGED_ROUND;
    this.stage(b);
  }

  /**
   * Stages b. Our ready(b) lets the others commit b, so with a host that persists state it goes out
   * only once the state with b staged is durable: a party restarted from its own state then still
   * holds every batch it helped commit (else it would come back stale, and with fewer than t+1 other
   * live parties nobody could give it the batch). Until then b is staged without our ready (it cannot
   * be vetoed any more, and a restored staged batch re-sends the ready).
   */
  private stage(b: Batch): void {
    b.state = 'staged';
    this.host.emitBatch({ batch: b.id, state: 'staged', ...b.per });
    if (b.decidedCommit) return this.commit(b);
    if (b.abstain) return;
    this.afterDurable(b, () => {
      if (b.state === 'staged') this.sendReady(b);
    });
  }

  /** Our ballot-0 vote "commit", unless we promised a classic ballot meanwhile. */
  private sendReady(b: Batch): void {
    if (b.promised > 0 || b.vote0 !== undefined || b.abstain) return;
    b.vote0 = 'commit';
    b.readies.add(this.host.self);
    this.broadcast(Msg.PrepReady, b.id);
    this.tryCommit(b);
  }

  /** Runs send once the state holding our votes on b is durable (PrepHost.persistVote), if b is still in flight. */
  private afterDurable(b: Batch, send: () => void): void {
    const hook = this.host.persistVote;
    if (hook === undefined) return send();
    hook(b.id).then(
      () => {
        if (this.current === b && !this.stopped) send();
      },
      (e: unknown) => this.host.log({ ev: 'prep-error', batch: b.id, error: `votes not made durable, vote withheld: ${String(e)}` }),
    );
  }

  private tryCommit(b: Batch): void {
    // ready from every member of S (all n unless ADR 0017's partial production) decides commit at ballot 0
    if (b.state === 'staged' && this.membersOf(b).every((j) => b.readies.has(j))) this.commit(b);
  }

  private commit(b: Batch): void {
    if (b.state === 'committed') return;
    if (b.state !== 'staged' || !b.items) {
      // Commit is only possible after our own ready, which needs staged items.
      this.host.log({ ev: 'prep-error', batch: b.id, error: `commit in state ${b.state}` });
      this.goStale();
      return;
    }
    b.state = 'committed';
    this.lastCommitted = { id: b.id, c: this.committed, start: { ...this.reserve.end }, count: countsOf(b.items) };
    this.voided = undefined;
    this.reserve.append(b.items);
    b.items = undefined;
    this.committed++;
    this.resolved = b.id + 1;
    this.current = undefined;
    this.countMade(b.per);
    this.announceCommit(b.id);
    this.host.emitBatch({ batch: b.id, state: 'committed', ...b.per });
    for (const w of b.waiters.splice(0)) w.resolve();
    this.kick();
  }

  /** Commit of b learned from a peer or a ballot: commit, wait to stage it, or become stale. */
  private learnCommit(b: Batch, why: string): void {
    if (b.state === 'staged') return this.commit(b);
    if (b.state !== 'running') return;
    if (!b.inert && this.canStillStage(b)) {
      b.decidedCommit = true;
      return;
    }
    this.host.log({ ev: 'prep-stale', batch: b.id, why: `${why}: committed where this party never staged it` });
    this.goStale(b);
  }

  /** Behind for good (recover()): an operation waiting for the batch in flight fails now instead of waiting forever. */
  private goStale(missing?: Batch): void {
    this.stale = true;
    // stale for lack of this one batch, the next after our committed ones: a void can repair it
    if (missing && !this.missing && missing.id === this.resolved) this.missing = { c: this.committed, id: missing.id, start: { ...this.reserve.end } };
    this.wakeAll();
    this.maybeVoid();
  }

  /** Every party whose phase-A message of the current round we lack is up and still keeps its messages (so it will come). */
  private canStillStage(b: Batch): boolean {
    const got = b.incoming.get(b.round);
    for (const j of this.membersOf(b)) if (j !== this.host.self && !got?.has(j) && (!this.host.isUp(j) || b.roundsGone.has(j))) return false;
    return true;
  }

  private drop(b: Batch, why: string): void {
    if (b.state === 'committed' || b.state === 'dropped') return;
    b.state = 'dropped';
    b.items = undefined;
    this.resolved = Math.max(this.resolved, b.id + 1);
    if (this.current === b) this.current = undefined;
    this.stats.dropped++;
    this.host.log({ ev: 'prep-drop', batch: b.id, why });
    this.host.emitBatch({ batch: b.id, state: 'dropped', ...zeroCounts() });
    for (const w of b.waiters.splice(0)) w.resolve();
    // A ballot may decide the drop after every peer is back and idle, when nothing else kicks.
    this.kick();
  }

  /**
   * Votes "drop" on batch id at ballot 0 (we never send ready for it then) and stops computing it; a
   * classic ballot decides it. Not once we sent ready or promised, not when staged (ready follows),
   * not on a batch we abstain on.
   */
  veto(id: number): void {
    let b = this.current;
    if (b && b.id !== id) return;
    if (!b) {
      if (id !== this.resolved) return;
      b = this.inertBatch(id);
    }
    if (b.abstain || b.vote0 !== undefined || b.promised > 0 || b.state !== 'running') return;
    b.vote0 = 'drop';
    b.noFast.add(this.host.self);
    b.vetoes.add(this.host.self);
    this.goInert(b);
    this.host.log({ ev: 'prep-veto', batch: b.id });
    const v = b;
    this.afterDurable(v, () => this.broadcast(Msg.PrepVeto, v.id));
    this.wantTermination(v);
  }

  /** Vetoes b if, PEER_DOWN_VETO_MS from now, some peer is still down and b is still in phase A here. */
  private vetoUnlessBack(b: Batch): void {
    if (b.vetoArmed) return;
    b.vetoArmed = true;
    this.host.setTimer(() => {
      b.vetoArmed = false;
      if (this.current !== b || this.stopped || this.membersUp(b) || b.state !== 'running' || b.inert || b.decidedCommit) return;
      this.veto(b.id);
    }, PEER_DOWN_VETO_MS);
  }

  // ---- classic ballots (see the header; docs/decisions/0009-preprocessing-termination.md) ----

  private majority(): number {
    return Math.floor(this.host.n / 2) + 1;
  }

  /**
   * True while b needs a classic ballot: the fast path cannot finish, or parties are down while an
   * operation waits for b or b is staged here (its items then join the reserve during the outage).
   */
  private needsTermination(b: Batch): boolean {
    if (b.decidedCommit) return false; // decided: we only wait to stage it
    // an outsider waits for S's fast path; it keeps a ballot going only once it promised one
    if (b.outsider) return b.promised > 0;
    // promised without a commit vote: we will never send ready, so ready from all n cannot come
    const noReadyFromUs = b.promised > 0 && b.vote0 !== 'commit';
    return b.noFast.size > 0 || b.inert || noReadyFromUs || (!this.membersUp(b) && (b.waiters.length > 0 || b.state === 'staged'));
  }

  /** Schedules a coordination attempt (staggered by party id, so usually one party leads). */
  private wantTermination(b: Batch): void {
    if (b.termScheduled || b.abstain || this.current !== b) return;
    this.scheduleCoordinate(b, TERM_STAGGER_MS * (this.host.self - 1));
  }

  private scheduleCoordinate(b: Batch, ms: number): void {
    b.termScheduled = true;
    this.host.setTimer(() => {
      b.termScheduled = false;
      this.coordinate(b);
    }, ms);
  }

  /** Starts a classic ballot on b as coordinator; retries with a higher one while b stays undecided. */
  private coordinate(b: Batch): void {
    if (this.current !== b || this.stopped || b.abstain || b.state === 'committed' || b.state === 'dropped') return;
    if (!this.needsTermination(b)) return;
    const n = this.host.n;
    const ballot = (Math.floor(Math.max(b.maxBallot, b.promised) / n) + 1) * n + this.host.self;
    b.maxBallot = ballot;
    b.promised = ballot; // our own promise: no ballot-0 vote from here on
    b.coord = { ballot, promises: new Map() };
    const own: PromiseVotes = { ...(b.vote0 ? { vote0: b.vote0 } : {}), ...(b.accepted ? { accepted: b.accepted } : {}), vetoes: [...b.vetoes], ...(b.vote0 === 'commit' ? this.membersField(b.members) : {}) };
    this.host.log({ ev: 'prep-ballot', batch: b.id, ballot });
    this.afterDurable(b, () => {
      if (b.coord?.ballot !== ballot) return;
      this.broadcastBallot(Msg.PrepPrepare, b.id, ballot);
      this.onPromise(b, this.host.self, ballot, own);
    });
    this.scheduleCoordinate(b, TERM_RETRY_MS + TERM_STAGGER_MS * (this.host.self - 1));
  }

  private broadcastBallot(type: Msg, id: number, ballot: number, key?: string): void {
    for (let j = 1; j <= this.host.n; j++) {
      if (j !== this.host.self) this.sendFresh(j, this.host.envelope({ type, b: id, a: ballot, ...(key !== undefined ? { key } : {}) }));
    }
  }

  /** The batch in flight to vote on for a ballot message about id: ours, or an inert one for the next batch. */
  private voterFor(id: number, from: number): Batch | undefined {
    const b = this.current;
    if (b && b.id === id) return b.abstain ? undefined : b;
    if (id < this.resolved || (b && id < b.id)) {
      this.host.send(from, this.host.envelope({ type: Msg.PrepStatus })); // our log tells it the outcome
      return undefined;
    }
    if (!b && id === this.resolved && id !== this.abstainId && this.enabled && !this.stale) return this.inertBatch(id);
    return undefined;
  }

  private onPrepare(from: number, id: number, ballot: number): void {
    const b = this.voterFor(id, from);
    if (!b) return;
    b.maxBallot = Math.max(b.maxBallot, ballot);
    if (ballot <= b.promised) {
      this.host.send(from, this.host.envelope({ type: Msg.PrepNack, b: id, a: b.promised }));
      return;
    }
    b.promised = ballot;
    const key = votesKey(b);
    this.afterDurable(b, () => this.host.send(from, this.host.envelope({ type: Msg.PrepPromise, b: id, a: ballot, key })));
  }

  private onPromise(b: Batch, from: number, ballot: number, votes: PromiseVotes): void {
    const c = b.coord;
    if (!c || c.ballot !== ballot || c.proposed) return;
    c.promises.set(from, votes);
    if (c.promises.size < this.majority()) return;
    const { value, forced } = this.ballotValue(b, c.promises);
    // "commit" from ballot-0 votes alone (nothing accepted yet) is forced only if no party's ready
    // can be missing; a party we see up that has not promised may not have staged b, and then commit
    // was never decided and would leave it stale (one more death and it is one of three that cannot
    // recover it). So hear every party we see up first (abstainers never promise), for a bounded
    // time: a promise without a commit vote makes the value drop.
    if (value === 'commit' && !forced && !c.waitedAll && !this.heardAllUp(b, c.promises)) {
      if (!c.waitingAll) {
        c.waitingAll = true;
        this.host.setTimer(() => {
          c.waitedAll = true;
          if (b.coord === c && !c.proposed && this.current === b && !this.stopped) this.propose(b, c);
        }, PROMISE_WAIT_MS);
      }
      return;
    }
    this.propose(b, c, value);
  }

  /**
   * The coordinator's value from the promises heard (see the header): the last accepted one
   * (`forced`: nothing to wait for), else commit or drop from the ballot-0 votes.
   */
  private ballotValue(b: Batch, promises: Map<number, PromiseVotes>): { value: Decision; forced: boolean } {
    const ps = [...promises.values()];
    let last: { ballot: number; value: Decision } | undefined;
    for (const p of ps) if (p.accepted && (!last || p.accepted.ballot > last.ballot)) last = p.accepted;
    if (last) return { value: last.value, forced: true };
    // Fast quorum = the batch's participant set S (all n unless ADR 0017's partial production):
    // "commit" may have been decided at ballot 0 only if every member of S voted it. S meets every
    // majority, so then some promiser voted commit and reports S; every promiser in S must have voted
    // commit, and no member of S may be known to have vetoed (a veto is a final ballot-0 vote "drop").
    // Dropping then spares a vetoer, which cannot stage b, from ending stale (it would need recovery,
    // and two more deaths would leave the committee without enough healthy parties). Votes of parties
    // outside S do not count: they never vote commit, and commit was decided without them.
    const S = this.commitSet(b, promises);
    if (!S) return { value: 'drop', forced: false };
    const vetoed = [...b.vetoes, ...ps.flatMap((p) => p.vetoes ?? [])].some((j) => S.includes(j));
    const allCommit = [...promises].every(([j, p]) => !S.includes(j) || p.vote0 === 'commit');
    return { value: !vetoed && allCommit ? 'commit' : 'drop', forced: false };
  }

  /**
   * The participant set of the proposal the promisers voted commit on (at most one proposal can be
   * staged anywhere: a party sends the rounds after 0 under one proposal only, and any two sets of >= a
   * majority share a party), or undefined if none voted commit.
   */
  private commitSet(b: Batch, promises: Map<number, PromiseVotes>): readonly number[] | undefined {
    const voters = [...promises.values()].filter((p) => p.vote0 === 'commit');
    if (voters.length === 0) return undefined;
    const key = (m: number[] | undefined): string => (m ?? []).join('.');
    if (voters.some((p) => key(p.members) !== key(voters[0]!.members))) {
      this.host.log({ ev: 'prep-error', batch: b.id, error: `commit votes under different participant sets: ${voters.map((p) => key(p.members) || 'all').join(' ')}` });
    }
    return voters[0]!.members ?? allParties(this.host.n);
  }

  /**
   * Every party we see up has promised, other than those known to abstain on b and, when the
   * promisers voted commit under a participant set, those outside it (they never hold b's items and
   * catch up by share recovery; ADR 0017).
   */
  private heardAllUp(b: Batch, promises: Map<number, PromiseVotes>): boolean {
    const S = this.commitSet(b, promises) ?? allParties(this.host.n);
    for (const j of S) {
      if (j === this.host.self || promises.has(j) || !this.host.isUp(j)) continue;
      if (b.noFast.has(j) && !b.vetoes.has(j)) continue; // an abstainer: it never promises
      return false;
    }
    return true;
  }

  /** Proposes `value`, or the value of the promises heard by now (after waiting for more of them). */
  private propose(b: Batch, c: NonNullable<Batch['coord']>, value: Decision = this.ballotValue(b, c.promises).value): void {
    const ballot = c.ballot;
    c.proposed = value;
    this.host.log({ ev: 'prep-propose', batch: b.id, ballot, value, promises: [...c.promises.keys()].sort((x, y) => x - y) });
    this.broadcastBallot(Msg.PrepAccept, b.id, ballot, value);
    this.onAccept(b, this.host.self, ballot, value);
  }

  private onAccept(b: Batch, from: number, ballot: number, value: Decision): void {
    b.maxBallot = Math.max(b.maxBallot, ballot);
    if (ballot < b.promised) {
      if (from !== this.host.self) this.host.send(from, this.host.envelope({ type: Msg.PrepNack, b: b.id, a: b.promised }));
      return;
    }
    b.promised = ballot;
    b.accepted = { ballot, value };
    this.afterDurable(b, () => {
      this.broadcastBallot(Msg.PrepAccepted, b.id, ballot, value);
      this.onAccepted(b, this.host.self, ballot, value);
    });
  }

  private onAccepted(b: Batch, from: number, ballot: number, value: Decision): void {
    let l = b.learned.get(ballot);
    if (!l) b.learned.set(ballot, (l = { value, from: new Set() }));
    l.from.add(from);
    if (l.from.size < this.majority() || b.state === 'committed' || b.state === 'dropped') return;
    this.host.log({ ev: 'prep-decided', batch: b.id, ballot, value });
    if (value === 'commit') this.learnCommit(b, `decided at ballot ${ballot}`);
    else this.decideDrop(b, `decided at ballot ${ballot}`);
  }

  private decideDrop(b: Batch, why: string): void {
    this.drop(b, why);
    this.broadcast(Msg.PrepDropped, b.id);
  }

  private broadcast(type: Msg, id: number): void {
    for (let j = 1; j <= this.host.n; j++) if (j !== this.host.self) this.sendFresh(j, this.host.envelope({ type, b: id }));
  }

  /**
   * Sends an envelope made just now (so its piggybacked log is the current one) and notes it:
   * announceCommit leaves out the peers that got one after the commit.
   */
  private sendFresh(to: number, bytes: Uint8Array): void {
    this.freshSends[to] = ++this.freshSendCount;
    this.host.send(to, bytes);
  }

  /**
   * committed(b) to each peer that no fresh message of ours reached within COMMIT_NOTICE_MS of the
   * commit. Every message carries our log (committed count, next batch: onPiggyback), so the next
   * batch's round-0 message, which in steady production follows the commit within a few ms, tells
   * the peer as much as committed(b) would; a peer sent nothing meanwhile (production stopped or
   * parked behind a job, a non-member, a peer down) gets committed(b) as before, COMMIT_NOTICE_MS
   * later. In the fast path every member commits on its own at the last ready, so committed(b) only
   * matters to one that missed a ready (a ready lost, its sender dead mid-broadcast), which waits
   * that much longer; the decision and the order of events are unchanged. Over libp2p this is 4 of
   * a member's 16 messages per batch at n = 5.
   */
  private announceCommit(id: number): void {
    const at = this.freshSendCount;
    this.host.setTimer(() => {
      if (this.stopped) return;
      for (let j = 1; j <= this.host.n; j++) {
        if (j !== this.host.self && (this.freshSends[j] ?? 0) <= at) this.sendFresh(j, this.host.envelope({ type: Msg.PrepCommit, b: id }));
      }
    }, COMMIT_NOTICE_MS);
  }

  // ---- voiding a committed, unconsumed batch (void.ts; decision 0009, "Voiding an unconsumed batch") ----
  //
  // A party stale for lack of exactly one committed batch b (it never staged it) needs share recovery
  // from t+1 helpers at one state; with parties down, b's holders may be too few for that, and b's
  // items too few for a job. Then the stale party coordinates a void instance for b. Acceptors are
  // b's holders (b is their last committed batch) and the parties stale for lack of b. A holder
  // promises "ok" only while no finished job consumed any of b there (its job-boundary cursor stands
  // at or before b's start in every kind) and then holds back every round of a job that consumed b
  // until the instance is decided. 'void' is chosen only from a majority of "ok" promises (or a value
  // accepted before). Decided 'void': holders drop b's items (same positions everywhere: b is the
  // last batch, and before it the reserves are equal), stale parties drop b from their log, and the
  // first round that would have used b fails everywhere with the cursor at b's start.

  /** A void instance for our missing batch is under way: we are stale, but do not give up yet. */
  get voiding(): boolean {
    const m = this.missing;
    const v = this.voidInst;
    return m !== undefined && v !== undefined && v.c === m.c && v.decided === undefined;
  }

  /** Starts the void instance for our missing batch if parties are down (with all n up, share recovery works). */
  private maybeVoid(): void {
    const m = this.missing;
    if (!m || !this.stale || this.stopped || this.mode === 'dealer' || !this.enabled) return;
    const v = this.voidInst;
    if (v && v.c === m.c) {
      if (v.decided === undefined) this.scheduleVoid(v, TERM_STAGGER_MS * (this.host.self - 1));
      return;
    }
    // while t+1 other parties are up, share recovery can find its helpers (the batch's holders)
    if (this.host.aliveCount() - 1 >= this.host.t + 1) return;
    this.voidInst = newVoid(m.c, m.start, m.id);
    this.host.log({ ev: 'prep-void-start', c: m.c, batch: m.id, start: m.start, alive: this.host.aliveCount() });
    this.scheduleVoid(this.voidInst, TERM_STAGGER_MS * (this.host.self - 1));
  }

  private scheduleVoid(v: VoidInst, ms: number): void {
    if (v.scheduled) return;
    v.scheduled = true;
    this.host.setTimer(() => {
      v.scheduled = false;
      this.coordinateVoid(v);
    }, ms);
  }

  private coordinateVoid(v: VoidInst): void {
    if (this.voidInst !== v || v.decided !== undefined || this.stopped) return;
    const n = this.host.n;
    const ballot = (Math.floor(Math.max(v.maxBallot, v.promised) / n) + 1) * n + this.host.self;
    v.maxBallot = ballot;
    v.promised = ballot;
    v.coord = { ballot, promises: new Map() };
    const own = this.voidVote(v);
    if (own.ok) v.locked = true;
    this.host.log({ ev: 'prep-void-ballot', c: v.c, ballot });
    this.afterVoidDurable(v, () => {
      if (v.coord?.ballot !== ballot) return;
      for (let j = 1; j <= n; j++) if (j !== this.host.self) this.host.send(j, this.host.envelope({ type: Msg.PrepVoidPrepare, b: v.c, a: ballot, key: prepareKey(v) }));
      this.onVoidPromise(v, this.host.self, ballot, own);
    });
    this.scheduleVoid(v, TERM_RETRY_MS + TERM_STAGGER_MS * (this.host.self - 1));
  }

  /**
   * What we can say about the void of the batch after `v.c` committed ones: as its holder, ok while
   * no finished job consumed any of it (and no later batch is staged); as a party stale for lack of
   * it, ok. Undefined role: we take no part (recovered or restored parties do not know the batch).
   */
  private voidVote(v: VoidInst): VoidPromise & { role?: 'holder' | 'missing' } {
    const base = { ...(v.accepted ? { accepted: v.accepted } : {}) };
    const lc = this.lastCommitted;
    if (lc && lc.c === v.c && this.committed === v.c + 1 && KINDS.every((k) => lc.start[k] === v.start[k])) {
      const boundary = this.host.boundaryCursor?.() ?? this.reserve.cursor;
      const untouched = KINDS.every((k) => boundary[k] <= lc.start[k]);
      const laterStaged = this.current !== undefined && this.current.state === 'staged';
      return { ...base, role: 'holder', ok: untouched && !laterStaged, count: lc.count, id: lc.id };
    }
    const m = this.missing;
    if (m && m.c === v.c && this.committed === v.c && KINDS.every((k) => m.start[k] === v.start[k])) {
      return { ...base, role: 'missing', ok: true, ...(v.count ? { count: v.count } : {}), ...(m.id !== undefined ? { id: m.id } : v.id !== undefined ? { id: v.id } : {}) };
    }
    return { ...base, ok: false };
  }

  /** Our instance for a message about the batch after c committed ones, if we take part in it. */
  private voidFor(c: number, start: Counts | undefined, id: number | undefined): VoidInst | undefined {
    const v = this.voidInst;
    if (v && v.c === c) return v;
    if (v && v.decided === undefined && this.voidVote(v).role !== undefined) return undefined; // one instance at a time
    if (!start) return undefined;
    const fresh = newVoid(c, start, id);
    if (this.voidVote(fresh).role === undefined) return undefined;
    this.voidInst = fresh;
    return fresh;
  }

  /** Runs send once our void votes are durable (PrepHost.persistVote), if the instance is still ours. */
  private afterVoidDurable(v: VoidInst, send: () => void): void {
    const hook = this.host.persistVote;
    if (hook === undefined) return send();
    hook(v.id ?? this.resolved).then(
      () => {
        if (this.voidInst === v && !this.stopped) send();
      },
      (e: unknown) => this.host.log({ ev: 'prep-error', c: v.c, error: `void votes not made durable, vote withheld: ${String(e)}` }),
    );
  }

  private sendVoid(to: number, type: Msg, v: VoidInst, ballot: number, key: string): void {
    if (to !== this.host.self) this.host.send(to, this.host.envelope({ type, b: v.c, a: ballot, key }));
  }

  private onVoidPrepare(from: number, c: number, ballot: number, key: string): void {
    const { id, start } = parsePrepare(key);
    const v = this.voidFor(c, start, id);
    if (!v) return;
    if (v.decided !== undefined) return this.sendVoid(from, Msg.PrepVoidAccepted, v, 0, valueKey(v.decided, v.count, v.id));
    v.maxBallot = Math.max(v.maxBallot, ballot);
    if (ballot <= v.promised) return this.sendVoid(from, Msg.PrepVoidPromise, v, ballot, `nack|${v.promised}`);
    const vote = this.voidVote(v);
    if (vote.role === undefined) return;
    v.promised = ballot;
    if (vote.ok) {
      v.locked = true;
      // the instance must end for our held rounds to go on: if its coordinator goes quiet, take over
      this.scheduleVoid(v, VOID_TAKEOVER_MS + TERM_STAGGER_MS * (this.host.self - 1));
      // a later batch still in phase A here cannot be staged while a party is stale: vote it down
      if (this.current && this.current.state === 'running') this.veto(this.current.id);
    }
    const { role: _role, ...promise } = vote;
    this.afterVoidDurable(v, () => this.sendVoid(from, Msg.PrepVoidPromise, v, ballot, promiseKey(promise)));
  }

  private onVoidPromise(v: VoidInst, from: number, ballot: number, p: VoidPromise): void {
    const c = v.coord;
    if (!c || c.ballot !== ballot || c.proposed !== undefined) return;
    c.promises.set(from, p);
    if (c.promises.size < this.majority()) return;
    const choice = chooseVoid(c.promises.values());
    if (!choice) return; // 'void' but no holder has told the batch's size yet: wait for more promises
    c.proposed = choice.value;
    const key = valueKey(choice.value, choice.count, choice.id ?? v.id);
    this.host.log({ ev: 'prep-void-propose', c: v.c, ballot, value: choice.value, promises: [...c.promises.keys()].sort((x, y) => x - y) });
    for (let j = 1; j <= this.host.n; j++) this.sendVoid(j, Msg.PrepVoidAccept, v, ballot, key);
    this.onVoidAccept(v, this.host.self, ballot, key);
  }

  private onVoidAccept(v: VoidInst, from: number, ballot: number, key: string): void {
    const val = parseValueKey(key);
    if (!val || v.decided !== undefined) return;
    v.maxBallot = Math.max(v.maxBallot, ballot);
    if (ballot < v.promised) return this.sendVoid(from, Msg.PrepVoidPromise, v, ballot, `nack|${v.promised}`);
    const vote = this.voidVote(v);
    // a holder where a finished job consumed the batch never accepts 'void' (it could not have been chosen safely)
    if (vote.role === undefined || (val.value === 'void' && !vote.ok)) return;
    v.promised = ballot;
    v.accepted = { ballot, value: val.value };
    if (val.count) v.count = val.count;
    if (val.id !== undefined) v.id ??= val.id;
    if (val.value === 'void') v.locked = true;
    this.afterVoidDurable(v, () => {
      for (let j = 1; j <= this.host.n; j++) this.sendVoid(j, Msg.PrepVoidAccepted, v, ballot, key);
      this.onVoidAccepted(v, this.host.self, ballot, key);
    });
  }

  private onVoidAccepted(v: VoidInst, from: number, ballot: number, key: string): void {
    const val = parseValueKey(key);
    if (!val || v.decided !== undefined) return;
    if (ballot > 0) {
      let l = v.learned.get(ballot);
      if (!l) v.learned.set(ballot, (l = { value: val.value, from: new Set() }));
      l.from.add(from);
      if (l.from.size < this.majority()) return;
    }
    this.decideVoid(v, val.value, val.count, val.id);
  }

  /** Applies a decided void instance (see the section's header). */
  private decideVoid(v: VoidInst, value: VoidValue, count: Counts | undefined, id: number | undefined): void {
    if (value === 'void' && !count) return; // never proposed without them
    const role = this.voidVote(v).role;
    v.decided = value;
    v.locked = false;
    v.id ??= id;
    if (count) v.count = count;
    this.host.log({ ev: 'prep-void-decided', c: v.c, batch: v.id, value, role: role ?? 'learner' });
    let touched = false;
    if (value === 'void' && role === 'holder') {
      const lc = this.lastCommitted!;
      const boundary = this.host.boundaryCursor?.() ?? this.reserve.cursor;
      if (KINDS.some((k) => boundary[k] > lc.start[k])) {
        // a finished job here consumed the batch: 'void' cannot have been chosen by the rule; never diverge silently
        this.host.log({ ev: 'prep-error', c: v.c, error: 'voided a batch a finished job consumed here: stale' });
        this.goStale();
      }
      touched = KINDS.some((k) => this.reserve.cursor[k] > lc.start[k]);
      this.reserve.dropFrom(lc.start);
      this.committed--;
      this.lastCommitted = undefined;
      if (touched) this.reserve.burnTo(lc.start); // the running job took b's items: it fails (host), as the round fails elsewhere
      else this.voided = { start: { ...lc.start }, count: count! };
      this.host.emitBatch({ batch: lc.id, state: 'dropped', ...zeroCounts() });
    } else if (value === 'void' && role === 'missing') {
      const m = this.missing!;
      this.missing = undefined;
      this.stale = false;
      this.voided = { start: { ...m.start }, count: count! };
      const b = this.current;
      if (b && b.id === v.id) this.drop(b, 'voided');
      else if (v.id !== undefined) this.resolved = Math.max(this.resolved, v.id + 1);
    }
    for (const w of v.waiters.splice(0)) w();
    this.host.onVoidDecided?.(value, touched);
    this.kick();
  }

  /** Our last committed batch was voided without us (a peer's log says so): apply it. */
  private learnVoid(lc: { id: number; c: number; start: Counts; count: Counts }, from: number): void {
    let v = this.voidInst;
    if (!v || v.c !== lc.c) this.voidInst = v = newVoid(lc.c, lc.start, lc.id);
    this.host.log({ ev: 'prep-void-learned', c: lc.c, batch: lc.id, from });
    this.decideVoid(v, 'void', lc.count, lc.id);
  }

  /** A round of a job that took items of a batch we promised to void may not complete before the instance is decided. */
  holdsRound(): boolean {
    const v = this.voidInst;
    return v !== undefined && v.locked && v.decided === undefined && KINDS.some((k) => this.reserve.cursor[k] > v.start[k]);
  }

  // ---- messages and peers ----

  /** Applies the piggybacked log of any message from a peer (before the message is used). */
  onPiggyback(from: number, committed: number, resolved: number): void {
    if (this.mode === 'dealer') return;
    // Our last committed batch, resolved at the sender without being counted: it was decided commit,
    // so only a void removes it (we missed the decision, e.g. cut off at the time)
    const lc = this.lastCommitted;
    if (lc && this.committed === lc.c + 1 && committed === lc.c && resolved > lc.id) this.learnVoid(lc, from);
    const b = this.current;
    if (b && resolved > b.id) {
      // The sender resolved b. Equal committed counts: it dropped b and every batch after it. One
      // more and b is its last resolved batch: it committed b. Otherwise, if b has been ours since
      // it started, the batches after b needed us and were all dropped there: it committed b. But
      // if b was restored from a state, our previous incarnation may have taken part in a later
      // batch, and which of b and that batch was committed cannot be told from counts: stale, never
      // a guess (taking the later batch for b put a dropped batch's items where the others hold
      // another's).
      if (committed === this.committed) this.drop(b, `peer ${from} dropped it`);
      else if (committed > this.committed && (!b.restored || (committed === this.committed + 1 && resolved === b.id + 1))) this.learnCommit(b, `peer ${from}'s log`);
      else if (committed > this.committed) {
        this.host.log({ ev: 'prep-stale', batch: b.id, from, theirCommitted: committed, theirResolved: resolved, ours: this.committed });
        this.goStale();
      }
      return;
    }
    if (!b && resolved > this.resolved) {
      if (committed === this.committed) {
        // Batches we never started cannot have been committed anywhere: skip them.
        this.resolved = resolved;
      } else if (committed > this.committed) {
        this.host.log({ ev: 'prep-stale', from, theirCommitted: committed, ours: this.committed });
        // exactly one committed batch we never started: a void can repair it (its id comes with the decision)
        if (committed === this.committed + 1 && !this.missing) this.missing = { c: this.committed, start: { ...this.reserve.end } };
        this.goStale();
      }
    }
  }

  /** Handles PrepRound/Ready/Commit/Veto/Status messages. */
  onMessage(from: number, env: Envelope): void {
    if (this.mode === 'dealer') return;
    switch (env.type) {
      case Msg.PrepRound: {
        const b = this.current;
        const tag = parseTag(env.key, this.host.n, this.minMembers());
        if (!tag) {
          this.host.log({ ev: 'prep-bad-tag', from, batch: env.b, key: env.key });
          return;
        }
        if (env.a === NOTICE_ROUND) return this.onNotice(from, env.b, tag);
        if (b && env.b === b.id && !this.isMember(b, from)) this.tellProposal(b, from); // it proposes without knowing ours
        if (b && env.b === b.id) {
          if (keepsNoRounds(b)) return this.tellRoundsGone(from, env.b); // restored staged: nothing to re-send
          if (!this.adoptTag(b, tag, from)) return;
          return this.route(from, env);
        }
        if (env.b < this.resolved || (b && env.b < b.id)) return this.tellRoundsGone(from, env.b); // decided here: nothing kept
        if (!b && env.b === this.resolved && this.enabled && !this.stale) {
          // A peer started the next batch: join if we can (with its proposal), otherwise veto it.
          // On a batch we abstain on we compute whatever we can (we may not vote either way). A
          // proposal without us makes us an outsider of it (ADR 0017): no veto, we only learn.
          const member = !tag.members || tag.members.includes(this.host.self);
          const membersUp = (tag.members ?? allParties(this.host.n)).every((j) => j === this.host.self || this.host.isUp(j));
          if (!member || membersUp || env.b === this.abstainId) {
            this.startBatch(env.b, tag);
            if (this.current?.id === env.b && this.adoptTag(this.current, tag, from)) this.route(from, env);
          } else this.veto(env.b);
          return;
        }
        if (this.futureMsgs.length < MAX_FUTURE_BATCH_MESSAGES) this.futureMsgs.push({ from, env });
        return;
      }
      case Msg.PrepReady: {
        const b = this.current;
        if (b && env.b === b.id) {
          if (!b.readies.has(from)) b.heard++;
          b.readies.add(from);
          this.tryCommit(b);
        } else if (env.b >= this.resolved && this.futureMsgs.length < MAX_FUTURE_BATCH_MESSAGES) this.futureMsgs.push({ from, env });
        return;
      }
      case Msg.PrepCommit: {
        const b = this.current;
        if (b && env.b === b.id) this.learnCommit(b, `committed(b) from ${from}`);
        return;
      }
      case Msg.PrepDropped: {
        const b = this.current;
        if (b && env.b === b.id) this.drop(b, `dropped(b) from ${from}`);
        return;
      }
      case Msg.PrepVeto:
      case Msg.PrepAbstain: {
        const b = this.current;
        if (b && env.b === b.id && this.isMember(b, from)) {
          b.noFast.add(from);
          if (env.type === Msg.PrepVeto) b.vetoes.add(from);
          if (env.type === Msg.PrepAbstain) this.resendTo(b, from); // it may still compute and stage b
          this.wantTermination(b);
          return;
        }
        if (b && env.b === b.id) {
          // a non-member's veto or abstention (ADR 0017): it never holds b, the fast path of S goes on
          if (env.type === Msg.PrepVeto) b.vetoes.add(from);
        } else if (env.b >= this.resolved && (!b || env.b > b.id) && (this.vetoedAhead.has(env.b) || this.vetoedAhead.size < 64)) {
          let s = this.vetoedAhead.get(env.b);
          if (!s) this.vetoedAhead.set(env.b, (s = { noFast: new Set(), vetoes: new Set() }));
          s.noFast.add(from);
          if (env.type === Msg.PrepVeto) s.vetoes.add(from);
        }
        return;
      }
      case Msg.PrepPrepare:
        return this.onPrepare(from, env.b, env.a);
      case Msg.PrepPromise: {
        const b = this.current;
        if (b && env.b === b.id) this.onPromise(b, from, env.a, parseVotes(env.key));
        return;
      }
      case Msg.PrepAccept: {
        const v = parseDecision(env.key);
        const b = v ? this.voterFor(env.b, from) : undefined;
        if (b && v) this.onAccept(b, from, env.a, v);
        return;
      }
      case Msg.PrepAccepted: {
        const v = parseDecision(env.key);
        let b = this.current;
        if (!b && env.b === this.resolved && this.enabled) b = this.inertBatch(env.b);
        if (b && env.b === b.id && v) this.onAccepted(b, from, env.a, v);
        return;
      }
      case Msg.PrepNack: {
        const b = this.current;
        if (b && env.b === b.id) b.maxBallot = Math.max(b.maxBallot, env.a);
        return;
      }
      case Msg.PrepStatus: {
        // the piggyback carries everything; a party outside our batch in flight learns our proposal
        const b = this.current;
        if (b) this.tellProposal(b, from, true);
        return;
      }
      case Msg.PrepRoundsGone: {
        const b = this.current;
        if (b && env.b === b.id) this.onRoundsGone(b, from);
        return;
      }
      case Msg.PrepVoidPrepare:
        return this.onVoidPrepare(from, env.b, env.a, env.key);
      case Msg.PrepVoidPromise: {
        const v = this.voidInst;
        const p = parsePromise(env.key);
        if (!v || v.c !== env.b || !p) return;
        if ('nack' in p) {
          v.maxBallot = Math.max(v.maxBallot, p.nack);
          return;
        }
        return this.onVoidPromise(v, from, env.a, p);
      }
      case Msg.PrepVoidAccept: {
        const v = this.voidFor(env.b, undefined, undefined);
        if (v) this.onVoidAccept(v, from, env.a, env.key);
        return;
      }
      case Msg.PrepVoidAccepted: {
        const v = this.voidFor(env.b, undefined, undefined);
        if (v) this.onVoidAccepted(v, from, env.a, env.key);
        return;
      }
    }
  }

  /**
   * Tells a party outside b's participant set our proposal: it then stays out of b instead of
   * waiting in a proposal of its own that no member will take up. Once per peer, batch and
   * proposal in answer to its phase-A messages (which it re-sends); `always` when it comes up or
   * asks for our status (a party that was recovering ignored the notice it got on connecting).
   */
  private tellProposal(b: Batch, to: number, always = false): void {
    if (b.outsider || b.inert || !b.members || b.members.includes(to) || (b.state !== 'running' && b.state !== 'staged')) return;
    const key = tagKey(b.per, b.members);
    const told = `n:${b.id}:${to}:${key}`;
    if (!always && this.goneTold.has(told)) return;
    if (this.goneTold.size >= 256) this.goneTold.clear();
    this.goneTold.add(told);
    this.host.send(to, this.host.envelope({ type: Msg.PrepRound, a: NOTICE_ROUND, b: b.id, key }));
  }

  /** A member's notice of batch id's proposal, which excludes us: we stay out of it (an outsider). */
  private onNotice(from: number, id: number, tag: Proposal): void {
    if (!tag.members || tag.members.includes(this.host.self) || !tag.members.includes(from)) return;
    const b = this.current;
    if (b && b.id === id) {
      if (b.outsider || b.inert || b.state !== 'running' || b.round > 0 || b.vote0 !== undefined || b.promised > 0 || b.abstain) return;
      this.goOutsider(b, tag, from);
    } else if (!b && id === this.resolved && this.enabled && !this.stale) {
      this.startBatch(id, tag);
    }
  }

  /**
   * Tells a peer still in phase A of batch id that we keep no phase-A messages for it (once per peer
   * and batch), so it need not wait out two silent re-send periods to find out.
   */
  private tellRoundsGone(to: number, id: number): void {
    const key = `${id}:${to}`;
    if (this.goneTold.has(key)) return;
    if (this.goneTold.size >= 256) this.goneTold.clear();
    this.goneTold.add(key);
    this.host.send(to, this.host.envelope({ type: Msg.PrepRoundsGone, b: id }));
  }

  /**
   * Whether b still needs a phase-A message from peer `from`: one of the rounds from b's current
   * one to the last is not here from it (a completed round's messages were consumed). Written as a
   * loop over the rounds, not a fixed round number: the guard once read round 3, from when phase A
   * had four rounds, and so every rounds-gone vetoed.
   */
  private needsFrom(b: Batch, from: number): boolean {
    for (let r = b.round; r <= LAST_PREP_ROUND; r++) if (!b.incoming.get(r)?.has(from)) return true;
    return false;
  }

  /**
   * A peer keeps no phase-A messages for b. Unless we already hold every message of it we still
   * need (needsFrom), we can never stage b: veto it (a ballot drops it), or, if it was decided
   * commit, we are stale.
   */
  private onRoundsGone(b: Batch, from: number): void {
    if (b.state !== 'running' || b.inert || !this.needsFrom(b, from)) return;
    b.roundsGone.add(from); // a commit learned later cannot be staged either (canStillStage)
    this.host.log({ ev: 'prep-rounds-gone', batch: b.id, from, round: b.round, decidedCommit: b.decidedCommit });
    if (b.decidedCommit) {
      this.host.log({ ev: 'prep-stale', batch: b.id, why: `committed, and party ${from} keeps none of the phase-A messages this party lacks` });
      this.goStale(b);
    } else {
      this.veto(b.id);
      this.wantTermination(b);
    }
  }

  /**
   * Whether a PrepRound message with this composition belongs to b as it stands. A larger proposal
   * replaces ours (b restarts its first round with it); a smaller one is ignored (its proposer
   * switches to ours when it hears us). See "Composition" in the header.
   */
  private adoptTag(b: Batch, tag: Proposal, from: number): boolean {
    const order = compareProposals(tag, b, this.host.n);
    if (order === 0) return true;
    if (order < 0) return false;
    const member = !tag.members || tag.members.includes(this.host.self);
    if (b.outsider) return this.outsiderHears(b, tag, member);
    // A larger proposal counts only when it comes from a member of ours: then once anyone has left
    // round 0 under a proposal, no member of it is ever on another (ADR 0017; with S = all n every
    // sender is a member, as before). A party outside ours (back from an outage) is told ours.
    if (!this.isMember(b, from)) return false;
    if (b.state !== 'running' || b.round > 0) {
      // With S = all n impossible: leaving round 0 needs every party's round-0 message under one
      // proposal. With partial sets a party outside S (back from an outage) may propose late; its
      // proposal then stalls, is vetoed and dropped (ADR 0017).
      this.host.log({ ev: 'prep-error', batch: b.id, error: `party ${from} proposes ${tagKey(tag.per, tag.members)} after round ${b.round} under ${tagKey(b.per, b.members)}` });
      return false;
    }
    if (!member) {
      this.goOutsider(b, tag, from);
      return false;
    }
    this.host.log({ ev: 'prep-switch', batch: b.id, from: b.per, to: tag.per, ...(tag.members ? { members: tag.members } : {}) });
    b.per = tag.per;
    b.members = tag.members;
    b.incoming.clear();
    b.sent.clear();
    b.epoch++;
    b.a = b.b = b.r = b.y = b.ownGrr = b.closures = undefined;
    // our round 0 under the old proposal is void: compute it again (now, or when the parked step runs)
    this.schedulePhaseA(b);
    return true;
  }

  /**
   * An outsider hears a larger proposal: still without us, it follows it; with us, and if we never
   * voted on b, we become a member and compute it from round 0.
   */
  private outsiderHears(b: Batch, tag: Proposal, member: boolean): boolean {
    if (!member || b.vote0 !== undefined || b.promised > 0 || b.abstain || b.state !== 'running') {
      if (!member) {
        b.per = tag.per;
        b.members = tag.members;
      }
      return false;
    }
    this.host.log({ ev: 'prep-member', batch: b.id, per: tag.per, members: tag.members });
    b.per = tag.per;
    b.members = tag.members;
    b.outsider = false;
    b.inert = false;
    this.schedulePhaseA(b);
    return true;
  }

  private route(from: number, env: Envelope): void {
    const b = this.current!;
    if (b.state !== 'running' || b.inert || !this.isMember(b, from)) return;
    if (env.a < b.round) return;
    let m = b.incoming.get(env.a);
    if (!m) b.incoming.set(env.a, (m = new Map()));
    if (!m.has(from)) {
      m.set(from, env);
      b.heard++;
    }
    this.schedulePhaseA(b);
  }

  // ---- when phase-A work runs (scheduling only; what it computes is in round0..3/tryAdvance) ----
  //
  // A phase-A step of a large batch is a long synchronous computation (milliseconds to tens). Run
  // while a job is in flight it blocks this party's event loop, and since every party reaches the
  // step at about the same moment, the job's next round waits for it everywhere. So a step runs at
  // once only when no job is running here, or when a job waits for this very batch (ensure/fill
  // registered a waiter); otherwise it is parked and runs at the next job boundary (finishJob ->
  // kick), before the next job starts. Parking caps production at one step per job, which a
  // sustained load outruns; so once some kind is below a quarter of its target, steps run at once
  // (a step of a 512-item batch takes several ms: half the batch, in two rounds). Only the timing of local
  // computation changes: messages, ready/commit/veto handling and the commit protocol are untouched
  // (see the header), a parked batch is still 'running' (so a lost peer still vetoes it), and peers
  // simply see our phase-A messages later.
  //
  // Pieces (PreprocessingOptions.pieces, ADR 0047): a step also holds the loop while no job runs,
  // and a job that arrives then waits for the step's end at every party. In pieces, a step gives
  // the loop back between its computations (3-6 pieces; the longest about half the step), so an
  // arriving job's first messages and rounds run after at most one piece, and the rest of the step
  // then follows the rule above (parked unless needed or urgent). The same values and messages.

  /** A batch whose next phase-A step waits for the running job to end. */
  private parked: Batch | undefined;

  private schedulePhaseA(b: Batch): void {
    if (b.inert) return;
    if (this.mayWait(b)) {
      this.parked = b;
      return;
    }
    this.runPhaseAStep(b);
  }

  /** b's phase-A work may wait for the job boundary: a job runs here, none waits for b, no kind is urgent. */
  private mayWait(b: Batch): boolean {
    return !this.host.idle() && b.waiters.length === 0 && !this.urgent();
  }

  /** Runs the parked step, if its batch is still the one in flight and still in phase A. */
  private resumeParked(): void {
    const b = this.parked;
    this.parked = undefined;
    if (b && this.current === b && b.state === 'running' && !b.inert && !this.stopped) this.runPhaseAStep(b);
  }

  /**
   * Runs a phase-A step of b: our round's computation if our messages of it are not sent yet (round
   * 0 right after start), otherwise the round's completion from what has arrived. Unsplit (the
   * default) it runs whole, here. In pieces (PreprocessingOptions.pieces) it runs its first piece
   * here and each next one from host.defer, so that what came in meanwhile (an online round's
   * shares, its flush) runs first; if a job has started by then and the batch is not needed at once
   * (the rule of schedulePhaseA), the rest is parked until the job ends. A call while a step of b is
   * under way only notes that the round should be tried again after it.
   */
  private runPhaseAStep(b: Batch): void {
    if (this.parked === b) this.parked = undefined;
    const s = b.step;
    if (s) {
      if (s.wait === 'parked') this.continueStep(b, s);
      else s.again = true;
      return;
    }
    const gen = b.sent.has(b.round) ? this.tryAdvance(b) : this.phaseA(b);
    const step: StepInPieces = { gen, epoch: b.epoch, round: b.round, busy: !this.host.idle(), t0: performance.now(), ms: 0, maxMs: 0, pieces: 0, wait: 'running', again: false };
    b.step = step;
    this.continueStep(b, step);
  }

  private continueStep(b: Batch, s: StepInPieces): void {
    for (;;) {
      if (b.step !== s) return;
      if (this.current !== b || b.state !== 'running' || b.inert || this.stopped || b.epoch !== s.epoch) {
        // b was reset, went inert, was decided or we stopped between two pieces: this step is void
        b.step = undefined;
        s.gen.return();
        this.logStep(b, s, performance.now(), 0, true);
        if (b.epoch !== s.epoch && this.current === b && b.state === 'running' && !b.inert && !this.stopped) this.schedulePhaseA(b);
        return;
      }
      // a job started since the last piece and b is not needed at once: the rest waits for its end
      if (s.wait === 'deferred' && this.mayWait(b)) {
        s.wait = 'parked';
        this.parked = b;
        return;
      }
      s.wait = 'running';
      const t0 = performance.now();
      let r: IteratorResult<void, void>;
      try {
        r = s.gen.next();
      } catch (e) {
        // a peer's malformed round (recombine's checks) ends the step as it ended the unsplit one;
        // thrown here only when this piece runs inside a message handler (which logs it), never
        // from host.defer, where nothing would catch it
        if (b.step === s) b.step = undefined;
        this.stats.productionMs += performance.now() - t0;
        if (!this.pieces || s.pieces === 0) throw e;
        this.host.log({ ev: 'prep-error', batch: b.id, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
        return;
      }
      const ms = performance.now() - t0;
      s.ms += ms;
      s.pieces++;
      if (ms > s.maxMs) s.maxMs = ms;
      // Counted here, once per piece: this is the only entry into phaseA/tryAdvance, which nest
      // (round0 -> tryAdvance -> round1 -> tryAdvance), and each of them adding its own time counted
      // the nested work two or three times (stats.productionMs read about 1.5-2x the time spent until
      // 2026-12-04).
      this.stats.productionMs += ms;
      if (r.done) {
        if (b.step === s) b.step = undefined;
        this.logStep(b, s, t0, ms, false);
        if (s.again && this.current === b && b.state === 'running' && !b.inert && !this.stopped) this.schedulePhaseA(b);
        return;
      }
      if (!this.pieces) continue;
      this.logPiece(b, s, t0, ms);
      s.wait = 'deferred';
      this.host.defer!(() => this.continueStep(b, s));
      return;
    }
  }

  /**
   * How long the step held the event loop, and whether a job was running at its start (bench:trace
   * reads at and ms as a span; stats.productionMs is the sum of ms). Unsplit: one event, the whole
   * step. In pieces: one event per piece (`piece`: its index), the last one also with the step's
   * piece count, its longest piece (maxMs), summed time (stepMs) and first-to-last wall time.
   */
  private logStep(b: Batch, s: StepInPieces, at: number, ms: number, abandoned: boolean): void {
    if (!this.pieces) {
      this.host.log({ ev: 'prep-step', batch: b.id, round: s.round, busy: s.busy, at: +(performance.timeOrigin + s.t0).toFixed(3), ms: +s.ms.toFixed(3) });
      return;
    }
    this.host.log({
      ev: 'prep-step', batch: b.id, round: s.round, busy: s.busy, at: +(performance.timeOrigin + at).toFixed(3), ms: +ms.toFixed(3), piece: s.pieces - (abandoned ? 0 : 1),
      pieces: s.pieces, maxMs: +s.maxMs.toFixed(3), stepMs: +s.ms.toFixed(3), wallMs: +(performance.now() - s.t0).toFixed(3), ...(abandoned ? { abandoned } : {}),
    });
  }

  /** A piece of a step in pieces that is not its last (see logStep). */
  private logPiece(b: Batch, s: StepInPieces, at: number, ms: number): void {
    this.host.log({ ev: 'prep-step', batch: b.id, round: s.round, busy: s.busy, at: +(performance.timeOrigin + at).toFixed(3), ms: +ms.toFixed(3), piece: s.pieces - 1 });
  }

  /** Peer connectivity changed. */
  onPeer(peer: number, up: boolean): void {
    if (this.mode === 'dealer') return;
    const b = this.current;
    if (!up) {
      if (b && b.state === 'running' && !b.inert && !b.decidedCommit && this.isMember(b, peer)) this.vetoUnlessBack(b);
      // a coordinator waiting for this peer's promise (see onPromise) need not wait any longer
      const c = b?.coord;
      if (b && c?.waitingAll && !c.proposed && this.heardAllUp(b, c.promises)) this.propose(b, c);
      if (b && this.needsTermination(b)) this.wantTermination(b);
      this.reportBlocked();
      this.maybeVoid(); // stale for lack of one batch, and now a party is down: share recovery may not find t+1 helpers
      return;
    }
    // Re-send what the peer may have missed: our phase-A messages and votes (our log rides on each).
    if (b) {
      this.resendTo(b, peer);
      this.tellProposal(b, peer, true);
    } else if (this.abstainId >= this.resolved) this.host.send(peer, this.host.envelope({ type: Msg.PrepAbstain, b: this.abstainId }));
    // a void decided while the peer was away: tell it (a holder of the batch must drop it too)
    const v = this.voidInst;
    if (v?.decided !== undefined) this.sendVoid(peer, Msg.PrepVoidAccepted, v, 0, valueKey(v.decided, v.count, v.id));
    this.host.send(peer, this.host.envelope({ type: Msg.PrepStatus }));
    this.kick();
  }

  // ---- persistence ----

  /** The log and any staged batch, for exportState(). */
  snapshot(): PrepSnapshot {
    const b = this.current;
    const snap: PrepSnapshot = { resolved: this.resolved, committed: this.committed };
    if (b && b.state === 'staged' && b.items) snap.staged = { id: b.id, items: b.items };
    if (b && b.state === 'running') snap.running = b.id;
    if (b && (b.state === 'staged' || b.state === 'running') && (b.vote0 !== undefined || b.promised > 0 || b.members !== undefined)) {
      snap.vote = {
        ...(b.vote0 ? { vote0: b.vote0 } : {}), promised: b.promised, ...(b.accepted ? { accepted: { ...b.accepted } } : {}),
        ...this.membersField(b.members), ...(b.outsider ? { outsider: true } : {}),
      };
    }
    if (this.abstainId >= this.resolved) snap.abstain = this.abstainId;
    if (this.lastCommitted) snap.last = { ...this.lastCommitted, start: { ...this.lastCommitted.start }, count: { ...this.lastCommitted.count } };
    const v = this.voidInst;
    if (v && v.decided === undefined && v.promised > 0) {
      snap.voidVote = { c: v.c, start: { ...v.start }, promised: v.promised, locked: v.locked, ...(v.accepted ? { accepted: { ...v.accepted } } : {}) };
    }
    return snap;
  }

  /**
   * Restores the log after a restart, with our votes on the batch in flight: a staged batch stays
   * staged (ready is sent again unless we promised a classic ballot); a running one cannot be
   * computed any more, so we vote drop on it unless we already voted or promised. Acted on at enable().
   */
  restore(s: PrepSnapshot): void {
    this.resolved = s.resolved;
    this.committed = s.committed;
    this.current = undefined;
    this.abstainId = s.abstain ?? -1;
    this.lastCommitted = this.missing = this.voided = this.voidInst = undefined;
    if (s.last && s.last.c + 1 === s.committed) this.lastCommitted = { ...s.last };
    if (s.voidVote) {
      // our votes in an undecided void instance (an acceptor's memory); we take part again only if
      // we can name the batch (stale for lack of it), and then with these votes
      const v = newVoid(s.voidVote.c, s.voidVote.start);
      v.promised = v.maxBallot = s.voidVote.promised;
      v.locked = s.voidVote.locked;
      if (s.voidVote.accepted) v.accepted = { ...s.voidVote.accepted };
      this.voidInst = v;
    }
    const apply = (b: Batch): void => {
      b.restored = true;
      this.applyVotes(b, s.vote);
      this.restoredVotes = true;
    };
    if (s.staged) {
      const b = this.newBatch(s.staged.id, countsOf(s.staged.items));
      b.state = 'staged';
      b.round = STAGED_ROUND;
      b.items = s.staged.items;
      this.current = b;
      apply(b);
    } else if (s.running !== undefined) {
      this.resolved = Math.max(this.resolved, s.running);
      apply(this.inertBatch(s.running));
    }
  }

  /** Our votes on b as a durable state recorded them (an acceptor's memory). */
  private applyVotes(b: Batch, vote: BatchVote | undefined): void {
    if (vote?.vote0) b.vote0 = vote.vote0;
    b.promised = vote?.promised ?? 0;
    b.maxBallot = b.promised;
    if (vote?.accepted) b.accepted = { ...vote.accepted };
    if (vote?.members) b.members = [...vote.members];
    if (vote?.outsider) b.outsider = true;
    if (b.vote0 === 'drop') {
      b.noFast.add(this.host.self);
      b.vetoes.add(this.host.self);
    }
  }

  /** At enable() after restore(): send the ready or veto the restored batch needs, and coordinate if it must. */
  private actOnRestoredVotes(): void {
    if (!this.restoredVotes) return;
    this.restoredVotes = false;
    const b = this.current;
    if (!b || b.abstain) return;
    if (b.state === 'staged') {
      if (b.vote0 === undefined && b.promised === 0) this.sendReady(b);
      else if (b.vote0 === 'commit') b.readies.add(this.host.self);
    } else if (b.vote0 === undefined && b.promised === 0 && !b.outsider) {
      this.veto(b.id);
    }
    if (this.needsTermination(b) || b.promised > 0) this.wantTermination(b);
  }

  /**
   * After recovery: adopt the helpers' log. The batch they have in flight is one we may have voted on
   * before our memory went. Our own last durable log (`prior`, if the host has one) says what we sent
   * on it (priorVotesOn): nothing, and we are a plain acceptor of it; some votes, and we keep them, on
   * an inert batch (we cannot stage it: its items, if we had them, went with our state). Otherwise we
   * abstain on it (compute it if we can, never vote, learn the outcome).
   */
  adopt(resolved: number, committed: number, helpersInFlight: number | undefined, prior?: PrepLog): void {
    this.resolved = resolved;
    this.committed = committed;
    this.current = undefined;
    this.stale = false;
    // votes in a void instance went with our memory: we take no part in one (we cannot name its batch)
    this.lastCommitted = this.missing = this.voided = this.voidInst = undefined;
    if (helpersInFlight === undefined || helpersInFlight < resolved) return;
    const known = prior ? priorVotesOn(prior, helpersInFlight) : 'unknown';
    if (known === 'none') {
      // an acceptor of it like any other (with two parties dead, an abstainer would leave two)
      this.host.log({ ev: 'prep-no-abstain', batch: helpersInFlight, priorResolved: prior!.resolved, why: 'our last durable log shows no vote on it' });
      return;
    }
    if (known !== 'unknown') {
      this.applyVotes(this.inertBatch(helpersInFlight), known);
      this.host.log({ ev: 'prep-votes-kept', batch: helpersInFlight, vote: known });
      return;
    }
    this.abstainId = helpersInFlight;
    this.host.log({ ev: 'prep-abstain', batch: helpersInFlight });
    this.broadcast(Msg.PrepAbstain, helpersInFlight);
  }
}

/**
 * What a party whose last durable preprocessing log is `prior` sent on batch b. Every vote is durable
 * before it goes out (PrepHost.persistVote), so that log holds all its votes on its batch in flight,
 * and it never voted on a batch it had not reached: 'none', or the votes. A staged batch without a
 * recorded vote counts as a commit vote (ready follows staging and may have gone out). 'unknown'
 * when the log is past b (the vote went with the resolved batch) or abstains on b (an earlier
 * incarnation may have voted).
 */
export function priorVotesOn(prior: PrepLog, b: number): BatchVote | 'none' | 'unknown' {
  if (prior.resolved > b || prior.abstain === b) return 'unknown';
  if (prior.staged?.id === b) {
    // ready goes out after the staged state is durable and is recorded by the next write; none
    // follows a promise, so a promise recorded without it means ready was never sent
    const promised = prior.vote?.promised ?? 0;
    const vote0 = prior.vote?.vote0 ?? (promised > 0 ? undefined : 'commit');
    return {
      ...(vote0 ? { vote0 } : {}), promised, ...(prior.vote?.accepted ? { accepted: prior.vote.accepted } : {}),
      ...(prior.vote?.members ? { members: prior.vote.members } : {}),
    };
  }
  // a vote record holding only the participant set (ADR 0017) is no vote
  if (prior.running === b && prior.vote && (prior.vote.vote0 !== undefined || prior.vote.promised > 0 || prior.vote.accepted)) return { ...prior.vote };
  return 'none';
}

/** A promiser's report: its ballot-0 vote, its last accepted value, the vetoes it knows of. */
interface PromiseVotes {
  vote0?: Decision;
  accepted?: { ballot: number; value: Decision };
  vetoes?: number[];
  /** The participant set of the proposal a commit vote was for (absent: all n). */
  members?: number[];
}

/**
 * A promise's report of our votes: "vote0|ballot:value|vetoers" ('-' for none; vetoers
 * comma-separated), then "|i.j.k" with a commit vote under a participant set other than all n.
 */
function votesKey(b: Batch): string {
  const base = `${b.vote0 ?? '-'}|${b.accepted ? `${b.accepted.ballot}:${b.accepted.value}` : '-'}|${[...b.vetoes].join(',')}`;
  return b.vote0 === 'commit' && b.members ? `${base}|${b.members.join('.')}` : base;
}

function parseDecision(x: string | undefined): Decision | undefined {
  return x === 'commit' || x === 'drop' ? x : undefined;
}

function parseVotes(key: string): PromiseVotes {
  const [v0, acc, vetoes, members] = key.split('|');
  const out: PromiseVotes = {};
  const vote0 = parseDecision(v0);
  if (vote0) out.vote0 = vote0;
  if (acc && acc !== '-') {
    const [ballot, value] = acc.split(':');
    const v = parseDecision(value);
    if (v && Number.isSafeInteger(Number(ballot))) out.accepted = { ballot: Number(ballot), value: v };
  }
  if (vetoes) out.vetoes = vetoes.split(',').map(Number).filter((j) => Number.isSafeInteger(j) && j >= 1);
  if (members) out.members = members.split('.').map(Number).filter((j) => Number.isSafeInteger(j) && j >= 1);
  return out;
}

/** Party `self`'s share of a degree-t sharing of each value with coefficients from rng (dealer). */
function shareOf(xs: readonly bigint[], t: number, self: number, rng: FieldRng): bigint[] {
  const coeffs = rng(xs.length * t);
  const pw: bigint[] = [];
  let x = 1n;
  for (let d = 0; d < t; d++) pw.push((x *= BigInt(self)));
  const out = new Array<bigint>(xs.length);
  for (let e = 0; e < xs.length; e++) {
    let acc = xs[e]!;
    for (let d = 0; d < t; d++) acc += coeffs[e * t + d]! * pw[d]!;
    out[e] = reduceWide(acc);
  }
  return out;
}

/** 1..n */
export function allParties(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

/**
 * The BigInt reference of the field kernel's nibbleUnary (tests and benchmarks check the kernel
 * against it; production uses the kernel).
 * Builds stored nibbles ([v > j] for j = 0..14, then v; NIBBLE_WIDTH each) from shares of 4 bits per nibble
 * (x), their 6 pair products (p2: 01,02,03,12,13,23) and 5 higher products (p3: 012,013,023,123,0123).
 * Indicator [v == j] = sum over S containing bits(j) of (-1)^{|S|-|bits(j)|} prod_S x (inclusion-exclusion).
 */
export function nibblesFrom(x: readonly bigint[], p2: readonly bigint[], p3: readonly bigint[], U: number): bigint[] {
  const out = new Array<bigint>(U * NIBBLE_WIDTH);
  const prod = new Array<bigint>(16);
  for (let u = 0; u < U; u++) {
    prod[0] = 1n;
    prod[1] = x[4 * u]!;
    prod[2] = x[4 * u + 1]!;
    prod[4] = x[4 * u + 2]!;
    prod[8] = x[4 * u + 3]!;
    prod[3] = p2[6 * u]!;
    prod[5] = p2[6 * u + 1]!;
    prod[9] = p2[6 * u + 2]!;
    prod[6] = p2[6 * u + 3]!;
    prod[10] = p2[6 * u + 4]!;
    prod[12] = p2[6 * u + 5]!;
    prod[7] = p3[5 * u]!;
    prod[11] = p3[5 * u + 1]!;
    prod[13] = p3[5 * u + 2]!;
    prod[14] = p3[5 * u + 3]!;
    prod[15] = p3[5 * u + 4]!;
    // indicators [v == j] = sum over S containing bits(j) of (-1)^(|S|-|j|) prod_S, all at once by the
    // superset Moebius transform (one subtraction per subset and bit, 28 in all instead of 80 terms;
    // S = 0 is skipped: [v == 0] is not stored), then suffix sums [v > j - 1] = sum_{k >= j} [v == k]
    for (let bit = 1; bit < 16; bit <<= 1) {
      for (let S = 1; S < 16; S++) if ((S & bit) === 0) prod[S] = prod[S]! - prod[S | bit]!;
    }
    let gt = 0n;
    for (let j = 15; j >= 1; j--) {
      gt += prod[j]!;
      out[u * NIBBLE_WIDTH + j - 1] = mod(gt);
    }
    out[u * NIBBLE_WIDTH + NIBBLE_VALUE] = mod(x[4 * u]! + 2n * x[4 * u + 1]! + 4n * x[4 * u + 2]! + 8n * x[4 * u + 3]!);
  }
  return out;
}

/**
 * The stored form of U nibbles from the square-root trick's signs (BigInt; the field kernel's
 * nibblesFromSigns is the fast path and matches it): r the 4 values per nibble, p2 / p3 the 6 pair
 * and 5 higher products of them (nibblePairs' and nibbleHigher's orders), q the 4 public inverse
 * roots 1/s (0 for a zero root). Bit i is x_i = (1 + b_i)/2 with b_i = r_i q_i; a monomial
 * b_T = r_T q_T. A zero root (r_i = 0) makes the bit 0: b_i = -1, and a monomial through it is -1
 * times the monomial without it. Linear in the shares (r, p2, p3) for public q: shares to shares.
 */
export function nibblesFromSigns(r: readonly bigint[], p2: readonly bigint[], p3: readonly bigint[], q: readonly bigint[], U: number): bigint[] {
  const x: bigint[] = [];
  const q2: bigint[] = [];
  const q3: bigint[] = [];
  const prodAt = [0, 0, 1, 0, 2, 1, 3, 0, 3, 2, 4, 1, 5, 2, 3, 4]; // slot of r_T in r (|T| = 1), p2, p3
  const inv2 = inv(2n);
  for (let u = 0; u < U; u++) {
    const rT = (T: number): bigint => {
      if (T === 0) return 1n;
      const size = popcount(T);
      if (size === 1) return r[4 * u + Math.log2(T)]!;
      return size === 2 ? p2[6 * u + prodAt[T]!]! : p3[5 * u + (T === 15 ? 4 : prodAt[T]!)]!;
    };
    const zeroBits = [0, 1, 2, 3].reduce((z, i) => (q[4 * u + i] === 0n ? z | (1 << i) : z), 0);
    const sign = (T: number): bigint => {
      // b_T = (-1)^|T & Z| r_{T \ Z} q_{T \ Z}
      const live = T & ~zeroBits;
      let v = rT(live);
      for (let i = 0; i < 4; i++) if (live & (1 << i)) v = reduce(v * q[4 * u + i]!);
      return popcount(T & zeroBits) % 2 === 1 ? mod(-v) : v;
    };
    const b = Array.from({ length: 16 }, (_, T) => sign(T));
    // x_S = 2^-|S| sum_{T subset of S} b_T
    const xS = (S: number): bigint => {
      let acc = 0n;
      for (let T = S; ; T = (T - 1) & S) {
        acc += b[T]!;
        if (T === 0) break;
      }
      let v = mod(acc);
      for (let k = popcount(S); k > 0; k--) v = reduce(v * inv2);
      return v;
    };
    for (const T of [1, 2, 4, 8]) x.push(xS(T));
    for (const T of [3, 5, 9, 6, 10, 12]) q2.push(xS(T));
    for (const T of [7, 11, 13, 14, 15]) q3.push(xS(T));
  }
  return nibblesFrom(x, q2, q3, U);
}

function popcount(x: number): number {
  let c = 0;
  for (let v = x; v !== 0; v &= v - 1) c++;
  return c;
}

/** A deterministic field RNG from a seed (dealer mode and tests only: NOT secret). AES-128-CTR stream. */
export function seededRng(seed: string): FieldRng {
  const key = createHash('sha256').update(seed).digest().subarray(0, 16);
  const cipher = createCipheriv('aes-128-ctr', key, Buffer.alloc(16));
  return (count) => {
    const buf = cipher.update(Buffer.alloc(count * 16));
    // & p by clearing each element's top bit in the bytes; DataView reads (Buffer's readBigUInt64BE is several times slower)
    for (let o = 0; o < buf.length; o += 16) buf[o]! &= 0x7f;
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const out = new Array<bigint>(count);
    for (let i = 0; i < count; i++) {
      const x = (view.getBigUint64(i * 16) << 64n) | view.getBigUint64(i * 16 + 8);
      out[i] = x === P ? 0n : x;
    }
    return out;
  };
}
