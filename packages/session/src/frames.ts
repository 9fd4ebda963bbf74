// JSON envelopes of encrypted frames (spec: Authentication, "Request envelope" / "Response envelope"):
//   request  {id, op, args: {header: {symbol_id, request_type, nonce, body_length}, ciphertext}}
//   response {id, op, code: 0, data: {header: {message_type, body_length, nonce, fencing_epoch}, ciphertext}}
//   push     {channel, type, seq, snapshot_complete, data: {header: {...as response}, ciphertext}}
// ciphertext is standard base64 of ciphertext || tag. Enum values in the JSON header are the spec's
// strings ('place', 'ack', ...); parsers also accept the proto value name or the number. user_uuid is
// never sent: both sides take it from the login-bound account; a user_uuid in the JSON is ignored.
import { fromBase64, toBase64 } from './bytes';
import {
  ClientSessionCipher,
  ServerSessionCipher,
  type RequestHeaderJson,
  type ResponseHeaderJson,
  type SealedRequest,
  type SealedResponse,
} from './cipher';
import { SessionError } from './errors';
import { MESSAGE_TYPES, REQUEST_TYPES, requestTypeOfOp, type MessageTypeName, type RequestTypeName } from './headers';
import {
  decodeEdgeSequencerRequest,
  decodeNodeResponse,
  decodeSequencerToEdgeMessage,
  encodeEdgeSequencerRequest,
  encodeNodeResponse,
  encodeSequencerToEdgeMessage,
  messageTypeOf,
  requestKind,
  type EdgeSequencerRequest,
  type NodeResponse,
  type SequencerToEdgeMessage,
} from './messages';
import { enumValueName } from './proto';

export type TradingOp = 'order.place' | 'order.cancel' | 'order.modify';
export const TRADING_OPS: readonly TradingOp[] = ['order.place', 'order.cancel', 'order.modify'];

export interface EncryptedRequestFrame {
  id: string;
  op: TradingOp;
  args: { header: RequestHeaderJson; ciphertext: string };
}

export interface EncryptedData {
  header: ResponseHeaderJson;
  ciphertext: string;
}

export interface EncryptedResponseFrame {
  id: string;
  op: string;
  code: 0;
  data: EncryptedData;
}

export interface PushFrame<D = unknown> {
  channel: string;
  type: 'snapshot' | 'update';
  seq: number;
  snapshot_complete: boolean;
  data: D;
}

function obj(v: unknown, what: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new SessionError('invalid_frame', `${what} must be an object`);
  return v as Record<string, unknown>;
}

function u32(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffff_ffff) throw new SessionError('invalid_frame', `${what} must be a uint32`);
  return v;
}

function enumField<T extends string>(v: unknown, enumName: string, values: readonly T[], what: string): T {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= values.length) return values[v - 1] as T;
  if (typeof v === 'string') {
    const direct = values.find((x) => x === v);
    if (direct) return direct;
    const byProtoName = values.find((x) => enumValueName(enumName, x) === v);
    if (byProtoName) return byProtoName;
  }
  throw new SessionError('invalid_frame', `${what} must be one of ${values.join(', ')}`);
}

/** The request header of a JSON envelope, validated (uint32 fields, known request_type). */
export function parseRequestHeader(v: unknown): RequestHeaderJson {
  const h = obj(v, 'args.header');
  return {
    symbol_id: u32(h['symbol_id'] ?? 0, 'header.symbol_id'),
    request_type: enumField(h['request_type'], 'RequestType', REQUEST_TYPES, 'header.request_type') as RequestTypeName,
    nonce: u32(h['nonce'] ?? 0, 'header.nonce'),
    body_length: u32(h['body_length'], 'header.body_length'),
  };
}

/** The response/push header of a JSON envelope, validated. */
export function parseResponseHeader(v: unknown): ResponseHeaderJson {
  const h = obj(v, 'data.header');
  return {
    message_type: enumField(h['message_type'], 'MessageType', MESSAGE_TYPES, 'header.message_type') as MessageTypeName,
    body_length: u32(h['body_length'], 'header.body_length'),
    nonce: u32(h['nonce'] ?? 0, 'header.nonce'),
    fencing_epoch: u32(h['fencing_epoch'] ?? 0, 'header.fencing_epoch'),
  };
}

/** `{header, ciphertext}` of a request's args. */
export function parseEncryptedArgs(args: unknown): { header: RequestHeaderJson; ciphertext: Uint8Array } {
  const a = obj(args, 'args');
  return { header: parseRequestHeader(a['header']), ciphertext: fromBase64(a['ciphertext'] as string, 'ciphertext') };
}

/** `{header, ciphertext}` of a response's or push's data. */
export function parseEncryptedData(data: unknown): { header: ResponseHeaderJson; ciphertext: Uint8Array } {
  const d = obj(data, 'data');
  return { header: parseResponseHeader(d['header']), ciphertext: fromBase64(d['ciphertext'] as string, 'ciphertext') };
}

/** True when a frame's data/args carries an encrypted body ({header, ciphertext}). */
export function isEncryptedBody(v: unknown): boolean {
  return v !== null && typeof v === 'object' && 'header' in v && 'ciphertext' in v;
}

/** The request envelope of a sealed request. */
export function requestFrame(id: string, op: TradingOp, sealed: SealedRequest): EncryptedRequestFrame {
  return { id, op, args: { header: { ...sealed.header }, ciphertext: toBase64(sealed.ciphertext) } };
}

/** The `data` of a sealed response or push. */
export function encryptedData(sealed: SealedResponse): EncryptedData {
  return { header: { ...sealed.header }, ciphertext: toBase64(sealed.ciphertext) };
}

// ---------------------------------------------------------------------------------------------
// Client side

/** Encrypts a trading op into its request envelope; the op must match the request's kind. */
export function encryptRequest(cipher: ClientSessionCipher, id: string, symbolId: number, request: EdgeSequencerRequest): EncryptedRequestFrame {
  const kind = requestKind(request);
  const op = `order.${kind}` as TradingOp;
  const sealed = cipher.sealRequest(kind, symbolId, encodeEdgeSequencerRequest(request));
  return requestFrame(id, op, sealed);
}

/** Decrypts the data of an encrypted response to a trading op (header message_type must be ack). */
export function decryptResponse(cipher: ClientSessionCipher, data: unknown): NodeResponse {
  const { header, ciphertext } = parseEncryptedData(data);
  const plain = cipher.openResponse(header, ciphertext);
  if (header.message_type !== 'ack') throw new SessionError('invalid_frame', `a response carries message_type ${header.message_type}, not ack`);
  return decodeNodeResponse(plain);
}

/** Decrypts the data of an encrypted push; the plaintext must match the header's message_type. */
export function decryptPush(cipher: ClientSessionCipher, data: unknown): SequencerToEdgeMessage {
  const { header, ciphertext } = parseEncryptedData(data);
  const plain = cipher.openResponse(header, ciphertext);
  const msg = decodeSequencerToEdgeMessage(plain);
  if (messageTypeOf(msg) !== header.message_type) throw new SessionError('invalid_frame', `push plaintext does not match message_type ${header.message_type}`);
  return msg;
}

// ---------------------------------------------------------------------------------------------
// Server side

/**
 * Decrypts a trading-op envelope: op must be a trading op, header.request_type must match it, and the
 * plaintext must be that op. Throws SessionError with the spec's code.
 */
export function decryptRequest(cipher: ServerSessionCipher, frame: { op: unknown; args: unknown }): { op: TradingOp; header: RequestHeaderJson; request: EdgeSequencerRequest } {
  const op = typeof frame.op === 'string' ? frame.op : '';
  const expected = requestTypeOfOp(op);
  if (!expected) throw new SessionError('invalid_frame', `'${op}' is not a trading op`);
  const { header, ciphertext } = parseEncryptedArgs(frame.args);
  const plain = cipher.openRequest(header, ciphertext, op);
  const request = decodeEdgeSequencerRequest(plain);
  if (requestKind(request) !== expected) throw new SessionError('invalid_frame', `plaintext is a ${requestKind(request)}, op is ${op}`);
  return { op: op as TradingOp, header, request };
}

/** The encrypted response envelope of an ack. */
export function encryptResponse(cipher: ServerSessionCipher, id: string, op: string, response: NodeResponse): EncryptedResponseFrame {
  return { id, op, code: 0, data: encryptedData(cipher.sealResponse('ack', encodeNodeResponse(response))) };
}

/** The encrypted push frame of a channel message. */
export function encryptPush(
  cipher: ServerSessionCipher,
  channel: string,
  type: 'snapshot' | 'update',
  seq: number,
  snapshotComplete: boolean,
  message: SequencerToEdgeMessage,
): PushFrame<EncryptedData> {
  const sealed = cipher.sealResponse(messageTypeOf(message), encodeSequencerToEdgeMessage(message));
  return { channel, type, seq, snapshot_complete: snapshotComplete, data: encryptedData(sealed) };
}
