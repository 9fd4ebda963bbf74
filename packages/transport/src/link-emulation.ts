// Emulated wide-area links for the real transport: each message from a peer is held back by the
// link's one-way latency, a random jitter and its transmission time at a set bandwidth before it is
// handed to the protocol. Researchers run a committee on one host and see what a committee spread
// over data centres would cost (rounds become latency-bound), without netem or root.
//
// Per sending peer, messages stay in order (a TCP stream): a message is never delivered before the
// one received ahead of it, and the link transmits one message at a time. Timers are Node's, so
// delays below about a millisecond are rounded up by the event loop.
//
// The settings can change at run time (`update`, the operator's POST /control/links): a message
// takes the settings in force when it is read; those already held keep their due times, and a
// later message still never overtakes them.

/** What every inbound committee link adds (all zero or absent: nothing, and no code on the path). */
export interface LinkEmulation {
  /** one-way latency added to every message, ms (>= 0) */
  latencyMs?: number;
  /** each message's latency varies uniformly within ± this, ms (>= 0, at most latencyMs) */
  jitterMs?: number;
  /** the link carries this many megabits per second (> 0); absent: unlimited */
  bandwidthMbps?: number;
}

/** Largest latency or jitter accepted (ms): a minute is far beyond any WAN and any test's patience. */
export const MAX_EMULATED_LATENCY_MS = 60_000;
/** Most messages held for one peer; beyond it the newest is dropped (delivery is at most once). */
export const MAX_HELD_PER_PEER = 65_536;

/** Throws a RangeError naming the bad field; returns true iff the spec adds anything. */
export function checkLinkEmulation(spec: LinkEmulation | undefined): boolean {
  if (!spec) return false;
  const { latencyMs = 0, jitterMs = 0, bandwidthMbps } = spec;
  for (const [name, v] of [['latencyMs', latencyMs], ['jitterMs', jitterMs]] as const) {
    if (!Number.isFinite(v) || v < 0 || v > MAX_EMULATED_LATENCY_MS) throw new RangeError(`link emulation: ${name} must be a number of ms from 0 to ${MAX_EMULATED_LATENCY_MS}, got ${v}`);
  }
  if (jitterMs > latencyMs) throw new RangeError(`link emulation: jitterMs (${jitterMs}) may not exceed latencyMs (${latencyMs}): a message cannot arrive before it was sent`);
  if (bandwidthMbps !== undefined && (!Number.isFinite(bandwidthMbps) || bandwidthMbps <= 0)) {
    throw new RangeError(`link emulation: bandwidthMbps must be a positive number, got ${bandwidthMbps}`);
  }
  return latencyMs > 0 || bandwidthMbps !== undefined;
}

interface Held {
  dueMs: number;
  data: Uint8Array;
}

interface PeerLane {
  queue: Held[];
  head: number;
  /** when the link finishes transmitting what it already carries */
  busyUntilMs: number;
  /** due time of the last message queued: later ones never overtake it */
  lastDueMs: number;
  timer: NodeJS.Timeout | null;
}

/** Holds inbound messages per sending peer until their emulated arrival time. */
export class LinkEmulator {
  private readonly lanes = new Map<number, PeerLane>();
  private latencyMs = 0;
  private jitterMs = 0;
  /** ms to transmit one byte; 0 for unlimited bandwidth */
  private msPerByte = 0;
  private spec: LinkEmulation = {};
  private stopped = false;
  /** messages dropped because a peer's lane was full */
  dropped = 0;

  constructor(
    spec: LinkEmulation,
    private readonly deliver: (from: number, data: Uint8Array) => void,
    private readonly now: () => number = () => performance.now(),
    private readonly random: () => number = Math.random,
  ) {
    this.update(spec);
  }

  /** Replaces the settings for every message read from now on (throws a RangeError on a bad one, changing nothing). */
  update(spec: LinkEmulation): void {
    checkLinkEmulation(spec);
    this.latencyMs = spec.latencyMs ?? 0;
    this.jitterMs = spec.jitterMs ?? 0;
    this.msPerByte = spec.bandwidthMbps === undefined ? 0 : 8 / (spec.bandwidthMbps * 1_000);
    this.spec = {
      latencyMs: this.latencyMs, jitterMs: this.jitterMs,
      ...(spec.bandwidthMbps === undefined ? {} : { bandwidthMbps: spec.bandwidthMbps }),
    };
  }

  /** The settings in force (latency and jitter always present; bandwidth absent: unlimited). */
  get settings(): LinkEmulation {
    return { ...this.spec };
  }

  /** Drops what is held from one peer (the link to it was cut: what was in flight is lost). */
  dropFrom(from: number): void {
    const lane = this.lanes.get(from);
    if (!lane) return;
    if (lane.timer) clearTimeout(lane.timer);
    lane.timer = null;
    lane.queue = []; // also ends a flush of this lane in progress (a handler may cut the link)
    lane.head = 0;
    this.lanes.delete(from);
  }

  /** Takes a message just read from `from`; delivers it when the emulated link would have. */
  push(from: number, data: Uint8Array): void {
    if (this.stopped) return;
    let lane = this.lanes.get(from);
    if (!lane) {
      lane = { queue: [], head: 0, busyUntilMs: 0, lastDueMs: 0, timer: null };
      this.lanes.set(from, lane);
    }
    // nothing to add and nothing held ahead of it (settings turned off at run time): at once, as without an emulator
    if (lane.timer === null && lane.head === lane.queue.length && this.latencyMs === 0 && this.msPerByte === 0 && lane.lastDueMs <= this.now()) {
      this.deliver(from, data);
      return;
    }
    if (lane.queue.length - lane.head >= MAX_HELD_PER_PEER) {
      this.dropped++;
      return;
    }
    const t = this.now();
    const sent = Math.max(t, lane.busyUntilMs) + data.byteLength * this.msPerByte;
    lane.busyUntilMs = sent;
    const jitter = this.jitterMs === 0 ? 0 : (this.random() * 2 - 1) * this.jitterMs;
    const due = Math.max(sent + this.latencyMs + jitter, lane.lastDueMs);
    lane.lastDueMs = due;
    lane.queue.push({ dueMs: due, data });
    if (lane.timer === null) this.arm(from, lane);
  }

  /** Messages held now, all peers together. */
  get held(): number {
    let n = 0;
    for (const l of this.lanes.values()) n += l.queue.length - l.head;
    return n;
  }

  /** Drops what is held and cancels every timer (the transport stopped). */
  stop(): void {
    this.stopped = true;
    for (const l of this.lanes.values()) {
      if (l.timer) clearTimeout(l.timer);
      l.timer = null;
      l.queue = [];
      l.head = 0;
    }
  }

  private arm(from: number, lane: PeerLane): void {
    const next = lane.queue[lane.head];
    if (!next) return;
    lane.timer = setTimeout(() => this.flush(from, lane), Math.max(0, next.dueMs - this.now()));
  }

  private flush(from: number, lane: PeerLane): void {
    lane.timer = null;
    const t = this.now();
    while (!this.stopped && lane.head < lane.queue.length && lane.queue[lane.head]!.dueMs <= t + 0.5) {
      const m = lane.queue[lane.head]!;
      lane.head++;
      this.deliver(from, m.data);
    }
    if (lane.head === lane.queue.length) {
      lane.queue = [];
      lane.head = 0;
    } else if (lane.head > 1024) {
      lane.queue = lane.queue.slice(lane.head);
      lane.head = 0;
    }
    if (!this.stopped) this.arm(from, lane);
  }
}
