// Wall-clock time in milliseconds and nanoseconds, injectable so tests can move time (token expiry,
// rate-limit windows) without waiting.

export interface GatewayClock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
  /** Nanoseconds since the Unix epoch (monotonic within a process, anchored to the wall clock at start). */
  nowNs(): bigint;
}

/** The system clock: wall time at start plus the monotonic high-resolution timer since then. */
export function systemClock(): GatewayClock {
  const anchorNs = BigInt(Date.now()) * 1_000_000n;
  const hr0 = process.hrtime.bigint();
  return {
    nowMs: () => Date.now(),
    nowNs: () => anchorNs + (process.hrtime.bigint() - hr0),
  };
}

/** A clock that starts at `startMs` and moves only when told (tests). */
export class ManualClock implements GatewayClock {
  private ms: number;
  private extraNs = 0n;
  constructor(startMs = Date.now()) {
    this.ms = startMs;
  }
  nowMs(): number {
    return this.ms;
  }
  nowNs(): bigint {
    // strictly increasing so event times stay ordered even when the test does not move the clock
    this.extraNs += 1n;
    return BigInt(this.ms) * 1_000_000n + this.extraNs;
  }
  /** Moves time forward by ms. */
  advance(ms: number): void {
    this.ms += ms;
  }
}
