// Which order shapes matching supports (the spec leaves the matrix open). Only public fields are
// checked here; the gateway checks the secret ones (ranges, min_fill <= qty) before sharing them.
//
//            GTC  GTT  IOC  FOK
//   limit     ✓    ✓    ✓    ✓
//   peg       ✓    ✓    ✓    ✓      (price supplied by the committee driver from the oracle)
//   market    ✗    ✗    ✓    ✓      (a market order never rests; optional price = cap)
//   aon       ✗    ✗    ✓    ✓      (IOC+aon behaves as FOK; FOK is all-or-none already)
//   min_fill  ✗    ✗    ✓    ✗      (a minimum per execution, spec; not with FOK or aon: MIN_FILL_AON)
// Resting aon / min_fill would make every taker test each such maker and skip it (and an all-or-none
// taker's liquidity pass sum only what it could take): docs/decisions/0019-order-semantics-issue-26.md.
import type { ModifyOp, PlaceOp } from './types';
import { UnsupportedOrderError } from './types';

/** Returns why a placement is unsupported, or null when it is supported. */
export function checkPlace<S>(op: PlaceOp<S>): UnsupportedOrderError | null {
  const immediate = op.tif === 'IOC' || op.tif === 'FOK';
  if (op.type === 'market' && !immediate) {
    return new UnsupportedOrderError('MARKET_TIF', `market orders never rest: time_in_force must be IOC or FOK, not ${op.tif}`);
  }
  if (op.aon === true && !immediate) {
    return new UnsupportedOrderError('AON_TIF', 'aon is supported only with IOC or FOK: a resting all-or-none order would cost every taker a secret test per such maker (and its all-or-none pass a conditional sum), on shares');
  }
  if (op.minFill != null && !immediate) {
    return new UnsupportedOrderError('MIN_FILL_TIF', 'min_fill_size is supported only with IOC: a resting minimum per execution would cost every taker a secret test per such maker, on shares');
  }
  if (op.minFill != null && (op.tif === 'FOK' || op.aon === true)) {
    return new UnsupportedOrderError('MIN_FILL_AON', 'min_fill_size is not supported with FOK or aon: an all-or-none order whose every execution must reach a minimum cannot be decided by one liquidity test');
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
