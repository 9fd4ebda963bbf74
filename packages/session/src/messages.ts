// The encrypted plaintexts: EdgeSequencerRequest (client → server), NodeResponse (acks) and
// SequencerToEdgeMessage (channel pushes). Field names are the spec's (snake_case); enum values are
// the spec's strings; decimals are strings; nanosecond times are decimal strings of a uint64.
import { decodeMessage, encodeMessage, protoType } from './proto';
import { SessionError } from './errors';

export type Side = 'buy' | 'sell';
export type OrderType = 'market' | 'limit' | 'peg';
export type TimeInForce = 'GTC' | 'GTT' | 'IOC' | 'FOK';
export type PegReference = 'mid' | 'bid' | 'ask';
export type OrderStatus = 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELLED' | 'REJECTED';
export type OrderEventType =
  | 'open'
  | 'partial_fill'
  | 'filled'
  | 'cancelled'
  | 'rejected'
  | 'modified'
  | 'cancel_rejected'
  | 'modify_rejected';
export type PositionUpdateReason = 'fill' | 'mark_price' | 'funding' | 'liquidation' | 'closed' | 'settlement' | 'margin';

/** A decimal number as text, e.g. "65000.5" (never a float). */
export type DecimalString = string;
/** An unsigned 64-bit integer as decimal text, e.g. a nanosecond timestamp. */
export type U64String = string;

/** order.place input: the REST POST /orders body. */
export interface PlaceOrder {
  symbol: string;
  side: Side;
  type: OrderType;
  quantity: DecimalString;
  price?: DecimalString;
  time_in_force: TimeInForce;
  expiry_time?: U64String;
  aon?: boolean;
  min_fill_size?: DecimalString;
  client_order_id?: string;
  peg_reference?: PegReference;
  /** this order's leverage (1 to the instrument's max_leverage); absent: the account's leverage on the symbol */
  leverage?: number;
}

/** order.cancel input: exactly one of order_id / client_order_id. */
export interface CancelOrder {
  order_id?: string;
  client_order_id?: string;
  symbol?: string;
}

/** order.modify input: the target (one of order_id / client_order_id) and the fields to change. */
export interface ModifyOrder {
  order_id?: string;
  client_order_id?: string;
  symbol?: string;
  price?: DecimalString;
  quantity?: DecimalString;
  time_in_force?: TimeInForce;
  expiry_time?: U64String;
}

export type EdgeSequencerRequest = { place: PlaceOrder } | { cancel: CancelOrder } | { modify: ModifyOrder };

/** The acknowledgement of a trading op (code 0 = accepted). */
export interface Ack {
  code: number;
  message: string;
  order_id: string;
  client_order_id: string;
  status?: OrderStatus;
  /** A reject_reason of the spec; '' when none. */
  reject_reason: string;
}

export type NodeResponse = { ack: Ack };

/** The spec's order object plus message_type. Absent optional fields are the spec's nulls. */
export interface OrderUpdate {
  message_type: OrderEventType;
  order_id: string;
  client_order_id?: string;
  symbol: string;
  side: Side;
  type: OrderType;
  time_in_force: TimeInForce;
  price?: DecimalString;
  quantity: DecimalString;
  filled_quantity: DecimalString;
  remaining_quantity: DecimalString;
  average_fill_price?: DecimalString;
  last_fill_qty?: DecimalString;
  last_fill_price?: DecimalString;
  status: OrderStatus;
  in_time_ns: U64String;
  out_time_ns: U64String;
  cancel_reason?: string;
  reject_reason?: string;
}

/** The spec's position object plus update_reason (absent in snapshot frames). */
export interface PositionUpdate {
  update_reason?: PositionUpdateReason;
  position_id: string;
  symbol: string;
  side: string;
  size: DecimalString;
  entry_price: DecimalString;
  mark_price: DecimalString;
  margin: DecimalString;
  leverage: DecimalString;
  unrealized_pnl: DecimalString;
  realized_pnl: DecimalString;
  funding_accrued: DecimalString;
  liquidation_price: DecimalString;
  status: string;
  updated_at: string;
}

/** Overall venue health as the gateway sees it (docs/websocket.md, "system_health"). */
export type HealthStatus = 'ok' | 'degraded' | 'down';
export const HEALTH_STATUSES: readonly HealthStatus[] = ['ok', 'degraded', 'down'];
/**
 * Causes a system_health message names today. `sequencer_down` and `quorum_lost` make the status
 * `down`, the others `degraded`. A client should show an unknown cause as it is (the list may grow).
 */
export type HealthReason = 'sequencer_down' | 'quorum_lost' | 'nodes_missing' | 'results_stalled' | 'journal_slow' | 'preprocessing_stopped' | 'reserve_exhausted';

/** Tenebra's system_health payload (the spec leaves it open; proto/session.proto SystemHealth). */
export interface SystemHealth {
  status: HealthStatus;
  /** why, for people; '' when ok */
  message: string;
  time_ns: U64String;
  /** committee nodes with an authenticated results link to the gateway */
  live_nodes: number;
  /** n */
  nodes_total: number;
  /** t + 1 */
  nodes_needed: number;
  sequencer_link: boolean;
  /** sequenced ops without an applied outcome, floored to a multiple of 10 (0: fewer than 10) */
  results_backlog: U64String;
  /** HealthReason values; [] when ok */
  reasons: string[];
  /**
   * The committee's preprocessing as its nodes report it (docs/decisions/0016-outage-capacity.md):
   * `stopped` while nodes are down (the reserve only shrinks), `exhausted` once matching waits for it;
   * absent before any node reported.
   */
  preprocessing?: 'running' | 'idle' | 'stopped' | 'exhausted';
  /** ops the reserve still covers at the measured cost per op, floored to a multiple of 10; absent while unknown */
  reserve_orders?: U64String;
}

export type SequencerToEdgeMessage =
  | { order_update: OrderUpdate }
  | { position_update: PositionUpdate }
  | { system_health: SystemHealth };

const EDGE_REQUEST = protoType('EdgeSequencerRequest');
const NODE_RESPONSE = protoType('NodeResponse');
const TO_EDGE = protoType('SequencerToEdgeMessage');

function exactlyOne(obj: Record<string, unknown>, keys: readonly string[], what: string): string {
  const present = keys.filter((k) => obj[k] !== undefined && obj[k] !== null);
  if (present.length !== 1) throw new SessionError('invalid_frame', `${what} must hold exactly one of ${keys.join(', ')}`);
  return present[0] as string;
}

function requireKeys(obj: Record<string, unknown>, keys: readonly string[], what: string): void {
  for (const k of keys) {
    if (obj[k] === undefined || obj[k] === '') throw new SessionError('invalid_frame', `${what}.${k} is required`);
  }
}

/** Which op an EdgeSequencerRequest is: 'place', 'cancel' or 'modify'. */
export function requestKind(r: EdgeSequencerRequest): 'place' | 'cancel' | 'modify' {
  return exactlyOne(r as Record<string, unknown>, ['place', 'cancel', 'modify'], 'EdgeSequencerRequest') as 'place' | 'cancel' | 'modify';
}

/** Protobuf bytes of a request plaintext. Throws `invalid_frame` for a malformed request. */
export function encodeEdgeSequencerRequest(r: EdgeSequencerRequest): Uint8Array {
  const kind = requestKind(r);
  if (kind !== 'place') {
    const target = (r as unknown as Record<string, Record<string, unknown>>)[kind] as Record<string, unknown>;
    exactlyOne(target, ['order_id', 'client_order_id'], kind);
  }
  return encodeMessage(EDGE_REQUEST, r as unknown as Record<string, unknown>);
}

/** The request plaintext of protobuf bytes; checks that one op with its required fields is present. */
export function decodeEdgeSequencerRequest(bytes: Uint8Array): EdgeSequencerRequest {
  const r = decodeMessage(EDGE_REQUEST, bytes);
  const kind = exactlyOne(r, ['place', 'cancel', 'modify'], 'EdgeSequencerRequest');
  const body = r[kind] as Record<string, unknown>;
  if (kind === 'place') requireKeys(body, ['symbol', 'side', 'type', 'quantity', 'time_in_force'], 'place');
  else exactlyOne(body, ['order_id', 'client_order_id'], kind);
  // Strings that proto3 leaves at '' are "absent" in the TS shape.
  for (const k of ['symbol', 'client_order_id']) if (kind !== 'place' && body[k] === '') delete body[k];
  if (kind === 'place' && body['client_order_id'] === '') delete body['client_order_id'];
  if (kind === 'place' && body['aon'] === false) delete body['aon'];
  return r as unknown as EdgeSequencerRequest;
}

/** Protobuf bytes of an ack plaintext. */
export function encodeNodeResponse(r: NodeResponse): Uint8Array {
  exactlyOne(r as Record<string, unknown>, ['ack'], 'NodeResponse');
  return encodeMessage(NODE_RESPONSE, r as unknown as Record<string, unknown>);
}

/** The ack plaintext of protobuf bytes. */
export function decodeNodeResponse(bytes: Uint8Array): NodeResponse {
  const r = decodeMessage(NODE_RESPONSE, bytes);
  exactlyOne(r, ['ack'], 'NodeResponse');
  return r as unknown as NodeResponse;
}

/** Protobuf bytes of a push plaintext. */
export function encodeSequencerToEdgeMessage(m: SequencerToEdgeMessage): Uint8Array {
  exactlyOne(m as Record<string, unknown>, ['order_update', 'position_update', 'system_health'], 'SequencerToEdgeMessage');
  return encodeMessage(TO_EDGE, m as unknown as Record<string, unknown>);
}

/** The push plaintext of protobuf bytes; an order update must carry message_type, side, type, status. */
export function decodeSequencerToEdgeMessage(bytes: Uint8Array): SequencerToEdgeMessage {
  const m = decodeMessage(TO_EDGE, bytes);
  const kind = exactlyOne(m, ['order_update', 'position_update', 'system_health'], 'SequencerToEdgeMessage');
  if (kind === 'order_update') {
    requireKeys(m[kind] as Record<string, unknown>, ['message_type', 'order_id', 'side', 'type', 'time_in_force', 'status'], 'order_update');
  }
  if (kind === 'system_health') {
    const status = (m[kind] as Record<string, unknown>)['status'];
    if (!(HEALTH_STATUSES as readonly unknown[]).includes(status)) {
      throw new SessionError('invalid_frame', `system_health.status must be one of ${HEALTH_STATUSES.join(', ')}`);
    }
  }
  return m as unknown as SequencerToEdgeMessage;
}

/** The header message_type that goes with a push plaintext. */
export function messageTypeOf(m: SequencerToEdgeMessage): 'order_update' | 'position_update' | 'system_health' {
  return exactlyOne(m as Record<string, unknown>, ['order_update', 'position_update', 'system_health'], 'SequencerToEdgeMessage') as
    | 'order_update'
    | 'position_update'
    | 'system_health';
}
