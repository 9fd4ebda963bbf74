// @tenebra/client: the TypeScript SDK for the Tenebra gateway (REST + encrypted WebSocket).
export * from './types';
export * from './errors';
export { RawNumber, parseJson, stringifyJson } from './json';
export { toDecimal, decimalOut, type Decimal, type DecimalInput } from './decimal';
export { toInstrument, toInstrumentList, toOrder, toOrderLike, toPosition, toPositions, orderEventFromUpdate, toFill, toAccount, toAccountVip, toWithdrawal, toMarketReference } from './normalize';
export { TIER_LIMITS, ACTION_WEIGHT, TokenBucket, RestPacer, jittered, type TradingAction } from './pacing';
export {
  TenebraRestClient,
  DEFAULT_BASE_URL,
  DEFAULT_PLACEMENT_MAX_AGE_MS,
  DEFAULT_OUTCOME_TIMEOUT_MS,
  MAX_CLIENT_ORDER_ID,
  MAX_MASS_QUOTE_LEGS,
  newClientOrderId,
  placementBody,
  rateLimitDelayMs,
  type Credentials,
  type RestClientOptions,
} from './rest';
export {
  TenebraSocket,
  DEFAULT_WS_URL,
  type SocketEvents,
  type SocketOptions,
  type SocketPlaceOrder,
  type SocketCancelOrder,
  type SocketModifyOrder,
  type SocketState,
  type TokenSource,
} from './socket';
export { newWithdrawalAddress } from './wallet';
export { ChannelTracker, type ChannelAction, type ChannelPhase, type PushMeta } from './channel';
export type { Ack, SystemHealth } from '@tenebra/session';
export { OrderBook, subDecimal } from './reconcile';
