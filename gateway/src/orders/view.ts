// Stored order -> the spec's Order object: integer ticks and steps back to exact decimal numbers.
import { fromUnits, ratioToDecimal, parseDecimal, type InstrumentSpec } from '@tenebra/config';
import { num, RawNumber } from '../json';
import { big, type OrderRec } from '../store/records';

/** Extra fractional digits of average_fill_price beyond the tick's own (it is a volume-weighted mean). */
export const AVERAGE_EXTRA_DIGITS = 4;

/**
 * The spec's Order object for a stored order, as REST answers it (GET /orders/{orderId}, the DELETE
 * and PATCH answers). REST answers no event, so last_fill_qty / last_fill_price are the order's most
 * recent fill (null before the first), kept after later transitions; the orders channel reports them
 * per event instead (orderEventView).
 */
export function orderView(o: OrderRec, inst: InstrumentSpec): Record<string, unknown> {
  const filled = big(o.filled_steps);
  const qty = big(o.qty_steps);
  return {
    order_id: o.order_id,
    client_order_id: o.client_order_id,
    symbol: o.symbol,
    side: o.side,
    type: o.type,
    time_in_force: o.time_in_force,
    price: o.price_ticks === null ? null : new RawNumber(fromUnits(big(o.price_ticks), inst.tick_size)),
    quantity: new RawNumber(fromUnits(qty, inst.step_size)),
    filled_quantity: new RawNumber(fromUnits(filled, inst.step_size)),
    remaining_quantity: new RawNumber(fromUnits(qty - filled, inst.step_size)),
    average_fill_price: filled === 0n ? null : new RawNumber(averagePrice(big(o.notional_ts), filled, inst)),
    last_fill_qty: num(o.last_fill_steps === null ? null : fromUnits(big(o.last_fill_steps), inst.step_size)),
    last_fill_price: num(o.last_fill_ticks === null ? null : fromUnits(big(o.last_fill_ticks), inst.tick_size)),
    status: o.status,
    in_time_ns: big(o.in_time_ns),
    out_time_ns: big(o.out_time_ns),
    cancel_reason: o.cancel_reason,
    reject_reason: o.reject_reason,
  };
}

/** Order events that report a fill: the only ones that carry last_fill_qty / last_fill_price. */
export function isFillEvent(messageType: string): boolean {
  return messageType === 'partial_fill' || messageType === 'filled';
}

/**
 * The Order object as one frame of the orders channel reports it. The spec defines last_fill_qty /
 * last_fill_price as the fill "in this event", so only fill events carry them; every other event
 * (cancelled, modified, rejections) and every snapshot frame (`messageType` null: the state, not a
 * fill) has null, so a client summing last_fill_qty over frames counts each fill exactly once.
 * The stored record keeps the last fill (REST shows it), hence the override here.
 */
export function orderEventView(o: OrderRec, inst: InstrumentSpec, messageType: string | null): Record<string, unknown> {
  const v = orderView(o, inst);
  if (messageType === null || !isFillEvent(messageType)) {
    v.last_fill_qty = null;
    v.last_fill_price = null;
  }
  return v;
}

/** Volume-weighted average price: Σ(qty×price) / Σqty in ticks, as a decimal rounded half up. */
export function averagePrice(notionalTs: bigint, filledSteps: bigint, inst: InstrumentSpec): string {
  const tick = parseDecimal(inst.tick_size)!;
  // price = (notional / filled) ticks × tick.units / 10^tick.scale
  return ratioToDecimal(notionalTs * tick.units, filledSteps * 10n ** BigInt(tick.scale), tick.scale + AVERAGE_EXTRA_DIGITS);
}
