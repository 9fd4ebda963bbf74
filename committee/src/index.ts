export { BatchApplier, decodeOp, toWireOutcome, type OpInput, type IncomingOp } from './apply';
