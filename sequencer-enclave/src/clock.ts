// Timestamps for sequenced ops: nanoseconds since the Unix epoch, strictly increasing, also across
// restarts (seeded with the last journaled value) and if the wall clock steps back.
const wallAnchorNs = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/** Hands out strictly increasing nanosecond timestamps. */
export class NsClock {
  constructor(private last: bigint) {}

  /** The next timestamp: now, or last + 1 if now is not later. */
  next(): bigint {
    const now = wallAnchorNs + process.hrtime.bigint();
    this.last = now > this.last ? now : this.last + 1n;
    return this.last;
  }
}
