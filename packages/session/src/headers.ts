// The two associated-data headers. Their canonical protobuf bytes are the GCM AAD, so both sides and
// any independent encoder must produce exactly these bytes (README: "Byte layout").
import { decodeMessage, encodeMessage, protoType } from './proto';
import { SessionError } from './errors';

export type RequestTypeName = 'place' | 'cancel' | 'modify';
export type MessageTypeName = 'ack' | 'order_update' | 'position_update' | 'system_health';

export const REQUEST_TYPES: readonly RequestTypeName[] = ['place', 'cancel', 'modify'];
export const MESSAGE_TYPES: readonly MessageTypeName[] = ['ack', 'order_update', 'position_update', 'system_health'];

/** OrderHeader: AAD of a client-to-server trading op (fields in the spec's order, numbered 1..5). */
export interface OrderHeader {
  user_uuid: Uint8Array;
  symbol_id: number;
  request_type: RequestTypeName;
  nonce: number;
  body_length: number;
}

/** ResponseHeader: AAD of a server-to-client response or push (fields numbered 1..5). */
export interface ResponseHeader {
  user_uuid: Uint8Array;
  message_type: MessageTypeName;
  body_length: number;
  nonce: number;
  fencing_epoch: number;
}

const ORDER_HEADER = protoType('OrderHeader');
const RESPONSE_HEADER = protoType('ResponseHeader');

function checkU32(v: number, what: string): void {
  if (!Number.isInteger(v) || v < 0 || v > 0xffff_ffff) throw new SessionError('invalid_frame', `${what} must be a uint32`);
}

function checkUuid(u: Uint8Array): void {
  if (!(u instanceof Uint8Array) || u.length !== 16) throw new SessionError('invalid_frame', 'user_uuid must be 16 bytes');
}

/** Canonical protobuf bytes of an OrderHeader. */
export function encodeOrderHeader(h: OrderHeader): Uint8Array {
  checkUuid(h.user_uuid);
  checkU32(h.symbol_id, 'symbol_id');
  checkU32(h.nonce, 'nonce');
  checkU32(h.body_length, 'body_length');
  return encodeMessage(ORDER_HEADER, { ...h });
}

/** Canonical protobuf bytes of a ResponseHeader. */
export function encodeResponseHeader(h: ResponseHeader): Uint8Array {
  checkUuid(h.user_uuid);
  checkU32(h.body_length, 'body_length');
  checkU32(h.nonce, 'nonce');
  checkU32(h.fencing_epoch, 'fencing_epoch');
  return encodeMessage(RESPONSE_HEADER, { ...h });
}

/** An OrderHeader from protobuf bytes (absent fields read as 0). */
export function decodeOrderHeader(bytes: Uint8Array): Partial<OrderHeader> {
  return decodeMessage(ORDER_HEADER, bytes) as Partial<OrderHeader>;
}

/** A ResponseHeader from protobuf bytes (absent fields read as 0). */
export function decodeResponseHeader(bytes: Uint8Array): Partial<ResponseHeader> {
  return decodeMessage(RESPONSE_HEADER, bytes) as Partial<ResponseHeader>;
}

/** The request type an outer op implies (order.place → place, ...), or undefined for other ops. */
export function requestTypeOfOp(op: string): RequestTypeName | undefined {
  switch (op) {
    case 'order.place':
      return 'place';
    case 'order.cancel':
      return 'cancel';
    case 'order.modify':
      return 'modify';
    default:
      return undefined;
  }
}

/** The outer op of a request type. */
export function opOfRequestType(t: RequestTypeName): 'order.place' | 'order.cancel' | 'order.modify' {
  return `order.${t}`;
}
