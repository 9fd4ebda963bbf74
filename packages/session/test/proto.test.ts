// The .proto against the spec's tables and the numbering rules, and the message codecs.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ENUM_SPEC_VALUES,
  SESSION_PROTO_PATH,
  SessionError,
  assertEnumNumbering,
  decodeEdgeSequencerRequest,
  decodeNodeResponse,
  decodeSequencerToEdgeMessage,
  encodeEdgeSequencerRequest,
  encodeNodeResponse,
  encodeSequencerToEdgeMessage,
  enumValueName,
  protoEnum,
  protoType,
  toHex,
  type EdgeSequencerRequest,
  type OrderUpdate,
  type PositionUpdate,
  type SequencerToEdgeMessage,
} from '@tenebra/session';

function fields(name: string): Array<[string, number]> {
  return protoType(name).fieldsArray.map((f) => [f.name, f.id]);
}

function numbered(names: string[]): Array<[string, number]> {
  return names.map((n, i) => [n, i + 1]);
}

describe('session.proto follows the spec and the numbering rules', () => {
  it('headers: the spec tables in order, numbered 1, 2, 3, ...', () => {
    expect(fields('OrderHeader')).toEqual(numbered(['user_uuid', 'symbol_id', 'request_type', 'nonce', 'body_length']));
    expect(fields('ResponseHeader')).toEqual(numbered(['user_uuid', 'message_type', 'body_length', 'nonce', 'fencing_epoch']));
    expect(protoType('OrderHeader').fields['user_uuid']!.type).toBe('bytes');
    expect(protoType('OrderHeader').fields['request_type']!.type).toBe('RequestType');
    expect(protoType('ResponseHeader').fields['message_type']!.type).toBe('MessageType');
    for (const f of ['symbol_id', 'nonce', 'body_length']) expect(protoType('OrderHeader').fields[f]!.type).toBe('uint32');
    for (const f of ['body_length', 'nonce', 'fencing_epoch']) expect(protoType('ResponseHeader').fields[f]!.type).toBe('uint32');
  });

  it('enums: <ENUM>_UNSPECIFIED = 0, then the spec values in order', () => {
    assertEnumNumbering();
    expect(protoEnum('RequestType').values).toEqual({ REQUEST_TYPE_UNSPECIFIED: 0, REQUEST_TYPE_PLACE: 1, REQUEST_TYPE_CANCEL: 2, REQUEST_TYPE_MODIFY: 3 });
    expect(protoEnum('MessageType').values).toEqual({
      MESSAGE_TYPE_UNSPECIFIED: 0,
      MESSAGE_TYPE_ACK: 1,
      MESSAGE_TYPE_ORDER_UPDATE: 2,
      MESSAGE_TYPE_POSITION_UPDATE: 3,
      MESSAGE_TYPE_SYSTEM_HEALTH: 4,
    });
    expect(enumValueName('OrderEventType', 'partial_fill')).toBe('ORDER_EVENT_TYPE_PARTIAL_FILL');
    // Every enum declared in the file is covered by the table.
    const declared = [...readFileSync(SESSION_PROTO_PATH, 'utf8').matchAll(/^enum (\w+)/gm)].map((m) => m[1]);
    expect(declared.sort()).toEqual(Object.keys(ENUM_SPEC_VALUES).sort());
  });

  it('order and position messages carry the spec objects field for field, in order', () => {
    expect(fields('OrderUpdate').map((f) => f[0])).toEqual([
      'message_type', 'order_id', 'client_order_id', 'symbol', 'side', 'type', 'time_in_force', 'price', 'quantity', 'filled_quantity',
      'remaining_quantity', 'average_fill_price', 'last_fill_qty', 'last_fill_price', 'status', 'in_time_ns', 'out_time_ns', 'cancel_reason', 'reject_reason',
    ]);
    expect(fields('PositionUpdate').map((f) => f[0])).toEqual([
      'update_reason', 'position_id', 'symbol', 'side', 'size', 'entry_price', 'mark_price', 'margin', 'leverage', 'unrealized_pnl',
      'realized_pnl', 'funding_accrued', 'liquidation_price', 'status', 'updated_at',
    ]);
    expect(fields('PlaceOrder').map((f) => f[0])).toEqual([
      'symbol', 'side', 'type', 'quantity', 'price', 'time_in_force', 'expiry_time', 'aon', 'min_fill_size', 'client_order_id', 'peg_reference',
      'leverage', // ours, after the spec's fields (docs/orders.md)
    ]);
    expect(fields('Ack').map((f) => f[0])).toEqual(['code', 'message', 'order_id', 'client_order_id', 'status', 'reject_reason']);
    expect(fields('SystemHealth').map((f) => f[0])).toEqual([
      'status', 'message', 'time_ns', 'live_nodes', 'nodes_total', 'nodes_needed', 'sequencer_link', 'results_backlog', 'reasons',
      'preprocessing', 'reserve_orders',
    ]);
  });
});

const fullOrder: OrderUpdate = {
  message_type: 'partial_fill', order_id: '184467440737095516', client_order_id: 'c-1', symbol: 'BTC-USDC-PERP', side: 'sell', type: 'limit',
  time_in_force: 'GTT', price: '65000.1', quantity: '2', filled_quantity: '0.5', remaining_quantity: '1.5', average_fill_price: '65000.1',
  last_fill_qty: '0.5', last_fill_price: '65000.1', status: 'PARTIALLY_FILLED', in_time_ns: '18446744073709551615', out_time_ns: '1736899200123456789',
  cancel_reason: 'USER_REQUESTED', reject_reason: 'INVALID_PRICE',
};
const fullPosition: PositionUpdate = {
  update_reason: 'settlement', position_id: 'p-9', symbol: 'ETH-USDC-PERP', side: 'long', size: '3.5', entry_price: '3000', mark_price: '3010.5',
  margin: '1050', leverage: '10', unrealized_pnl: '36.75', realized_pnl: '-1.2', funding_accrued: '-0.004', liquidation_price: '2857.1',
  status: 'OPEN', updated_at: '2025-01-15T00:00:00.000Z',
};

describe('message codecs', () => {
  it('round-trips every request kind with every field', () => {
    const requests: EdgeSequencerRequest[] = [
      { place: { symbol: 'PEPE-USDC-PERP', side: 'buy', type: 'peg', quantity: '1000000', time_in_force: 'GTT', expiry_time: '1736899200000000000', aon: true, min_fill_size: '1000', client_order_id: 'x'.repeat(64), peg_reference: 'mid', leverage: 7 } },
      { place: { symbol: 'BTC-USDC-PERP', side: 'sell', type: 'market', quantity: '0.001', price: '70000', time_in_force: 'IOC' } },
      { cancel: { order_id: '12345' } },
      { cancel: { client_order_id: 'abc', symbol: 'BTC-USDC-PERP' } },
      { modify: { order_id: '9', symbol: 'SOL-USDC-PERP', price: '151.25', quantity: '3', time_in_force: 'GTC', expiry_time: '0' } },
    ];
    for (const r of requests) {
      const back = decodeEdgeSequencerRequest(encodeEdgeSequencerRequest(r)) as unknown;
      const expected: unknown = JSON.parse(JSON.stringify(r));
      expect(back).toEqual(expected);
    }
  });

  it('round-trips acks and every push kind; 64-bit values survive exactly', () => {
    const ack = { ack: { code: 1410, message: 'MARGIN_INSUFFICIENT', order_id: '', client_order_id: 'c', status: 'REJECTED' as const, reject_reason: 'MARGIN_INSUFFICIENT' } };
    expect(decodeNodeResponse(encodeNodeResponse(ack))).toEqual(ack);
    const pushes: SequencerToEdgeMessage[] = [
      { order_update: fullOrder },
      { position_update: fullPosition },
      {
        system_health: {
          status: 'degraded', message: 'node 3 down', time_ns: '1736899200000000000', live_nodes: 4, nodes_total: 5, nodes_needed: 3,
          sequencer_link: true, results_backlog: '18446744073709551610', reasons: ['nodes_missing', 'results_stalled'],
          preprocessing: 'stopped', reserve_orders: '0',
        },
      },
      // Defaults (false, 0, empty list) are absent on the wire and come back as defaults.
      {
        system_health: {
          status: 'down', message: 'no sequencer', time_ns: '1', live_nodes: 0, nodes_total: 5, nodes_needed: 3,
          sequencer_link: false, results_backlog: '0', reasons: ['sequencer_down'],
        },
      },
    ];
    for (const m of pushes) expect(decodeSequencerToEdgeMessage(encodeSequencerToEdgeMessage(m))).toEqual(m);
    for (const t of ENUM_SPEC_VALUES.OrderEventType) {
      const m = { order_update: { ...fullOrder, message_type: t } };
      expect(decodeSequencerToEdgeMessage(encodeSequencerToEdgeMessage(m))).toEqual(m);
    }
  });

  it('encodes canonically: default values are omitted, optional fields keep presence', () => {
    const a = encodeEdgeSequencerRequest({ place: { symbol: 'A', side: 'buy', type: 'limit', quantity: '1', time_in_force: 'GTC', aon: false } });
    const b = encodeEdgeSequencerRequest({ place: { symbol: 'A', side: 'buy', type: 'limit', quantity: '1', time_in_force: 'GTC' } });
    expect(toHex(a)).toBe(toHex(b));
    // An explicitly empty optional price is present on the wire (field 5, length 0).
    const c = encodeEdgeSequencerRequest({ place: { symbol: 'A', side: 'buy', type: 'limit', quantity: '1', time_in_force: 'GTC', price: '' } });
    expect(toHex(c)).toContain('2a00');
  });

  it('refuses unknown fields, unknown enum values and ambiguous targets', () => {
    const bad: unknown[] = [
      { place: { symbol: 'A', side: 'long', type: 'limit', quantity: '1', time_in_force: 'GTC' } },
      { place: { symbol: 'A', side: 'buy', type: 'limit', quantity: '1', time_in_force: 'GTC', clientOrderId: 'x' } },
      { place: { symbol: 'A', side: 'buy', type: 'limit', quantity: 1, time_in_force: 'GTC' } },
      { cancel: { order_id: '1', client_order_id: '2' } },
      { cancel: {} },
      { place: { symbol: 'A', side: 'buy', type: 'limit', quantity: '1', time_in_force: 'GTC' }, cancel: { order_id: '1' } },
      { place: { symbol: 'A', side: 'buy', type: 'limit', quantity: '1', time_in_force: 'GTC', expiry_time: '-5' } },
    ];
    for (const r of bad) expect(() => encodeEdgeSequencerRequest(r as EdgeSequencerRequest), JSON.stringify(r)).toThrow(SessionError);
    // A decoded place without its required fields is refused.
    expect(() => decodeEdgeSequencerRequest(new Uint8Array([0x0a, 0x03, 0x0a, 0x01, 0x41]))).toThrow(/required/);
    expect(() => decodeSequencerToEdgeMessage(new Uint8Array([0xff, 0xff]))).toThrow(SessionError);
    // A system_health whose status is not ok / degraded / down is refused on decoding.
    const odd = encodeSequencerToEdgeMessage({ system_health: { status: 'halted' as 'down', message: '', time_ns: '1', live_nodes: 0, nodes_total: 5, nodes_needed: 3, sequencer_link: false, results_backlog: '0', reasons: [] } });
    expect(() => decodeSequencerToEdgeMessage(odd)).toThrow(/system_health.status must be one of ok, degraded, down/);
  });
});
