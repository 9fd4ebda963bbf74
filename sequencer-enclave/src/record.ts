// The journal record of one sequenced op: JSON text {seq, ts_ns, rid, digest, batch_end, op}.
// Only sealed blobs and the public fields are stored: the sequencer never has plaintext to store.
import { createHash } from 'node:crypto';
import { JOB_END_KIND, validateSealedOp, type SealedOp } from '@tenebra/wire';

/** One sequenced op as journaled. */
export interface OpRecord {
  seq: bigint;
  tsNs: bigint;
  rid: string;
  /** Hash of the op as submitted: a retry with the same rid must carry the same op. */
  digest: string;
  batchEnd: boolean;
  op: SealedOp;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Short hash identifying an op's content (base64 of 16 bytes of sha256 over its JSON). */
export function opDigest(op: SealedOp): string {
  return createHash('sha256').update(JSON.stringify(op)).digest().subarray(0, 16).toString('base64');
}

/** Record bytes for the journal. */
export function encodeRecord(r: OpRecord): Uint8Array {
  return enc.encode(
    JSON.stringify({ seq: r.seq.toString(), ts_ns: r.tsNs.toString(), rid: r.rid, digest: r.digest, batch_end: r.batchEnd, op: r.op }),
  );
}

/**
 * The record the sequencer journals itself to end a job when no op arrives to carry the boundary
 * (job-boundaries.ts): no rid, no share, batch_end true.
 */
export function jobEndRecord(seq: bigint, tsNs: bigint): OpRecord {
  return { seq, tsNs, rid: '', digest: '', batchEnd: true, op: { kind: JOB_END_KIND, symbol: '', pub: {}, sealed: [] } };
}

/** True for a record made by jobEndRecord. */
export function isJobEnd(r: OpRecord): boolean {
  return r.op.kind === JOB_END_KIND;
}

/** Parses record bytes; throws if the record is not one this code wrote (journal damage). */
export function decodeRecord(bytes: Uint8Array, expectSeq: bigint): OpRecord {
  const r = decodeRecordUnchecked(bytes, expectSeq);
  if (isJobEnd(r)) {
    if (r.rid !== '' || !r.batchEnd || r.op.sealed.length !== 0) throw new Error(`journal record at seq ${expectSeq} is a malformed job end`);
  } else {
    validateSealedOp(r.op);
  }
  return r;
}

/** decodeRecord without re-validating the op (for the start-up scan, which only needs rid and time). */
export function decodeRecordUnchecked(bytes: Uint8Array, expectSeq: bigint): OpRecord {
  const o = JSON.parse(dec.decode(bytes)) as Record<string, unknown>;
  const seq = BigInt(o.seq as string);
  if (seq !== expectSeq) throw new Error(`journal record at seq ${expectSeq} says seq ${seq}`);
  if (typeof o.rid !== 'string' || typeof o.digest !== 'string' || typeof o.batch_end !== 'boolean') {
    throw new Error(`journal record at seq ${expectSeq} is malformed`);
  }
  return { seq, tsNs: BigInt(o.ts_ns as string), rid: o.rid, digest: o.digest, batchEnd: o.batch_end, op: o.op as SealedOp };
}
