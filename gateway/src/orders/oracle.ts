// A small simulated price oracle: the reference market Tenebra's mark prices and peg orders follow.
// A SimulatedMarket walks one reference mid per symbol (integer ticks, seeded); two feeds (primary
// and secondary) publish it on their own cadence with a timestamp. PriceOracle serves the primary's
// quote while it is fresh, the secondary's when the primary is stale or missing, and refuses (fail
// closed) when neither is fresh: pre-trade checks then reject the order (spec: "Price references").
// Nothing here is secret: the reference is public market data.
import { INSTRUMENTS, toUnits, MAX_BOOK_UNITS, type InstrumentSpec } from '@tenebra/config';
import type { GatewayClock } from '../clock';

/** One published reference quote, in integer ticks of the instrument. */
export interface ReferenceQuote {
  mid: bigint;
  bid: bigint;
  ask: bigint;
  /** when the feed published it (gateway clock, ms) */
  atMs: number;
}

/** A source of reference quotes. */
export interface PriceFeed {
  readonly name: string;
  quote(symbol: string): ReferenceQuote | undefined;
}

/** Reference prices at start, in USDC (each on its instrument's tick grid). */
export const REFERENCE_PRICES: Readonly<Record<string, string>> = {
  AAVE: '250', ADA: '0.5', APT: '8', ARB: '0.8', AVAX: '30', BNB: '600', BTC: '65000', DOGE: '0.15', DOT: '6',
  ETH: '3000', HYPE: '25', LINK: '15', NEAR: '5', PEPE: '0.00001', POL: '0.4', SOL: '150', SUI: '3', TRX: '0.12',
  UNI: '8', XRP: '0.6',
};

/** Bounds of the simulation, in basis points of the mid. */
const HALF_SPREAD_BPS = 2n;
const MAX_STEP_BPS = 3;
/**
 * Each step pulls the mid back toward its starting (or last set) price by 1/MEAN_REVERSION_STEPS of
 * the gap: the reference wanders around a fair value (standard deviation about 10 bps) instead of
 * drifting without bound, so positions opened near it do not turn over-leveraged by the simulation.
 */
const MEAN_REVERSION_STEPS = 50n;
/** Hard bound of the walk: within this factor of the starting price. */
const MAX_DRIFT_FACTOR = 2n;

export interface MarketOptions {
  /** seed of the walk (default 1) */
  seed?: number;
  /** move the mids at every step (default true); false keeps them where set (tests) */
  walk?: boolean;
}

/** The simulated reference market: one mid per symbol, moved by a seeded bounded random walk. */
export class SimulatedMarket {
  private readonly mids = new Map<string, bigint>();
  private readonly start = new Map<string, bigint>();
  private state: number;
  walk: boolean;

  constructor(instruments: readonly InstrumentSpec[] = INSTRUMENTS, opts: MarketOptions = {}) {
    this.state = (opts.seed ?? 1) >>> 0 || 1;
    this.walk = opts.walk ?? true;
    for (const inst of instruments) {
      const text = REFERENCE_PRICES[inst.base_asset];
      const ticks = text === undefined ? null : toUnits(text, inst.tick_size);
      if (ticks === null || ticks <= 0n) continue; // no reference: orders on it fail closed
      this.mids.set(inst.symbol, ticks);
      this.start.set(inst.symbol, ticks);
    }
  }

  /** Sets a symbol's mid (ticks); a later walk moves it from there. */
  set(symbol: string, midTicks: bigint): void {
    if (midTicks <= 0n || midTicks > MAX_BOOK_UNITS) throw new RangeError(`reference mid ${midTicks} out of range`);
    this.mids.set(symbol, midTicks);
    this.start.set(symbol, midTicks);
  }

  /** Removes a symbol from the market (its quotes go missing). */
  remove(symbol: string): void {
    this.mids.delete(symbol);
  }

  /** The current quote of a symbol (bid/ask a few bps around the mid, at least a tick away). */
  quote(symbol: string): Omit<ReferenceQuote, 'atMs'> | undefined {
    const mid = this.mids.get(symbol);
    if (mid === undefined) return undefined;
    let half = (mid * HALF_SPREAD_BPS) / 10_000n;
    if (half < 1n) half = 1n;
    const bid = mid - half > 0n ? mid - half : 1n;
    return { mid, bid, ask: mid + half };
  }

  symbols(): string[] {
    return [...this.mids.keys()];
  }

  /** One step of the walk: each mid moves by up to MAX_STEP_BPS, pulled toward its fair value (integer ticks). */
  step(): void {
    if (!this.walk) return;
    for (const [symbol, mid] of this.mids) {
      const bps = BigInt((this.next() % (2 * MAX_STEP_BPS + 1)) - MAX_STEP_BPS);
      const s = this.start.get(symbol)!;
      let next = mid + (mid * bps) / 10_000n + (s - mid) / MEAN_REVERSION_STEPS;
      if (next > s * MAX_DRIFT_FACTOR) next = s * MAX_DRIFT_FACTOR;
      if (next * MAX_DRIFT_FACTOR < s) next = s / MAX_DRIFT_FACTOR;
      if (next < 1n) next = 1n;
      this.mids.set(symbol, next);
    }
  }

  private next(): number {
    // xorshift32: deterministic, integer-only
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state;
  }
}

/** A feed that publishes the market's quotes every intervalMs (timer), stamped with the gateway clock. */
export class SimulatedFeed implements PriceFeed {
  private readonly last = new Map<string, ReferenceQuote>();
  private timer: NodeJS.Timeout | null = null;
  private halted = false;

  constructor(
    readonly name: string,
    private readonly market: SimulatedMarket,
    private readonly clock: GatewayClock,
    private readonly intervalMs: number,
    private readonly drivesWalk = false,
  ) {}

  quote(symbol: string): ReferenceQuote | undefined {
    return this.last.get(symbol);
  }

  /** Publishes every symbol's current quote now (unless halted). */
  publish(): void {
    if (this.halted) return;
    const atMs = this.clock.nowMs();
    for (const symbol of this.market.symbols()) {
      const q = this.market.quote(symbol)!;
      this.last.set(symbol, { ...q, atMs });
    }
    for (const symbol of [...this.last.keys()]) if (!this.market.quote(symbol)) this.last.delete(symbol);
  }

  /** Stops publishing (its quotes age and go stale), as a feed outage. */
  halt(): void {
    this.halted = true;
  }

  /** Publishes again (at once). */
  resume(): void {
    this.halted = false;
    this.publish();
  }

  get isHalted(): boolean {
    return this.halted;
  }

  start(): void {
    if (this.timer) return;
    this.publish();
    this.timer = setInterval(() => {
      if (this.drivesWalk) this.market.step();
      this.publish();
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

export type ReferenceCheck =
  | { ok: true; quote: ReferenceQuote; source: string }
  | { ok: false; reason: 'stale' | 'missing'; detail: string };

export interface OracleOptions {
  /** a quote older than this is stale (default 3,000 ms) */
  staleAfterMs?: number;
}

/** Primary feed with a secondary failover; fails closed when neither has a fresh quote. */
export class PriceOracle {
  readonly staleAfterMs: number;

  constructor(
    readonly primary: PriceFeed,
    readonly secondary: PriceFeed,
    private readonly clock: GatewayClock,
    opts: OracleOptions = {},
    private readonly lifecycle: { start(): void; stop(): void }[] = [],
  ) {
    this.staleAfterMs = opts.staleAfterMs ?? 3_000;
  }

  /** The reference quote to use now: primary if fresh, else secondary if fresh, else why not. */
  reference(symbol: string): ReferenceCheck {
    const now = this.clock.nowMs();
    const seen: string[] = [];
    for (const feed of [this.primary, this.secondary]) {
      const q = feed.quote(symbol);
      if (!q) {
        seen.push(`${feed.name}: no quote`);
        continue;
      }
      const age = now - q.atMs;
      if (age <= this.staleAfterMs) return { ok: true, quote: q, source: feed.name };
      seen.push(`${feed.name}: ${age} ms old`);
    }
    const anyQuote = this.primary.quote(symbol) || this.secondary.quote(symbol);
    return { ok: false, reason: anyQuote ? 'stale' : 'missing', detail: `no fresh reference price for ${symbol} (${seen.join('; ')}; stale after ${this.staleAfterMs} ms)` };
  }

  /** The mark price (reference mid, ticks) if fresh, else null. */
  markTicks(symbol: string): bigint | null {
    const r = this.reference(symbol);
    return r.ok ? r.quote.mid : null;
  }

  /** Starts the feeds' timers (no-op for feeds without one). */
  start(): void {
    for (const x of this.lifecycle) x.start();
  }

  stop(): void {
    for (const x of this.lifecycle) x.stop();
  }
}

export interface SimulatedOracle {
  oracle: PriceOracle;
  market: SimulatedMarket;
  primary: SimulatedFeed;
  secondary: SimulatedFeed;
}

/** The default oracle: one simulated market, a primary feed every 250 ms (it drives the walk), a secondary every 1 s. */
export function createSimulatedOracle(clock: GatewayClock, opts: MarketOptions & OracleOptions & { primaryMs?: number; secondaryMs?: number } = {}): SimulatedOracle {
  const market = new SimulatedMarket(INSTRUMENTS, opts);
  const primary = new SimulatedFeed('primary', market, clock, opts.primaryMs ?? 250, true);
  const secondary = new SimulatedFeed('secondary', market, clock, opts.secondaryMs ?? 1_000);
  // Quotes exist from construction on, so requests served before start() are priced too.
  primary.publish();
  secondary.publish();
  const oracle = new PriceOracle(primary, secondary, clock, opts, [primary, secondary]);
  return { oracle, market, primary, secondary };
}
