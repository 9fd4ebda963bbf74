// @tenebra/gateway: the REST gateway as a library (the process entry point is main.ts).
export { createGateway, checkConfig, type Gateway, type GatewayOptions, type GatewayUrls, type SequencerLink } from './gateway';
export { GatewayEvents, type OrderEvent, type PositionEvent, type OrderMessageType, type MarginAlertEvent, type SettlementEvent } from './events';
export { ERR, ApiError, type ErrorName } from './errors';
export { TIER_INFO, TIERS, PUBLIC_REST_LIMITS, ACTION_WEIGHT_MILLI, type Tier, type TierInfo, type RestLimits } from './tiers';
export { ManualClock, systemClock, type GatewayClock } from './clock';
export { openResult, decodeOutputs, OpSealer } from './sharing';
export { ADMIN_SECRET_HEADER, DEFAULT_LEVERAGE } from './http/routes-admin';
export type { SequencerPort } from './orders/service';
export { WsServer } from './ws/server';
export { WS_PATH, WS_ERRORS, CHANNELS, DEFAULT_WS_OPTIONS, type WsOptions, type Channel } from './ws/protocol';
export { SseServer, DEFAULT_SSE_OPTIONS, type SseOptions } from './sse/routes';
