// USDC amounts in request bodies: a JSON number or decimal string with at most 6 decimals, read
// exactly (never through a float) into micro-USDC.
import { formatDecimal, usdcToMicro } from '@tenebra/config';
import { ApiError } from '../errors';
import { decimalField } from '../orders/validate';

/** Largest amount one request may move: 10^12 USDC. */
const MAX_MICRO = 10n ** 18n;

/** The field as micro-USDC; invalid_request when it is not a non-negative decimal of micro precision within range. */
export function usdcField(v: unknown, field: string, allowZero: boolean): bigint {
  const d = decimalField(v, field, 'invalid_request');
  const micro = usdcToMicro(formatDecimal(d));
  if (micro === null) throw new ApiError('invalid_request', `${field} must have at most 6 decimal places (micro-USDC)`);
  if (!allowZero && micro === 0n) throw new ApiError('invalid_request', `${field} must be greater than 0`);
  if (micro > MAX_MICRO) throw new ApiError('invalid_request', `${field} is too large`);
  return micro;
}
