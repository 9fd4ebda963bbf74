// Min-heap of simulation events ordered by (virtual time, insertion counter): equal times run in
// the order they were scheduled, which is what makes a simulation replay exactly.

/** One scheduled simulation event. */
export interface SimEvent {
  readonly time: number;
  readonly seq: number;
  readonly fn: () => void;
  /** True once cancelled or once its owner died; the loop skips it. */
  isDead(): boolean;
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}

/** Binary min-heap of SimEvents with a hard size limit. */
export class EventQueue {
  private readonly heap: SimEvent[] = [];

  /** limit: the most events that may be queued at once (an assertion against runaway schedules). */
  constructor(private readonly limit: number) {}

  get size(): number {
    return this.heap.length;
  }

  /** Adds an event; throws if the queue limit would be exceeded. */
  push(ev: SimEvent): void {
    if (this.heap.length >= this.limit) throw new RangeError(`simnet: event queue limit ${this.limit} exceeded`);
    const h = this.heap;
    h.push(ev);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent]!;
      if (!before(ev, p)) break;
      h[i] = p;
      i = parent;
    }
    h[i] = ev;
  }

  /** The earliest event without removing it. */
  peek(): SimEvent | undefined {
    return this.heap[0];
  }

  /** Removes and returns the earliest event. */
  pop(): SimEvent | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (top === undefined || last === undefined || h.length === 0) return top;
    let i = 0;
    const len = h.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= len) break;
      const r = l + 1;
      const c = r < len && before(h[r]!, h[l]!) ? r : l;
      if (!before(h[c]!, last)) break;
      h[i] = h[c]!;
      i = c;
    }
    h[i] = last;
    return top;
  }

  /** Drops dead events from the front; returns the earliest live one, if any. */
  peekLive(): SimEvent | undefined {
    let ev = this.peek();
    while (ev !== undefined && ev.isDead()) {
      this.pop();
      ev = this.peek();
    }
    return ev;
  }
}
