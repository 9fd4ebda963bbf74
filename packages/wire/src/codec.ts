// JSON codec for the internal frames of messages.ts. decode* parse AND validate: a frame that
// passes has exactly the fields its type declares, each of the right shape. Anything else throws
// FrameError with a message that names the field, so a peer's nack can say what was wrong.
import {
  JOB_END_KIND,
  type AckFrame, type AuthChallengeFrame, type CapacityFrame, type AuthFrame, type AuthOkFrame, type AuthRefusedFrame, type ChallengeFrame, type FeedHelloFrame, type GatewayToNode,
  type GatewayToSequencer, type NackFrame, type NodeToGateway, type NodeToSequencer, type ProgressFrame, type ProofFrame, type PublicFields, type Quote,
  type QuoteFrame, type ResultFrame, type ResultHelloFrame, type ResumeFrame, type SealedOp, type SequencedFrame, type SequencerToGateway,
  type SequencerToNode, type SubmitFrame,
} from './messages';

/** Every internal frame. */
export type Frame =
  | SubmitFrame | AckFrame | NackFrame | QuoteFrame | ChallengeFrame | ProofFrame | FeedHelloFrame | ProgressFrame | SequencedFrame
  | ResultHelloFrame | ResumeFrame | ResultFrame | CapacityFrame | AuthChallengeFrame | AuthFrame | AuthOkFrame | AuthRefusedFrame;
export type FrameType = Frame['t'];

/** Limits the codec enforces on every frame. */
export const WIRE_LIMITS = {
  /** Largest frame text accepted by decode, bytes (UTF-16 code units, a lower bound on bytes). */
  maxFrameBytes: 4 << 20,
  maxRidLength: 128,
  maxKindLength: 32,
  maxSymbolLength: 64,
  maxPubKeys: 64,
  maxPubStringLength: 1024,
  maxSealedEntries: 64,
  maxCodeLength: 64,
  /** the engine's job ids (Party.runJob refuses longer ones) */
  maxJobIdLength: 512,
  maxMessageLength: 2048,
  maxNode: 255,
} as const;

/** A frame that is not valid JSON or does not match its type. `rid` is set when the frame carried one. */
export class FrameError extends Error {
  override name = 'FrameError';
  constructor(
    message: string,
    readonly rid: string = '',
  ) {
    super(message);
  }
}

type Obj = Record<string, unknown>;

const DEC = /^(0|[1-9][0-9]*)$/;
const HEX = /^[0-9a-f]*$/;
const B64 = /^[A-Za-z0-9+/]*={0,2}$/;
const RID = /^[\x21-\x7e]+$/;
const U64_MAX = (1n << 64n) - 1n;

function fail(msg: string, rid = ''): never {
  throw new FrameError(msg, rid);
}

function exactKeys(o: Obj, required: readonly string[], optional: readonly string[], what: string, rid = ''): void {
  for (const k of required) if (!(k in o)) fail(`${what}: missing field '${k}'`, rid);
  for (const k of Object.keys(o)) {
    if (!required.includes(k) && !optional.includes(k)) fail(`${what}: unknown field '${k}'`, rid);
  }
}

function obj(v: unknown, what: string, rid = ''): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(`${what} must be a JSON object`, rid);
  return v as Obj;
}

function str(v: unknown, what: string, maxLen: number, rid = '', allowEmpty = false): string {
  if (typeof v !== 'string') fail(`${what} must be a string`, rid);
  if (!allowEmpty && v.length === 0) fail(`${what} must not be empty`, rid);
  if (v.length > maxLen) fail(`${what} is longer than ${maxLen} characters`, rid);
  return v;
}

/** A decimal string of an unsigned 64-bit integer, at least `min`. */
function dec(v: unknown, what: string, min: bigint, rid = ''): string {
  if (typeof v !== 'string' || !DEC.test(v) || v.length > 20) fail(`${what} must be a decimal integer string`, rid);
  const n = BigInt(v);
  if (n < min || n > U64_MAX) fail(`${what} must be between ${min} and 2^64-1`, rid);
  return v;
}

function node(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > WIRE_LIMITS.maxNode) {
    fail(`${what} must be an integer node index in 1..${WIRE_LIMITS.maxNode}`);
  }
  return v;
}

const PURPOSES: readonly string[] = ['results', 'feed', 'submit'];
const ROLES: readonly string[] = ['node', 'gateway'];

function oneOf(v: unknown, allowed: readonly string[], what: string): string {
  if (typeof v !== 'string' || !allowed.includes(v)) fail(`${what} must be one of ${allowed.join(', ')}`);
  return v;
}

/** A link identity's id: 0 (the gateway) or a node index. */
function peerId(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > WIRE_LIMITS.maxNode) {
    fail(`${what} must be an integer in 0..${WIRE_LIMITS.maxNode}`);
  }
  return v;
}

function hex(v: unknown, what: string, len: number): string {
  if (typeof v !== 'string' || v.length !== len || !HEX.test(v)) fail(`${what} must be ${len} lower-case hex characters`);
  return v;
}

/** True iff s is canonical padded base64 (the encoding Buffer.toString('base64') produces). */
export function isBase64(s: string): boolean {
  return s.length % 4 === 0 && B64.test(s);
}

function b64(v: unknown, what: string, rid = '', allowEmpty = false): string {
  if (typeof v !== 'string') fail(`${what} must be a base64 string`, rid);
  if (v.length === 0 && !allowEmpty) fail(`${what} must not be empty`, rid);
  if (!isBase64(v)) fail(`${what} is not valid base64`, rid);
  return v;
}

function rid(v: unknown, what: string): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > WIRE_LIMITS.maxRidLength || !RID.test(v)) {
    fail(`${what} must be 1..${WIRE_LIMITS.maxRidLength} printable ASCII characters without spaces`);
  }
  return v;
}

function pubFields(v: unknown, what: string, rid = ''): PublicFields {
  const o = obj(v, what, rid);
  const keys = Object.keys(o);
  if (keys.length > WIRE_LIMITS.maxPubKeys) fail(`${what} has more than ${WIRE_LIMITS.maxPubKeys} fields`, rid);
  for (const k of keys) {
    const x = o[k];
    if (x === null || typeof x === 'boolean') continue;
    if (typeof x === 'number') {
      if (!Number.isFinite(x)) fail(`${what}.${k} must be a finite number`, rid);
      continue;
    }
    if (typeof x === 'string') {
      if (x.length > WIRE_LIMITS.maxPubStringLength) fail(`${what}.${k} is longer than ${WIRE_LIMITS.maxPubStringLength}`, rid);
      continue;
    }
    fail(`${what}.${k} must be a string, number, boolean or null`, rid);
  }
  return o as PublicFields;
}

/** Validates a SealedOp's shape (not policy such as the number of entries: the sequencer checks that). */
export function validateSealedOp(v: unknown, what = 'op', r = ''): SealedOp {
  const o = obj(v, what, r);
  exactKeys(o, ['kind', 'symbol', 'pub', 'sealed'], [], what, r);
  str(o.kind, `${what}.kind`, WIRE_LIMITS.maxKindLength, r);
  str(o.symbol, `${what}.symbol`, WIRE_LIMITS.maxSymbolLength, r);
  pubFields(o.pub, `${what}.pub`, r);
  if (!Array.isArray(o.sealed)) fail(`${what}.sealed must be an array`, r);
  if (o.sealed.length === 0 || o.sealed.length > WIRE_LIMITS.maxSealedEntries) {
    fail(`${what}.sealed must hold 1..${WIRE_LIMITS.maxSealedEntries} entries`, r);
  }
  o.sealed.forEach((s, i) => b64(s, `${what}.sealed[${i}]`, r));
  return o as unknown as SealedOp;
}

/** Validates a Quote's field shapes (the signature is checked by verifyQuote in @tenebra/seal). */
function quote(v: unknown): Quote {
  const o = obj(v, 'quote');
  exactKeys(o, ['measurement', 'enclave_pubkey', 'issued_at', 'platform_signature'], [], 'quote');
  hex(o.measurement, 'quote.measurement', 64);
  hex(o.enclave_pubkey, 'quote.enclave_pubkey', 64);
  str(o.issued_at, 'quote.issued_at', 64);
  hex(o.platform_signature, 'quote.platform_signature', 128);
  return o as unknown as Quote;
}

const VALIDATORS: { [K in FrameType]: (o: Obj) => Extract<Frame, { t: K }> } = {
  submit(o) {
    // Take the rid first so that any later error can be nacked against it.
    const r = rid(o.rid, 'submit.rid');
    exactKeys(o, ['t', 'rid', 'op'], [], 'submit', r);
    validateSealedOp(o.op, 'submit.op', r);
    return o as unknown as SubmitFrame;
  },
  ack(o) {
    exactKeys(o, ['t', 'rid', 'seq', 'ts_ns'], [], 'ack');
    rid(o.rid, 'ack.rid');
    dec(o.seq, 'ack.seq', 1n);
    dec(o.ts_ns, 'ack.ts_ns', 0n);
    return o as unknown as AckFrame;
  },
  nack(o) {
    exactKeys(o, ['t', 'rid', 'code', 'message'], [], 'nack');
    // rid may be empty: a frame too broken to carry one, or a feed request.
    str(o.rid, 'nack.rid', WIRE_LIMITS.maxRidLength, '', true);
    str(o.code, 'nack.code', WIRE_LIMITS.maxCodeLength);
    str(o.message, 'nack.message', WIRE_LIMITS.maxMessageLength, '', true);
    return o as unknown as NackFrame;
  },
  quote(o) {
    exactKeys(o, ['t', 'quote'], [], 'quote frame');
    quote(o.quote);
    return o as unknown as QuoteFrame;
  },
  challenge(o) {
    exactKeys(o, ['t', 'nonce'], [], 'challenge');
    hex(o.nonce, 'challenge.nonce', 64);
    return o as unknown as ChallengeFrame;
  },
  proof(o) {
    exactKeys(o, ['t', 'nonce', 'sig'], [], 'proof');
    hex(o.nonce, 'proof.nonce', 64);
    hex(o.sig, 'proof.sig', 128);
    return o as unknown as ProofFrame;
  },
  feed(o) {
    exactKeys(o, ['t', 'node', 'from_seq'], [], 'feed');
    node(o.node, 'feed.node');
    dec(o.from_seq, 'feed.from_seq', 1n);
    return o as unknown as FeedHelloFrame;
  },
  progress(o) {
    exactKeys(o, ['t', 'taken'], [], 'progress');
    dec(o.taken, 'progress.taken', 0n);
    return o as unknown as ProgressFrame;
  },
  op(o) {
    exactKeys(o, ['t', 'seq', 'ts_ns', 'kind', 'symbol', 'pub', 'sealed', 'batch_end'], [], 'op');
    dec(o.seq, 'op.seq', 1n);
    dec(o.ts_ns, 'op.ts_ns', 0n);
    str(o.kind, 'op.kind', WIRE_LIMITS.maxKindLength);
    // a job-end record has no symbol and carries no share; every other op carries this node's sealed share
    const jobEnd = o.kind === JOB_END_KIND;
    str(o.symbol, 'op.symbol', WIRE_LIMITS.maxSymbolLength, '', jobEnd);
    pubFields(o.pub, 'op.pub');
    b64(o.sealed, 'op.sealed', '', jobEnd);
    if (typeof o.batch_end !== 'boolean') fail('op.batch_end must be a boolean');
    if (jobEnd && (o.sealed !== '' || o.batch_end !== true)) fail(`a '${JOB_END_KIND}' op has an empty sealed field and batch_end true`);
    return o as unknown as SequencedFrame;
  },
  hello(o) {
    exactKeys(o, ['t', 'node', 'purpose', 'key', 'nonce', 'sig', 'challenge'], [], 'hello');
    node(o.node, 'hello.node');
    oneOf(o.purpose, PURPOSES, 'hello.purpose');
    hex(o.key, 'hello.key', 64);
    hex(o.nonce, 'hello.nonce', 64);
    hex(o.sig, 'hello.sig', 128);
    hex(o.challenge, 'hello.challenge', 64);
    return o as unknown as ResultHelloFrame;
  },
  auth_challenge(o) {
    exactKeys(o, ['t', 'nonce'], [], 'auth_challenge');
    hex(o.nonce, 'auth_challenge.nonce', 64);
    return o as unknown as AuthChallengeFrame;
  },
  auth(o) {
    exactKeys(o, ['t', 'role', 'id', 'purpose', 'key', 'nonce', 'sig'], [], 'auth');
    oneOf(o.role, ROLES, 'auth.role');
    peerId(o.id, 'auth.id');
    oneOf(o.purpose, PURPOSES, 'auth.purpose');
    hex(o.key, 'auth.key', 64);
    hex(o.nonce, 'auth.nonce', 64);
    hex(o.sig, 'auth.sig', 128);
    return o as unknown as AuthFrame;
  },
  auth_ok(o) {
    exactKeys(o, ['t', 'role', 'id'], [], 'auth_ok');
    oneOf(o.role, ROLES, 'auth_ok.role');
    peerId(o.id, 'auth_ok.id');
    return o as unknown as AuthOkFrame;
  },
  auth_refused(o) {
    exactKeys(o, ['t', 'code', 'message'], [], 'auth_refused');
    str(o.code, 'auth_refused.code', WIRE_LIMITS.maxCodeLength);
    str(o.message, 'auth_refused.message', WIRE_LIMITS.maxMessageLength, '', true);
    return o as unknown as AuthRefusedFrame;
  },
  resume(o) {
    exactKeys(o, ['t', 'from_seq', 'key', 'sig'], [], 'resume');
    dec(o.from_seq, 'resume.from_seq', 1n);
    hex(o.key, 'resume.key', 64);
    hex(o.sig, 'resume.sig', 128);
    return o as unknown as ResumeFrame;
  },
  result(o) {
    exactKeys(o, ['t', 'node', 'seq', 'pub', 'sealed', 'job'], [], 'result');
    node(o.node, 'result.node');
    dec(o.seq, 'result.seq', 1n);
    obj(o.pub, 'result.pub');
    b64(o.sealed, 'result.sealed', '', true);
    str(o.job, 'result.job', WIRE_LIMITS.maxJobIdLength);
    return o as unknown as ResultFrame;
  },
  capacity(o) {
    exactKeys(o, ['t', 'node', 'production', 'exhausted', 'orders_left'], [], 'capacity');
    node(o.node, 'capacity.node');
    oneOf(o.production, ['running', 'idle', 'stopped'], 'capacity.production');
    if (typeof o.exhausted !== 'boolean') fail('capacity.exhausted must be a boolean');
    if (o.orders_left !== '') dec(o.orders_left, 'capacity.orders_left', 0n);
    return o as unknown as CapacityFrame;
  },
};

/** Serialises a frame to its JSON text. */
export function encodeFrame(frame: Frame): string {
  return JSON.stringify(frame);
}

/** Parses and validates one frame of any type; throws FrameError. */
export function decodeFrame(data: string | Buffer | ArrayBuffer | Buffer[], maxBytes: number = WIRE_LIMITS.maxFrameBytes): Frame {
  return decodeOf(data, undefined, 'frame', maxBytes);
}

function textOf(data: string | Buffer | ArrayBuffer | Buffer[]): string {
  if (typeof data === 'string') return data;
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}

function decodeOf<F extends Frame>(
  data: string | Buffer | ArrayBuffer | Buffer[],
  allowed: ReadonlySet<FrameType> | undefined,
  direction: string,
  maxBytes: number = WIRE_LIMITS.maxFrameBytes,
): F {
  const text = textOf(data);
  if (text.length > maxBytes) fail(`${direction}: frame of ${text.length} bytes exceeds the ${maxBytes}-byte limit`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    fail(`${direction}: not valid JSON (${(e as Error).message})`);
  }
  const o = obj(parsed, `${direction}`);
  const t = o.t;
  if (typeof t !== 'string' || !Object.hasOwn(VALIDATORS, t)) fail(`${direction}: unknown frame type ${JSON.stringify(t)}`);
  if (allowed && !allowed.has(t as FrameType)) {
    fail(`${direction}: frame type '${t}' is not allowed here (expected ${[...allowed].join(', ')})`, typeof o.rid === 'string' ? o.rid : '');
  }
  return VALIDATORS[t as FrameType](o) as F;
}

function decoder<F extends Frame>(types: F['t'][], direction: string) {
  const allowed: ReadonlySet<FrameType> = new Set(types);
  return (data: string | Buffer | ArrayBuffer | Buffer[], maxBytes?: number): F => decodeOf<F>(data, allowed, direction, maxBytes);
}

/** Decoders per direction: each accepts only the frame types that may travel that way. */
const SEQUENCER_AUTH = ['auth_challenge', 'auth_ok', 'auth_refused'] as const;
export const decodeGatewayToSequencer = decoder<GatewayToSequencer>(['submit', 'challenge', 'auth'], 'gateway->sequencer');
export const decodeSequencerToGateway = decoder<SequencerToGateway>(['ack', 'nack', 'quote', 'proof', ...SEQUENCER_AUTH], 'sequencer->gateway');
export const decodeNodeToSequencer = decoder<NodeToSequencer>(['feed', 'progress', 'challenge', 'auth'], 'node->sequencer');
export const decodeSequencerToNode = decoder<SequencerToNode>(['quote', 'proof', 'op', 'nack', ...SEQUENCER_AUTH], 'sequencer->node');
export const decodeNodeToGateway = decoder<NodeToGateway>(['hello', 'result', 'capacity'], 'node->gateway');
export const decodeGatewayToNode = decoder<GatewayToNode>(['resume', 'auth_challenge', 'auth_refused'], 'gateway->node');
/** Anything a client may send the sequencer (gateway and node frames share one listener). */
export const decodeToSequencer = decoder<GatewayToSequencer | NodeToSequencer>(['submit', 'challenge', 'feed', 'progress', 'auth'], 'to-sequencer');
