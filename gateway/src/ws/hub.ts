// Fan-out of committed gateway events to the sockets that subscribed: orders and positions per account
// (encrypted per socket by the connection), margin alerts per account, instrument status changes and
// new public statistics (transparency) to everyone. Also holds what snapshots need beyond the store: live orders, current margin alerts, and
// the throttle of mark_price position updates (at most one per position per second, others at once).
import type { InstrumentSpec } from '@tenebra/config';
import type { OrderUpdate, PositionUpdate } from '@tenebra/session';
import type { Logger } from 'pino';
import type { GatewayClock } from '../clock';
import type { GatewayEvents, MarginAlertEvent, OrderEvent, PositionEvent } from '../events';
import type { InstrumentRegistry } from '../instruments';
import type { GatewayDb } from '../store/db';
import { positionKey } from '../store/db';
import { LiveState } from './live-orders';
import type { Channel } from './protocol';
import { positionId } from '../positions/view';
import { instrumentData, orderUpdate, positionUpdate } from './views';
import type { MarkSource } from '../risk-monitor/mark-book';
import type { TransparencyFeed } from './transparency';

/** One push for a channel: an encrypted plaintext (orders/positions) or plain JSON data. */
export type Push =
  | { kind: 'order'; update: OrderUpdate }
  | { kind: 'position'; update: PositionUpdate }
  | { kind: 'plain'; data: unknown };

/** A socket as the hub sees it. */
export interface Subscriber {
  /** the logged-in account, or null */
  readonly userId: string | null;
  /** Sends an update frame if the socket is subscribed to channel. */
  deliver(channel: Channel, push: Push): void;
  /** True when the socket is subscribed to channel. */
  subscribed(channel: Channel): boolean;
  /** Sends a server event frame {event, data} (no channel, no seq). */
  notify(event: string, data: Record<string, unknown>): void;
}

/** The margin_alerts channel payload (docs/websocket.md). */
export function marginAlertData(e: MarginAlertEvent): Record<string, unknown> {
  return {
    position_id: positionId(e.user_id, e.symbol), symbol: e.symbol, health_tier: e.tier, margin_ratio: e.margin_ratio,
    mark_price: e.mark_price, liquidation_price: e.liquidation_price, at_ns: e.at_ns,
  };
}

export class ChannelHub {
  readonly live: LiveState;
  private readonly byUser = new Map<string, Set<Subscriber>>();
  private readonly everyone = new Set<Subscriber>();
  /** last mark_price push per position key, and the newest one held back by the throttle */
  private readonly lastMark = new Map<string, number>();
  private readonly heldMark = new Map<string, PositionEvent>();
  /** current alert per account and symbol (tier other than Healthy) */
  private readonly alerts = new Map<string, Map<string, MarginAlertEvent>>();
  /** instrument statuses last announced, and the list version they belong to */
  private instrumentStatus = new Map<string, string>();
  private instrumentVersion: number;
  /** cancel_rejected / modify_rejected events seen per order (so the socket does not announce one twice) */
  private readonly refusals = new Map<string, number>();
  private readonly off: (() => void)[] = [];

  constructor(
    private readonly db: GatewayDb,
    private readonly registry: InstrumentRegistry,
    private readonly events: GatewayEvents,
    private readonly clock: GatewayClock,
    private readonly log: Logger,
    private readonly markThrottleMs: number,
    /** the public overview of the statistics and when it changes (transparency channel) */
    private readonly transparency: TransparencyFeed,
    /** current marks of the risk monitor (positions are shown at them) */
    private readonly marks: MarkSource | null = null,
  ) {
    this.live = new LiveState(db);
    const n = this.live.load();
    log.info(n, 'live orders and open positions loaded for the channels');
    this.instrumentVersion = registry.listVersion;
    for (const i of registry.list().instruments) this.instrumentStatus.set(i.symbol, i.status);
    const onOrder = (e: OrderEvent) => this.onOrder(e);
    const onPosition = (e: PositionEvent) => this.onPosition(e);
    const onAlert = (e: MarginAlertEvent) => this.onAlert(e);
    events.on('order', onOrder);
    events.on('position', onPosition);
    events.on('margin_alert', onAlert);
    this.off.push(() => events.off('order', onOrder), () => events.off('position', onPosition), () => events.off('margin_alert', onAlert));
  }

  /** Stops listening to gateway events. */
  close(): void {
    for (const f of this.off.splice(0)) f();
  }

  join(s: Subscriber): void {
    this.everyone.add(s);
  }

  leave(s: Subscriber): void {
    this.everyone.delete(s);
  }

  /** Routes the account's events to s (after login). */
  bind(userId: string, s: Subscriber): void {
    let set = this.byUser.get(userId);
    if (!set) this.byUser.set(userId, (set = new Set()));
    set.add(s);
  }

  unbind(userId: string, s: Subscriber): void {
    const set = this.byUser.get(userId);
    if (!set) return;
    set.delete(s);
    if (set.size === 0) this.byUser.delete(userId);
  }

  /** Sockets bound to the account. */
  subscribersOf(userId: string): ReadonlySet<Subscriber> {
    return this.byUser.get(userId) ?? new Set();
  }

  /** How many cancel_rejected / modify_rejected events were emitted for the order so far. */
  refusalCount(orderId: string): number {
    return this.refusals.get(orderId) ?? 0;
  }

  // ---------------------------------------------------------------------------------------------
  // Snapshots: read synchronously, so every event committed afterwards arrives as a later update.

  orderSnapshot(userId: string): OrderUpdate[] {
    const out: OrderUpdate[] = [];
    for (const o of this.live.liveOrders(userId)) {
      const inst = this.registry.get(o.symbol);
      if (inst) out.push(orderUpdate(o, inst, o.filled_steps === '0' ? 'open' : 'partial_fill', undefined, 'snapshot'));
    }
    return out;
  }

  positionSnapshot(userId: string): PositionUpdate[] {
    const out: PositionUpdate[] = [];
    for (const p of this.live.openPositions(userId)) {
      const inst = this.registry.get(p.symbol);
      // The spec's position push always has update_reason; a snapshot frame gives the last change's.
      if (inst) out.push(positionUpdate(p, inst, this.live.lastReason(userId, p.symbol), this.marks?.markTicks(p.symbol) ?? null));
    }
    return out;
  }

  alertSnapshot(userId: string): Record<string, unknown>[] {
    return [...(this.alerts.get(userId)?.values() ?? [])].map(marginAlertData);
  }

  /**
   * The transparency snapshot: the overview last published. Call announceTransparency() first, so
   * a change not yet announced reaches the existing subscribers as an update before a new
   * subscriber's snapshot already holds it.
   */
  transparencySnapshot(): Record<string, unknown> {
    return this.transparency.current;
  }

  instrumentSnapshot(): Record<string, unknown>[] {
    const { version, instruments } = this.registry.list();
    return instruments.map((i) => instrumentData(i, version));
  }

  // ---------------------------------------------------------------------------------------------
  // Events

  private onOrder(e: OrderEvent): void {
    this.live.trackOrder(e.order);
    if (e.message_type === 'cancel_rejected' || e.message_type === 'modify_rejected') {
      this.refusals.set(e.order.order_id, (this.refusals.get(e.order.order_id) ?? 0) + 1);
      if (this.refusals.size > 10_000) this.refusals.delete(this.refusals.keys().next().value as string);
    }
    const subs = this.byUser.get(e.order.user_id);
    if (!subs) return;
    const inst = this.registry.get(e.order.symbol);
    if (!inst) return this.log.error({ symbol: e.order.symbol }, 'order event for an unknown instrument');
    const update = orderUpdate(e.order, inst, e.message_type, e.reject_reason);
    for (const s of subs) s.deliver('orders', { kind: 'order', update });
  }

  /** Announces an order event that happened at this socket layer (a refusal before anything was submitted). */
  emitLocal(userId: string, update: OrderUpdate): void {
    for (const s of this.byUser.get(userId) ?? []) s.deliver('orders', { kind: 'order', update });
  }

  private onPosition(e: PositionEvent): void {
    this.live.trackPosition(e.position, e.update_reason);
    const key = positionKey(e.position.user_id, e.position.symbol);
    if (e.update_reason === 'mark_price') {
      const last = this.lastMark.get(key);
      const now = this.clock.nowMs();
      if (last !== undefined && now - last < this.markThrottleMs) {
        this.heldMark.set(key, e); // the newest mark wins; sent when the second is over (sweep)
        return;
      }
      this.lastMark.set(key, now);
    } else {
      this.heldMark.delete(key); // this update carries a newer state than any held mark update
    }
    this.sendPosition(e);
  }

  private sendPosition(e: PositionEvent): void {
    const subs = this.byUser.get(e.position.user_id);
    if (!subs) return;
    const inst = this.registry.get(e.position.symbol);
    if (!inst) return;
    const update = positionUpdate(e.position, inst, e.update_reason, this.marks?.markTicks(e.position.symbol) ?? null);
    for (const s of subs) s.deliver('positions', { kind: 'position', update });
  }

  private onAlert(e: MarginAlertEvent): void {
    let m = this.alerts.get(e.user_id);
    if (e.tier === 'Healthy') {
      m?.delete(e.symbol);
      if (m && m.size === 0) this.alerts.delete(e.user_id);
    } else {
      if (!m) this.alerts.set(e.user_id, (m = new Map()));
      m.set(e.symbol, e);
    }
    // The spec pushes margin alerts to the account's connected clients: every logged-in socket gets
    // it, on the margin_alerts channel (with its seq) if subscribed, else as a `margin_alert` event.
    const data = marginAlertData(e);
    for (const s of this.byUser.get(e.user_id) ?? []) {
      if (s.subscribed('margin_alerts')) s.deliver('margin_alerts', { kind: 'plain', data });
      else s.notify('margin_alert', data);
    }
  }

  /** Timers: releases held mark_price updates whose second is over; announces instrument changes. */
  sweep(): void {
    const now = this.clock.nowMs();
    for (const [key, e] of this.heldMark) {
      const last = this.lastMark.get(key) ?? 0;
      if (now - last >= this.markThrottleMs) {
        this.heldMark.delete(key);
        this.lastMark.set(key, now);
        this.sendPosition(e);
      }
    }
    for (const [key, at] of this.lastMark) if (now - at >= this.markThrottleMs && !this.heldMark.has(key)) this.lastMark.delete(key);
    if (this.registry.listVersion !== this.instrumentVersion) this.announceInstruments();
    this.announceTransparency();
  }

  /** Pushes the overview to every transparency subscriber if REST would now serve a different one. */
  announceTransparency(): void {
    const data = this.transparency.poll();
    if (data === null) return;
    for (const s of this.everyone) s.deliver('transparency', { kind: 'plain', data });
  }

  private announceInstruments(): void {
    const { version, instruments } = this.registry.list();
    this.instrumentVersion = version;
    const changed: InstrumentSpec[] = instruments.filter((i) => this.instrumentStatus.get(i.symbol) !== i.status);
    for (const i of instruments) this.instrumentStatus.set(i.symbol, i.status);
    for (const i of changed) {
      const data = instrumentData(i, version);
      for (const s of this.everyone) s.deliver('instruments', { kind: 'plain', data });
    }
  }
}
