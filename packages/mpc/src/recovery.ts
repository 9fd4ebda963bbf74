// Share recovery for a party that restarted with its memory gone (it keeps only its identity and
// PRSS keys). Technique: Herzberg, Jarecki, Krawczyk, Yung, "Proactive secret sharing or: how to cope
// with perpetual leakage", CRYPTO 1995 (share recovery). Each helper j sends s(j) + z(j), where z is a
// random degree-t sharing with z(r) = 0 at the recovering point r; the recovering party interpolates
// s + z at r and gets s(r) and nothing else. z comes from PRSS restricted to subsets without r
// (prss.ts zeroAtShares), so it needs no interaction among helpers and a helper dying mid-way does
// not spoil anything: any t+1 answers for the same nonce and the same helper state suffice.
// Helpers answer with their state as of the start of their current job, identified by a hash over
// everything public (last finished job, cursors, batch log, names, public store), so answers from
// helpers at the same point agree, and public entries are taken only when t+1 helpers agree on them.
// The mask is keyed by the request nonce AND that state id (issue 22): helpers at different states
// under one nonce are an expected path, and with one mask u*f for both the recovering party and one
// helper could rebuild s1 + u*f and s2 + u*f and subtract, learning s1(0) - s2(0) (say the size a
// partial fill took off a resting order). The state id is computed from public data only, before
// masking; the secret values change only when it does (a job's overlay lands with its id in
// `finished`, reserve items move with the cursor and the committed batch count), so one mask never
// covers two different sets of values.

import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '@tenebra/transport';
import { add } from './field';
import { Msg, bytesText, decodeVector, textBytes, type Envelope } from './messages';
import type { Prss } from './prss';
import { KINDS, WIDTH, countsOf, emptyItems, type Counts } from './reserve';
import { findInconsistent, interpolate, nameBadParty } from './shamir';
import { itemsOf, type PartySnapshot } from './state';

/** Elements per reply part (2 MiB of field elements). */
export const RECOVERY_PART_ELEMENTS = 131_072;

interface ReplyMeta {
  stateId: string;
  store: [string, number][];
  pub: [string, string][];
  cursor: Counts;
  items: Counts;
  finished: string[];
  prep: { resolved: number; committed: number };
  inFlight?: number;
}

type Envelop = (m: { type: Msg; a?: number; b?: number; key?: string; vectors?: readonly (readonly bigint[])[]; extra?: Uint8Array }) => Uint8Array;

type StateBase = Omit<ReplyMeta, 'stateId' | 'inFlight'>;

/** The public part of an answer, in a fixed key order (the recovering party rebuilds it to check the id). */
function baseOf(m: StateBase): StateBase {
  return {
    store: m.store.map(([k, len]) => [k, len] as [string, number]),
    pub: m.pub,
    cursor: m.cursor,
    items: m.items,
    finished: m.finished,
    prep: { resolved: m.prep.resolved, committed: m.prep.committed },
  };
}

/** The id of the state an answer is for: a hash of its public data only (no share enters it). */
export function stateIdOf(m: StateBase): string {
  return createHash('sha256').update(JSON.stringify(baseOf(m))).digest('hex');
}

/**
 * The PRSS nonce of the mask for request `nonce` answered at state `stateId`: answers at two states
 * get independent masks, so their difference is uniformly masked (issue 22). JSON keeps the pair
 * unambiguous whatever the requester puts in its nonce.
 */
export function recoveryMaskNonce(nonce: string, stateId: string): string {
  return JSON.stringify(['recovery', nonce, stateId]);
}

/** A helper's masked answer to recovering party `to` for `nonce`, as messages. */
export function answerRecovery(prss: Prss, to: number, nonce: string, snap: PartySnapshot, inFlight: number | undefined, envelope: Envelop): Uint8Array[] {
  const values: bigint[] = [];
  for (const [, v] of snap.store) for (const x of v) values.push(x);
  const items = itemsOf(snap.items);
  for (const k of KINDS) for (const x of items[k]) values.push(x);
  // The state id first, from public data, then the mask bound to it.
  const base = baseOf({
    store: snap.store.map(([k, v]) => [k, v.length] as [string, number]),
    pub: snap.pub,
    cursor: snap.cursor,
    items: countsOf(items),
    finished: snap.finished,
    prep: snap.prep,
  });
  const stateId = stateIdOf(base);
  const z = prss.zeroAtShares(recoveryMaskNonce(nonce, stateId), values.length, to);
  for (let i = 0; i < values.length; i++) values[i] = add(values[i]!, z[i]!);
  const meta: ReplyMeta = { stateId, ...base, ...(inFlight !== undefined ? { inFlight } : {}) };
  const parts = Math.max(1, Math.ceil(values.length / RECOVERY_PART_ELEMENTS));
  const out: Uint8Array[] = [];
  for (let p = 0; p < parts; p++) {
    const chunk = values.slice(p * RECOVERY_PART_ELEMENTS, (p + 1) * RECOVERY_PART_ELEMENTS);
    // Every part names its state, so parts of two answers (a helper that answered again after a
    // restart, at a later state) are never mixed: they are under different masks.
    const extra = textBytes(JSON.stringify(p === 0 ? meta : { stateId }));
    out.push(envelope({ type: Msg.RecoverReply, key: nonce, a: p, b: parts, vectors: [chunk], extra }));
  }
  return out;
}

export interface RecoveryHost {
  n: number;
  t: number;
  self: number;
  clock: Clock;
  aliveHelpers(): number[];
  send(to: number, bytes: Uint8Array): void;
  envelope: Envelop;
  log(ev: Record<string, unknown>): void;
  emit(ev: 'recovery-waiting' | 'inconsistent-share', payload: Record<string, unknown>): void;
}

export interface RecoveryResult {
  snapshot: Omit<PartySnapshot, 'keys' | 'mode' | 'n' | 't' | 'L' | 'kappa'> & { n: number; t: number; L: number; kappa: number };
  helpersInFlight: number | undefined;
  helpers: number[];
}

interface HelperReply {
  /** the state this answer is for (every part names it) */
  stateId: string;
  parts: (Uint8Array | undefined)[];
  got: number;
  meta?: ReplyMeta;
  values?: bigint[];
}

/**
 * What a reply part says of its state: part 0 the whole meta, whose id must be the hash of it (the id
 * groups answers and picks the mask), other parts the id only. A string says why it is unusable.
 */
function readHead(env: Envelope): Partial<ReplyMeta> & { stateId: string } | string {
  try {
    const head = JSON.parse(bytesText(env.extra)) as Partial<ReplyMeta>;
    if (typeof head.stateId !== 'string') return 'no state id';
    if (env.a === 0 && stateIdOf(head as ReplyMeta) !== head.stateId) return 'state id does not match its meta';
    return head as Partial<ReplyMeta> & { stateId: string };
  } catch {
    return 'unreadable meta';
  }
}

/** Re-asks under one nonce with nothing arriving before a fresh nonce (about 5 × retryMs of silence). */
export const STALE_REASKS = 4;

/** The recovering side: asks, collects, combines; re-asks with a fresh nonce if helpers disagree for too long, or fall silent. */
export class Recovery {
  private nonce = '';
  private replies = new Map<number, HelperReply>();
  private excluded = new Set<number>();
  private done: ((r: RecoveryResult) => void) | undefined;
  private fail: ((e: unknown) => void) | undefined;
  private cancelTimer: (() => void) | undefined;
  private finished = false;
  /** clock time of the last reply part received: a large reserve takes helpers seconds to send */
  private lastProgress = 0;
  /** re-asks under this nonce since the last reply part arrived */
  private reasks = 0;
  /** helpers whose last answer was "busy" (not ready themselves, e.g. recovering too), with what they said */
  private readonly busy = new Map<number, string>();

  /**
   * Connected helpers, those of them not known to be busy (recovery needs t+1 of these), what the busy
   * ones said, and the complete answers of this attempt grouped by the helpers' state (a recovery
   * combines t+1 answers of one group; answers from helpers at different points wait for a new attempt).
   */
  helperCounts(): { alive: number; ready: number; needed: number; busy: Record<number, string>; answered: number[][] } {
    const alive = this.host.aliveHelpers();
    const busy: Record<number, string> = {};
    for (const j of alive) if (this.busy.has(j)) busy[j] = this.busy.get(j)!;
    const groups = new Map<string, number[]>();
    for (const [j, r] of this.replies) if (r.values) groups.set(r.meta!.stateId, [...(groups.get(r.meta!.stateId) ?? []), j]);
    return { alive: alive.length, ready: alive.filter((j) => !this.busy.has(j)).length, needed: this.host.t + 1, busy, answered: [...groups.values()] };
  }

  constructor(private readonly host: RecoveryHost, private readonly retryMs = 2000) {}

  run(): Promise<RecoveryResult> {
    return new Promise((resolve, reject) => {
      this.done = resolve;
      this.fail = reject;
      this.attempt();
    });
  }

  stop(): void {
    this.finished = true;
    this.cancelTimer?.();
    this.fail?.(new Error('recovery stopped'));
  }

  private attempt(): void {
    if (this.finished) return;
    this.nonce = randomBytes(16).toString('hex');
    this.replies.clear();
    this.excluded.clear();
    const helpers = this.host.aliveHelpers();
    this.host.log({ ev: 'recovery-request', nonce: this.nonce, helpers });
    if (helpers.length < this.host.t + 1) this.host.emit('recovery-waiting', { alive: helpers.length, needed: this.host.t + 1, note: `waiting for ${this.host.t + 1} helpers` });
    for (const j of helpers) this.request(j);
    this.lastProgress = this.host.clock.now();
    this.reasks = 0;
    this.schedule();
  }

  /**
   * Re-asks only when nothing arrived for retryMs. Complete replies that do not agree (helpers at
   * different points) get a fresh nonce; otherwise the helpers that have not answered are asked again
   * under the same nonce, so replies already received are kept. (Restarting every retryMs regardless
   * discarded slow but progressing replies and made every helper recompute: a livelock for big reserves.)
   * A helper answers a nonce once, so an answer of which a part was lost on the way (a link reset
   * drops what its stream held) is never completed by re-asking under the same nonce: after
   * STALE_REASKS re-asks with nothing arriving, a fresh nonce is asked (seen on real processes: a
   * node killed with its pair waited in recovery for minutes with four ready helpers, one complete answer).
   */
  private schedule(): void {
    this.cancelTimer?.();
    this.cancelTimer = this.host.clock.setTimeout(() => {
      if (this.finished) return;
      if (this.host.clock.now() - this.lastProgress < this.retryMs) return this.schedule();
      const complete = [...this.replies.values()].filter((r) => r.values).length;
      if (complete >= this.host.t + 1 || this.reasks >= STALE_REASKS) return this.attempt();
      this.reasks++;
      for (const j of this.host.aliveHelpers()) if (!this.replies.get(j)?.values) this.request(j);
      this.lastProgress = this.host.clock.now();
      this.schedule();
    }, this.retryMs);
  }

  private request(j: number): void {
    this.host.send(j, this.host.envelope({ type: Msg.RecoverRequest, key: this.nonce }));
  }

  onPeerUp(peer: number): void {
    if (!this.finished && !this.replies.has(peer)) this.request(peer);
  }

  onMessage(from: number, env: Envelope): void {
    if (this.finished || env.key !== this.nonce) return;
    if (env.type === Msg.RecoverBusy) {
      this.host.log({ ev: 'recovery-busy', from, why: bytesText(env.extra) });
      const why = bytesText(env.extra);
      if (!this.busy.has(from)) {
        this.busy.set(from, why);
        const c = this.helperCounts();
        if (c.ready < c.needed) this.host.emit('recovery-waiting', { alive: c.alive, ready: c.ready, needed: c.needed, note: `helper ${from} is not ready (${why})` });
      }
      this.busy.set(from, why);
      return;
    }
    this.busy.delete(from);
    const head = readHead(env);
    if (typeof head === 'string') return this.host.log({ ev: 'recovery-bad-reply', from, why: head });
    let r = this.replies.get(from);
    if (r && r.stateId !== head.stateId) {
      // The helper answered this nonce again at another state (it restarted and forgot it had
      // answered): that answer is under another mask, so its parts replace the old ones, never mix.
      if (r.values) return; // a complete answer is kept; a new attempt (fresh nonce) regroups
      this.host.log({ ev: 'recovery-reply-restarted', from, was: r.stateId, now: head.stateId });
      r = undefined;
    }
    if (!r) this.replies.set(from, (r = { stateId: head.stateId, parts: new Array(env.b).fill(undefined), got: 0 }));
    if (env.b !== r.parts.length || env.a >= r.parts.length || r.parts[env.a]) return;
    this.lastProgress = this.host.clock.now();
    this.reasks = 0;
    r.parts[env.a] = env.vectors[0] ?? new Uint8Array(0);
    r.got++;
    if (env.a === 0) r.meta = head as ReplyMeta;
    if (r.got < r.parts.length || !r.meta) return;
    const values: bigint[] = [];
    for (const p of r.parts) for (const x of decodeVector(p!)) values.push(x);
    r.values = values;
    this.tryCombine();
  }

  private tryCombine(): void {
    const groups = new Map<string, number[]>();
    for (const [j, r] of this.replies) {
      if (!r.values || this.excluded.has(j)) continue;
      const g = groups.get(r.meta!.stateId) ?? [];
      g.push(j);
      groups.set(r.meta!.stateId, g);
    }
    const t = this.host.t;
    for (const [, helpers] of groups) {
      if (helpers.length < t + 1) continue;
      const shares = helpers.map((j) => this.replies.get(j)!.values!);
      if (helpers.length > t + 1) {
        const bad = findInconsistent(helpers, shares, t);
        if (bad.length > 0) {
          const index = Math.min(...bad.map((b) => b.index));
          const culprit = nameBadParty(helpers, shares.map((s) => s[index]!), t);
          this.host.emit('inconsistent-share', { recovery: true, badParty: culprit, index });
          if (culprit !== null) {
            this.excluded.add(culprit);
            this.tryCombine();
          }
          return;
        }
      }
      const mine = interpolate(helpers.slice(0, t + 1), shares.slice(0, t + 1), this.host.self);
      const meta = this.replies.get(helpers[0]!)!.meta!;
      this.finish(meta, mine, helpers);
      return;
    }
  }

  private finish(meta: ReplyMeta, v: bigint[], helpers: number[]): void {
    this.finished = true;
    this.cancelTimer?.();
    let off = 0;
    const take = (k: number): bigint[] => {
      const out = v.slice(off, off + k);
      off += k;
      return out;
    };
    const store = meta.store.map(([k, len]) => [k, take(len)] as [string, bigint[]]);
    const items = emptyItems();
    for (const k of KINDS) items[k] = take(meta.items[k] * WIDTH[k]);
    if (off !== v.length) {
      this.fail?.(new Error(`recovery: layout mismatch (${off} of ${v.length} values used)`));
      return;
    }
    const inFlight = helpers.map((j) => this.replies.get(j)!.meta!.inFlight).find((x) => x !== undefined);
    this.host.log({ ev: 'recovery-combined', helpers: helpers.slice(0, this.host.t + 1), values: store.length, lastFinishedJob: meta.finished[meta.finished.length - 1] });
    this.done?.({
      snapshot: {
        n: this.host.n, t: this.host.t, L: 0, kappa: 0,
        store, pub: meta.pub, cursor: meta.cursor, items,
        finished: meta.finished, prep: meta.prep,
      },
      helpersInFlight: inFlight,
      helpers,
    });
  }
}
