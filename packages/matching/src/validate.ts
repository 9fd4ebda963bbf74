// Which order shapes matching supports (the spec leaves the matrix open). Only public fields are
// checked here; the gateway checks the secret ones (ranges, min_fill <= qty) before sharing them.
//
//            GTC  GTT  IOC  FOK
//   limit     ✓    ✓    ✓    ✓
//   peg       ✓    ✓    ✓    ✓      (price supplied by the committee driver from the oracle)
//   market    ✗    ✗    ✓    ✓      (a market order never rests; optional price = cap)
//   aon       ✗    ✗    ✓    ✓      (IOC+aon behaves as FOK; FOK is all-or-none already)
//   min_fill  ✗    ✗    ✓    ✓      (applies to the entry execution; with FOK it is implied)
import type { ModifyOp, PlaceOp } from './types';
import { UnsupportedOrderError } from './types';

/** Returns why a placement is unsupported, or null when it is supported. */
export function checkPlace<S>(op: PlaceOp<S>): UnsupportedOrderError | null {
  const immediate = op.tif === 'IOC' || op.tif === 'FOK';
  if (op.type === 'market' && !immediate) {
    return new UnsupportedOrderError('MARKET_TIF', `market orders never rest: time_in_force must be IOC or FOK, not ${op.tif}`);
  }
  if (op.aon === true && !immediate) {
    return new UnsupportedOrderError('AON_TIF', 'aon is supported only with IOC or FOK: a resting all-or-none order would make takers skip it, breaking price-time priority');
  }
  if (op.minFill != null && !immediate) {
    return new UnsupportedOrderError('MIN_FILL_TIF', 'min_fill_size is supported only with IOC or FOK: it applies to the entry execution, and a resting minimum would make takers skip the order');
  }
  if (op.type !== 'market' && op.price == null) {
    return new UnsupportedOrderError('PRICE_REQUIRED', `${op.type} orders need a price (peg: the driver supplies it from the oracle reference)`);
  }
  if (op.tif === 'GTT' && op.expiresAtNs == null) {
    return new UnsupportedOrderError('EXPIRY_REQUIRED', 'GTT orders need expiresAtNs');
  }
  if (op.tif !== 'GTT' && op.expiresAtNs != null) {
    return new UnsupportedOrderError('EXPIRY_NOT_GTT', `expiresAtNs is only for GTT, not ${op.tif}`);
  }
  return null;
}

/** Returns why a modify is unsupported, or null. */
export function checkModify<S>(op: ModifyOp<S>): UnsupportedOrderError | null {
  if (op.mode === 'reduce' && op.price != null) {
    return new UnsupportedOrderError('REDUCE_WITH_PRICE', 'a price change loses priority: use mode replace');
  }
  return null;
}

/** Throws UnsupportedOrderError when the placement is unsupported (for callers that prefer throwing). */
export function assertSupported<S>(op: PlaceOp<S>): void {
  const err = checkPlace(op);
  if (err) throw err;
}
