export { BatchApplier, committeeBookWidths, decodeOp, toWireOutcome, type OpInput, type IncomingOp } from './apply';
export { encodeOp } from './op-encoding';
export { linkControlRoute, parseUpdate, LINK_CONTROL_PATH, type LinkSettingsJson, type LinkTarget } from './link-control';
