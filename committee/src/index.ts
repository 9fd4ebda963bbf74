export { BatchApplier, decodeOp, toWireOutcome, type OpInput, type IncomingOp } from './apply';
export { linkControlRoute, parseUpdate, LINK_CONTROL_PATH, type LinkSettingsJson, type LinkTarget } from './link-control';
