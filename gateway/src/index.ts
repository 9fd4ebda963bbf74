// @tenebra/gateway: the REST gateway as a library (the process entry point is main.ts).
export { createGateway, checkConfig, type Gateway, type GatewayOptions, type GatewayUrls, type SequencerLink } from './gateway';
export { GatewayEvents, type OrderEvent, type PositionEvent, type OrderMessageType } from './events';
export { ERR, ApiError, type ErrorName } from './errors';
export { TIER_INFO, TIERS, PUBLIC_REST_LIMITS, ACTION_WEIGHT_MILLI, type Tier, type TierInfo, type RestLimits } from './tiers';
export { ManualClock, systemClock, type GatewayClock } from './clock';
export { openResult, decodeOutputs, OpSealer } from './sharing';
export { ADMIN_SECRET_HEADER, DEFAULT_LEVERAGE } from './http/routes-admin';
export type { SequencerPort } from './orders/service';
