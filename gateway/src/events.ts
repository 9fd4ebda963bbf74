// Order and position events, emitted after the state change that caused them is committed. The REST
// interface does not need them; the WebSocket channels and SSE streams (later issues) subscribe here.
import { EventEmitter } from 'node:events';
import type { OrderRec, PositionRec } from './store/records';

export type OrderMessageType = 'open' | 'partial_fill' | 'filled' | 'cancelled' | 'rejected' | 'cancel_rejected';
export type PositionUpdateReason = 'fill' | 'closed';

export interface OrderEvent {
  message_type: OrderMessageType;
  order: OrderRec;
  /** reject reason of a cancel_rejected event (the order itself is unchanged) */
  reject_reason?: string;
}

export interface PositionEvent {
  update_reason: PositionUpdateReason;
  position: PositionRec;
}

interface EventMap {
  order: [OrderEvent];
  position: [PositionEvent];
}

/** Typed emitter of committed order and position changes. */
export class GatewayEvents extends EventEmitter<EventMap> {
  constructor() {
    super();
    this.setMaxListeners(1_000);
  }
}
