// Voiding a committed but unconsumed preprocessing batch (decision 0009, "Voiding an unconsumed
// batch"): one more consensus instance per batch, single-decree Paxos (Lamport, "Paxos Made Simple",
// 2001) over the same acceptors (all n), majority quorums and ballots k*n + party as the batch's own
// instance. Values: 'void' (the batch's items are dropped at the same position of every reserve) and
// 'keep'. This module holds the instance's state, its wire keys and the coordinator's choice; the
// Preprocessor (preprocessing.ts) runs it.

import { KINDS, type Counts } from './reserve';

export type VoidValue = 'void' | 'keep';

/** An acceptor's report in a promise. */
export interface VoidPromise {
  /** The acceptor can void the batch: no finished job consumed any of it there (and it is now locked). */
  ok: boolean;
  accepted?: { ballot: number; value: VoidValue };
  /** The batch's items per kind (holders only). */
  count?: Counts;
  id?: number;
}

/** One void instance: the committed batch that follows `c` committed batches, at reserve positions `start`. */
export interface VoidInst {
  c: number;
  start: Counts;
  id?: number;
  count?: Counts;
  promised: number;
  maxBallot: number;
  accepted?: { ballot: number; value: VoidValue };
  /**
   * We promised "ok" or accepted 'void': until decided, no round of a job that consumed the batch
   * completes here (else a job could finish on its items after we said none had).
   */
  locked: boolean;
  learned: Map<number, { value: VoidValue; from: Set<number> }>;
  coord?: { ballot: number; promises: Map<number, VoidPromise>; proposed?: VoidValue };
  decided?: VoidValue;
  scheduled: boolean;
  waiters: (() => void)[];
}

export function newVoid(c: number, start: Counts, id?: number): VoidInst {
  return { c, start: { ...start }, ...(id !== undefined ? { id } : {}), promised: 0, maxBallot: 0, locked: false, learned: new Map(), scheduled: false, waiters: [] };
}

export function countsKey(c: Counts | undefined): string {
  return c ? KINDS.map((k) => c[k]).join(',') : '-';
}

export function parseCounts(s: string | undefined): Counts | undefined {
  if (!s || !/^\d+(,\d+)*$/.test(s)) return undefined;
  const xs = s.split(',').map(Number);
  if (xs.length !== KINDS.length || xs.some((x) => !Number.isSafeInteger(x))) return undefined;
  return Object.fromEntries(KINDS.map((k, i) => [k, xs[i]!])) as Counts;
}

function parseId(s: string | undefined): number | undefined {
  return s !== undefined && /^\d+$/.test(s) ? Number(s) : undefined;
}

export function parseValue(s: string | undefined): VoidValue | undefined {
  return s === 'void' || s === 'keep' ? s : undefined;
}

/** Prepare key: "id|start" (id '-' when the coordinator does not know it). */
export function prepareKey(v: VoidInst): string {
  return `${v.id ?? '-'}|${countsKey(v.start)}`;
}

export function parsePrepare(key: string): { id?: number; start?: Counts } {
  const [id, start] = key.split('|');
  const out: { id?: number; start?: Counts } = {};
  const i = parseId(id);
  if (i !== undefined) out.id = i;
  const s = parseCounts(start);
  if (s) out.start = s;
  return out;
}

export function promiseKey(p: VoidPromise): string {
  const acc = p.accepted ? `${p.accepted.ballot}:${p.accepted.value}` : '-';
  return `${p.ok ? 'ok' : 'keep'}|${acc}|${countsKey(p.count)}|${p.id ?? '-'}`;
}

export function parsePromise(key: string): VoidPromise | { nack: number } | undefined {
  const [head, a, b, c] = key.split('|');
  if (head === 'nack') return { nack: Number(a) || 0 };
  if (head !== 'ok' && head !== 'keep') return undefined;
  const out: VoidPromise = { ok: head === 'ok' };
  if (a && a !== '-') {
    const [ballot, value] = a.split(':');
    const v = parseValue(value);
    if (v && Number.isSafeInteger(Number(ballot))) out.accepted = { ballot: Number(ballot), value: v };
  }
  const count = parseCounts(b);
  if (count) out.count = count;
  const id = parseId(c);
  if (id !== undefined) out.id = id;
  return out;
}

/** Accept / accepted key: "value|counts|id". */
export function valueKey(value: VoidValue, count: Counts | undefined, id: number | undefined): string {
  return `${value}|${countsKey(count)}|${id ?? '-'}`;
}

export function parseValueKey(key: string): { value: VoidValue; count?: Counts; id?: number } | undefined {
  const [v, c, i] = key.split('|');
  const value = parseValue(v);
  if (!value) return undefined;
  const out: { value: VoidValue; count?: Counts; id?: number } = { value };
  const count = parseCounts(c);
  if (count) out.count = count;
  const id = parseId(i);
  if (id !== undefined) out.id = id;
  return out;
}

/**
 * The coordinator's value from a majority's promises: the highest accepted value if any (Paxos);
 * otherwise 'void' only if every promiser said ok, and the batch's item counts are known (from a
 * holder's promise: the first round that would have consumed it fails everywhere, see ensure());
 * 'keep' if some promiser had a finished job consume it. Undefined: wait for more promises.
 */
export function chooseVoid(promises: Iterable<VoidPromise>): { value: VoidValue; count?: Counts; id?: number } | undefined {
  let last: { ballot: number; value: VoidValue } | undefined;
  let count: Counts | undefined;
  let id: number | undefined;
  let allOk = true;
  for (const p of promises) {
    if (p.accepted && (!last || p.accepted.ballot > last.ballot)) last = p.accepted;
    if (p.count) count = p.count;
    if (p.id !== undefined) id = p.id;
    if (!p.ok) allOk = false;
  }
  if (last) return { value: last.value, ...(count ? { count } : {}), ...(id !== undefined ? { id } : {}) };
  if (!allOk) return { value: 'keep' };
  return count ? { value: 'void', count, ...(id !== undefined ? { id } : {}) } : undefined;
}
