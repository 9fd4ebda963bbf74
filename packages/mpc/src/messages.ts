// Wire format of everything parties send each other. Compact binary, no JSON for field vectors:
//   u8 type | u32 prepCommitted | u32 prepNext | u32 a | u32 b | u16 keyLen | key (utf8)
//   | u16 vectorCount | per vector: u32 length, 16-byte big-endian elements | u32 extraLen | extra
// `a`/`b` are per type (round and recipient for job rounds, round and batch for preprocessing).
// prepCommitted / prepNext piggyback the sender's preprocessing log (see preprocessing.ts) on every
// message so a receiver can settle a pending batch before it consumes from it.

import { BytePool } from '@tenebra/transport/src/byte-pool';
import { ELEMENT_BYTES, readElement, writeElement } from './field';

/** Message types. */
export const Msg = {
  /** PRSS key for one subset, sent by the subset's lowest member during setup (extra: key bytes). */
  SetupKey: 1,
  /** Shares for one job round (key: job id, a: round; vectors: [open-to-all, open-to-receiver]). */
  JobRound: 2,
  /**
   * Phase-A data of a preprocessing batch (a: round, b: batch; key: its proposal). a = 65535, no
   * vectors: a notice of the proposal to a party outside its participant set (ADR 0017).
   */
  PrepRound: 3,
  /** ready(b): phase A done, items staged (b: batch). */
  PrepReady: 4,
  /** committed(b) (b: batch). */
  PrepCommit: 5,
  /** veto(b): the sender never sent and never will send ready(b) (b: batch). */
  PrepVeto: 6,
  /** Preprocessing status (extra: JSON of pending/vetoed/committed batch ids; sent when all n are up). */
  PrepStatus: 7,
  /** A recovering party asks for its shares (key: request nonce). */
  RecoverRequest: 8,
  /** One part of a helper's masked answer (key: nonce; a: part, b: parts; vectors; extra: JSON layout). */
  RecoverReply: 9,
  /** A helper cannot answer yet (key: nonce; extra: reason). */
  RecoverBusy: 10,
  /**
   * Answer to a share of a job the sender has finished and no longer keeps for re-sending (key: job
   * id): whatever the receiver still lacks of that job will never come from the sender.
   */
  JobGone: 11,
  /** A classic ballot's prepare for batch b (a: ballot). */
  PrepPrepare: 12,
  /**
   * Promise for ballot a on batch b (key: "vote0|ballot:value|vetoers": our ballot-0 vote, our last
   * accepted value, and the parties we heard veto b, comma-separated; '-' or empty for none).
   */
  PrepPromise: 13,
  /** Accept ballot a's value on batch b (key: 'commit' | 'drop'). */
  PrepAccept: 14,
  /** The sender accepted ballot a's value on batch b (key: the value); a majority decides it. */
  PrepAccepted: 15,
  /** The sender has promised ballot a (higher than one it was asked for) on batch b. */
  PrepNack: 16,
  /** Batch b was decided: dropped (b: batch). */
  PrepDropped: 17,
  /** The sender abstains on batch b: it lost its votes with its memory (b: batch). */
  PrepAbstain: 18,
  /**
   * Answer to a phase-A message of batch b from a party that keeps none of its own for b (b restored
   * staged from a state, or already decided): the receiver will never get them from the sender.
   */
  PrepRoundsGone: 19,
  /**
   * Void instance for the committed batch that follows `b` committed batches (a: ballot; key: the
   * batch id as the sender knows it, or '-'): prepare (decision 0009, "Voiding an unconsumed batch").
   */
  PrepVoidPrepare: 20,
  /**
   * Promise for ballot a of void instance b (key: "ok|acc|counts|id", "keep|acc|counts|id", or
   * "nack|<promised>"; acc "ballot:value" or '-'; counts "t,l,p,n" of the batch's items or '-').
   */
  PrepVoidPromise: 21,
  /** Accept ballot a's value of void instance b (key: "value|counts|id"). */
  PrepVoidAccept: 22,
  /** The sender accepted ballot a's value (key as PrepVoidAccept); a = 0: the sender knows it decided. */
  PrepVoidAccepted: 23,
  /**
   * A party whose job round waits asks for the round's shares (key: job id, a: round) from a peer
   * that has not sent them: with a partial fan-out (PartyOptions.shareFanout) a sender may have left
   * it out (it was down, recovering or unseen then). The peer sends its messages of that round and
   * later ones it has, and from then on sends this job's rounds to the asker too.
   */
  JobPull: 24,
} as const;
export type Msg = (typeof Msg)[keyof typeof Msg];

/** A decoded message. Vectors stay as bytes until a consumer decodes them (most are decoded once). */
export interface Envelope {
  type: Msg;
  prepCommitted: number;
  prepNext: number;
  a: number;
  b: number;
  key: string;
  vectors: Uint8Array[];
  extra: Uint8Array;
}

const HEADER = 1 + 4 * 4 + 2;
const enc = new TextEncoder();
const dec = new TextDecoder();
const NO_EXTRA = new Uint8Array(0);
/** envelopes: a pool of their own, since a job's are archived (runtime.ts) while other arrays come and go */
const envelopes = new BytePool();

// Message keys (job ids, batch ids) repeat over many messages: their UTF-8 bytes are kept for the
// recent ones instead of a TextEncoder call per message sent, and a received key equal to one of the
// last few decoded is taken as that string instead of a TextDecoder call (read only, both ways).
const KEY_CACHE = 64;
const keyBytes = new Map<string, Uint8Array>();
function keyBytesOf(key: string): Uint8Array {
  let b = keyBytes.get(key);
  if (b === undefined) {
    if (keyBytes.size >= KEY_CACHE) keyBytes.clear();
    b = enc.encode(key);
    keyBytes.set(key, b);
  }
  return b;
}
const RECENT_KEYS = 4;
const recentBytes: Uint8Array[] = [];
const recentText: string[] = [];
let recentAt = 0;
function keyTextOf(b: Uint8Array): string {
  search: for (let i = 0; i < recentBytes.length; i++) {
    const c = recentBytes[i]!;
    if (c.length !== b.length) continue;
    for (let j = 0; j < b.length; j++) if (c[j] !== b[j]) continue search;
    return recentText[i]!;
  }
  const text = dec.decode(b);
  recentBytes[recentAt] = b.slice(); // a copy: the message's buffer is not ours to keep
  recentText[recentAt] = text;
  recentAt = (recentAt + 1) % RECENT_KEYS;
  return text;
}

/** Limits on what decode() accepts (a malformed or hostile peer must not make us allocate wildly). */
export const MAX_KEY_BYTES = 1024;
export const MAX_VECTORS = 16;

/** Error for malformed messages. */
export class MessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MessageError';
  }
}

/**
 * Encodes a message; vectors are field elements (each must be in [0, p): not re-checked here for
 * speed), as BigInts or already encoded (16 bytes big-endian each, copied as they are).
 */
export function encode(m: {
  type: Msg;
  prepCommitted: number;
  prepNext: number;
  a?: number;
  b?: number;
  key?: string;
  vectors?: readonly (readonly bigint[] | Uint8Array)[];
  extra?: Uint8Array;
}): Uint8Array {
  return encodeWith(m, m.prepCommitted, m.prepNext);
}

/** The fields of a message other than the piggybacked preprocessing log. */
export interface MessageBody {
  type: Msg;
  a?: number;
  b?: number;
  key?: string;
  vectors?: readonly (readonly bigint[] | Uint8Array)[];
  extra?: Uint8Array;
}

/**
 * encode() with the preprocessing log passed apart: a party stamps every message it sends with its
 * log, and spreading the body into a new object for that cost a copy per message.
 */
export function encodeWith(m: MessageBody, prepCommitted: number, prepNext: number): Uint8Array {
  const key = keyBytesOf(m.key ?? '');
  if (key.length > MAX_KEY_BYTES) throw new MessageError(`message key too long (${key.length} bytes)`);
  const vectors = m.vectors ?? [];
  if (vectors.length > MAX_VECTORS) throw new MessageError(`too many vectors (${vectors.length})`);
  const extra = m.extra ?? NO_EXTRA;
  let size = HEADER + key.length + 2 + 4 + extra.length;
  for (const v of vectors) {
    if (v instanceof Uint8Array && v.length % ELEMENT_BYTES !== 0) throw new MessageError(`encoded vector of ${v.length} bytes`);
    size += 4 + (v instanceof Uint8Array ? v.length : v.length * ELEMENT_BYTES);
  }
  const out = envelopes.alloc(size); // one per message: a view of a slab, not a backing store of its own
  const view = new DataView(out.buffer, out.byteOffset, size);
  let off = 0;
  view.setUint8(off, m.type); off += 1;
  view.setUint32(off, prepCommitted >>> 0); off += 4;
  view.setUint32(off, prepNext >>> 0); off += 4;
  view.setUint32(off, (m.a ?? 0) >>> 0); off += 4;
  view.setUint32(off, (m.b ?? 0) >>> 0); off += 4;
  view.setUint16(off, key.length); off += 2;
  out.set(key, off); off += key.length;
  view.setUint16(off, vectors.length); off += 2;
  for (const v of vectors) {
    if (v instanceof Uint8Array) {
      view.setUint32(off, v.length / ELEMENT_BYTES); off += 4;
      out.set(v, off); off += v.length;
      continue;
    }
    view.setUint32(off, v.length); off += 4;
    for (let i = 0; i < v.length; i++, off += ELEMENT_BYTES) writeElement(view, off, v[i]!);
  }
  view.setUint32(off, extra.length); off += 4;
  out.set(extra, off); off += extra.length;
  if (off !== size) throw new MessageError('internal: encoded size mismatch');
  return out;
}

/** Decodes the envelope of a message (vectors stay encoded); throws MessageError when malformed. */
export function decode(data: Uint8Array): Envelope {
  if (data.length < HEADER + 6) throw new MessageError(`message too short (${data.length} bytes)`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let off = 0;
  const type = view.getUint8(off) as Msg; off += 1;
  if (type < Msg.SetupKey || type > Msg.JobPull) throw new MessageError(`unknown message type ${type}`);
  const prepCommitted = view.getUint32(off); off += 4;
  const prepNext = view.getUint32(off); off += 4;
  const a = view.getUint32(off); off += 4;
  const b = view.getUint32(off); off += 4;
  const keyLen = view.getUint16(off); off += 2;
  if (keyLen > MAX_KEY_BYTES || off + keyLen + 2 > data.length) throw new MessageError('bad key length');
  const key = keyTextOf(data.subarray(off, off + keyLen)); off += keyLen;
  const count = view.getUint16(off); off += 2;
  if (count > MAX_VECTORS) throw new MessageError(`too many vectors (${count})`);
  const vectors: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    if (off + 4 > data.length) throw new MessageError('truncated vector header');
    const len = view.getUint32(off); off += 4;
    const bytes = len * ELEMENT_BYTES;
    if (off + bytes > data.length) throw new MessageError('truncated vector');
    vectors.push(data.subarray(off, off + bytes)); off += bytes;
  }
  if (off + 4 > data.length) throw new MessageError('truncated extra header');
  const extraLen = view.getUint32(off); off += 4;
  if (off + extraLen !== data.length) throw new MessageError('bad extra length');
  const extra = data.subarray(off, off + extraLen);
  return { type, prepCommitted, prepNext, a, b, key, vectors, extra };
}

/** Number of field elements in an encoded vector. */
export function vectorLength(bytes: Uint8Array): number {
  return bytes.length / ELEMENT_BYTES;
}

/** Decodes an encoded vector into field elements (throws on values >= p). */
export function decodeVector(bytes: Uint8Array): bigint[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const m = bytes.length / ELEMENT_BYTES;
  const out = new Array<bigint>(m);
  for (let i = 0; i < m; i++) out[i] = readElement(view, i * ELEMENT_BYTES);
  return out;
}

/** UTF-8 helpers for the `extra` section. */
export function textBytes(s: string): Uint8Array {
  return enc.encode(s);
}
export function bytesText(b: Uint8Array): string {
  return dec.decode(b);
}
