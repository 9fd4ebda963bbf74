// Stored records -> channel payloads. Orders reuse the REST order object (orders/view.ts) so REST and
// the orders channel can never disagree; its exact numbers become the decimal strings of the
// protobuf OrderUpdate. Positions follow the spec's Position object.
import { createHash } from 'node:crypto';
import { fromUnits, microPerTickStep, microToUsdc, parseDecimal, ratioToDecimal, type InstrumentSpec } from '@tenebra/config';
import type { OrderUpdate, PositionUpdate, OrderEventType, PositionUpdateReason } from '@tenebra/session';
import { RawNumber } from '../json';
import { AVERAGE_EXTRA_DIGITS, averagePrice, orderView } from '../orders/view';
import { big, type OrderRec, type PositionRec } from '../store/records';
import { instrumentView } from '../instruments';

function text(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (v instanceof RawNumber) return v.text;
  return String(v);
}

/** The orders channel's OrderUpdate plaintext for a stored order and an event type. */
export function orderUpdate(o: OrderRec, inst: InstrumentSpec, messageType: OrderEventType, rejectReason?: string): OrderUpdate {
  const v = orderView(o, inst);
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

/** A stable public id of a position (account, symbol): a hash, so it reveals neither. */
export function positionId(userId: string, symbol: string): string {
  return createHash('sha256').update(`position\n${userId}\n${symbol}`).digest('hex').slice(0, 24);
}

/**
 * The positions channel's PositionUpdate for a stored position. No mark price feed exists yet: the
 * mark is the entry price, so unrealized_pnl is 0 and funding_accrued 0 (docs/websocket.md).
 */
export function positionUpdate(p: PositionRec, inst: InstrumentSpec, reason?: PositionUpdateReason): PositionUpdate {
  const size = big(p.size_steps);
  const abs = size < 0n ? -size : size;
  const entryPrice = abs === 0n ? '0' : averagePrice(big(p.basis_ts), abs, inst);
  return {
    ...(reason ? { update_reason: reason } : {}),
    position_id: positionId(p.user_id, p.symbol),
    symbol: p.symbol,
    side: size > 0n ? 'long' : size < 0n ? 'short' : 'flat',
    size: fromUnits(abs, inst.step_size),
    entry_price: entryPrice,
    mark_price: entryPrice,
    margin: microToUsdc(big(p.margin)),
    leverage: String(p.leverage),
    unrealized_pnl: '0',
    realized_pnl: microToUsdc(big(p.realized_pnl)),
    funding_accrued: '0',
    liquidation_price: liquidationPrice(p, inst),
    status: abs === 0n ? 'CLOSED' : 'OPEN',
    updated_at: new Date(Number(big(p.updated_ns) / 1_000_000n)).toISOString(),
  };
}

/**
 * The spec's approximate liquidation price (States: Margin model), exactly in integers:
 * long = (size×entry − collateral) / (size×(1 − mmr)); short = (collateral + size×entry) / (size×(1 + mmr)),
 * rounded half up to four digits beyond the tick; "0" when flat or not positive.
 */
export function liquidationPrice(p: PositionRec, inst: InstrumentSpec): string {
  const size = big(p.size_steps);
  if (size === 0n) return '0';
  const abs = size < 0n ? -size : size;
  const { num, den } = microPerTickStep(inst); // micro-USDC per tick×step = num/den
  const step = parseDecimal(inst.step_size)!;
  const tick = parseDecimal(inst.tick_size)!;
  const mmr = parseDecimal(inst.maintenance_margin_ratio)!;
  const one = 10n ** BigInt(mmr.scale);
  const basisMicroDen = big(p.basis_ts) * num; // size×entry in micro-USDC, times den
  const collateralMicroDen = big(p.margin) * den;
  const top = size > 0n ? basisMicroDen - collateralMicroDen : basisMicroDen + collateralMicroDen;
  const factor = size > 0n ? one - mmr.units : one + mmr.units;
  if (top <= 0n || factor <= 0n) return '0';
  // price = top/den/1e6 / (abs×step.units/10^step.scale × factor/one)
  return ratioToDecimal(top * 10n ** BigInt(step.scale) * one, den * 1_000_000n * abs * step.units * factor, tick.scale + AVERAGE_EXTRA_DIGITS);
}

/** The instruments channel payload: the instrument object (as GET /instruments/{symbol}) plus the list version. */
export function instrumentData(inst: InstrumentSpec, listVersion: number): Record<string, unknown> {
  return { ...instrumentView(inst), list_version: listVersion };
}
