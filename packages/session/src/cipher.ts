// AES-256-GCM frames of one session, one cipher object per side (client or server).
//
// Counters: the send counter starts at 0 and rises by exactly 1 per sealed frame; sealing after
// counter 2^32-1 was used is `nonce_overflow`. The receive side keeps `next`, the lowest counter it
// will still accept, and accepts counter c only when  next <= c <= next + maxSkip:
//   - c < next: a reused or regressed counter (a replay) → `nonce_out_of_order`;
//   - c > next + maxSkip: "jumped unacceptably" → `nonce_out_of_order`.
// `next` moves to c + 1 only after the GCM tag verified, so a forged or altered frame can neither
// burn counters nor desynchronise the session, and the honest frame after it still opens: the socket
// stays usable after a `decrypt_failed`. The window (default 32, i.e. at most 32 consecutive frames of
// the peer that we refused before decrypting them) tolerates exactly that; a larger jump means the
// two sides disagree about the session and it must be rekeyed. maxSkip 0 makes any gap an error.
import crypto from 'node:crypto';
import { parseUserUuid } from './bytes';
import { SessionError } from './errors';
import {
  encodeOrderHeader,
  encodeResponseHeader,
  type MessageTypeName,
  type RequestTypeName,
} from './headers';
import { buildNonce, MAX_COUNTER, parseSessionId } from './nonce';

export const TAG_BYTES = 16;
/** Upper bound of `maxSkip`: far more than any frame budget per second of the spec's tiers. */
export const MAX_SKIP_LIMIT = 4096;
/** Default receive window: counters next..next+32 are accepted. */
export const DEFAULT_MAX_SKIP = 32;

export interface CipherOptions {
  /** Counter of the first frame this side sends (default 0; only test vectors set it). */
  sendCounter?: number;
  /** Counter the first received frame must carry (default 0; only test vectors set it). */
  recvCounter?: number;
  /** How far the received counter may jump past the expected one (default DEFAULT_MAX_SKIP = 32). */
  maxSkip?: number;
}

/** The JSON header of a request envelope: OrderHeader without user_uuid. */
export interface RequestHeaderJson {
  symbol_id: number;
  request_type: RequestTypeName;
  nonce: number;
  body_length: number;
}

/** The JSON header of a response or push envelope: ResponseHeader without user_uuid. */
export interface ResponseHeaderJson {
  message_type: MessageTypeName;
  body_length: number;
  nonce: number;
  fencing_epoch: number;
}

export interface SealedRequest {
  header: RequestHeaderJson;
  ciphertext: Uint8Array;
}

export interface SealedResponse {
  header: ResponseHeaderJson;
  ciphertext: Uint8Array;
}

function isU32(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_COUNTER;
}

/** State shared by both sides: the key, the session id, the account and the two counters. */
export abstract class SessionCipher {
  readonly sessionId: bigint;
  readonly userUuid: Uint8Array;
  readonly maxSkip: number;
  readonly #key: crypto.KeyObject;
  #send: number;
  #recv: number;

  constructor(key: Uint8Array, sessionId: bigint | string, userUuid: Uint8Array | string, options: CipherOptions = {}) {
    if (key.length !== 32) throw new TypeError('session key must be 32 bytes');
    this.#key = crypto.createSecretKey(key);
    this.sessionId = typeof sessionId === 'string' ? parseSessionId(sessionId) : sessionId;
    if (this.sessionId < 0n || this.sessionId >= 1n << 64n) throw new RangeError('session id out of u64 range');
    this.userUuid = typeof userUuid === 'string' ? parseUserUuid(userUuid) : Uint8Array.from(userUuid);
    if (this.userUuid.length !== 16) throw new TypeError('user_uuid must be 16 bytes');
    this.#send = options.sendCounter ?? 0;
    this.#recv = options.recvCounter ?? 0;
    this.maxSkip = options.maxSkip ?? DEFAULT_MAX_SKIP;
    if (!isU32(this.#send) || !isU32(this.#recv)) throw new RangeError('counters must be uint32');
    if (!Number.isInteger(this.maxSkip) || this.maxSkip < 0 || this.maxSkip > MAX_SKIP_LIMIT) throw new RangeError(`maxSkip must be 0..${MAX_SKIP_LIMIT}`);
  }

  /** Counter the next sealed frame will use (2^32 once exhausted). */
  get sendCounter(): number {
    return this.#send;
  }

  /** Lowest counter the next received frame may carry. */
  get recvCounter(): number {
    return this.#recv;
  }

  /** True when no counter is left: the next seal throws `nonce_overflow`; rekey first. */
  get exhausted(): boolean {
    return this.#send > MAX_COUNTER;
  }

  /** Seals plaintext under the next send counter; `aadOf(counter, bodyLength)` builds the header bytes. */
  protected sealFrame(aadOf: (counter: number, bodyLength: number) => Uint8Array, plaintext: Uint8Array): { counter: number; bodyLength: number; ciphertext: Uint8Array } {
    const counter = this.#send;
    if (counter > MAX_COUNTER) throw new SessionError('nonce_overflow', 'send counter would exceed 2^32-1; rerun session.setup');
    const bodyLength = plaintext.length + TAG_BYTES;
    if (bodyLength > MAX_COUNTER) throw new RangeError('plaintext too long');
    const aad = aadOf(counter, bodyLength);
    const c = crypto.createCipheriv('aes-256-gcm', this.#key, buildNonce(this.sessionId, counter), { authTagLength: TAG_BYTES });
    c.setAAD(aad);
    const body = Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]);
    // Consume the counter only once the frame exists, so a failed seal never skips a counter.
    this.#send = counter + 1;
    return { counter, bodyLength, ciphertext: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) };
  }

  /** Checks counter against the receive window, opens the frame with aad, then advances the window. */
  protected openFrame(counter: unknown, bodyLength: unknown, aadOf: (counter: number) => Uint8Array, ciphertext: Uint8Array): Uint8Array {
    if (!isU32(counter)) throw new SessionError('invalid_frame', 'header.nonce must be a uint32');
    if (counter < this.#recv) throw new SessionError('nonce_out_of_order', `counter ${counter} already used (expected ${this.#recv})`);
    if (counter > this.#recv + this.maxSkip) throw new SessionError('nonce_out_of_order', `counter ${counter} jumps past the expected ${this.#recv}`);
    if (ciphertext.length < TAG_BYTES) throw new SessionError('decrypt_failed', 'ciphertext shorter than the tag');
    if (bodyLength !== ciphertext.length) throw new SessionError('decrypt_failed', 'header.body_length does not match the ciphertext');
    const d = crypto.createDecipheriv('aes-256-gcm', this.#key, buildNonce(this.sessionId, counter), { authTagLength: TAG_BYTES });
    d.setAAD(aadOf(counter));
    d.setAuthTag(ciphertext.subarray(ciphertext.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([d.update(ciphertext.subarray(0, ciphertext.length - TAG_BYTES)), d.final()]);
    } catch {
      throw new SessionError('decrypt_failed', 'GCM tag check failed');
    }
    this.#recv = counter + 1;
    return new Uint8Array(plain.buffer, plain.byteOffset, plain.byteLength);
  }
}

/** The client's side: seals OrderHeader-bound requests, opens ResponseHeader-bound responses and pushes. */
export class ClientSessionCipher extends SessionCipher {
  #epoch: number | undefined;

  constructor(key: Uint8Array, sessionId: bigint | string, userUuid: Uint8Array | string, options: CipherOptions & { fencingEpoch?: number } = {}) {
    super(key, sessionId, userUuid, options);
    if (options.fencingEpoch !== undefined && !isU32(options.fencingEpoch)) throw new RangeError('fencing epoch must be uint32');
    this.#epoch = options.fencingEpoch;
  }

  /** The fencing epoch this session is pinned to (from setup, else the first authentic frame). */
  get fencingEpoch(): number | undefined {
    return this.#epoch;
  }

  /** Encrypts a request plaintext; the header's body_length is plaintext length + 16. */
  sealRequest(requestType: RequestTypeName, symbolId: number, plaintext: Uint8Array): SealedRequest {
    if (!isU32(symbolId)) throw new SessionError('invalid_frame', 'symbol_id must be a uint32');
    const { counter, bodyLength, ciphertext } = this.sealFrame(
      (nonce, body_length) => encodeOrderHeader({ user_uuid: this.userUuid, symbol_id: symbolId, request_type: requestType, nonce, body_length }),
      plaintext,
    );
    return { header: { symbol_id: symbolId, request_type: requestType, nonce: counter, body_length: bodyLength }, ciphertext };
  }

  /**
   * Decrypts a response or push. Throws nonce_out_of_order (replay/jump), decrypt_failed (tag or
   * header mismatch) or session_expired (authentic frame from another fencing epoch).
   */
  openResponse(header: ResponseHeaderJson, ciphertext: Uint8Array): Uint8Array {
    if (!isU32(header.fencing_epoch)) throw new SessionError('invalid_frame', 'header.fencing_epoch must be a uint32');
    const plain = this.openFrame(
      header.nonce,
      header.body_length,
      (nonce) =>
        encodeResponseHeader({
          user_uuid: this.userUuid,
          message_type: header.message_type,
          body_length: ciphertext.length,
          nonce,
          fencing_epoch: header.fencing_epoch,
        }),
      ciphertext,
    );
    // Checked after the tag verified, so only the real gateway can move us off the epoch.
    if (this.#epoch === undefined) this.#epoch = header.fencing_epoch;
    else if (header.fencing_epoch !== this.#epoch) {
      throw new SessionError('session_expired', `fencing epoch moved from ${this.#epoch} to ${header.fencing_epoch}; rerun session.setup`);
    }
    return plain;
  }
}

/** The server's side: opens OrderHeader-bound requests, seals ResponseHeader-bound responses and pushes. */
export class ServerSessionCipher extends SessionCipher {
  /** Epoch written into every ResponseHeader; the gateway moves it when it fences older sessions. */
  fencingEpoch: number;

  constructor(key: Uint8Array, sessionId: bigint | string, userUuid: Uint8Array | string, options: CipherOptions & { fencingEpoch?: number } = {}) {
    super(key, sessionId, userUuid, options);
    this.fencingEpoch = options.fencingEpoch ?? 0;
    if (!isU32(this.fencingEpoch)) throw new RangeError('fencing epoch must be uint32');
  }

  /**
   * Decrypts a request. `op`, when given, must imply the header's request_type. The AAD is rebuilt
   * from the session's own user_uuid, so a frame sealed for another account fails with decrypt_failed.
   */
  openRequest(header: RequestHeaderJson, ciphertext: Uint8Array, op?: string): Uint8Array {
    if (!isU32(header.symbol_id)) throw new SessionError('invalid_frame', 'header.symbol_id must be a uint32');
    if (op !== undefined && `order.${header.request_type}` !== op) {
      throw new SessionError('decrypt_failed', `header.request_type '${header.request_type}' does not match op '${op}'`);
    }
    return this.openFrame(
      header.nonce,
      header.body_length,
      (nonce) =>
        encodeOrderHeader({
          user_uuid: this.userUuid,
          symbol_id: header.symbol_id,
          request_type: header.request_type,
          nonce,
          body_length: ciphertext.length,
        }),
      ciphertext,
    );
  }

  /** Encrypts a response or push plaintext under the next server counter. */
  sealResponse(messageType: MessageTypeName, plaintext: Uint8Array): SealedResponse {
    const epoch = this.fencingEpoch;
    const { counter, bodyLength, ciphertext } = this.sealFrame(
      (nonce, body_length) => encodeResponseHeader({ user_uuid: this.userUuid, message_type: messageType, body_length, nonce, fencing_epoch: epoch }),
      plaintext,
    );
    return { header: { message_type: messageType, body_length: bodyLength, nonce: counter, fencing_epoch: epoch }, ciphertext };
  }
}
