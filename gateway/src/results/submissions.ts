// What the gateway knows of its ops between the sequencer and their outcome, for system_health
// (ws/health.ts): the highest seq the sequencer has acknowledged to this gateway, and how long the
// oldest op still waiting for its journal ack has waited. Read off the submit promises the order
// service awaits anyway: no extra traffic, no polling of the sequencer.
export class SubmissionTracker {
  private highest: bigint | null = null;
  /** submit id -> when it was submitted (ms); Map order is submit order, so the first is the oldest */
  private readonly waiting = new Map<number, number>();
  private nextId = 0;

  constructor(private readonly nowMs: () => number) {}

  /** Records p's ack (its seq) or failure; returns p itself, so the caller's handling is unchanged. */
  track<T extends { seq: bigint }>(p: Promise<T>): Promise<T> {
    const id = this.nextId++;
    this.waiting.set(id, this.nowMs());
    void p.then(
      (r) => {
        this.waiting.delete(id);
        if (this.highest === null || r.seq > this.highest) this.highest = r.seq;
      },
      () => this.waiting.delete(id), // the caller handles the rejection
    );
    return p;
  }

  /** Highest seq acknowledged to this gateway since it started, or null before the first ack. */
  get highestSequenced(): bigint | null {
    return this.highest;
  }

  /** Sequenced ops whose outcome is not applied yet: seqs from cursor (the next to apply) to the highest acknowledged. */
  backlog(cursor: bigint): bigint {
    return this.highest !== null && this.highest >= cursor ? this.highest - cursor + 1n : 0n;
  }

  /** How long the oldest op still without its journal ack has waited (ms), or null when none waits. */
  oldestWaitMs(nowMs: number): number | null {
    const first = this.waiting.values().next();
    return first.done ? null : nowMs - first.value;
  }
}
