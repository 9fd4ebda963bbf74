// Applies the committee's decided outcomes (fills, rests, cancels, modifies, expiries) to orders,
// balances and positions, strictly in sequence order, each batch with the results cursor in ONE lmdb
// transaction: after a crash the cursor says exactly which outcomes are in the state, so nothing is
// applied twice or lost. docs/orders.md describes the order status machine this implements.
import type { InstrumentSpec } from '@tenebra/config';
import { JOB_END_KIND, type CancelOutcome, type ExpireOutcome, type ModifyOutcome, type PlaceOutcome } from '@tenebra/wire';
import type { Logger } from 'pino';
import type { GatewayDb } from '../store/db';
import { positionKey } from '../store/db';
import { big, isLive, str, type AccountRec, type OrderRec, type PositionRec } from '../store/records';
import type { InstrumentRegistry } from '../instruments';
import type { GatewayClock } from '../clock';
import { TIER_INFO } from '../tiers';
import { feeMicro, initialMargin, reservation } from '../orders/margin';
import { openQtyKey } from '../orders/risk';
import { depthKey, riskTicksOf, specRejectOfMatching } from '../orders/fields';
import { notionalMicro } from '@tenebra/config';
import type { OrderEvent, PositionEvent } from '../events';
import { instantBonus } from '../bonus/arithmetic';
import { reducePosition } from '../positions/reduce';
import { HourlyAccrual } from '../bonus/store';
import { indexOrder, recordFill } from '../store/history';

export const CURSOR_KEY = 'results_cursor';
/** Times in a row a clearing batch gives way to requests' transactions queued behind it (db.ts txAsyncBackground). */
const CLEARING_MAX_YIELDS = 4;
/** meta key of the venue's fee income (micro-USDC): fees charged − maker rebates − taker bonuses paid */
export const VENUE_FEES_KEY = 'venue_fees';
const FEES_KEY = VENUE_FEES_KEY;

/** One sequence number's outcome as the nodes agreed on it, with the reconstructed secret outputs. */
export interface Decision {
  seq: bigint;
  pub: Record<string, unknown>;
  values: bigint[];
}

/** What a waiting request handler learns: a cancel's or a modify's result. */
export type CancelResult = 'cancelled' | 'not_live' | 'modified' | 'rejected';

/** Waiter key of a modify's outcome (cancels wait under the bare order id). */
export const modifyWaitKey = (orderId: string): string => `modify:${orderId}`;

/** What a committed batch changed, for waiters and event subscribers. */
export interface Effects {
  orderEvents: OrderEvent[];
  positionEvents: PositionEvent[];
  /** results request handlers wait on, by waiter key (a cancel: the order id; a modify: modifyWaitKey) */
  cancels: Map<string, CancelResult>;
  /** outcome applied for these placements (the order id) */
  placed: string[];
}

/** Reads and writes of one batch, cached so a record touched twice is read once and written once. */
class UnitOfWork {
  readonly orders = new Map<string, OrderRec>();
  readonly accounts = new Map<string, AccountRec>();
  readonly positions = new Map<string, PositionRec>();
  /** change of each symbol's book depth count */
  readonly depth = new Map<string, number>();
  fees = 0n;
  /** hourly taker-bonus accruals of the batch's fills */
  readonly hourly: HourlyAccrual;

  constructor(private readonly db: GatewayDb) {
    this.hourly = new HourlyAccrual(db);
  }

  order(id: string): OrderRec | undefined {
    const hit = this.orders.get(id);
    if (hit) return hit;
    const rec = this.db.orders.get(id);
    if (rec) this.orders.set(id, { ...rec });
    return this.orders.get(id);
  }

  account(id: string): AccountRec {
    const hit = this.accounts.get(id);
    if (hit) return hit;
    const rec = this.db.accounts.get(id);
    if (!rec) throw new Error(`internal: order owner ${id} has no account`);
    const copy = { ...rec, open_by_symbol: { ...rec.open_by_symbol } };
    this.accounts.set(id, copy);
    return copy;
  }

  position(userId: string, symbol: string, leverage: number, nowNs: bigint): PositionRec {
    const key = positionKey(userId, symbol);
    const hit = this.positions.get(key);
    if (hit) return hit;
    const rec = this.db.positions.get(key) ?? {
      user_id: userId, symbol, size_steps: '0', basis_ts: '0', margin: '0', realized_pnl: '0', fees_paid: '0', leverage, updated_ns: str(nowNs),
    };
    const copy = { ...rec };
    this.positions.set(key, copy);
    return copy;
  }

  flush(): void {
    for (const [k, v] of this.orders) {
      this.db.orders.putSync(k, v);
      indexOrder(this.db, v);
    }
    for (const [k, v] of this.accounts) this.db.accounts.putSync(k, v);
    for (const [k, v] of this.positions) this.db.positions.putSync(k, v);
    this.hourly.flush();
    if (this.fees !== 0n) this.db.meta.putSync(FEES_KEY, str(big((this.db.meta.get(FEES_KEY) as string | undefined) ?? '0') + this.fees));
    for (const [symbol, d] of this.depth) {
      if (d === 0) continue;
      const cur = (this.db.meta.get(depthKey(symbol)) as number | undefined) ?? 0;
      this.db.meta.putSync(depthKey(symbol), Math.max(0, cur + d));
    }
  }
}

export class Clearing {
  constructor(
    private readonly db: GatewayDb,
    private readonly registry: InstrumentRegistry,
    private readonly clock: GatewayClock,
    private readonly log: Logger,
  ) {}

  /** The next sequence number whose outcome is to be applied (1 on a fresh gateway). */
  cursor(): bigint {
    const v = this.db.meta.get(CURSOR_KEY) as string | undefined;
    return v === undefined ? 1n : BigInt(v);
  }

  /** Venue fee income so far (micro-USDC; maker rebates are subtracted). */
  venueFees(): bigint {
    return big((this.db.meta.get(FEES_KEY) as string | undefined) ?? '0');
  }

  /** Applies consecutive decisions starting at the cursor and advances it, atomically (all or nothing). */
  async applyBatch(decisions: readonly Decision[], onYield?: () => void): Promise<Effects> {
    if (decisions.length === 0) return { orderEvents: [], positionEvents: [], cancels: new Map(), placed: [] };
    // In the background: a placement or cancel queued meanwhile commits first, not after this batch.
    return this.db.txAsyncBackground(() => {
      const effects: Effects = { orderEvents: [], positionEvents: [], cancels: new Map(), placed: [] };
      let next = this.cursor();
      const uow = new UnitOfWork(this.db);
      for (const d of decisions) {
        if (d.seq !== next) throw new Error(`internal: decision for seq ${d.seq} while the cursor is at ${next}`);
        this.applyOne(uow, d, effects);
        next = d.seq + 1n;
      }
      uow.flush();
      this.db.meta.putSync(CURSOR_KEY, str(next));
      return effects;
    }, CLEARING_MAX_YIELDS, onYield);
  }

  private applyOne(uow: UnitOfWork, d: Decision, fx: Effects): void {
    const kind = d.pub.kind;
    if (kind === 'place') {
      const o = asPlaceOutcome(d.pub);
      if (!o) return this.skip(d, 'malformed place outcome');
      if (d.values.length !== 2 * o.fills.length) return this.skip(d, `place outcome has ${o.fills.length} fills but ${d.values.length} secret outputs`);
      this.applyPlace(uow, d.seq, o, d.values, fx);
    } else if (kind === 'cancel') {
      const o = asCancelOutcome(d.pub);
      if (!o) return this.skip(d, 'malformed cancel outcome');
      this.applyCancel(uow, d.seq, o, fx);
    } else if (kind === 'modify') {
      const o = asModifyOutcome(d.pub);
      if (!o) return this.skip(d, 'malformed modify outcome');
      if (d.values.length !== 2 * o.fills.length) return this.skip(d, `modify outcome has ${o.fills.length} fills but ${d.values.length} secret outputs`);
      this.applyModify(uow, d.seq, o, d.values, fx);
    } else if (kind === 'expire') {
      const o = asExpireOutcome(d.pub);
      if (!o) return this.skip(d, 'malformed expire outcome');
      this.cancelListed(uow, d.seq, { expired: o.expired }, this.clock.nowNs(), fx);
    } else if (kind === JOB_END_KIND) {
      // the sequencer's job boundary: nothing to clear
    } else {
      this.skip(d, `unknown outcome kind ${JSON.stringify(kind)}`);
    }
  }

  private skip(d: Decision, why: string): void {
    this.log.error({ seq: d.seq.toString(), pub: d.pub }, `outcome not applied: ${why}`);
  }

  private applyPlace(uow: UnitOfWork, seq: bigint, o: PlaceOutcome, values: bigint[], fx: Effects): void {
    const taker = uow.order(o.order_id);
    if (!taker) return this.log.error({ seq: seq.toString(), order_id: o.order_id }, 'placement outcome for an order this gateway does not know');
    if (taker.placed) return this.log.error({ seq: seq.toString(), order_id: o.order_id }, 'second placement outcome for one order ignored');
    if (!isLive(taker.status)) return this.log.error({ seq: seq.toString(), order_id: o.order_id, status: taker.status }, 'placement outcome for an order already finished at the gateway');
    const inst = this.registry.get(taker.symbol)!;
    const now = this.clock.nowNs();
    taker.placed = true;
    taker.seq ??= str(seq);
    fx.placed.push(taker.order_id);

    this.cancelListed(uow, seq, o as unknown as Record<string, unknown>, now, fx);
    if (o.reject_reason !== null) {
      if (o.fills.length > 0) this.log.error({ seq: seq.toString(), order_id: o.order_id }, 'rejected placement with fills: fills ignored');
      this.finish(uow, taker, 'REJECTED', now);
      taker.reject_reason = specRejectOfMatching(o.reject_reason);
      this.log.warn({ seq: seq.toString(), order_id: o.order_id, reason: o.reject_reason, code: o.reject_code, detail: o.reject_detail }, 'committee rejected a placement');
      fx.orderEvents.push({ message_type: 'rejected', order: { ...taker } });
      return;
    }
    this.applyFills(uow, inst, seq, taker, o.fills, values, now, fx);
    this.settleRemainder(uow, taker, o.rested, o.cancel_reason, o.fills.length, now, fx);
  }

  /** Applies a taker's fills (maker side first, then taker side), skipping impossible ones loudly. */
  private applyFills(uow: UnitOfWork, inst: InstrumentSpec, seq: bigint, taker: OrderRec, fills: readonly string[], values: readonly bigint[], now: bigint, fx: Effects): void {
    for (let i = 0; i < fills.length; i++) {
      const qty = values[2 * i]!;
      const price = values[2 * i + 1]!;
      const maker = uow.order(fills[i]!);
      const why = invalidFill(taker, maker, qty, price);
      if (why) {
        this.log.error({ seq: seq.toString(), taker: taker.order_id, maker: fills[i], fill: i, why }, 'committee reported an impossible fill; not applied');
        continue;
      }
      const notional = qty * price;
      const makerTier = TIER_INFO[uow.account(maker!.user_id).tier];
      const makerFee = feeMicro(inst, notional, makerTier.makerFeePips);
      const takerFee = feeMicro(inst, notional, TIER_INFO[uow.account(taker.user_id).tier].takerFeePips);
      // Instant taker bonus: the maker's tier share of this fill's taker fee, paid out of it at once.
      const bonus = instantBonus(takerFee, makerTier.instantTakerBonusBps);
      this.fill(uow, inst, maker!, 'maker', qty, price, makerFee, bonus, now, fx);
      this.fill(uow, inst, taker, 'taker', qty, price, takerFee, 0n, now, fx);
      for (const [o, fee, liquidity] of [[maker!, makerFee, 'maker'], [taker, takerFee, 'taker']] as const) {
        recordFill(this.db, o.user_id, seq, i, {
          order_id: o.order_id, client_order_id: o.client_order_id, symbol: o.symbol, side: o.side, price_ticks: str(price),
          qty_steps: str(qty), fee: str(fee), liquidity, time_ns: str(now),
        });
      }
      uow.hourly.add(uow.hourly.windowAt(this.clock.nowMs()), takerFee, maker!.user_id, notionalMicro(inst, notional, 'floor'), makerTier.hourlyTakerBonusBps);
    }
  }

  /** After a taker's fills: FILLED already, resting (open), or its remainder cancelled with the committee's reason. */
  private settleRemainder(uow: UnitOfWork, taker: OrderRec, rested: boolean, cancelReason: string | null, fills: number, now: bigint, fx: Effects): void {
    if (!isLive(taker.status)) return; // FILLED in fill()
    if (!rested) {
      if (cancelReason === 'FOK_NOT_FILLED' && fills === 0) {
        // An FOK the book cannot fill whole is refused by matching at placement: the spec's status
        // table sends a placement "matching rejects" to REJECTED, and lists INSUFFICIENT_LIQUIDITY
        // ("FOK order could not be fully filled") among reject reasons (docs/orders.md, ADR 0019).
        this.finish(uow, taker, 'REJECTED', now);
        taker.reject_reason = 'INSUFFICIENT_LIQUIDITY';
        fx.orderEvents.push({ message_type: 'rejected', order: { ...taker } });
        return;
      }
      this.finish(uow, taker, 'CANCELLED', now);
      taker.cancel_reason = cancelReason ?? (taker.time_in_force === 'IOC' || taker.time_in_force === 'FOK' ? 'IOC_REMAINDER' : 'SYSTEM_CANCEL');
      fx.orderEvents.push({ message_type: 'cancelled', order: { ...taker } });
    } else if (fills === 0) {
      taker.out_time_ns = str(now);
      fx.orderEvents.push({ message_type: 'open', order: { ...taker } });
    }
  }

  /**
   * Orders an outcome reports as cancelled by the committee on the way: GTT orders expired before the
   * operation (`expired`) and resting orders removed by self-trade prevention (`self_trade_cancelled`).
   */
  private cancelListed(uow: UnitOfWork, seq: bigint, o: Record<string, unknown>, now: bigint, fx: Effects): void {
    for (const [field, reason] of [['expired', 'GTT_EXPIRED'], ['self_trade_cancelled', 'SELF_TRADE_PREVENTION']] as const) {
      const ids = o[field];
      if (ids === undefined || ids === null) continue;
      if (!Array.isArray(ids) || !ids.every((x) => typeof x === 'string')) {
        this.log.error({ seq: seq.toString(), field }, 'malformed order id list in an outcome; ignored');
        continue;
      }
      for (const id of ids as string[]) {
        const order = uow.order(id);
        if (!order || !isLive(order.status)) {
          this.log.error({ seq: seq.toString(), order_id: id, field }, 'committee cancelled an order the gateway does not hold as live');
          continue;
        }
        this.finish(uow, order, 'CANCELLED', now);
        order.cancel_reason = reason;
        fx.orderEvents.push({ message_type: 'cancelled', order: { ...order } });
      }
    }
  }

  private applyCancel(uow: UnitOfWork, seq: bigint, o: CancelOutcome, fx: Effects): void {
    this.cancelListed(uow, seq, o as unknown as Record<string, unknown>, this.clock.nowNs(), fx);
    const order = uow.order(o.order_id);
    if (!order) return this.log.error({ order_id: o.order_id }, 'cancel outcome for an order this gateway does not know');
    if (o.found && isLive(order.status)) {
      this.finish(uow, order, 'CANCELLED', this.clock.nowNs());
      order.cancel_reason = order.cancel_requested ?? 'USER_REQUESTED';
      fx.cancels.set(order.order_id, 'cancelled');
      fx.orderEvents.push({ message_type: 'cancelled', order: { ...order } });
      return;
    }
    if (o.found) this.log.error({ order_id: o.order_id, status: order.status }, 'committee cancelled an order the gateway holds as finished');
    fx.cancels.set(order.order_id, 'not_live');
    fx.orderEvents.push({ message_type: 'cancel_rejected', order: { ...order }, reject_reason: 'ORDER_NOT_LIVE' });
  }

  /**
   * A modify's outcome. Not live (or refused): the held extra reservation is released and the modify
   * reported rejected. Exhausted (fills raced the modify and the new quantity is already filled): the
   * order is FILLED at its filled quantity. Otherwise quantity and price take the new values, the
   * reservation is recomputed, and a replace's execution (fills, rest or cancel) is applied like a
   * placement's.
   */
  private applyModify(uow: UnitOfWork, seq: bigint, o: ModifyOutcome, values: bigint[], fx: Effects): void {
    const order = uow.order(o.order_id);
    if (!order) return this.log.error({ seq: seq.toString(), order_id: o.order_id }, 'modify outcome for an order this gateway does not know');
    const now = this.clock.nowNs();
    this.cancelListed(uow, seq, { expired: o.expired }, now, fx);
    const pending = order.pending_modify ?? null;
    order.pending_modify = null;
    const acct = uow.account(order.user_id);
    if (pending) acct.reserved = str(big(acct.reserved) - big(pending.hold));
    const key = modifyWaitKey(order.order_id);
    if (!o.found || o.reject_reason !== null || !isLive(order.status) || !pending) {
      if (o.found && isLive(order.status) && o.reject_reason === null) this.log.error({ seq: seq.toString(), order_id: o.order_id }, 'modify outcome without a pending modify at the gateway');
      if (o.found && !isLive(order.status)) this.log.error({ seq: seq.toString(), order_id: o.order_id, status: order.status }, 'committee modified an order the gateway holds as finished');
      const reason = o.reject_reason !== null ? 'MODIFY_REJECTED' : 'ORDER_NOT_LIVE';
      fx.cancels.set(key, o.reject_reason !== null ? 'rejected' : 'not_live');
      fx.orderEvents.push({ message_type: 'modify_rejected', order: { ...order }, reject_reason: reason });
      if (o.reject_reason !== null) this.log.warn({ seq: seq.toString(), order_id: o.order_id, code: o.reject_code }, 'committee refused a modify');
      return;
    }
    const inst = this.registry.get(order.symbol)!;
    const filled = big(order.filled_steps);
    const oldQty = big(order.qty_steps);
    const newQty = big(pending.qty_steps);
    fx.cancels.set(key, 'modified');
    if (o.exhausted) {
      // new quantity <= filled: nothing is left to work; the order is complete at what it filled.
      this.moveOpenQty(acct, order, -(oldQty - filled));
      order.qty_steps = str(filled);
      order.out_time_ns = str(now);
      this.finish(uow, order, filled > 0n ? 'FILLED' : 'CANCELLED', now);
      if (filled === 0n) order.cancel_reason = 'SYSTEM_CANCEL';
      fx.orderEvents.push({ message_type: 'modified', order: { ...order } });
      return;
    }
    this.moveOpenQty(acct, order, newQty - oldQty);
    order.qty_steps = str(newQty);
    if (o.mode === 'replace') {
      order.price_ticks = pending.price_ticks;
      order.risk_ticks = pending.price_ticks;
      order.seq = str(seq); // time priority of the new order
    }
    const keep = reservation(inst, newQty - filled, big(riskTicksOf(order)), order.leverage, big(order.fee_pips));
    acct.reserved = str(big(acct.reserved) - big(order.reserved) + keep);
    order.reserved = str(keep);
    order.out_time_ns = str(now);
    fx.orderEvents.push({ message_type: 'modified', order: { ...order } });
    if (o.mode === 'replace') {
      this.cancelListed(uow, seq, { self_trade_cancelled: o.self_trade_cancelled }, now, fx);
      this.applyFills(uow, inst, seq, order, o.fills, values, now, fx);
      if (o.rested !== null) this.settleRemainder(uow, order, o.rested, o.cancel_reason, o.fills.length + 1, now, fx);
    }
  }

  /** Moves an order to a terminal status and releases what it still reserves. */
  private finish(uow: UnitOfWork, order: OrderRec, status: 'FILLED' | 'CANCELLED' | 'REJECTED', now: bigint): void {
    if (!isLive(order.status)) throw new Error(`internal: order ${order.order_id} is already ${order.status}`);
    const acct = uow.account(order.user_id);
    acct.reserved = str(big(acct.reserved) - big(order.reserved));
    order.reserved = '0';
    if (order.pending_modify) {
      acct.reserved = str(big(acct.reserved) - big(order.pending_modify.hold));
      order.pending_modify = { ...order.pending_modify, hold: '0' };
    }
    this.moveOpenQty(acct, order, -(big(order.qty_steps) - big(order.filled_steps)));
    acct.open_orders -= 1;
    const left = (acct.open_by_symbol[order.symbol] ?? 1) - 1;
    if (left > 0) acct.open_by_symbol[order.symbol] = left;
    else delete acct.open_by_symbol[order.symbol];
    if (order.in_book) {
      order.in_book = false;
      uow.depth.set(order.symbol, (uow.depth.get(order.symbol) ?? 0) - 1);
    }
    order.status = status;
    order.out_time_ns = str(now);
  }

  /** Adds delta steps to the account's live quantity on the order's symbol and side. */
  private moveOpenQty(acct: AccountRec, order: OrderRec, delta: bigint): void {
    if (delta === 0n) return;
    const k = openQtyKey(order.symbol, order.side);
    const open = { ...(acct.open_qty ?? {}) };
    const next = big(open[k] ?? '0') + delta;
    if (next > 0n) open[k] = str(next);
    else delete open[k];
    acct.open_qty = open;
  }

  /**
   * One side of one fill: order progress, reservation, fee, position and balance. `bonus` is the
   * maker's instant taker bonus (0 for the taker): credited to the balance and netted against the
   * position's fees, so settlement's collateral delta (PnL − fees − margin) matches the balance.
   */
  private fill(uow: UnitOfWork, inst: InstrumentSpec, order: OrderRec, liquidity: 'maker' | 'taker', qty: bigint, price: bigint, fee: bigint, bonus: bigint, now: bigint, fx: Effects): void {
    const acct = uow.account(order.user_id);
    const filled = big(order.filled_steps) + qty;
    const remaining = big(order.qty_steps) - filled;
    order.filled_steps = str(filled);
    order.notional_ts = str(big(order.notional_ts) + qty * price);
    order.last_fill_steps = str(qty);
    order.last_fill_ticks = str(price);
    order.out_time_ns = str(now);

    // The reservation shrinks to what the remainder needs at the order's own limit price.
    const keep = reservation(inst, remaining, big(riskTicksOf(order)), order.leverage, big(order.fee_pips));
    acct.reserved = str(big(acct.reserved) - (big(order.reserved) - keep));
    order.reserved = str(keep);
    this.moveOpenQty(acct, order, -qty);

    acct.balance = str(big(acct.balance) - fee + bonus);
    uow.fees += fee - bonus;
    order.last_fill_bonus = str(bonus);
    if (bonus > 0n) {
      order.bonus_total = str(big(order.bonus_total ?? '0') + bonus);
      acct.bonus_instant = str(big(acct.bonus_instant ?? '0') + bonus);
    }

    const pos = uow.position(order.user_id, order.symbol, order.leverage, now);
    pos.fees_paid = str(big(pos.fees_paid) + fee - bonus);
    this.movePosition(inst, acct, pos, order.side === 'buy' ? qty : -qty, price, order.leverage, now);
    fx.positionEvents.push({ update_reason: big(pos.size_steps) === 0n ? 'closed' : 'fill', position: { ...pos } });

    if (remaining === 0n) {
      this.finish(uow, order, 'FILLED', now);
      fx.orderEvents.push({ message_type: 'filled', order: { ...order }, liquidity });
    } else {
      order.status = 'PARTIALLY_FILLED';
      fx.orderEvents.push({ message_type: 'partial_fill', order: { ...order }, liquidity });
    }
  }

  /**
   * Isolated position update for a signed fill. Opening adds size, cost basis and initial margin
   * (taken from the balance); closing releases a proportional share of basis and margin and
   * realises PnL into the balance (floored to the micro-USDC); a flip opens the rest the other way.
   */
  private movePosition(inst: InstrumentSpec, acct: AccountRec, pos: PositionRec, signedQty: bigint, price: bigint, leverage: number, now: bigint): void {
    let open = signedQty < 0n ? -signedQty : signedQty;
    const dir = signedQty < 0n ? -1n : 1n;
    const held = big(pos.size_steps);
    if (held !== 0n && (held < 0n ? -1n : 1n) !== dir) {
      const abs = held < 0n ? -held : held;
      const close = open < abs ? open : abs;
      reducePosition(inst, acct, pos, close, price, now);
      open -= close;
    }
    if (open > 0n) {
      if (big(pos.size_steps) === 0n) pos.leverage = leverage;
      const im = initialMargin(inst, open * price, leverage);
      pos.size_steps = str(big(pos.size_steps) + dir * open);
      pos.basis_ts = str(big(pos.basis_ts) + open * price);
      pos.margin = str(big(pos.margin) + im);
      acct.balance = str(big(acct.balance) - im);
    }
    pos.updated_ns = str(now);
  }
}

/** Why a reported fill cannot be right (a fill must be positive, fit both remainders and be at the maker's price, crossing the taker's limit). */
function invalidFill(taker: OrderRec, maker: OrderRec | undefined, qty: bigint, price: bigint): string | null {
  if (!maker) return 'unknown maker order';
  if (maker.order_id === taker.order_id) return 'order filled against itself';
  if (maker.symbol !== taker.symbol) return 'maker is on another symbol';
  if (maker.side === taker.side) return 'maker is on the same side';
  if (!isLive(maker.status)) return `maker is ${maker.status}`;
  if (qty <= 0n) return 'non-positive quantity';
  if (qty > big(maker.qty_steps) - big(maker.filled_steps)) return 'quantity exceeds the maker remainder';
  if (qty > big(taker.qty_steps) - big(taker.filled_steps)) return 'quantity exceeds the taker remainder';
  if (maker.price_ticks !== null && price !== big(maker.price_ticks)) return "price differs from the maker's limit price";
  if (taker.price_ticks === null) return null; // market order without a cap
  const limit = big(taker.price_ticks);
  if (taker.side === 'buy' ? price > limit : price < limit) return "price does not cross the taker's limit";
  return null;
}

function asPlaceOutcome(p: Record<string, unknown>): PlaceOutcome | null {
  const ok = typeof p.order_id === 'string' && Array.isArray(p.fills) && p.fills.every((f) => typeof f === 'string')
    && typeof p.rested === 'boolean' && (p.cancel_reason === null || typeof p.cancel_reason === 'string')
    && (p.reject_reason === null || typeof p.reject_reason === 'string');
  return ok ? (p as unknown as PlaceOutcome) : null;
}

function asCancelOutcome(p: Record<string, unknown>): CancelOutcome | null {
  return typeof p.order_id === 'string' && typeof p.found === 'boolean' ? (p as unknown as CancelOutcome) : null;
}

const isIdList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function asModifyOutcome(p: Record<string, unknown>): ModifyOutcome | null {
  const ok = typeof p.order_id === 'string' && (p.mode === 'reduce' || p.mode === 'replace') && typeof p.found === 'boolean'
    && typeof p.exhausted === 'boolean' && isIdList(p.fills) && (p.rested === null || typeof p.rested === 'boolean')
    && (p.cancel_reason === null || typeof p.cancel_reason === 'string') && (p.reject_reason === null || typeof p.reject_reason === 'string')
    && isIdList(p.self_trade_cancelled ?? []) && isIdList(p.expired ?? []);
  return ok ? ({ self_trade_cancelled: [], expired: [], ...p } as unknown as ModifyOutcome) : null;
}

function asExpireOutcome(p: Record<string, unknown>): ExpireOutcome | null {
  return isIdList(p.expired) ? (p as unknown as ExpireOutcome) : null;
}
