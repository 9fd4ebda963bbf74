// A Party runs jobs over a Transport. It owns: PRSS keys (setup), the transactional store, the
// reserve and its production (preprocessing.ts), openings with the round barrier, re-sends, and share
// recovery (recovery.ts).
//
// Round barrier. Interactive operations issued by any code of a job are queued; on clock.defer the
// queue is flushed as ONE message per peer per round, preprocessing assigned in queue order. When the
// round's openings complete, waiting operations resume in queue order; their next operations form the
// next round. Rounds of a job are strictly sequential, so every party forms identical rounds.
// Openings complete with the first t+1 shares from any parties (or, with checkOpenings, with every
// live party's share, checked). Messages are keyed by (job id, round); late and duplicate ones are
// harmless; messages of future jobs are buffered (bounded); sent messages of the current and last few
// jobs are re-sent to a peer that comes back up.

import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Transport } from '@tenebra/transport';
import { allocBytes } from '@tenebra/transport/src/byte-pool';
import { InconsistentSharesError, JobMessagesGoneError, PreprocessingExhaustedError, QuorumLostError, type JobContext, type Sec } from './api';
import { DEFAULT_KAPPA, DEFAULT_L, ELEMENT_BYTES, assertComparisonFits, assertElements, assertEncodedAt, concatEncoded, copyElement, encodeFieldVector, mod, readElement, writeElement } from './field';
import { lincombEncoded } from './kernel';
import { Msg, decode, decodeVector, encodeWith, type Envelope } from './messages';
import { DEALER_LABEL, Preprocessor, allParties, type PreprocessingOptions } from './preprocessing';
import * as proto from './protocols';
import { Prss, makeOwnKeys, prssSubsetsOf, subsetKey, type PrssKeys } from './prss';
import { KINDS, WIDTH, zeroCounts, type Counts, type Kind, type Reserve } from './reserve';
import { Recovery, answerRecovery } from './recovery';
import { assertParams, interpolateEncoded, interpolateToBytes, lagrange, nameBadParty, reconstructChecked } from './shamir';
import { decodeSnapshot, encodeSnapshot, encodeSplit, itemsOf, type ChunkRef, type PartySnapshot, type PrepLog, type PubChunkCache, type SplitState } from './state';

/** Options of createParty. */
export interface PartyOptions {
  n: number;
  t: number;
  /** Bound on compared values, |x| < 2^L (default 48). */
  L?: number;
  /** Statistical security parameter kappa (default DEFAULT_KAPPA = 64; every party of a committee must use the same). */
  k?: number;
  transport: Transport;
  preprocessing?: PreprocessingOptions;
  /** From exportState(), or exportStateParts().core: resume as of that job boundary. */
  state?: Uint8Array;
  /** With exportStateParts()'s core as `state`: the bytes of each reserve chunk it lists, by key. */
  stateChunks?: (key: string) => Uint8Array | undefined;
  /** From exportKeys(): identity and PRSS keys only (memory gone); call recover() after start(). */
  keys?: Uint8Array;
  /**
   * With `keys`: the preprocessing log of this party's own last durable state (prepLogOf), if it has
   * one. Its shares may be stale, but its votes are exactly what it sent (every vote is durable
   * before it goes out), so recover() need not abstain on the helpers' batch in flight when this log
   * shows the party never voted on it (decision 0009).
   */
  priorVotes?: PrepLog;
  /** Wait for every live party's share and check consistency (names a bad share). Default false. */
  checkOpenings?: boolean;
  /**
   * Whom a job round's shares go to (an opening needs t + 1 shares, this party's own among them):
   * 'all' the other parties; 'spare' the next t + 1 live parties after this one in index order (one
   * share more than a round needs reaches each party, so one slow or unseen sender costs no wait
   * and the late-share check still sees a share); 'minimal' the next t. Every round's message for
   * every peer is still made and archived, so a peer that comes back (peer-up) or a round that waits
   * past `retransmitMs` gets all of them. With checkOpenings always 'all'. Default 'all'.
   */
  shareFanout?: ShareFanout;
  /** With a partial shareFanout: clock ms a round waits before asking the peers it lacks (Msg.JobPull). Default 40; 0 disables. */
  pullMs?: number;
  /**
   * Safety net for messages lost while a link stays up (a lossy simulated link, an overflowing
   * transport queue): while a round waits, re-send every round of the job so far after this many
   * clock ms, doubling up to 60 s (a peer may be stuck on an earlier round of ours).
   * Reconnects are handled by re-sends on peer-up regardless. Default 5000; 0 disables.
   */
  retransmitMs?: number;
  /**
   * A short text this party adds to its "busy" answer while it cannot help a recovery (e.g. the
   * sequence number of its own persisted state), so recovering peers can decide together.
   */
  busyNote?: () => string;
  /**
   * Called before this party sends a vote on a preprocessing batch (ready when it is staged, a veto,
   * a classic ballot's promise or accept): resolve once the party's state as of now
   * (exportState() / exportStateParts(), which hold the staged batch and the votes) is durable.
   * Without it a party restarted from a state written before a batch it helped commit is stale and
   * must recover() from t+1 others, and one restarted before a vote could vote differently.
   */
  beforePrepVote?: (batch: number) => Promise<void>;
  /**
   * True when every party runs job `a` before job `b` (the caller's ids carry an order, e.g. a
   * sequence number). Without it a share of a job older than the `finishedJobs` remembered ids looks
   * like one of a job not started yet and is buffered, so a party that far behind is never told its
   * job is gone and waits; with it, such a share is answered like one of any finished job.
   */
  jobPrecedes?: (a: string, b: string) => boolean;
  log?: (event: object) => void;
  /** Log one 'round' event per completed round (job, round, ms waited, senders). Default false. */
  traceRounds?: boolean;
  limits?: {
    /** Buffered messages of jobs not started yet (default 20,000). */
    futureMessages?: number;
    /** Finished jobs whose sent messages are kept for re-sending (default 8). */
    archivedJobs?: number;
    /** Byte cap of kept sent messages (default 256 MiB). */
    archiveBytes?: number;
    /** Finished job ids remembered (default 4096). */
    finishedJobs?: number;
  };
}

export type ShareFanout = 'all' | 'spare' | 'minimal';
export const SHARE_FANOUTS: readonly ShareFanout[] = ['all', 'spare', 'minimal'];

export type PartyEvent = 'quorum-lost' | 'quorum-restored' | 'inconsistent-share' | 'prep-batch' | 'stale' | 'recovered' | 'recovery-waiting';

export interface PartyStatus {
  party: number;
  phase: Phase;
  alive: number[];
  quorum: boolean;
  /** Items available per kind (bits = 4 x nibbles) and absolute cursors (items ever consumed). */
  reserve: Counts & { bits: number; cursor: Counts };
  preprocessing: { resolvedBatches: number; committedBatches: number; inFlight: number | undefined; stale: boolean; blocked?: { batch: number; state: string; missingReadies: number[]; down: number[]; ballot: number }; perBatch: Counts; made: Counts & { bits: number; batches: number; dropped: number; productionMs: number } };
  mode: string;
  lastFinishedJob: string | undefined;
  currentJob: string | undefined;
  /**
   * Where the running job is: rounds flushed so far, operations queued for the next round, and the
   * round in flight: still taking preprocessing (prep), or waiting for shares, with the parties
   * whose shares are in (to all, and to this party) and for how long. What a stalled job waits for.
   */
  jobProgress?: JobProgress;
  /**
   * While recovering: connected helpers, those not busy themselves, how many are needed (t+1), and
   * what each busy helper said (its busyNote), and the complete answers grouped by helper state.
   */
  recovery?: { alive: number; ready: number; needed: number; busy: Record<number, string>; answered: number[][] };
}

export interface JobProgress {
  job: string;
  rounds: number;
  queued: number;
  inflight?: { r: number; stage: 'prep' | 'shares'; have: number[]; haveTo?: number[]; ms: number };
}

/** One committee party. */
export interface Party {
  readonly id: number;
  readonly n: number;
  readonly t: number;
  /** Starts the transport; on a fresh party sets up PRSS keys (needs all n up); then background preprocessing. */
  start(): Promise<void>;
  /**
   * Runs a job; all parties run the same job ids in the same order, one at a time in call order.
   * `committed`, if given, is called with the result as soon as the job has committed, before the
   * engine's end-of-job work (a background preprocessing step may run there): what the caller
   * releases from it does not wait for that.
   */
  runJob<T>(jobId: string, fn: (ctx: JobContext) => Promise<T>, committed?: (result: T) => void): Promise<T>;
  /** Everything to persist (state as of the start of the running job, or now between jobs). */
  exportState(): Uint8Array;
  /**
   * The same state split for incremental persistence: a small `core` (store, cursors, batch log,
   * keys) and the preprocessing reserve's chunks by key. A key always names the same bytes, so a
   * caller writes each chunk once and drops the ones no longer listed; restore with
   * `createParty({ state: core, stateChunks })`.
   */
  exportStateParts(): SplitState;
  /** Identity material only (PRSS keys): what survives a memory loss. */
  exportKeys(): Uint8Array;
  /** For a party started with `keys` only: fresh shares of every live value from t+1 helpers. */
  recover(): Promise<void>;
  status(): PartyStatus;
  /** status().reserve.cursor alone (a copy), without building the rest of status(): read at every job (the node's consumption per op). */
  reserveCursor(): Counts;
  /** status().jobProgress.rounds alone: the rounds the running job has completed so far, 0 between jobs. */
  jobRounds(): number;
  /** Produces preprocessing up to the targets now (all n must be up in committee mode); for benchmarks and warm-up. */
  fill(): Promise<void>;
  /** The last job this party finished (after recovery: the helpers' last finished job). */
  lastFinishedJob(): string | undefined;
  on(event: PartyEvent, listener: (payload: Record<string, unknown>) => void): void;
  off(event: PartyEvent, listener: (payload: Record<string, unknown>) => void): void;
  stop(): Promise<void>;
}

type Phase = 'new' | 'setup' | 'ready' | 'needs-recovery' | 'recovering' | 'stopped';

/** This party's shares of a vector. */
class SecVec implements Sec {
  constructor(readonly v: readonly bigint[]) {}
  get length(): number {
    return this.v.length;
  }
}

function vecOf(x: Sec): readonly bigint[] {
  if (!(x instanceof SecVec)) throw new TypeError('not a Sec of this engine');
  return x.v;
}

interface PendingOp {
  needs: proto.OpNeeds;
  to: number; // 0: open to all
  /** Shares and opened values as encoded vectors (16 bytes per element) instead of BigInts. */
  encoded?: boolean;
  prepare: (p: proto.Prep) => bigint[] | Uint8Array;
  resolve: (v: { opened: bigint[] | Uint8Array | null; prep: proto.Prep }) => void;
  reject: (e: unknown) => void;
  len?: number;
  prep?: proto.Prep;
}

/**
 * A party's share vector for one opening: this party's own as BigInts or as the bytes it sent, a
 * peer's as the bytes received (16 per element, checked below p on arrival, decoded only where
 * needed: interpolateEncoded works on the bytes, the late-share check decodes the positions it samples).
 */
type ShareVec = readonly bigint[] | Uint8Array;

function lengthOf(v: ShareVec): number {
  return v instanceof Uint8Array ? v.length / ELEMENT_BYTES : v.length;
}

/** Element e of a share vector. */
function elementOf(v: ShareVec, e: number): bigint {
  return v instanceof Uint8Array ? readElement(new DataView(v.buffer, v.byteOffset, v.byteLength), e * ELEMENT_BYTES) : v[e]!;
}

const EMPTY = new Uint8Array(0);
/** The masks of an operation that takes none (read only: protocols only read their masks). */
const NO_MASKS: bigint[] = Object.freeze([]) as unknown as bigint[];
/** The needs of an opening (Ctx.open, openTo): nothing consumed. */
const OPEN_NEEDS: proto.OpNeeds = Object.freeze({ triples: 0, lex4: 0, prod4: 0, nibbles: 0, masks: 0 });

function availableCounts(r: Reserve): Counts {
  const out = zeroCounts();
  for (const k of KINDS) out[k] = r.available(k);
  return out;
}

/** A round's shares opened to all, in operation order: BigInts, or one encoded vector when some operation's are encoded. */
function joinShares(parts: readonly (bigint[] | Uint8Array)[], encoded: boolean): ShareVec {
  if (!encoded) return parts.length === 1 ? (parts[0] as bigint[]) : (parts as bigint[][]).flat();
  return concatEncoded(parts.map((v) => (v instanceof Uint8Array ? v : encodeFieldVector(v))));
}

function decodedOf(v: ShareVec): readonly bigint[] {
  return v instanceof Uint8Array ? decodeVector(v) : v;
}

/** Throws FieldError unless every element of an encoded vector is below p (as decodeVector would). */
function assertEncodedVector(bytes: Uint8Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let o = 0; o < bytes.length; o += ELEMENT_BYTES) assertEncodedAt(view, o);
}

interface RoundState {
  r: number;
  ops: PendingOp[];
  ready: boolean; // own shares computed and sent
  /** my shares of the values opened to all: encoded when some operation of the round is */
  allMine: ShareVec;
  toMine: bigint[] | undefined; // shares of values opened to me (mine included)
  sharesAll: ShareSet;
  sharesTo: ShareSet;
  expectTo: boolean;
  retransmit?: () => void;
  /** cancels the round's pull timer (partial fan-out) */
  pull?: () => void;
  waitingSince: number;
  flushedAt?: number;
  sentAt?: number;
  arrivals?: [number, number][];
}

/**
 * The shares of one opening in hand, by party, in arrival order (this party's own first): the
 * has/set/size and key order of the Map<number, ShareVec> it replaces, in two short arrays (a
 * round made two Maps for them, and their hash tables, every time).
 */
class ShareSet {
  readonly parties: number[] = [];
  readonly shares: ShareVec[] = [];
  get size(): number {
    return this.parties.length;
  }
  has(j: number): boolean {
    return this.parties.includes(j);
  }
  /** As Map.set: a party already in keeps its place. */
  set(j: number, v: ShareVec): void {
    const i = this.parties.indexOf(j);
    if (i >= 0) this.shares[i] = v;
    else {
      this.parties.push(j);
      this.shares.push(v);
    }
  }
  keys(): readonly number[] {
    return this.parties;
  }
}

interface SentRound {
  /** The message of this round to each peer, by party id (no entry for a peer sent nothing). */
  per: (Uint8Array | undefined)[];
}

interface ArchivedJob {
  id: string;
  rounds: SentRound[];
  bytes: number;
}

interface LateCheck {
  /** the opening: job, round, part */
  jobId: string;
  r: number;
  part: 'all' | 'to';
  base: readonly number[];
  /** The positions every late share is sampled at (drawn at the first one). */
  positions?: readonly number[];
  /** The base shares at `positions`, encoded (made at the first late share, reused by the others). */
  rows?: Uint8Array[];
  shares: ShareVec[];
  /** Elements per share vector. */
  m: number;
  /** Shares beyond the base: whole vectors in hand at completion, or a late share at sampled positions. */
  extra: Map<number, SampledShare | ShareVec>;
  flagged: boolean;
  flagIndex?: number;
  named?: boolean;
}

/**
 * A late share known at sampled positions (ascending) only: element positions[j] of the vector is
 * at byte 16 * positions[j] of `bytes`, the late share as received (not gathered into a copy; only
 * the sampled elements count, as if the others were absent).
 */
interface SampledShare {
  positions: readonly number[];
  bytes: Uint8Array;
}

function isSampled(v: SampledShare | ShareVec): v is SampledShare {
  return !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** The sampled share's element at position e, or undefined when e was not sampled. */
function sampledAt(s: SampledShare, e: number): bigint | undefined {
  let lo = 0;
  let hi = s.positions.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const at = s.positions[mid]!;
    if (at === e) return readElement(new DataView(s.bytes.buffer, s.bytes.byteOffset, s.bytes.byteLength), at * ELEMENT_BYTES);
    if (at < e) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/**
 * The elements of an encoded vector at the given positions, as one encoded vector: four 32-bit
 * words per element when the vector starts 4-byte aligned (pooled arrays are, and received
 * vectors mostly), else byte by byte.
 */
function gatherEncoded(v: Uint8Array, positions: readonly number[]): Uint8Array {
  const k = positions.length;
  const out = allocBytes(k * ELEMENT_BYTES);
  if (v.byteOffset % 4 === 0) {
    const s32 = new Uint32Array(v.buffer, v.byteOffset, v.length >> 2);
    const o32 = new Uint32Array(out.buffer, out.byteOffset, out.length >> 2);
    for (let j = 0; j < k; j++) copyElement(s32, positions[j]!, o32, j);
    return out;
  }
  for (let j = 0; j < k; j++) {
    const from = positions[j]! * ELEMENT_BYTES;
    const to = j * ELEMENT_BYTES;
    for (let b = 0; b < ELEMENT_BYTES; b++) out[to + b] = v[from + b]!;
  }
  return out;
}

/**
 * The first j with element positions[j] of `v` unlike element j of `packed` (both encoded), or -1:
 * a late share compared at its sampled positions where it lies, without gathering them first.
 */
function firstMismatchAt(packed: Uint8Array, v: Uint8Array, positions: readonly number[]): number {
  for (let j = 0; j < positions.length; j++) {
    const a = j * ELEMENT_BYTES;
    const b = positions[j]! * ELEMENT_BYTES;
    for (let i = 0; i < ELEMENT_BYTES; i++) if (packed[a + i] !== v[b + i]) return j;
  }
  return -1;
}

/** Throws FieldError unless the elements of an encoded vector at the given positions are below p. */
function assertEncodedAtPositions(bytes: Uint8Array, positions: readonly number[]): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const e of positions) assertEncodedAt(view, e * ELEMENT_BYTES);
}

/** gatherEncoded for a share vector held as BigInts or as bytes. */
function gatherShare(v: ShareVec, positions: readonly number[]): Uint8Array {
  if (v instanceof Uint8Array) return gatherEncoded(v, positions);
  const out = allocBytes(positions.length * ELEMENT_BYTES);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (let j = 0; j < positions.length; j++) writeElement(view, j * ELEMENT_BYTES, v[positions[j]!]!);
  return out;
}

/**
 * This party's own shares of a round (field elements by construction, as the message encoder
 * assumes too) as one encoded vector: no range check per element.
 */
function encodeOwn(v: readonly bigint[]): Uint8Array {
  const out = allocBytes(v.length * ELEMENT_BYTES);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (let i = 0; i < v.length; i++) writeElement(view, i * ELEMENT_BYTES, v[i]!);
  return out;
}

/** A share vector as one encoded vector (the bytes themselves when it is held encoded). */
function encodedOf(v: ShareVec): Uint8Array {
  return v instanceof Uint8Array ? v : encodeFieldVector(v);
}

/**
 * a and b hold the same bytes: Buffer's native compare called on the arrays themselves (it takes
 * any Uint8Array as `this`), without wrapping each in a Buffer object first.
 */
function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && BUFFER_EQUALS.call(a, b);
}
const BUFFER_EQUALS = Buffer.prototype.equals as (this: Uint8Array, other: Uint8Array) => boolean;

/** Positions spot-checked per late share. */
const LATE_SAMPLE = 32;

/**
 * k random positions in [0, m), ascending and distinct, all of them when m <= k: one uniform in each
 * of k strata of (nearly) equal size, so an element is drawn with probability about k/m, without
 * the set and sort of k independent draws (this runs for every late share of every round).
 */
function samplePositions(m: number, k: number): readonly number[] {
  if (m <= k) return (ALL_POSITIONS[m] ??= Object.freeze(Array.from({ length: m }, (_, i) => i)));
  const out = new Array<number>(k);
  for (let j = 0; j < k; j++) {
    const lo = Math.floor((j * m) / k);
    const hi = Math.floor(((j + 1) * m) / k);
    out[j] = lo + Math.floor(Math.random() * (hi - lo));
  }
  return out;
}

const MAX_LATE_CHECKS = 32;
/** [0, m) for the short vectors every position of which is checked: made once per length, shared (read only) */
const ALL_POSITIONS: (readonly number[])[] = [];
const MAX_NAME = 256;

/** Creates a party (not started). */
export function createParty(opts: PartyOptions): Party {
  return new PartyImpl(opts);
}

/** Jobs not started yet whose pulls (Msg.JobPull) are remembered. */
const FUTURE_PULLS = 64;

class JobRun {
  round = 0;
  queue: PendingOp[] = [];
  flushScheduled = false;
  inflight: RoundState | undefined;
  incoming = new Map<number, Map<number, Envelope>>();
  overlay = new Map<string, readonly bigint[] | null>();
  pubOverlay = new Map<string, string | null>();
  failed: unknown = undefined;
  /** peers that told us they finished this job and no longer keep its messages (Msg.JobGone) */
  readonly gone = new Set<number>();
  /** peers that asked for this job's shares (Msg.JobPull): every later round goes to them too */
  pulled = new Set<number>();
  sent: ArchivedJob;
  constructor(readonly id: string, readonly nonceBase: string) {
    this.sent = { id, rounds: [], bytes: 0 };
  }
}

class PartyImpl implements Party {
  readonly id: number;
  readonly n: number;
  readonly t: number;
  readonly L: number;
  readonly kappa: number;
  /** Bits of each PRSS statistical mask (proto.geometry of L and kappa: the same every round). */
  private readonly maskBits: number;
  /** Comparison bounds other than L that jobs asked for and that fit the field (checked once each). */
  readonly fittingBounds = new Set<number>();
  private readonly transport: Transport;
  private readonly emitter = new EventEmitter();
  private readonly logFn: (event: object) => void;
  private readonly checkOpenings: boolean;
  /** peers beyond this party that get each round's shares (undefined: all) */
  private readonly fanoutSize: number | undefined;
  private readonly pullMs: number;
  private readonly retransmitMs: number;
  private readonly traceRounds: boolean;
  private readonly limits: Required<NonNullable<PartyOptions['limits']>>;
  readonly prep: Preprocessor;
  private phase: Phase = 'new';
  private keys: PrssKeys = new Map();
  private prssInst: Prss | undefined;
  private ownKeys: PrssKeys = new Map();
  store = new Map<string, readonly bigint[]>();
  pub = new Map<string, string>();
  private finished: string[] = [];
  private finishedSet = new Set<string>();
  private job: JobRun | undefined;
  private jobStart: Counts | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private future = new Map<string, { from: number; env: Envelope }[]>();
  private futureCount = 0;
  private archive: ArchivedJob[] = [];
  /** pulls (Msg.JobPull) for jobs not started here yet, by job id: the askers get every round (bounded) */
  private readonly futurePulls = new Map<string, Set<number>>();
  private archiveBytes = 0;
  /** the last MAX_LATE_CHECKS openings' late-share checks, a ring (newest at lateAt - 1): no key string per opening */
  private lateChecks: (LateCheck | undefined)[] = new Array<LateCheck | undefined>(MAX_LATE_CHECKS);
  private lateAt = 0;
  private quorumLost = false;
  private setupDone: (() => void) | undefined;
  private recovery: Recovery | undefined;
  private readonly busyNote: (() => string) | undefined;
  private readonly priorVotes: PrepLog | undefined;
  private readonly jobPrecedes: ((a: string, b: string) => boolean) | undefined;
  private answered = new Set<string>();
  private pendingState: PartySnapshot | undefined;
  /** Names this party instance's reserve chunks in exportStateParts() (keys never reused across instances). */
  private readonly chunkEpoch = randomBytes(4).toString('hex');
  /** exportStateParts(): the chunk of each long public value while it stays the same (state.ts encodeSplit) */
  private readonly pubChunks: PubChunkCache = new Map();
  /** exportStateParts(): each reserve chunk's reference, by the chunk's bytes (chunkRef) */
  private readonly chunkRefs = new WeakMap<Uint8Array, { gen: number; ref: ChunkRef & { bytes: Uint8Array } }>();
  /** the PRSS keys as a snapshot lists them (hex, sorted), for the keys map and size they were made from: keys are only added (setup) or the map replaced (install) */
  private keysHex: { of: PrssKeys; size: number; hex: [string, string][] } | undefined;
  private startedTransport = false;

  constructor(opts: PartyOptions) {
    assertParams(opts.n, opts.t);
    if (!opts.transport) throw new Error('createParty: transport is required');
    if (opts.transport.n !== opts.n) throw new Error(`createParty: transport is for n=${opts.transport.n}, party for n=${opts.n}`);
    if (!Number.isInteger(opts.transport.self) || opts.transport.self < 1 || opts.transport.self > opts.n) throw new Error(`createParty: transport self ${opts.transport.self} outside 1..${opts.n}`);
    this.n = opts.n;
    this.t = opts.t;
    this.L = opts.L ?? DEFAULT_L;
    this.kappa = opts.k ?? DEFAULT_KAPPA;
    assertComparisonFits(this.L, this.kappa, this.n, this.t);
    this.maskBits = proto.geometry(this.L, this.kappa).maskBits;
    this.transport = opts.transport;
    this.id = opts.transport.self;
    this.checkOpenings = opts.checkOpenings ?? false;
    const fanout = opts.shareFanout ?? 'all';
    if (!SHARE_FANOUTS.includes(fanout)) throw new Error(`shareFanout must be one of ${SHARE_FANOUTS.join(', ')}, got ${String(fanout)}`);
    this.pullMs = opts.pullMs ?? 40;
    this.fanoutSize = this.checkOpenings || fanout === 'all' ? undefined : opts.t + (fanout === 'spare' ? 1 : 0);
    this.retransmitMs = opts.retransmitMs ?? 5000;
    this.traceRounds = opts.traceRounds ?? false;
    this.limits = {
      futureMessages: opts.limits?.futureMessages ?? 20_000,
      archivedJobs: opts.limits?.archivedJobs ?? 8,
      archiveBytes: opts.limits?.archiveBytes ?? 256 * 1024 * 1024,
      finishedJobs: opts.limits?.finishedJobs ?? 4096,
    };
    this.busyNote = opts.busyNote;
    this.priorVotes = opts.priorVotes;
    this.jobPrecedes = opts.jobPrecedes;
    const userLog = opts.log ?? (() => {});
    const dealer = opts.preprocessing?.mode === 'dealer';
    this.logFn = (ev) => userLog(dealer ? { party: this.id, mode: DEALER_LABEL, ...ev } : { party: this.id, ...ev });
    this.prep = new Preprocessor(
      {
        n: this.n,
        t: this.t,
        self: this.id,
        lessThan: proto.costOf('lt', this.L, this.kappa),
        prss: () => this.prss(),
        allUp: () => this.aliveCount() === this.n,
        aliveCount: () => this.aliveCount(),
        isUp: (peer) => this.transport.isUp(peer),
        send: (to, bytes) => this.transport.send(to, bytes),
        envelope: (m) => this.envelope(m),
        log: (ev) => this.logFn(ev),
        emitBatch: (ev) => this.emit('prep-batch', ev),
        idle: () => this.job === undefined,
        setTimer: (fn, ms) => this.transport.clock.setTimeout(fn, ms),
        defer: (fn) => this.deferPrep(fn),
        ...(opts.beforePrepVote ? { persistVote: opts.beforePrepVote } : {}),
        boundaryCursor: () => ({ ...(this.jobStart ?? this.prep.reserve.cursor) }),
        onVoidDecided: (_value, touched) => this.onVoidDecided(touched),
      },
      opts.preprocessing,
    );
    if (opts.state) {
      const s = decodeSnapshot(opts.state, opts.stateChunks);
      this.checkCompatible(s);
      this.pendingState = s;
    } else if (opts.keys) {
      this.keys = decodeKeys(opts.keys);
      this.prssInst = new Prss(this.n, this.t, this.id, this.keys);
    }
  }

  // ---- lifecycle ----

  async start(): Promise<void> {
    if (this.phase !== 'new') throw new Error(`party ${this.id}: start() in phase ${this.phase}`);
    this.transport.onMessage((from, data) => this.onMessage(from, data));
    this.transport.onPeer((peer, up) => this.onPeer(peer, up));
    await this.transport.start();
    this.startedTransport = true;
    if (this.pendingState) {
      this.installSnapshot(this.pendingState, true);
      this.pendingState = undefined;
      this.phase = 'ready';
      this.logFn({ ev: 'start', from: 'state', lastFinishedJob: this.lastFinishedJob() });
      this.prep.enable();
      for (let j = 1; j <= this.n; j++) if (j !== this.id && this.transport.isUp(j)) this.onPeer(j, true);
      return;
    }
    if (this.prssInst) {
      this.phase = 'needs-recovery';
      this.logFn({ ev: 'start', from: 'keys', note: 'memory gone: call recover()' });
      return;
    }
    this.phase = 'setup';
    this.ownKeys = makeOwnKeys(this.n, this.t, this.id);
    for (const [k, v] of this.ownKeys) this.keys.set(k, v);
    const done = new Promise<void>((resolve) => (this.setupDone = resolve));
    this.sendKeys();
    this.checkSetup();
    await done;
  }

  private sendKeys(to?: number): void {
    for (const [name, key] of this.ownKeys) {
      const members = name.split(',').map(Number);
      for (const j of members) {
        if (j === this.id || (to !== undefined && j !== to)) continue;
        this.transport.send(j, this.envelope({ type: Msg.SetupKey, key: name, extra: key }));
      }
    }
  }

  private checkSetup(): void {
    if (this.phase !== 'setup') return;
    const mine = prssSubsetsOf(this.n, this.t, this.id);
    if (!mine.every((a) => this.keys.has(subsetKey(a)))) return;
    // Setup also waits until every peer has been up (so our own keys reached them).
    if (this.aliveParties().length < this.n) return;
    this.prssInst = new Prss(this.n, this.t, this.id, this.keys);
    this.phase = 'ready';
    this.logFn({ ev: 'setup-done', mode: this.prep.modeLabel });
    this.prep.enable();
    this.setupDone?.();
  }

  async stop(): Promise<void> {
    if (this.phase === 'stopped') return;
    this.phase = 'stopped';
    this.prep.stop();
    if (this.job) this.failJob(this.job, new Error(`party ${this.id} stopped`));
    this.recovery?.stop();
    if (this.startedTransport) await this.transport.stop();
  }

  // ---- public helpers ----

  prss(): Prss {
    if (!this.prssInst) throw new Error(`party ${this.id}: PRSS keys are not set up`);
    return this.prssInst;
  }

  on(event: PartyEvent, listener: (payload: Record<string, unknown>) => void): void {
    this.emitter.on(event, listener);
  }

  off(event: PartyEvent, listener: (payload: Record<string, unknown>) => void): void {
    this.emitter.off(event, listener);
  }

  private emit(event: PartyEvent, payload: Record<string, unknown>): void {
    this.logFn({ ev: event, ...payload });
    this.emitter.emit(event, { party: this.id, ...payload });
  }

  aliveParties(): number[] {
    const out: number[] = [];
    for (let j = 1; j <= this.n; j++) if (j === this.id ? this.phase !== 'stopped' : this.transport.isUp(j)) out.push(j);
    return out;
  }

  /** aliveParties().length without the array (checkQuorum asks at every round). */
  private aliveCount(): number {
    let k = 0;
    for (let j = 1; j <= this.n; j++) if (j === this.id ? this.phase !== 'stopped' : this.transport.isUp(j)) k++;
    return k;
  }

  status(): PartyStatus {
    const alive = this.aliveParties();
    const r = this.prep.reserve;
    const blocked = this.prep.blocked();
    return {
      party: this.id,
      phase: this.phase,
      alive,
      quorum: alive.length >= this.t + 1,
      reserve: { ...availableCounts(r), bits: 4 * r.available('nibbles'), cursor: { ...r.cursor } },
      preprocessing: {
        resolvedBatches: this.prep.resolved,
        committedBatches: this.prep.committed,
        inFlight: this.prep.inFlight,
        stale: this.prep.stale,
        ...(blocked ? { blocked } : {}),
        perBatch: { ...this.prep.per },
        made: { ...this.prep.stats.made, bits: 4 * this.prep.stats.made.nibbles, batches: this.prep.stats.batches, dropped: this.prep.stats.dropped, productionMs: this.prep.stats.productionMs },
      },
      mode: this.prep.modeLabel,
      lastFinishedJob: this.lastFinishedJob(),
      currentJob: this.job?.id,
      ...(this.job ? { jobProgress: this.jobProgress(this.job) } : {}),
      ...(this.recovery ? { recovery: this.recovery.helperCounts() } : {}),
    };
  }

  reserveCursor(): Counts {
    return { ...this.prep.reserve.cursor };
  }

  jobRounds(): number {
    return this.job?.round ?? 0;
  }

  lastFinishedJob(): string | undefined {
    return this.finished[this.finished.length - 1];
  }

  private jobProgress(job: JobRun): JobProgress {
    const rs = job.inflight;
    const out: JobProgress = { job: job.id, rounds: job.round, queued: job.queue.length };
    if (rs) {
      out.inflight = {
        r: rs.r, stage: rs.ready ? 'shares' : 'prep', have: [...rs.sharesAll.keys()].sort((a, b) => a - b),
        ...(rs.expectTo ? { haveTo: [...rs.sharesTo.keys()].sort((a, b) => a - b) } : {}),
        ms: this.transport.clock.now() - rs.waitingSince,
      };
    }
    return out;
  }

  fill(): Promise<void> {
    if (this.phase !== 'ready') throw new Error(`party ${this.id}: fill() in phase ${this.phase}`);
    return this.prep.fill();
  }

  envelope(m: { type: Msg; a?: number; b?: number; key?: string; vectors?: readonly (readonly bigint[] | Uint8Array)[]; extra?: Uint8Array }): Uint8Array {
    const ready = this.phase === 'ready';
    return encodeWith(m, ready ? this.prep.committed : 0, ready ? this.prep.resolved : 0);
  }

  // ---- state ----

  private checkCompatible(s: PartySnapshot): void {
    if (s.n !== this.n || s.t !== this.t || s.L !== this.L || s.kappa !== this.kappa) {
      throw new Error(`state is for n=${s.n} t=${s.t} L=${s.L} kappa=${s.kappa}, party is n=${this.n} t=${this.t} L=${this.L} kappa=${this.kappa}: start from a fresh data folder, or run the version that wrote it`);
    }
    if (s.mode !== this.prep.mode) throw new Error(`state was made in ${s.mode} mode, party is in ${this.prep.mode} mode`);
  }

  /** The state as of the start of the running job (or now between jobs); items as bytes when `asBytes`. */
  snapshot(includeStaged: boolean, asBytes = false): PartySnapshot {
    const r = this.prep.reserve;
    const cursor = { ...(this.jobStart ?? r.cursor) };
    return { ...this.snapshotCore(includeStaged, cursor), items: asBytes ? r.fromBytes(cursor) : r.from(cursor) };
  }

  /** snapshot() without the reserve items (they are persisted as chunks). */
  private snapshotCore(includeStaged: boolean, cursor: Counts, copyStore = true): Omit<PartySnapshot, 'items'> {
    const prepSnap = this.prep.snapshot();
    // Without copyStore the snapshot holds the store's own vectors (never changed in place: a job's
    // save replaces them), for an encoder that reads them at once and caches their bytes by vector.
    const vec = copyStore ? (v: readonly bigint[]) => v.slice() : (v: readonly bigint[]) => v as bigint[];
    return {
      n: this.n, t: this.t, L: this.L, kappa: this.kappa, mode: this.prep.mode,
      keys: this.hexKeys(),
      store: [...this.store].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, vec(v)] as [string, bigint[]]),
      pub: [...this.pub].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      cursor,
      finished: this.finished.slice(-this.limits.finishedJobs),
      prep: includeStaged ? prepSnap : { resolved: prepSnap.resolved, committed: prepSnap.committed },
    };
  }

  /** The PRSS keys in hex, sorted: computed once per keys map (every job boundary lists them). */
  private hexKeys(): [string, string][] {
    if (this.keysHex?.of !== this.keys || this.keysHex.size !== this.keys.size) {
      this.keysHex = { of: this.keys, size: this.keys.size, hex: [...this.keys].map(([k, v]) => [k, Buffer.from(v).toString('hex')] as [string, string]).sort() };
    }
    return this.keysHex.hex;
  }

  exportState(): Uint8Array {
    if (this.phase !== 'ready') throw new Error(`party ${this.id}: exportState() in phase ${this.phase}`);
    return encodeSnapshot(this.snapshot(true, true));
  }

  exportStateParts(): SplitState {
    if (this.phase !== 'ready') throw new Error(`party ${this.id}: exportStateParts() in phase ${this.phase}`);
    const r = this.prep.reserve;
    const cursor = { ...(this.jobStart ?? r.cursor) };
    // The generation names the chunking: a reset (recovery, state import) re-chunks the reserve.
    const gen = r.generation;
    const chunks = r.chunksFrom(cursor).map((c) => this.chunkRef(c, gen));
    return encodeSplit(this.snapshotCore(true, cursor, false), chunks, this.pubChunks);
  }

  /**
   * A reserve chunk's reference as exportStateParts lists it, the same object at every boundary
   * while the chunk stays (chunks never change once appended; a reset or a drop bumps the
   * generation, which the key names): encodeSplit then makes its JSON once, not per job.
   */
  private chunkRef(c: { kind: Kind; start: number; count: number; bytes: Uint8Array }, gen: number): ChunkRef & { bytes: Uint8Array } {
    const had = this.chunkRefs.get(c.bytes);
    if (had !== undefined && had.gen === gen && had.ref.kind === c.kind && had.ref.start === c.start && had.ref.count === c.count) return had.ref;
    const ref = { kind: c.kind, start: c.start, count: c.count, bytes: c.bytes, key: `g${this.chunkEpoch}.${gen}/${c.kind}/${c.start}+${c.count}` };
    this.chunkRefs.set(c.bytes, { gen, ref });
    return ref;
  }

  exportKeys(): Uint8Array {
    if (!this.prssInst) throw new Error(`party ${this.id}: no PRSS keys yet`);
    return encodeKeys(this.keys);
  }

  /** Installs a snapshot (own state, or recovered shares). */
  installSnapshot(s: PartySnapshot, own: boolean): void {
    if (own) {
      this.keys = new Map(s.keys.map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'hex'))]));
      this.prssInst = new Prss(this.n, this.t, this.id, this.keys);
      this.ownKeys = new Map([...this.keys].filter(([k]) => Number(k.split(',')[0]) === this.id));
    }
    this.store = new Map(s.store);
    this.pub = new Map(s.pub);
    this.prep.reserve.reset(s.cursor, itemsOf(s.items));
    this.finished = s.finished.slice();
    this.finishedSet = new Set(this.finished);
    if (own) this.prep.restore(s.prep);
  }

  // ---- recovery ----

  async recover(): Promise<void> {
    if (this.phase === 'new') await this.start();
    if (this.phase !== 'needs-recovery') throw new Error(`party ${this.id}: recover() in phase ${this.phase} (only a party started with keys only recovers)`);
    this.phase = 'recovering';
    this.recovery = new Recovery({
      n: this.n,
      t: this.t,
      self: this.id,
      clock: this.transport.clock,
      aliveHelpers: () => this.aliveParties().filter((j) => j !== this.id),
      send: (to, bytes) => this.transport.send(to, bytes),
      envelope: (m) => this.envelope(m),
      log: (ev) => this.logFn(ev),
      emit: (ev, payload) => this.emit(ev, payload),
    });
    const got = await this.recovery.run();
    this.recovery = undefined;
    if (this.phase !== 'recovering') throw new Error(`party ${this.id}: stopped during recovery`);
    this.installSnapshot({ ...got.snapshot, keys: [], mode: this.prep.mode, L: this.L, kappa: this.kappa }, false);
    this.prep.adopt(got.snapshot.prep.resolved, got.snapshot.prep.committed, got.helpersInFlight, this.priorVotes);
    this.phase = 'ready';
    this.emit('recovered', { lastFinishedJob: this.lastFinishedJob(), values: got.snapshot.store.length, reserve: this.status().reserve, helpers: got.helpers });
    this.prep.enable();
    // Ask everyone to re-send what we missed of the current job (they do on peer-up; here again).
    for (let j = 1; j <= this.n; j++) if (j !== this.id && this.transport.isUp(j)) this.transport.send(j, this.envelope({ type: Msg.PrepStatus }));
  }

  private answerRecovery(from: number, env: Envelope): void {
    const nonce = env.key;
    const tag = `${from}:${nonce}`;
    if (this.phase !== 'ready') {
      const note = this.busyNote?.();
      this.transport.send(from, this.envelope({ type: Msg.RecoverBusy, key: nonce, extra: new TextEncoder().encode(note ? `phase ${this.phase}; ${note}` : `phase ${this.phase}`) }));
      return;
    }
    const staged = this.prep.restoredStaged();
    if (staged !== undefined) {
      // It would abstain on this batch and could not compute it (nobody keeps its phase-A messages):
      // decide it first, without the recovering party, and answer with it in the reserve.
      this.prep.notVoting(from);
      this.transport.send(from, this.envelope({ type: Msg.RecoverBusy, key: nonce, extra: new TextEncoder().encode(`phase ready; deciding preprocessing batch ${staged}, restored staged, before answering`) }));
      return;
    }
    const without = this.prep.excludes(from);
    if (without !== undefined) {
      // The batch in flight is made without it (ADR 0017): answered now, it would miss that batch's
      // items and be stale once it commits. Its next request comes after the batch is decided.
      this.transport.send(from, this.envelope({ type: Msg.RecoverBusy, key: nonce, extra: new TextEncoder().encode(`phase ready; preprocessing batch ${without} is made without you: answering once it is decided`) }));
      return;
    }
    // One answer per nonce saves recomputing a big reserve's masks for a repeated request. It is not
    // what keeps answers apart (the set forgets, and a restart empties it): the mask is bound to the
    // state answered at (recovery.ts), so a second answer at another state is independently masked.
    if (this.answered.has(tag)) return;
    if (this.answered.size >= 1024) this.answered.delete(this.answered.values().next().value!);
    this.answered.add(tag);
    const snap = this.snapshot(false);
    const inFlight = this.prep.inFlight;
    for (const bytes of answerRecovery(this.prss(), from, nonce, snap, inFlight, (m) => this.envelope(m))) this.transport.send(from, bytes);
    this.logFn({ ev: 'recovery-answer', to: from, values: snap.store.length, lastFinishedJob: snap.finished[snap.finished.length - 1] });
    this.resendArchive(from);
  }

  // ---- transport events ----

  private onMessage(from: number, data: Uint8Array): void {
    if (this.phase === 'stopped') return;
    let env: Envelope;
    try {
      env = decode(data);
    } catch (e) {
      this.logFn({ ev: 'bad-message', from, error: String(e) });
      return;
    }
    if (from < 1 || from > this.n || from === this.id) return;
    try {
      if (this.phase === 'ready') this.prep.onPiggyback(from, env.prepCommitted, env.prepNext);
      switch (env.type) {
        case Msg.SetupKey:
          return this.onKey(from, env);
        case Msg.JobRound:
          return this.onJobMessage(from, env);
        case Msg.JobGone:
          return this.onJobGone(from, env.key);
        case Msg.JobPull:
          return this.onJobPull(from, env.key, env.a);
        case Msg.PrepRound:
        case Msg.PrepReady:
        case Msg.PrepCommit:
        case Msg.PrepVeto:
        case Msg.PrepStatus:
        case Msg.PrepPrepare:
        case Msg.PrepPromise:
        case Msg.PrepAccept:
        case Msg.PrepAccepted:
        case Msg.PrepNack:
        case Msg.PrepDropped:
        case Msg.PrepAbstain:
        case Msg.PrepRoundsGone:
        case Msg.PrepVoidPrepare:
        case Msg.PrepVoidPromise:
        case Msg.PrepVoidAccept:
        case Msg.PrepVoidAccepted:
          // While recovering, a batch the others start is kept for later (the preprocessor buffers
          // it until it is enabled): dropping it would leave that batch waiting for us forever.
          if (this.phase === 'ready' || this.phase === 'setup') this.prep.onMessage(from, env);
          else if (this.phase === 'recovering' && (env.type === Msg.PrepRound || env.type === Msg.PrepReady || env.type === Msg.PrepVeto)) this.prep.onMessage(from, env);
          // (not while a void of the one batch it lacks is under way: decision 0009)
          if (this.prep.stale && !this.prep.voiding) this.emit('stale', { note: 'a peer committed a preprocessing batch this party lacks; recover() it' });
          return;
        case Msg.RecoverRequest:
          return this.answerRecovery(from, env);
        case Msg.RecoverReply:
        case Msg.RecoverBusy:
          this.recovery?.onMessage(from, env);
          return;
      }
    } catch (e) {
      this.logFn({ ev: 'handler-error', from, type: env.type, error: e instanceof Error ? e.stack : String(e) });
    }
  }

  private onKey(from: number, env: Envelope): void {
    const members = env.key.split(',').map(Number);
    if (members[0] !== from || !members.includes(this.id) || members.length !== this.n - this.t) return;
    const have = this.keys.get(env.key);
    if (have) {
      if (Buffer.compare(Buffer.from(have), Buffer.from(env.extra)) !== 0) this.logFn({ ev: 'key-mismatch', from, subset: env.key });
      return;
    }
    if (this.phase !== 'setup') return;
    this.keys.set(env.key, new Uint8Array(env.extra));
    this.checkSetup();
  }

  private onPeer(peer: number, up: boolean): void {
    if (this.phase === 'stopped') return;
    try {
      if (up) {
        if (this.phase === 'setup' || this.phase === 'ready') this.sendKeys(peer);
        if (this.phase === 'ready') {
          this.resendArchive(peer);
          this.prep.onPeer(peer, true);
        }
        this.recovery?.onPeerUp(peer);
        this.checkSetup();
      } else if (this.phase === 'ready') {
        this.prep.onPeer(peer, false);
      }
      this.checkQuorum();
      const job = this.job;
      if (job?.inflight?.ready) this.checkRound(job, job.inflight);
    } catch (e) {
      this.logFn({ ev: 'handler-error', peer, up, error: e instanceof Error ? e.stack : String(e) });
    }
  }

  private checkQuorum(): void {
    const alive = this.aliveCount();
    const waiting = this.job?.inflight !== undefined;
    if (alive < this.t + 1 && waiting && !this.quorumLost) {
      this.quorumLost = true;
      this.emit('quorum-lost', { alive, needed: this.t + 1, job: this.job?.id, error: new QuorumLostError(alive, this.t + 1).message });
    } else if (alive >= this.t + 1 && this.quorumLost) {
      this.quorumLost = false;
      this.emit('quorum-restored', { alive, job: this.job?.id });
    }
  }

  private resendArchive(peer: number): void {
    const jobs = this.job ? [...this.archive, this.job.sent] : this.archive;
    for (const j of jobs) for (const r of j.rounds) {
      const bytes = r.per[peer];
      if (bytes) this.transport.send(peer, bytes);
    }
  }

  // ---- jobs ----

  runJob<T>(jobId: string, fn: (ctx: JobContext) => Promise<T>, committed?: (result: T) => void): Promise<T> {
    if (typeof jobId !== 'string' || jobId.length === 0 || jobId.length > 512) throw new Error('job id must be a non-empty string of at most 512 characters');
    const run = this.chain.then(() => this.execJob(jobId, fn, committed));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async execJob<T>(jobId: string, fn: (ctx: JobContext) => Promise<T>, committed?: (result: T) => void): Promise<T> {
    if (this.phase !== 'ready') throw new Error(`party ${this.id}: cannot run job ${jobId} in phase ${this.phase}`);
    if (this.finishedSet.has(jobId)) throw new Error(`party ${this.id}: job ${jobId} already ran (job ids must be unique)`);
    const r = this.prep.reserve;
    // PRSS nonces: the job id plus the reserve cursors, which only grow, so a retried id never reuses masks.
    let nonceBase = `job:${jobId}`;
    for (const k of KINDS) nonceBase += `:${r.cursor[k]}`; // the string the former map + join made
    const job = new JobRun(jobId, nonceBase);
    const pulled = this.futurePulls.get(jobId);
    if (pulled) {
      job.pulled = pulled;
      this.futurePulls.delete(jobId);
    }
    this.job = job;
    this.jobStart = { ...r.cursor };
    this.logFn({ ev: 'job-start', job: jobId });
    const buffered = this.future.get(jobId);
    if (buffered) {
      this.future.delete(jobId);
      this.futureCount -= buffered.length;
      for (const m of buffered) this.onJobMessage(m.from, m.env);
    }
    const ctx = new Ctx(this, job);
    let result: T | undefined;
    let error: unknown;
    let ok = false;
    try {
      result = await fn(ctx);
      ok = true;
    } catch (e) {
      error = e;
    }
    if (job.failed !== undefined) {
      ok = false;
      error = job.failed;
    } else if (ok && (job.queue.length > 0 || job.inflight)) {
      ok = false;
      error = new Error(`job ${jobId} returned while operations were still pending (await every operation)`);
      this.failJob(job, error);
    }
    if (ok) {
      for (const [k, v] of job.overlay) v === null ? this.store.delete(k) : this.store.set(k, v);
      for (const [k, v] of job.pubOverlay) v === null ? this.pub.delete(k) : this.pub.set(k, v);
      if (committed) {
        try {
          committed(result as T);
        } catch (e) {
          this.logFn({ ev: 'job-committed-callback-error', job: jobId, error: String(e) });
        }
      }
    }
    // A failed job burns the preprocessing it consumed (identically everywhere): re-using a triple
    // whose masked differences were opened would leak the difference of two inputs.
    this.finishJob(job);
    this.logFn({ ev: 'job-end', job: jobId, ok, rounds: job.round, ...(ok ? {} : { error: String(error) }) });
    if (!ok) throw error;
    return result as T;
  }

  private finishJob(job: JobRun): void {
    this.job = undefined;
    this.jobStart = undefined;
    this.finished.push(job.id);
    this.finishedSet.add(job.id);
    while (this.finished.length > this.limits.finishedJobs) this.finishedSet.delete(this.finished.shift()!);
    this.archive.push(job.sent);
    this.archiveBytes += job.sent.bytes;
    while (this.archive.length > this.limits.archivedJobs || (this.archiveBytes > this.limits.archiveBytes && this.archive.length > 1)) {
      this.archiveBytes -= this.archive.shift()!.bytes;
    }
    const r = this.prep.reserve;
    r.trim(r.cursor);
    if (this.quorumLost && this.aliveCount() >= this.t + 1) this.checkQuorum();
    this.prep.kick();
  }

  private onJobMessage(from: number, env: Envelope): void {
    const job = this.job;
    if (job && env.key === job.id) {
      const rs = job.inflight;
      if (rs && env.a === rs.r && rs.ready) return this.addShares(job, rs, from, env);
      if (env.a >= job.round || (rs && env.a === rs.r)) {
        let m = job.incoming.get(env.a);
        if (!m) job.incoming.set(env.a, (m = new Map()));
        if (!m.has(from)) m.set(from, env);
        return;
      }
      return this.lateShare(job.id, env.a, from, env);
    }
    if (this.finishedSet.has(env.key)) {
      this.answerFinished(env.key, from, env.a);
      return this.lateShare(env.key, env.a, from, env);
    }
    if (this.phase === 'stopped') return;
    const last = this.finished[this.finished.length - 1];
    if (last !== undefined && this.jobPrecedes?.(env.key, last)) return this.answerFinished(env.key, from);
    // a future job: buffer (bounded; the oldest buffered job's messages go first)
    let list = this.future.get(env.key);
    if (!list) this.future.set(env.key, (list = []));
    list.push({ from, env });
    this.futureCount++;
    while (this.futureCount > this.limits.futureMessages) {
      const [oldest, msgs] = this.future.entries().next().value as [string, { from: number; env: Envelope }[]];
      msgs.shift();
      this.futureCount--;
      if (msgs.length === 0) this.future.delete(oldest);
    }
  }

  enqueue(job: JobRun, op: PendingOp): void {
    if (job.failed !== undefined) {
      op.reject(job.failed);
      return;
    }
    if (this.job !== job) {
      op.reject(new Error(`job ${job.id} is over: operation issued after it returned`));
      return;
    }
    job.queue.push(op);
    this.scheduleFlush(job);
  }

  /**
   * The preprocessor's next phase-A piece (PreprocessingOptions.pieces): after what is pending, and
   * after the running job's round flush if one is queued when it comes up (that flush was queued
   * behind the piece; the online round goes first).
   */
  private deferPrep(fn: () => void): void {
    this.transport.clock.defer(() => {
      if (this.job?.flushScheduled) this.transport.clock.defer(fn);
      else fn();
    });
  }

  private scheduleFlush(job: JobRun): void {
    if (job.flushScheduled) return;
    job.flushScheduled = true;
    const schedAt = this.traceRounds ? performance.now() : 0;
    this.transport.clock.defer(() => {
      if (this.traceRounds) this.logFn({ ev: 'defer', job: job.id, schedAt, ranAt: performance.now() });
      job.flushScheduled = false;
      this.flush(job).catch((e: unknown) => this.failJob(job, e));
    });
  }

  private async flush(job: JobRun): Promise<void> {
    if (job.inflight || job.failed !== undefined || job.queue.length === 0 || this.job !== job) return;
    const ops = job.queue.splice(0);
    const r = job.round++;
    const rs: RoundState = {
      r, ops, ready: false, allMine: [], toMine: undefined, sharesAll: new ShareSet(), sharesTo: new ShareSet(), expectTo: false, waitingSince: this.transport.clock.now(),
    };
    job.inflight = rs;
    if (this.traceRounds) {
      rs.flushedAt = performance.now();
      rs.arrivals = [];
    }
    const need = zeroCounts();
    let masks = 0;
    for (const op of ops) {
      for (const k of KINDS) need[k] += op.needs[k];
      masks += op.needs.masks;
    }
    await this.prep.ensure(need);
    if (job.failed !== undefined || this.job !== job) return;
    // Assign preprocessing in queue order.
    const res = this.prep.reserve;
    const taken = {} as Record<Kind, Uint8Array>;
    for (const k of KINDS) taken[k] = need[k] > 0 ? res.takeBytes(k, need[k]) : EMPTY;
    const Mk = masks > 0 ? this.prss().boundedShares(`${job.nonceBase}:${r}`, masks, this.maskBits) : NO_MASKS;
    const at = zeroCounts();
    let mi = 0;
    const parts: (bigint[] | Uint8Array)[] = [];
    let encodedAll = false;
    // shares opened to single parties (openTo), by recipient: made only when a round has some
    let to: Map<number, bigint[]> | undefined;
    const one = ops.length === 1;
    for (const op of ops) {
      let items = taken;
      if (!one) {
        // each op's slice of what the round took, in queue order (no view for a kind it does not use)
        items = {} as Record<Kind, Uint8Array>;
        for (const k of KINDS) {
          const c = op.needs[k];
          if (c === 0) {
            items[k] = EMPTY;
            continue;
          }
          const w = WIDTH[k] * ELEMENT_BYTES;
          items[k] = taken[k].subarray(at[k] * w, (at[k] + c) * w);
          at[k] += c;
        }
      }
      const om = op.needs.masks;
      const p: proto.Prep = { items, masks: one ? Mk : om === 0 ? NO_MASKS : Mk.slice(mi, mi + om) };
      mi += om;
      op.prep = p;
      const shares = op.prepare(p);
      op.len = lengthOf(shares);
      if (op.to === 0) {
        parts.push(shares);
        if (shares instanceof Uint8Array) encodedAll = true;
      } else if (shares instanceof Uint8Array) {
        throw new Error('internal: encoded shares are opened to all only');
      } else {
        to ??= new Map();
        let v = to.get(op.to);
        if (!v) to.set(op.to, (v = []));
        for (const x of shares) v.push(x);
      }
    }
    const all = joinShares(parts, encodedAll);
    rs.allMine = all;
    // Our own shares encoded once: the message to every peer and our own share in the opening (and
    // its late-share checks) read the same bytes, instead of each encoding the BigInts again.
    const allBytes = all instanceof Uint8Array ? all : encodeOwn(all);
    rs.toMine = to?.get(this.id);
    rs.expectTo = rs.toMine !== undefined;
    // One message per peer: [open-to-all shares, shares opened to that peer].
    const sent: SentRound = { per: [] };
    let common: Uint8Array | undefined;
    const targets = this.shareTargets();
    for (let j = 1; j <= this.n; j++) {
      if (j === this.id) continue;
      const mine = to?.get(j);
      if (lengthOf(all) === 0 && !mine) continue;
      let bytes: Uint8Array;
      if (!mine) bytes = common ??= this.envelope({ type: Msg.JobRound, key: job.id, a: r, vectors: [allBytes, []] });
      else bytes = this.envelope({ type: Msg.JobRound, key: job.id, a: r, vectors: [allBytes, mine] });
      // archived for every peer (peer-up and retransmit send it), sent now to the fan-out and to
      // every party a share is opened to (it needs all t + 1 of them)
      sent.per[j] = bytes;
      job.sent.bytes += bytes.length;
      if (targets === undefined || mine || targets.has(j) || job.pulled.has(j)) this.transport.send(j, bytes);
    }
    job.sent.rounds.push(sent);
    if (this.traceRounds) rs.sentAt = performance.now();
    rs.sharesAll.set(this.id, allBytes);
    if (rs.toMine) rs.sharesTo.set(this.id, rs.toMine);
    rs.ready = true;
    const early = job.incoming.get(r);
    if (early) {
      job.incoming.delete(r);
      for (const [from, env] of early) this.addShares(job, rs, from, env);
    }
    if (job.inflight === rs) {
      this.checkRound(job, rs);
      if (job.inflight === rs) this.checkGone(job);
      if (job.inflight === rs) {
        this.checkQuorum();
        if (this.retransmitMs > 0) this.armRetransmit(job, rs, this.retransmitMs);
        if (targets !== undefined && this.pullMs > 0) this.armPull(job, rs);
      }
    }
  }

  /**
   * With a partial fan-out a round's t shares may not all come: a sender may have left this party
   * out (it saw us down, or was recovering, or finished the job while we were away). After pullMs
   * of waiting, ask every live peer whose share is missing (Msg.JobPull); the retransmit timer stays
   * the last resort. Once per round: the pulled peers then send us the rest of the job anyway.
   */
  private armPull(job: JobRun, rs: RoundState): void {
    rs.pull = this.transport.clock.setTimeout(() => {
      rs.pull = undefined;
      if (job.inflight !== rs || this.job !== job) return;
      const missing: number[] = [];
      for (let j = 1; j <= this.n; j++) {
        if (j === this.id) continue;
        const lacks = (lengthOf(rs.allMine) > 0 && !rs.sharesAll.has(j)) || (rs.expectTo && !rs.sharesTo.has(j));
        if (lacks && this.transport.isUp(j)) missing.push(j);
      }
      for (const j of missing) this.transport.send(j, this.envelope({ type: Msg.JobPull, key: job.id, a: rs.r }));
      if (missing.length > 0) this.logFn({ ev: 'job-pull', job: job.id, round: rs.r, from: missing });
    }, this.pullMs);
  }

  /** A peer waits for our shares of job `jobId` from round `r` on (Msg.JobPull). */
  private onJobPull(from: number, jobId: string, r: number): void {
    if (this.phase !== 'ready') return; // a recovering party has no shares of it to give
    const job = this.job;
    if (job && job.id === jobId) {
      job.pulled.add(from);
      return this.sendRounds(job.sent, from, r);
    }
    const archived = this.archive.find((a) => a.id === jobId);
    if (archived && r < archived.rounds.length) return this.sendRounds(archived, from, r);
    if (archived || this.finishedSet.has(jobId)) return this.answerFinished(jobId, from, r);
    // not started here yet: the asker gets every round of it
    let askers = this.futurePulls.get(jobId);
    if (!askers) {
      if (this.futurePulls.size >= FUTURE_PULLS) this.futurePulls.delete(this.futurePulls.keys().next().value!);
      this.futurePulls.set(jobId, (askers = new Set()));
    }
    askers.add(from);
  }

  private sendRounds(a: ArchivedJob, to: number, from: number): void {
    for (let r = Math.max(0, from); r < a.rounds.length; r++) {
      const bytes = a.rounds[r]!.per[to];
      if (bytes) this.transport.send(to, bytes);
    }
  }

  /** The peers a round's shares go to now (undefined: every peer): see PartyOptions.shareFanout. */
  private shareTargets(): Set<number> | undefined {
    const k = this.fanoutSize;
    if (k === undefined) return undefined;
    const out = new Set<number>();
    for (let d = 1; d < this.n && out.size < k; d++) {
      const j = ((this.id - 1 + d) % this.n) + 1;
      if (this.transport.isUp(j)) out.add(j);
    }
    return out;
  }

  /**
   * While a round waits, re-sends every round of the job so far to the live peers, every `ms` then
   * doubling. Not only the round in flight: a peer may lack an earlier one of ours (a message lost
   * with no reconnect, so no resend on peer-up) and wait there, while we, having finished that
   * round with others' shares, wait for its next one. Duplicates are ignored by round key.
   */
  private armRetransmit(job: JobRun, rs: RoundState, ms: number): void {
    const cancel = this.transport.clock.setTimeout(() => {
      if (job.inflight !== rs || this.job !== job) return;
      for (const round of job.sent.rounds) {
        for (let j = 1; j < round.per.length; j++) {
          const bytes = round.per[j];
          if (bytes && this.transport.isUp(j)) this.transport.send(j, bytes);
        }
      }
      this.armRetransmit(job, rs, Math.min(ms * 2, 60_000));
    }, ms);
    rs.retransmit = cancel;
  }

  private addShares(job: JobRun, rs: RoundState, from: number, env: Envelope): void {
    rs.arrivals?.push([from, performance.now()]);
    const [allBytes, toBytes] = env.vectors;
    if (!allBytes || !toBytes) return;
    try {
      // Kept as bytes (checked below p, as decoding would): open() interpolates them encoded.
      if (lengthOf(rs.allMine) > 0 && !rs.sharesAll.has(from)) {
        assertEncodedVector(allBytes);
        const got = allBytes.length / ELEMENT_BYTES;
        if (got === lengthOf(rs.allMine)) rs.sharesAll.set(from, allBytes);
        else this.logFn({ ev: 'bad-share-length', from, job: job.id, round: rs.r, got, want: lengthOf(rs.allMine) });
      }
      if (rs.toMine && !rs.sharesTo.has(from)) {
        assertEncodedVector(toBytes);
        if (toBytes.length / ELEMENT_BYTES === rs.toMine.length) rs.sharesTo.set(from, toBytes);
      }
    } catch (e) {
      this.logFn({ ev: 'bad-share', from, job: job.id, round: rs.r, error: String(e) });
      return;
    }
    this.checkRound(job, rs);
  }

  /** Completes the round if enough shares are in. */
  private checkRound(job: JobRun, rs: RoundState): void {
    if (job.inflight !== rs || !rs.ready) return;
    // this round used items of a batch we promised to void: it waits for the decision (onVoidDecided)
    if (this.prep.holdsRound()) return;
    const allDone = lengthOf(rs.allMine) === 0 || this.enoughShares(rs.sharesAll);
    const toDone = !rs.expectTo || this.enoughShares(rs.sharesTo);
    if (!allDone || !toDone) return;
    job.inflight = undefined;
    rs.retransmit?.();
    rs.pull?.();
    if (this.traceRounds) this.logFn({ ev: 'round', job: job.id, r: rs.r, flushedAt: rs.flushedAt, sentAt: rs.sentAt, doneAt: performance.now(), arrivals: rs.arrivals, from: [...rs.sharesAll.keys()] });
    let openedAll: bigint[] | Uint8Array = [];
    let openedTo: bigint[] | undefined;
    try {
      // encoded when some operation of the round is (the others' values are decoded from it below)
      if (lengthOf(rs.allMine) > 0) openedAll = this.open(job.id, rs.r, 'all', rs.sharesAll, rs.allMine instanceof Uint8Array);
      if (rs.expectTo) openedTo = this.open(job.id, rs.r, 'to', rs.sharesTo, false) as bigint[];
    } catch (e) {
      this.failJob(job, e, rs);
      return;
    }
    let ai = 0;
    let oi = 0;
    for (const op of rs.ops) {
      const len = op.len!;
      if (op.to === 0) {
        let opened: bigint[] | Uint8Array;
        if (!(openedAll instanceof Uint8Array)) opened = openedAll.slice(ai, ai + len);
        else {
          const bytes = openedAll.subarray(ai * ELEMENT_BYTES, (ai + len) * ELEMENT_BYTES);
          opened = op.encoded ? bytes : decodeVector(bytes);
        }
        op.resolve({ opened, prep: op.prep! });
        ai += len;
      } else if (op.to === this.id) {
        op.resolve({ opened: openedTo!.slice(oi, oi + len), prep: op.prep! });
        oi += len;
      } else op.resolve({ opened: null, prep: op.prep! });
    }
    if (job.queue.length > 0) this.scheduleFlush(job);
  }

  /**
   * True when an opening can complete with the shares in hand: the first t+1, or with checkOpenings
   * every live party's. (A method, not a closure in checkRound: under tsx a named closure costs a
   * keep-names call each time it is made, and checkRound runs at every share that arrives.)
   */
  private enoughShares(have: ShareSet): boolean {
    if (have.size < this.t + 1) return false;
    if (!this.checkOpenings) return true;
    for (const j of this.aliveParties()) if (!have.has(j)) return false;
    return true;
  }

  /** Reconstructs from the shares in hand (checked if configured) and registers the late-share check. */
  private open(jobId: string, r: number, part: 'all' | 'to', have: ShareSet, asBytes: boolean): bigint[] | Uint8Array {
    // copies: a share added to the set after it completed (flush's early ones) must not change the base kept below
    const parties = have.parties.slice();
    const shares = have.shares.slice();
    // the first t + 1 (the base of the opening and of its late-share checks): one copy each, shared
    const base = parties.length > this.t + 1 ? parties.slice(0, this.t + 1) : parties;
    const baseShares = shares.length > this.t + 1 ? shares.slice(0, this.t + 1) : shares;
    let out: bigint[] | Uint8Array;
    if (this.checkOpenings && parties.length > this.t + 1) {
      try {
        out = reconstructChecked(parties, shares.map(decodedOf), this.t, this.n);
        if (asBytes) out = encodeFieldVector(out);
      } catch (e) {
        if (e instanceof InconsistentSharesError) this.emit('inconsistent-share', { job: jobId, round: r, part, badParty: e.party, index: e.index });
        throw e;
      }
    } else if (asBytes) {
      out = interpolateToBytes(base, baseShares);
    } else {
      out = interpolateEncoded(base, baseShares, 0);
    }
    const lc: LateCheck = { jobId, r, part, base, shares: baseShares, m: lengthOf(shares[0]!), extra: new Map(), flagged: false };
    for (let i = this.t + 1; i < parties.length; i++) lc.extra.set(parties[i]!, shares[i]!);
    this.lateChecks[this.lateAt] = lc;
    this.lateAt = (this.lateAt + 1) % MAX_LATE_CHECKS;
    return out;
  }

  /** The late-share check of an opening still kept, newest first (as a re-made opening replaced the old one in a map). */
  private lateCheckOf(jobId: string, r: number, part: 'all' | 'to'): LateCheck | undefined {
    for (let i = 1; i <= MAX_LATE_CHECKS; i++) {
      const lc = this.lateChecks[(this.lateAt - i + MAX_LATE_CHECKS) % MAX_LATE_CHECKS];
      if (lc !== undefined && lc.r === r && lc.part === part && lc.jobId === jobId) return lc;
    }
    return undefined;
  }

  /**
   * A share for an opening that already completed: spot-check that it lies on the polynomial of the
   * shares used. Checks LATE_SAMPLE random positions (all when the vector is that short), decoding only
   * those: a wholly wrong vector is always caught, a single wrong element with probability
   * LATE_SAMPLE/length. checkOpenings checks every element before completing instead.
   */
  private lateShare(jobId: string, r: number, from: number, env: Envelope): void {
    for (const part of ['all', 'to'] as const) {
      const lc = this.lateCheckOf(jobId, r, part);
      if (!lc || lc.base.includes(from) || lc.extra.has(from)) continue;
      const bytes = env.vectors[part === 'all' ? 0 : 1];
      const m = lc.m;
      if (!bytes || bytes.length !== m * 16 || m === 0) continue;
      // The check runs on bytes in the field kernel: the base shares' combination at `from`
      // (Lagrange), at the sampled positions, compared with the late share's bytes there. Both are
      // canonical encodings when they agree, so agreement is equality of the field elements.
      // one sample per check, shared by every late share of it: naming a culprit at a flagged
      // position needs t + 2 shares there, so an honest late share must have been sampled there too
      const positions = (lc.positions ??= samplePositions(m, LATE_SAMPLE));
      const k = positions.length;
      // Every position sampled (m <= LATE_SAMPLE, most rounds): the vectors as they are, no gathers.
      const whole = k === m;
      // the base shares at the sampled positions, once per opening; the late share is read in place
      const rows = (lc.rows ??= lc.shares.map((s) => (whole ? encodedOf(s) : gatherShare(s, positions))));
      const expected = lincombEncoded(rows, lagrange(lc.base, from));
      let index = -1;
      if (whole) {
        // equal in one native compare (the usual case); element by element only to find where not
        if (!bytesEqual(expected, bytes)) index = firstMismatchAt(expected, bytes, positions);
      } else index = firstMismatchAt(expected, bytes, positions);
      if (index >= 0) {
        index = positions[index]!;
        // they differ: a sampled element that is no field element is reported as such (index -1)
        try {
          assertEncodedAtPositions(bytes, positions);
        } catch {
          this.emit('inconsistent-share', { job: jobId, round: r, part, badParty: from, index: -1, late: true });
          continue;
        }
      }
      lc.extra.set(from, { positions, bytes });
      if (index < 0) {
        // consistent with the base; also re-examine earlier flagged positions with this extra share
        if (!lc.flagged || lc.flagIndex === undefined) continue;
        index = lc.flagIndex;
      }
      // Name the culprit at that position from every share we hold there.
      const parties: number[] = [...lc.base];
      const column: bigint[] = lc.shares.map((s) => elementOf(s, index));
      for (const [j, vals] of lc.extra) {
        const x = isSampled(vals) ? sampledAt(vals, index) : elementOf(vals, index);
        if (x !== undefined) {
          parties.push(j);
          column.push(x);
        }
      }
      const culprit = nameBadParty(parties, column, this.t);
      if (!lc.flagged || (culprit !== null && !lc.named)) {
        lc.flagged = true;
        lc.flagIndex = index;
        lc.named = culprit !== null;
        this.emit('inconsistent-share', { job: jobId, round: r, part, badParty: culprit, index, late: true });
      }
    }
  }

  /**
   * A peer sent a share of a job we have finished. If we no longer keep that job's messages, it
   * never gets ours again (a peer-up re-send covers only the archive): tell it, so that a party left
   * behind for good finds out instead of waiting for ever. A peer that is merely slow has our
   * messages buffered and completes its rounds before it could need them.
   */
  private answerFinished(jobId: string, from: number, round?: number): void {
    // an archived job's rounds went to every peer; but one that ended here before `round` (it
    // failed there, e.g. out of preprocessing, where the sender, its reserve in another state,
    // went on) never sends that round's shares: say so, or the sender waits for them for good
    const archived = this.archive.find((a) => a.id === jobId);
    if (archived && (round === undefined || round < archived.rounds.length)) return;
    this.transport.send(from, this.envelope({ type: Msg.JobGone, key: jobId }));
  }

  private onJobGone(from: number, jobId: string): void {
    const job = this.job;
    if (!job || job.id !== jobId) return;
    job.gone.add(from);
    this.checkGone(job);
  }

  /**
   * Fails the job if its round in flight can never complete: too few parties could still send the
   * shares it lacks once those that have finished the job without keeping it are left out.
   * Conservative: a party that is down or silent still counts as one that could send.
   */
  private checkGone(job: JobRun): void {
    const rs = job.inflight;
    if (!rs?.ready || job.gone.size === 0) return;
    // checkOpenings waits for every live party's share: one that is gone never comes
    const need = this.checkOpenings ? this.n : this.t + 1;
    const possible = (have: ShareSet): number => {
      let k = 0;
      for (let j = 1; j <= this.n; j++) if (have.has(j) || !job.gone.has(j)) k++;
      return k;
    };
    const short = (lengthOf(rs.allMine) > 0 && possible(rs.sharesAll) < need) || (rs.expectTo && possible(rs.sharesTo) < need);
    if (!short) return;
    const err = new JobMessagesGoneError(job.id, rs.r, [...job.gone].sort((a, b) => a - b));
    this.logFn({ ev: 'job-gone', job: job.id, round: rs.r, gone: [...job.gone] });
    this.emit('stale', { note: err.message, job: job.id });
    this.failJob(job, err);
  }

  /**
   * A void instance was decided (decision 0009): a job that took items of the voided batch fails
   * here, as the same round fails at every other party (Preprocessor.voidedRound), and is retried
   * under a new id; otherwise a round the instance held back may complete now.
   */
  private onVoidDecided(touched: boolean): void {
    const job = this.job;
    if (!job) return;
    if (touched) {
      this.logFn({ ev: 'job-voided', job: job.id, note: 'the job used items of a voided preprocessing batch' });
      this.failJob(job, new PreprocessingExhaustedError('items of a voided preprocessing batch', 0, 0, this.aliveParties().length));
    } else if (job.inflight?.ready) this.checkRound(job, job.inflight);
  }

  failJob(job: JobRun, e: unknown, completing?: RoundState): void {
    if (job.failed !== undefined) return;
    job.failed = e;
    const rs = job.inflight ?? completing;
    job.inflight = undefined;
    rs?.retransmit?.();
    rs?.pull?.();
    for (const op of rs?.ops ?? []) op.reject(e);
    for (const op of job.queue.splice(0)) op.reject(e);
  }
}

/** The JobContext handed to job code. */
class Ctx implements JobContext, proto.RoundEngine {
  readonly party: number;
  readonly n: number;
  readonly t: number;
  readonly L: number;
  readonly kappa: number;
  readonly jobId: string;

  /** The reserve cursors when the job started (consumed() is the difference). */
  private readonly start: Counts;

  constructor(private readonly p: PartyImpl, private readonly job: JobRun) {
    this.start = { ...p.prep.reserve.cursor };
    this.party = p.id;
    this.n = p.n;
    this.t = p.t;
    this.L = p.L;
    this.kappa = p.kappa;
    this.jobId = job.id;
  }

  round(needs: proto.OpNeeds, prepare: (p: proto.Prep) => bigint[]): Promise<{ opened: bigint[]; prep: proto.Prep }> {
    // The promise's own resolve (a round opened to all always resolves with its opened values):
    // no wrapper closure per round.
    return new Promise((resolve, reject) => {
      this.p.enqueue(this.job, { needs, to: 0, prepare, resolve: resolve as PendingOp['resolve'], reject });
    });
  }

  roundEncoded(needs: proto.OpNeeds, prepare: (p: proto.Prep) => Uint8Array): Promise<{ opened: Uint8Array; prep: proto.Prep }> {
    return new Promise((resolve, reject) => {
      this.p.enqueue(this.job, { needs, to: 0, prepare, encoded: true, resolve: resolve as PendingOp['resolve'], reject });
    });
  }

  private wrap(v: readonly bigint[]): Sec {
    return new SecVec(v);
  }

  private same(a: Sec, b: Sec, what: string): void {
    if (a.length !== b.length) throw new RangeError(`${what}: length mismatch ${a.length} vs ${b.length}`);
  }

  private publicVec(c: readonly bigint[] | bigint, len: number, what: string): bigint[] {
    const v = typeof c === 'bigint' ? new Array<bigint>(len).fill(mod(c)) : c.map((x) => mod(x));
    if (v.length !== len) throw new RangeError(`${what}: ${v.length} public values for ${len} elements`);
    return v;
  }

  fromShares(shares: readonly bigint[]): Sec {
    assertElements(shares, 'share');
    return this.wrap(shares.slice());
  }

  constant(values: readonly bigint[]): Sec {
    return this.wrap(values.map((x) => mod(x)));
  }

  sharesOf(x: Sec): bigint[] {
    return vecOf(x).slice();
  }

  concat(parts: readonly Sec[]): Sec {
    const out: bigint[] = [];
    for (const x of parts) for (const v of vecOf(x)) out.push(v);
    return this.wrap(out);
  }

  slice(x: Sec, start: number, end?: number): Sec {
    return this.wrap(vecOf(x).slice(start, end));
  }

  add(a: Sec, b: Sec): Sec {
    this.same(a, b, 'add');
    return this.wrap(proto.vAdd(vecOf(a), vecOf(b)));
  }

  sub(a: Sec, b: Sec): Sec {
    this.same(a, b, 'sub');
    return this.wrap(proto.vSub(vecOf(a), vecOf(b)));
  }

  neg(a: Sec): Sec {
    return this.wrap(proto.vNeg(vecOf(a)));
  }

  addPublic(a: Sec, c: readonly bigint[] | bigint): Sec {
    return this.wrap(proto.vAddPublic(vecOf(a), this.publicVec(c, a.length, 'addPublic')));
  }

  mulPublic(a: Sec, c: readonly bigint[] | bigint): Sec {
    return this.wrap(proto.vMulPublic(vecOf(a), this.publicVec(c, a.length, 'mulPublic')));
  }

  async mul(a: Sec, b: Sec): Promise<Sec> {
    this.same(a, b, 'mul');
    return this.wrap(await proto.mul(this, vecOf(a), vecOf(b)));
  }

  async lt(a: Sec, b: Sec, bits?: number): Promise<Sec> {
    this.same(a, b, 'lt');
    return this.wrap(await proto.lt(this, vecOf(a), vecOf(b), this.boundOf(bits, 'lt')));
  }

  async le(a: Sec, b: Sec, bits?: number): Promise<Sec> {
    this.same(a, b, 'le');
    const gt = await proto.lt(this, vecOf(b), vecOf(a), this.boundOf(bits, 'le'));
    return this.wrap(proto.vSub(new Array<bigint>(gt.length).fill(1n), gt));
  }

  /** A comparison's bound: L unless the caller names another, checked to fit the field (once per width). */
  private boundOf(bits: number | undefined, op: string): number {
    if (bits === undefined || bits === this.L) return this.L;
    if (!Number.isInteger(bits) || bits < 1) throw new RangeError(`${op}: bound of ${bits} bits is not a positive integer`);
    if (!this.p.fittingBounds.has(bits)) {
      try {
        assertComparisonFits(bits, this.kappa, this.n, this.t);
      } catch (e) {
        throw new RangeError(`${op}: ${(e as Error).message}`);
      }
      this.p.fittingBounds.add(bits);
    }
    return bits;
  }

  async ltz(a: Sec, width?: number): Promise<Sec> {
    if (width === undefined) return this.wrap(await proto.ltz(this, vecOf(a)));
    // |a| < 2^width is ltz's bound for L = width - 1 (M = 4 ceil(width / 4) >= width).
    if (!Number.isInteger(width) || width < 2) throw new RangeError(`ltz: width of ${width} bits is not an integer >= 2`);
    return this.wrap(await proto.ltz(this, vecOf(a), this.boundOf(width - 1, 'ltz')));
  }

  consumed(): { triples: number; lex4: number; prod4: number; nibbles: number; rounds: number } {
    const c = this.p.prep.reserve.cursor;
    return { triples: c.triples - this.start.triples, lex4: c.lex4 - this.start.lex4, prod4: c.prod4 - this.start.prod4, nibbles: c.nibbles - this.start.nibbles, rounds: this.job.round };
  }

  async randomMultiple(x: Sec): Promise<Sec> {
    return this.wrap(await proto.randomMultiple(this, vecOf(x)));
  }

  async eq(a: Sec, b: Sec): Promise<Sec> {
    this.same(a, b, 'eq');
    return this.wrap(await proto.eq(this, vecOf(a), vecOf(b)));
  }

  async min(a: Sec, b: Sec): Promise<Sec> {
    this.same(a, b, 'min');
    return this.wrap(await proto.min(this, vecOf(a), vecOf(b)));
  }

  async max(a: Sec, b: Sec): Promise<Sec> {
    this.same(a, b, 'max');
    return this.wrap(await proto.max(this, vecOf(a), vecOf(b)));
  }

  async select(c: Sec, x: Sec, y: Sec): Promise<Sec> {
    this.same(c, x, 'select');
    this.same(x, y, 'select');
    return this.wrap(await proto.select(this, vecOf(c), vecOf(x), vecOf(y)));
  }

  async open(x: Sec): Promise<bigint[]> {
    const v = vecOf(x);
    if (v.length === 0) return [];
    const { opened } = await this.round(OPEN_NEEDS, () => v.slice());
    return opened;
  }

  openTo(recipient: number, x: Sec): Promise<bigint[] | null> {
    if (!Number.isInteger(recipient) || recipient < 1 || recipient > this.n) throw new RangeError(`openTo: recipient ${recipient} outside 1..${this.n}`);
    const v = vecOf(x);
    return new Promise((resolve, reject) => {
      this.p.enqueue(this.job, {
        needs: OPEN_NEEDS, to: recipient, prepare: () => v.slice(),
        resolve: (r) => resolve(r.opened as bigint[] | null), reject,
      });
    });
  }

  // ---- store ----

  private checkName(name: string): void {
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME) throw new RangeError(`store name must be a non-empty string of at most ${MAX_NAME} characters`);
  }

  load(name: string): Sec | undefined {
    this.checkName(name);
    const o = this.job.overlay.get(name);
    if (o === null) return undefined;
    const v = o ?? this.p.store.get(name);
    return v ? this.wrap(v) : undefined;
  }

  save(name: string, x: Sec): void {
    this.checkName(name);
    this.job.overlay.set(name, vecOf(x));
  }

  remove(name: string): void {
    this.checkName(name);
    this.job.overlay.set(name, null);
  }

  names(): string[] {
    const s = new Set(this.p.store.keys());
    for (const [k, v] of this.job.overlay) v === null ? s.delete(k) : s.add(k);
    return [...s].sort();
  }

  loadPublic(name: string): string | undefined {
    this.checkName(name);
    const o = this.job.pubOverlay.get(name);
    if (o === null) return undefined;
    return o ?? this.p.pub.get(name);
  }

  savePublic(name: string, json: string): void {
    this.checkName(name);
    if (typeof json !== 'string') throw new TypeError('savePublic takes a JSON string');
    this.job.pubOverlay.set(name, json);
  }

  removePublic(name: string): void {
    this.checkName(name);
    this.job.pubOverlay.set(name, null);
  }

  publicNames(): string[] {
    const s = new Set(this.p.pub.keys());
    for (const [k, v] of this.job.pubOverlay) v === null ? s.delete(k) : s.add(k);
    return [...s].sort();
  }
}

function encodeKeys(keys: PrssKeys): Uint8Array {
  return new TextEncoder().encode(JSON.stringify([...keys].map(([k, v]) => [k, Buffer.from(v).toString('hex')])));
}

function decodeKeys(bytes: Uint8Array): PrssKeys {
  const arr = JSON.parse(new TextDecoder().decode(bytes)) as [string, string][];
  return new Map(arr.map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'hex'))]));
}

export { allParties, lagrange };
