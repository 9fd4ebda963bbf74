// The account notifications of /events/notifications: fills, margin alerts and settlements, taken
// from the committed gateway events. Each gets an id `<epoch>.<n>` (n rising across the process) and
// is kept in a bounded per-account history, so a client that reconnects with Last-Event-ID receives
// what it missed, or a `reset` event when that history is gone (another gateway run, or too old).
import { microToUsdc } from '@tenebra/config';
import type { BonusEvent, GatewayEvents, MarginAlertEvent, OrderEvent, SettlementEvent } from '../events';
import { RawNumber } from '../json';
import type { InstrumentRegistry } from '../instruments';
import { orderView } from '../orders/view';
import { marginAlertData } from '../ws/hub';

export interface Notification {
  id: string;
  n: number;
  event: 'fill' | 'margin_alert' | 'settlement' | 'bonus';
  data: Record<string, unknown>;
}

/** Notifications kept per account for resumption. */
export const HISTORY_PER_ACCOUNT = 500;
/** Accounts with a history at most (least recently notified ones are forgotten). */
export const MAX_ACCOUNTS = 10_000;

export type Listener = (n: Notification) => void;

export class NotificationLog {
  private n = 0;
  private readonly history = new Map<string, { items: Notification[]; droppedUpTo: number }>();
  /** newest n of any history forgotten whole (MAX_ACCOUNTS): resumption before it cannot be proven complete */
  private evictedUpTo = 0;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly off: (() => void)[] = [];

  constructor(
    readonly epoch: number,
    private readonly registry: InstrumentRegistry,
    events: GatewayEvents,
  ) {
    const onOrder = (e: OrderEvent) => this.onOrder(e);
    const onAlert = (e: MarginAlertEvent) => this.add(e.user_id, 'margin_alert', marginAlertData(e));
    const onSettlement = (e: SettlementEvent) =>
      this.add(e.user_id, 'settlement', { ...e.detail, batch_id: e.batch_id, status: e.status, at_ns: e.at_ns });
    events.on('order', onOrder);
    events.on('margin_alert', onAlert);
    events.on('settlement', onSettlement);
    const onBonus = (e: BonusEvent) => this.add(e.user_id, 'bonus', bonusData(e));
    events.on('bonus', onBonus);
    this.off.push(() => events.off('order', onOrder), () => events.off('margin_alert', onAlert), () => events.off('settlement', onSettlement), () => events.off('bonus', onBonus));
  }

  close(): void {
    for (const f of this.off.splice(0)) f();
  }

  /** Calls l with every later notification of the account; returns the unsubscribe function. */
  listen(userId: string, l: Listener): () => void {
    let set = this.listeners.get(userId);
    if (!set) this.listeners.set(userId, (set = new Set()));
    set.add(l);
    return () => {
      set.delete(l);
      if (set.size === 0) this.listeners.delete(userId);
    };
  }

  /**
   * What a client that last saw lastEventId missed: the notifications after it, or null when they
   * cannot be known (another epoch, malformed, or older than the kept history).
   */
  since(userId: string, lastEventId: string): Notification[] | null {
    const m = /^(\d+)\.(\d+)$/.exec(lastEventId);
    if (!m || Number(m[1]) !== this.epoch) return null;
    const last = Number(m[2]);
    if (last > this.n) return null;
    const h = this.history.get(userId);
    // Complete only if nothing of this account after `last` was dropped from the history.
    if (h ? h.droppedUpTo > last : this.evictedUpTo > last) return null;
    return h ? h.items.filter((x) => x.n > last) : [];
  }

  /** The id of the newest notification of any account (a resume point for a fresh stream). */
  get currentId(): string {
    return `${this.epoch}.${this.n}`;
  }

  private onOrder(e: OrderEvent): void {
    if (e.message_type !== 'partial_fill' && e.message_type !== 'filled') return;
    const inst = this.registry.get(e.order.symbol);
    if (!inst) return;
    const v = orderView(e.order, inst);
    this.add(e.order.user_id, 'fill', {
      order_id: v.order_id, client_order_id: v.client_order_id, symbol: v.symbol, side: v.side,
      fill_qty: v.last_fill_qty, fill_price: v.last_fill_price, filled_quantity: v.filled_quantity,
      remaining_quantity: v.remaining_quantity, average_fill_price: v.average_fill_price, status: v.status, time_ns: v.out_time_ns,
      // instant taker bonus this fill credited (USDC; 0 when the order was the taker)
      instant_bonus: new RawNumber(microToUsdc(BigInt(e.order.last_fill_bonus ?? '0'))),
    });
  }

  private add(userId: string, event: Notification['event'], data: Record<string, unknown>): void {
    const n = ++this.n;
    const note: Notification = { id: `${this.epoch}.${n}`, n, event, data };
    let h = this.history.get(userId);
    if (h) this.history.delete(userId); // re-insert: Map order is least-recently-notified first
    else h = { items: [], droppedUpTo: this.evictedUpTo };
    h.items.push(note);
    if (h.items.length > HISTORY_PER_ACCOUNT) h.droppedUpTo = h.items.shift()!.n;
    this.history.set(userId, h);
    if (this.history.size > MAX_ACCOUNTS) {
      const [oldest, gone] = this.history.entries().next().value as [string, { items: Notification[] }];
      this.history.delete(oldest);
      this.evictedUpTo = Math.max(this.evictedUpTo, gone.items.at(-1)?.n ?? 0);
    }
    for (const l of this.listeners.get(userId) ?? []) l(note);
  }
}

/** The `bonus` notification: an hourly taker bonus credited to the balance (USDC amounts). */
function bonusData(e: BonusEvent): Record<string, unknown> {
  return {
    kind: e.kind, window_start: new Date(e.window_start_ms).toISOString(), window_end: new Date(e.window_end_ms).toISOString(),
    amount: new RawNumber(microToUsdc(e.amount)), maker_notional: new RawNumber(microToUsdc(e.notional)), time_ns: e.at_ns,
  };
}
