// The spec's quote-rest rule (Limits, per-symbol per-account rules): "1 millisecond between price
// improvements, per symbol". Read as: on each symbol and side, a resting quote of an account (a
// GTC/GTT limit order placed, or its price modified) that improves on the account's previous quote
// there (a higher bid, a lower ask) must come at least 1 ms after that previous quote. The gateway
// sees every quote of the account, so it enforces the rule before anything reaches the committee:
// 429 rate_limited with an integer `retry_after_ms` in the error's data (docs/orders.md). Orders
// that never rest (IOC, FOK, market) are not quotes; pegs follow the oracle, not the trader.
import { ApiError } from '../errors';
import type { Side } from '../store/records';

/** The spec's rest: 1 ms between price improvements. */
export const QUOTE_REST_NS = 1_000_000n;
/** Sides remembered at most (oldest forgotten first: an entry older than the rest matters no more). */
const MAX_KEYS = 100_000;

export class QuoteRest {
  private readonly last = new Map<string, { priceTicks: bigint; atNs: bigint }>();

  constructor(private readonly restNs: bigint = QUOTE_REST_NS) {}

  /** Throws rate_limited when a quote at priceTicks would improve on this side's previous quote less than the rest after it. */
  check(userId: string, symbol: string, side: Side, priceTicks: bigint, nowNs: bigint): void {
    const prev = this.last.get(key(userId, symbol, side));
    if (!prev) return;
    const improves = side === 'buy' ? priceTicks > prev.priceTicks : priceTicks < prev.priceTicks;
    const waited = nowNs - prev.atNs;
    if (!improves || waited >= this.restNs) return;
    const leftNs = this.restNs - waited;
    const retryMs = Number((leftNs + 999_999n) / 1_000_000n);
    throw new ApiError('rate_limited',
      `quote rest: a ${side === 'buy' ? 'bid' : 'ask'} on ${symbol} may improve on your previous one (${prev.priceTicks} ticks) only ${Number(this.restNs) / 1e6} ms after it; retry in ${retryMs} ms`,
      { retry_after_ms: retryMs },
      // the spec's 429 headers; Retry-After is whole seconds, so the sub-second hint is retry_after_ms
      // and Retry-After-Ms, as for every trading admission refusal (docs/api.md "Rate limits")
      { 'X-RateLimit-Limit': '1', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(Number((nowNs + leftNs) / 1_000_000_000n) + 1), 'Retry-After': '1', 'Retry-After-Ms': String(retryMs) });
  }

  /** Records an accepted quote (the side's newest price and time). */
  record(userId: string, symbol: string, side: Side, priceTicks: bigint, nowNs: bigint): void {
    const k = key(userId, symbol, side);
    this.last.delete(k);
    if (this.last.size >= MAX_KEYS) {
      const oldest = this.last.keys().next().value;
      if (oldest !== undefined) this.last.delete(oldest);
    }
    this.last.set(k, { priceTicks, atNs: nowNs });
  }
}

const key = (userId: string, symbol: string, side: Side): string => `${userId}\n${symbol}\n${side}`;
