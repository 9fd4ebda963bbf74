// Per-key request budgets: a fixed one-minute window (the X-RateLimit-* headers report it) plus a
// token bucket of `perSecond` refill and `burst` capacity, a weighted trading-action budget per
// minute (Orders/min: placements, modifies, mass quotes), a cancel count per minute (Cancels/min,
// its own budget, so cancelling never competes with placing) and a mass-quote batch count per minute. Keys are 'acct:<user_id>' for authenticated
// requests and 'ip:<address>' otherwise. Bounded by MAX_KEYS (least recently used keys are evicted).
//
// The minute windows survive a restart: RateLimitPersistence writes the changed windows to lmdb
// about once a second and on stop, and restores the windows still current at start (a crash can
// forget at most the last second of counts). The token bucket is not persisted: it refills to its
// burst within seconds anyway.
//
// TradingGuard adds what a per-account minute budget cannot express: the per-symbol, per-account
// spacing of actions and the venue's system-wide caps (global and per symbol weighted actions per
// second), which refuse rather than queue (docs/api.md, "Rate limits").
import type { Database } from 'lmdb';
import type { GatewayDb } from './store/db';
import {
  ACTION_SPACING_NS, ACTION_WEIGHT_MILLI, SYSTEM_CAPS, TIER_INFO, type RestLimits, type Tier, type TradingAction,
} from './tiers';

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
  mqWindowStart: number;
  mqCount: number;
  cancelWindowStart: number;
  cancelCount: number;
}

/** The persisted part of a key's state: its minute windows. */
export interface SavedWindows {
  w: number;
  c: number;
  aw: number;
  am: number;
  mw: number;
  mc: number;
  /** cancel window and count (absent in windows saved before cancels had their own budget) */
  xw?: number;
  xc?: number;
}

export class RateLimiter {
  private readonly keys = new Map<string, KeyState>();
  private readonly dirty = new Set<string>();

  constructor(private readonly nowMs: () => number) {}

  private state(key: string, now: number, burst: number): KeyState {
    let s = this.keys.get(key);
    if (s) {
      this.keys.delete(key); // re-insert: Map order is our LRU order
    } else {
      const w = windowOf(now);
      s = { windowStart: w, count: 0, tokens: burst, tokensAt: now, actionWindowStart: w, actionMilli: 0, mqWindowStart: w, mqCount: 0, cancelWindowStart: w, cancelCount: 0 };
      if (this.keys.size >= MAX_KEYS) {
        const oldest = this.keys.keys().next().value;
        if (oldest !== undefined) {
          this.keys.delete(oldest);
          this.dirty.delete(oldest);
        }
      }
    }
    this.keys.set(key, s);
    this.dirty.add(key);
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
    // a wall clock that steps back must not drain the bucket (elapsed time is never negative)
    s.tokens = Math.min(limits.burst, s.tokens + (Math.max(0, now - s.tokensAt) / 1000) * limits.perSecond);
    s.tokensAt = Math.max(now, s.tokensAt);
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

  /** Counts one mass-quote batch against a per-minute batch count (the Mass quote batches/min column). */
  massQuote(key: string, perMinute: number): RateDecision {
    const now = this.nowMs();
    const s = this.state(key, now, 0);
    const w = windowOf(now);
    if (w !== s.mqWindowStart) {
      s.mqWindowStart = w;
      s.mqCount = 0;
    }
    const reset = Math.ceil((s.mqWindowStart + MINUTE_MS) / 1000);
    if (s.mqCount >= perMinute) {
      return { allowed: false, limit: perMinute, remaining: 0, reset, retryAfter: Math.max(1, reset - Math.floor(now / 1000)) };
    }
    s.mqCount++;
    return { allowed: true, limit: perMinute, remaining: perMinute - s.mqCount, reset, retryAfter: 0 };
  }

  /** Counts one cancel against the per-minute cancel count (the Cancels/min column), apart from Orders/min. */
  cancel(key: string, perMinute: number): RateDecision {
    const now = this.nowMs();
    const s = this.state(key, now, 0);
    const w = windowOf(now);
    if (w !== s.cancelWindowStart) {
      s.cancelWindowStart = w;
      s.cancelCount = 0;
    }
    const reset = Math.ceil((s.cancelWindowStart + MINUTE_MS) / 1000);
    if (s.cancelCount >= perMinute) {
      return { allowed: false, limit: perMinute, remaining: 0, reset, retryAfter: Math.max(1, reset - Math.floor(now / 1000)) };
    }
    s.cancelCount++;
    return { allowed: true, limit: perMinute, remaining: perMinute - s.cancelCount, reset, retryAfter: 0 };
  }

  /** Number of keys tracked (for tests and metrics). */
  get size(): number {
    return this.keys.size;
  }

  /** The minute windows changed since the last call that are still current (for persistence). */
  takeDirty(): [string, SavedWindows][] {
    const w = windowOf(this.nowMs());
    const out: [string, SavedWindows][] = [];
    for (const key of this.dirty) {
      const s = this.keys.get(key);
      if (!s) continue;
      const saved = save(s, w);
      if (saved) out.push([key, saved]);
    }
    this.dirty.clear();
    return out;
  }

  /** Restores persisted minute windows; windows that have ended are ignored. Returns the keys that came back. */
  restore(entries: Iterable<[string, SavedWindows]>): Set<string> {
    const now = this.nowMs();
    const w = windowOf(now);
    const back = new Set<string>();
    for (const [key, v] of entries) {
      if (this.keys.size >= MAX_KEYS) break;
      if (v.w !== w && v.aw !== w && v.mw !== w && v.xw !== w) continue;
      this.keys.set(key, {
        // the token bucket starts full (request() caps it at the burst)
        windowStart: w, count: v.w === w ? v.c : 0, tokens: Number.MAX_SAFE_INTEGER, tokensAt: now,
        actionWindowStart: w, actionMilli: v.aw === w ? v.am : 0, mqWindowStart: w, mqCount: v.mw === w ? v.mc : 0,
        cancelWindowStart: w, cancelCount: v.xw === w ? (v.xc ?? 0) : 0,
      });
      back.add(key);
    }
    return back;
  }
}

/**
 * Charges one trading action of acct against its tier's minute budgets (REST and WebSocket alike):
 * a cancel counts one against Cancels/min; a placement, modify or mass quote its weight against
 * Orders/min (docs/api.md, "Rate limits"). Null when admitted; else the refusal to report.
 */
export function minuteBudgetRefusal(limiter: RateLimiter, acct: { user_id: string; tier: Tier }, kind: TradingAction): { decision: RateDecision; detail: string } | null {
  const info = TIER_INFO[acct.tier];
  const key = `acct:${acct.user_id}`;
  if (kind === 'cancel') {
    const d = limiter.cancel(key, info.cancelsPerMinute);
    return d.allowed ? null : { decision: d, detail: `the ${acct.tier} tier's budget of ${d.limit} cancels per minute is spent; retry after ${d.retryAfter} s` };
  }
  const d = limiter.action(key, info.ordersPerMinute, ACTION_WEIGHT_MILLI[kind]);
  return d.allowed ? null : { decision: d, detail: `trading action budget of ${d.limit} weighted actions per minute is spent; retry after ${d.retryAfter} s` };
}

function save(s: KeyState, w: number): SavedWindows | null {
  if (s.windowStart !== w && s.actionWindowStart !== w && s.mqWindowStart !== w && s.cancelWindowStart !== w) return null;
  return { w: s.windowStart, c: s.count, aw: s.actionWindowStart, am: s.actionMilli, mw: s.mqWindowStart, mc: s.mqCount, xw: s.cancelWindowStart, xc: s.cancelCount };
}

function windowOf(nowMs: number): number {
  return Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
}

/** Writes a RateLimiter's minute windows to lmdb and brings them back after a restart. */
export class RateLimitPersistence {
  private readonly table: Database<SavedWindows, string>;

  constructor(db: GatewayDb, private readonly limiter: RateLimiter) {
    this.table = db.root.openDB<SavedWindows, string>({ name: 'ratelimits' });
  }

  /** Restores the windows still current and deletes the ended ones; returns how many keys came back. */
  load(): number {
    const all: [string, SavedWindows][] = [];
    for (const { key, value } of this.table.getRange()) all.push([key, value]);
    const restored = this.limiter.restore(all);
    // windows that have ended leave the disk; restored ones stay until the next flush overwrites them
    const ended = all.filter(([k]) => !restored.has(k));
    if (ended.length) this.table.transactionSync(() => {
      for (const [k] of ended) this.table.removeSync(k);
    });
    return restored.size;
  }

  /** Persists the windows changed since the last flush (one batched transaction). */
  async flush(): Promise<void> {
    const changed = this.limiter.takeDirty();
    if (changed.length === 0) return;
    // batch (one atomic write the write thread runs alone), not transaction: a transaction's callback
    // needs the main thread while the write thread waits, so an exit then would hang (committee
    // node-store.ts has the case)
    await this.table.batch(() => {
      for (const [k, v] of changed) void this.table.put(k, v);
    });
  }
}

/** Why TradingGuard refused an action, with what to report. */
export type Admission =
  | { ok: true }
  | { ok: false; error: 'rate_limited' | 'VENUE_AT_CAPACITY' | 'tier_not_eligible'; detail: string; decision: RateDecision; retryAfterMs?: number };

interface SecondWindow {
  second: number;
  milli: number;
}

/** A refusal by a one-second budget (spacing, venue caps); a plain function: tsx's keepNames would wrap a closure made per admission in a naming call. */
function refusedThisSecond(limit: number, sec: number): RateDecision {
  return { allowed: false, limit, remaining: 0, reset: sec + 1, retryAfter: 1 };
}

/**
 * Admission of one trading action beyond the per-account minute budget: mass quotes by tier (and
 * their batch count), the per-symbol per-account spacing (placement 1 ms, cancel 200 µs, modify and
 * mass quote 1 ms) and the system caps (10,000 weighted actions/s overall, 5,000 per symbol).
 * Nothing is charged unless every check passes.
 */
export class TradingGuard {
  private readonly last = new Map<string, bigint>();
  private global: SecondWindow = { second: 0, milli: 0 };
  private readonly perSymbol = new Map<string, SecondWindow>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly nowNs: () => bigint,
    private readonly caps: { globalMilliPerSecond: number; perSymbolMilliPerSecond: number } = SYSTEM_CAPS,
  ) {}

  /** Admits (and charges) one action of userId at tier on symbol (null when the symbol is not known yet). */
  admit(userId: string, tier: Tier, kind: TradingAction, symbol: string | null): Admission {
    const ns = this.nowNs();
    const ms = Number(ns / 1_000_000n);
    const sec = Math.floor(ms / 1000);
    const weight = ACTION_WEIGHT_MILLI[kind];
    const info = TIER_INFO[tier];

    if (kind === 'massQuote' && info.massQuotesPerMinute === null) {
      return { ok: false, error: 'tier_not_eligible', detail: `mass quotes are available to the Prime and Apex tiers; this account is ${tier}`, decision: refusedThisSecond(0, sec) };
    }
    const spacingKey = symbol === null ? null : `${userId}\n${symbol}\n${kind}`;
    if (spacingKey !== null) {
      const prev = this.last.get(spacingKey);
      const gap = ACTION_SPACING_NS[kind];
      if (prev !== undefined && ns - prev < gap) {
        return {
          ok: false, error: 'rate_limited', decision: refusedThisSecond(1, sec),
          // Retry-After is whole seconds; the spacing frees up within a millisecond (issue 24)
          retryAfterMs: Math.max(1, Math.ceil(Number(gap - (ns - prev)) / 1e6)),
          detail: `at most one ${kind} per ${Number(gap) / 1000} µs per symbol and account on ${symbol}`,
        };
      }
    }
    const g = this.roll(this.global, sec);
    if (g.milli + weight > this.caps.globalMilliPerSecond) {
      return { ok: false, error: 'VENUE_AT_CAPACITY', detail: `the venue is at its cap of ${this.caps.globalMilliPerSecond / 1000} weighted actions per second; retry with exponential backoff from 1 s`, decision: refusedThisSecond(this.caps.globalMilliPerSecond / 1000, sec) };
    }
    let s: SecondWindow | null = null;
    if (symbol !== null) {
      s = this.roll(this.perSymbol.get(symbol) ?? { second: sec, milli: 0 }, sec);
      if (s.milli + weight > this.caps.perSymbolMilliPerSecond) {
        return { ok: false, error: 'VENUE_AT_CAPACITY', detail: `${symbol} is at its cap of ${this.caps.perSymbolMilliPerSecond / 1000} weighted actions per second; retry with exponential backoff from 1 s`, decision: refusedThisSecond(this.caps.perSymbolMilliPerSecond / 1000, sec) };
      }
    }
    if (kind === 'massQuote') {
      const d = this.limiter.massQuote(`acct:${userId}`, info.massQuotesPerMinute!);
      if (!d.allowed) return { ok: false, error: 'rate_limited', decision: d, detail: `the ${tier} tier allows ${d.limit} mass quote batches per minute; retry after ${d.retryAfter} s` };
    }
    // Every check passed: charge.
    g.milli += weight;
    this.global = g;
    if (s !== null) {
      s.milli += weight;
      this.perSymbol.set(symbol!, s);
    }
    if (spacingKey !== null) {
      this.last.delete(spacingKey);
      if (this.last.size >= MAX_KEYS) {
        const oldest = this.last.keys().next().value;
        if (oldest !== undefined) this.last.delete(oldest);
      }
      this.last.set(spacingKey, ns);
    }
    return { ok: true };
  }

  private roll(w: SecondWindow, sec: number): SecondWindow {
    return w.second === sec ? w : { second: sec, milli: 0 };
  }
}
