// Gathers the committee nodes' results per sequence number and decides each one: the public outcome
// must be the same at t+1 nodes or more, and the secret outputs are reconstructed from the agreeing
// nodes' shares (checked, and corrected where the count allows, when more than t+1 arrived).
// It never waits for a particular node: a decision needs t+1 agreeing results. By default it decides
// with the first t+1 (the semi-honest model: their shares are right); results that arrive later are
// checked against the decision and a bad one is named (checkLate). With a grace period (graceMs > 0)
// it waits that long after the t+1-th for the other connected nodes so their shares are checked
// before the decision, unless t+2 already agree on one polynomial: that corrects a wrong share from a
// faulty node instead of naming it afterwards, at the cost of waiting for the 4th result on every
// seq (the 4th follows the 3rd by ~4 ms at p50 on an idle host, more than 30 ms under load: the
// whole grace, 2026-12-01, docs/decisions/0023-order-to-fill-waits.md).
import type { ResultFrame } from '@tenebra/wire';
import { canonicalJson, SealError } from '@tenebra/seal';
import { reconstructChecked, InconsistentSharesError } from '@tenebra/mpc';
import type { Logger } from 'pino';
import { decodeOutputs, type NodeVector, type ResultOpener } from '../sharing';
import type { Decision } from './clearing';

interface Entry {
  node: number;
  /** the job attempt that produced it: shares of two attempts are never combined */
  job: string;
  pubText: string;
  pub: Record<string, unknown>;
  /** null when the sealed shares could not be opened (a fault of that node) */
  values: bigint[] | null;
}

interface Slot {
  entries: Entry[];
  /** when the (t+1)-th result for this seq arrived: the grace for the others runs from here */
  quorumAt: number | null;
  reported: Set<string>;
}

interface DecidedSeq {
  job: string;
  pubText: string;
  /** the t+1 share vectors the decision used: enough to check any late share */
  basis: NodeVector[];
}

export interface CollectorOptions {
  n: number;
  t: number;
  /** opens the nodes' sealed output shares (pair boxes with each node) */
  opener: ResultOpener;
  /** how long to wait for the remaining connected nodes once t+1 agree (default 0: decide at t+1) */
  graceMs?: number;
  /** how many decided seqs to remember for checking late results (default 1024) */
  keepDecided?: number;
}

/** Outcome texts the collector remembers the canonical form of (a few seqs' worth). */
const CANONICAL_MEMO = 64;

export class ResultCollector {
  private readonly slots = new Map<bigint, Slot>();
  private readonly decided = new Map<bigint, DecidedSeq>();
  /** highest seq each node has reported: a node far behind is not waited for */
  private readonly lastSeq = new Map<number, bigint>();
  private readonly graceMs: number;
  private readonly keepDecided: number;
  /** JSON.stringify text -> canonicalJson text of recent outcomes (oldest dropped first) */
  private readonly canonicalTexts = new Map<string, string>();

  constructor(private readonly opts: CollectorOptions, private readonly log: Logger) {
    this.graceMs = opts.graceMs ?? 0;
    this.keepDecided = opts.keepDecided ?? 1024;
  }

  /**
   * canonicalJson of a result's public outcome, by its JSON.stringify text: the n nodes of a seq
   * mostly send the same text, and a canonical text costs several stringify's (recursive, sorted).
   * A frame's pub comes from JSON.parse (@tenebra/wire), so that text determines the value, hence its
   * canonical text; anything stringify refuses (a bigint in a test's frame) goes to canonicalJson.
   */
  private canonical(pub: Record<string, unknown>): string {
    let text: string;
    try {
      text = JSON.stringify(pub);
    } catch {
      return canonicalJson(pub);
    }
    const hit = this.canonicalTexts.get(text);
    if (hit !== undefined) return hit;
    const c = canonicalJson(pub);
    if (this.canonicalTexts.size >= CANONICAL_MEMO) this.canonicalTexts.delete(this.canonicalTexts.keys().next().value!);
    this.canonicalTexts.set(text, c);
    return c;
  }

  /** Seqs held undecided. */
  get size(): number {
    return this.slots.size;
  }

  /** Notes how far a node has reported (the grace waits only for nodes that keep up), without opening its result. */
  seen(frame: Pick<ResultFrame, 'node' | 'seq'>): void {
    const seq = BigInt(frame.seq);
    if (seq > (this.lastSeq.get(frame.node) ?? 0n)) this.lastSeq.set(frame.node, seq);
  }

  /** Records one node's result for a seq at or after the cursor; checks late ones against the decision. */
  add(frame: ResultFrame, cursor: bigint, nowMs: number): void {
    const seq = BigInt(frame.seq);
    this.seen(frame);
    let values: bigint[] | null;
    try {
      values = this.opts.opener.open(frame.sealed, frame.seq, frame.node);
    } catch (e) {
      if (!(e instanceof SealError) && !(e instanceof RangeError) && !(e instanceof TypeError)) throw e;
      this.log.error({ seq: frame.seq, node: frame.node, err: (e as Error).message }, `node ${frame.node} sent output shares the gateway cannot open`);
      values = null;
    }
    const entry: Entry = { node: frame.node, job: frame.job, pubText: this.canonical(frame.pub), pub: frame.pub, values };
    if (seq < cursor) return this.checkLate(seq, entry);
    let slot = this.slots.get(seq);
    if (!slot) {
      slot = { entries: [], quorumAt: null, reported: new Set() };
      this.slots.set(seq, slot);
    }
    const i = slot.entries.findIndex((e) => e.node === frame.node);
    if (i >= 0) slot.entries[i] = entry; // a node resent after reconnecting: keep its latest
    else slot.entries.push(entry);
    if (slot.quorumAt === null && slot.entries.length >= this.opts.t + 1) slot.quorumAt = nowMs;
  }

  /**
   * The decision for seq if it can be made now: t+1 or more nodes agree on the public outcome and
   * their shares decode, and every connected node has reported or the grace period has passed.
   * Returns {retryInMs} while in that grace period, or null to wait for more results.
   */
  decide(seq: bigint, connected: ReadonlySet<number>, nowMs: number): Decision | { retryInMs: number } | null {
    const slot = this.slots.get(seq);
    if (!slot) return null;
    const t = this.opts.t;
    // agreeing means the same outcome from the same job attempt (ADR 0023: a node outside the
    // quorum may release an attempt the others retried; its shares must not join the retry's)
    const groups = new Map<string, Entry[]>();
    for (const e of slot.entries) {
      if (e.values === null) continue;
      const key = `${e.job}\n${e.pubText}`;
      groups.set(key, [...(groups.get(key) ?? []), e]);
    }
    const quorum = [...groups.values()].filter((g) => g.length >= t + 1);
    if (quorum.length !== 1) {
      if (quorum.length > 1) this.reportOnce(slot, 'split', { seq: seq.toString() }, 'nodes split into two agreeing groups on the outcome; waiting for more results');
      else if (slot.entries.length >= this.opts.n) this.reportOnce(slot, 'noquorum', { seq: seq.toString() }, `no ${t + 1} nodes agree on the outcome of seq ${seq}; results stall here`);
      return null;
    }
    const group = quorum[0]!;
    const decoded = decodeOutputs(group.map((e) => ({ node: e.node, values: e.values! })), t);
    if (!decoded.ok) {
      if (slot.entries.length >= this.opts.n) this.reportOnce(slot, 'decode', { seq: seq.toString(), reason: decoded.reason }, `cannot reconstruct the outputs of seq ${seq}; results stall here`);
      return null;
    }
    // Wait briefly for connected nodes that keep up (reported up to seq-1) so their shares get checked,
    // unless t+2 or more already agree, every report so far is among them, and their shares were
    // checked consistent (decodeOutputs used them all).
    const checked = group.length >= t + 2 && slot.entries.length === group.length && decoded.used.length === group.length && decoded.bad.length === 0;
    const waiting = checked ? [] : [...connected].filter((nd) => !slot.entries.some((e) => e.node === nd) && (this.lastSeq.get(nd) ?? 0n) >= seq - 1n);
    if (waiting.length > 0 && slot.entries.length < this.opts.n) {
      const left = (slot.quorumAt ?? nowMs) + this.graceMs - nowMs;
      if (left > 0) return { retryInMs: left };
    }
    // Name every node that disagreed, sent shares we cannot open, or sent inconsistent shares.
    for (const e of slot.entries) {
      if (e.values === null) continue; // already logged when it arrived
      if (e.job !== group[0]!.job) this.log.warn({ seq: seq.toString(), node: e.node, job: e.job, decided: group[0]!.job }, `node ${e.node} reported seq ${seq} from another attempt of its job than ${group.length} others: not combined`);
      else if (e.pubText !== group[0]!.pubText) this.log.error({ seq: seq.toString(), node: e.node, pub: e.pub }, `node ${e.node} reported a different outcome than ${group.length} others`);
    }
    for (const nd of decoded.bad) this.log.error({ seq: seq.toString(), node: nd }, `inconsistent output share from node ${nd}: excluded from the reconstruction`);
    this.remember(seq, {
      job: group[0]!.job,
      pubText: group[0]!.pubText,
      basis: group.filter((e) => decoded.used.includes(e.node)).slice(0, t + 1).map((e) => ({ node: e.node, values: e.values! })),
    });
    this.slots.delete(seq);
    return { seq, pub: group[0]!.pub, values: decoded.values };
  }

  private remember(seq: bigint, d: DecidedSeq): void {
    this.decided.set(seq, d);
    if (this.decided.size > this.keepDecided) this.decided.delete(this.decided.keys().next().value!);
  }

  /** A result for an already applied seq: check it agrees with the decision, name the node if not. */
  private checkLate(seq: bigint, e: Entry): void {
    const d = this.decided.get(seq);
    if (!d || e.values === null || d.basis.some((b) => b.node === e.node)) return;
    if (e.job !== d.job) {
      this.log.warn({ seq: seq.toString(), node: e.node, job: e.job, decided: d.job }, `node ${e.node} reported seq ${seq} from another attempt than the applied one: not checked`);
      return;
    }
    if (e.pubText !== d.pubText) {
      this.log.error({ seq: seq.toString(), node: e.node, pub: e.pub }, `node ${e.node} reported a different outcome than the applied one`);
      return;
    }
    const pts = [...d.basis, { node: e.node, values: e.values }];
    if (pts.some((p) => p.values.length !== e.values!.length)) {
      this.log.error({ seq: seq.toString(), node: e.node }, `inconsistent output share from node ${e.node}: wrong number of outputs`);
      return;
    }
    if (e.values.length === 0) return;
    try {
      reconstructChecked(pts.map((p) => p.node), pts.map((p) => p.values), this.opts.t);
    } catch (err) {
      if (!(err instanceof InconsistentSharesError)) throw err;
      this.log.error({ seq: seq.toString(), node: e.node }, `inconsistent output share from node ${e.node} (arrived after the decision)`);
    }
  }

  private reportOnce(slot: Slot, key: string, obj: object, msg: string): void {
    if (slot.reported.has(key)) return;
    slot.reported.add(key);
    this.log.error(obj, msg);
  }

  /** Drops everything held for seqs below cursor (after a batch is applied). */
  dropBelow(cursor: bigint): void {
    for (const s of this.slots.keys()) if (s < cursor) this.slots.delete(s);
  }
}
