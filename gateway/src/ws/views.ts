// Stored records -> channel payloads. Orders and positions reuse the REST objects (orders/view.ts,
// positions/view.ts) so REST and the channels can never disagree (except last_fill_qty / price, which
// a frame carries only when it reports a fill); their exact numbers become the decimal strings of the
// protobuf OrderUpdate / PositionUpdate.
import type { InstrumentSpec } from '@tenebra/config';
import type { OrderUpdate, PositionUpdate, OrderEventType, PositionUpdateReason } from '@tenebra/session';
import { RawNumber } from '../json';
import { orderEventView } from '../orders/view';
import { positionView } from '../positions/view';
import type { OrderRec, PositionRec } from '../store/records';
import { instrumentView } from '../instruments';

function text(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (v instanceof RawNumber) return v.text;
  return String(v);
}

/**
 * The orders channel's OrderUpdate plaintext for a stored order and an event type. `frame`
 * 'snapshot': a snapshot item (the order's state), which reports no fill (orders/view.ts orderEventView).
 */
export function orderUpdate(o: OrderRec, inst: InstrumentSpec, messageType: OrderEventType, rejectReason?: string, frame: 'update' | 'snapshot' = 'update'): OrderUpdate {
  const v = orderEventView(o, inst, frame === 'snapshot' ? null : messageType);
  const u: OrderUpdate = {
    message_type: messageType,
    order_id: o.order_id,
    symbol: o.symbol,
    side: o.side,
    type: o.type,
    time_in_force: o.time_in_force,
    quantity: text(v.quantity)!,
    filled_quantity: text(v.filled_quantity)!,
    remaining_quantity: text(v.remaining_quantity)!,
    status: o.status,
    in_time_ns: text(v.in_time_ns)!,
    out_time_ns: text(v.out_time_ns)!,
  };
  const optional: [keyof OrderUpdate, string | undefined][] = [
    ['client_order_id', text(v.client_order_id)], ['price', text(v.price)], ['average_fill_price', text(v.average_fill_price)],
    ['last_fill_qty', text(v.last_fill_qty)], ['last_fill_price', text(v.last_fill_price)], ['cancel_reason', text(v.cancel_reason)],
    ['reject_reason', rejectReason ?? text(v.reject_reason)],
  ];
  for (const [k, val] of optional) if (val !== undefined) (u as unknown as Record<string, string>)[k] = val;
  return u;
}

/** The positions channel's PositionUpdate: GET /positions' object (positions/view.ts) as decimal strings, plus update_reason (every frame, snapshots too: the spec's push has it). */
export function positionUpdate(p: PositionRec, inst: InstrumentSpec, reason: PositionUpdateReason, markTicks: bigint | null = null): PositionUpdate {
  const v = positionView(p, inst, markTicks);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) out[k] = text(val)!;
  return { update_reason: reason, ...(out as unknown as PositionUpdate) };
}

/** The instruments channel payload: the instrument object (as GET /instruments/{symbol}) plus the list version. */
export function instrumentData(inst: InstrumentSpec, listVersion: number): Record<string, unknown> {
  return { ...instrumentView(inst), list_version: listVersion };
}
