// Per-key request budgets: a fixed one-minute window (the X-RateLimit-* headers report it) plus a
// token bucket of `perSecond` refill and `burst` capacity, and a weighted trading-action budget per
// minute. Keys are 'acct:<user_id>' for authenticated requests and 'ip:<address>' otherwise.
// In memory, per process; bounded by MAX_KEYS (least recently used keys are evicted).
import type { RestLimits } from './tiers';

const MAX_KEYS = 100_000;
const MINUTE_MS = 60_000;

export interface RateDecision {
  allowed: boolean;
  /** X-RateLimit-Limit */
  limit: number;
  /** X-RateLimit-Remaining */
  remaining: number;
  /** X-RateLimit-Reset: Unix seconds */
  reset: number;
  /** Retry-After seconds when not allowed */
  retryAfter: number;
}

interface KeyState {
  windowStart: number;
  count: number;
  tokens: number;
  tokensAt: number;
  actionWindowStart: number;
  actionMilli: number;
}

export class RateLimiter {
  private readonly keys = new Map<string, KeyState>();

  constructor(private readonly nowMs: () => number) {}

  private state(key: string, now: number, burst: number): KeyState {
    let s = this.keys.get(key);
    if (s) {
      this.keys.delete(key); // re-insert: Map order is our LRU order
    } else {
      s = { windowStart: windowOf(now), count: 0, tokens: burst, tokensAt: now, actionWindowStart: windowOf(now), actionMilli: 0 };
      if (this.keys.size >= MAX_KEYS) {
        const oldest = this.keys.keys().next().value;
        if (oldest !== undefined) this.keys.delete(oldest);
      }
    }
    this.keys.set(key, s);
    return s;
  }

  /** Counts one REST request for key under limits; says whether it may proceed and what to report. */
  request(key: string, limits: RestLimits): RateDecision {
    const now = this.nowMs();
    const s = this.state(key, now, limits.burst);
    const w = windowOf(now);
    if (w !== s.windowStart) {
      s.windowStart = w;
      s.count = 0;
    }
    s.tokens = Math.min(limits.burst, s.tokens + ((now - s.tokensAt) / 1000) * limits.perSecond);
    s.tokensAt = now;
    const reset = Math.ceil((s.windowStart + MINUTE_MS) / 1000);
    if (s.count >= limits.perMinute) {
      return { allowed: false, limit: limits.perMinute, remaining: 0, reset, retryAfter: Math.max(1, reset - Math.floor(now / 1000)) };
    }
    if (s.tokens < 1) {
      // Short-term (per-second / burst) budget exhausted: report that budget, which is the binding one.
      const waitMs = ((1 - s.tokens) / limits.perSecond) * 1000;
      const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
      return { allowed: false, limit: limits.burst, remaining: 0, reset: Math.ceil((now + waitMs) / 1000), retryAfter };
    }
    s.count++;
    s.tokens -= 1;
    return { allowed: true, limit: limits.perMinute, remaining: limits.perMinute - s.count, reset, retryAfter: 0 };
  }

  /** Charges weightMilli against the per-minute trading-action budget (ordersPerMinute actions). */
  action(key: string, ordersPerMinute: number, weightMilli: number): RateDecision {
    const now = this.nowMs();
    const s = this.state(key, now, 0);
    const w = windowOf(now);
    if (w !== s.actionWindowStart) {
      s.actionWindowStart = w;
      s.actionMilli = 0;
    }
    const budget = ordersPerMinute * 1000;
    const reset = Math.ceil((s.actionWindowStart + MINUTE_MS) / 1000);
    if (s.actionMilli + weightMilli > budget) {
      return { allowed: false, limit: ordersPerMinute, remaining: 0, reset, retryAfter: Math.max(1, reset - Math.floor(now / 1000)) };
    }
    s.actionMilli += weightMilli;
    return { allowed: true, limit: ordersPerMinute, remaining: Math.floor((budget - s.actionMilli) / 1000), reset, retryAfter: 0 };
  }

  /** Number of keys tracked (for tests and metrics). */
  get size(): number {
    return this.keys.size;
  }
}

function windowOf(nowMs: number): number {
  return Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
}
