// Deterministic in-process network for n parties on a virtual clock. Every source of randomness
// (latency jitter, loss) comes from one seeded PRNG and events run in (virtual time, insertion)
// order, so a scenario replays exactly from its seed. Between two events the loop lets all pending
// microtasks settle, so async code reacting to a message finishes before the next event.
//
// Link model: a message from a to b is delivered only if the link a-b stayed up from send to
// delivery (both endpoints' incarnations alive and started, same partition group). Any crash, stop,
// restart or partition in between drops it, like a TCP connection reset would.
import { EventQueue, type SimEvent } from './event-queue';
import { Prng } from './prng';
import type { Cancel, Clock, Transport } from './types';

/** Properties of one directed link. latencyMs + U[0, jitterMs) is the one-way delay. */
export interface LinkSpec {
  latencyMs: number;
  jitterMs: number;
  /** Probability in [0, 1] that a message is lost. */
  loss: number;
}

export interface SimNetworkOptions {
  n: number;
  seed: number | bigint;
  /** Default spec for every link (defaults: latency 1 ms, jitter 0, loss 0). */
  link?: Partial<LinkSpec>;
  /** Assertion limit on queued events (default 2,000,000). */
  maxQueuedEvents?: number;
}

export interface SimRunOptions {
  /** Stop before the next event once this returns true (checked after microtasks settle). */
  until?: () => boolean;
  /** Virtual-time budget relative to the clock when run() starts. If the next event lies beyond it,
   *  the clock advances to the budget's end and run() returns. */
  maxTimeMs?: number;
  /** Stop after this many events have run. */
  maxEvents?: number;
}

export interface SimLinkStats {
  messages: number;
  bytes: number;
}

/** Counters over the whole run. messages/bytes count every send() by a live party; dropped counts
 *  those lost (loss draw, unreachable at send, or link broken while in flight). */
export interface SimStats {
  readonly messages: number;
  readonly bytes: number;
  readonly dropped: number;
  /** Directed counts of sends from a to b. */
  perLink(a: number, b: number): SimLinkStats;
}

const DEFAULT_LINK: LinkSpec = { latencyMs: 1, jitterMs: 0, loss: 0 };
const DEFAULT_SETTLE_MAX_TIME_MS = 3_600_000;
const DEFAULT_SETTLE_MAX_EVENTS = 20_000_000;

type RunEnd = 'until' | 'empty' | 'time' | 'events';

function settleMicrotasks(): Promise<void> {
  // setImmediate runs only after the microtask queue (and nextTick queue) is fully drained.
  return new Promise<void>((resolve) => setImmediate(resolve));
}

function checkSpec(spec: Partial<LinkSpec>): void {
  const { latencyMs, jitterMs, loss } = spec;
  if (latencyMs !== undefined && !(Number.isFinite(latencyMs) && latencyMs >= 0)) throw new RangeError(`simnet: bad latencyMs ${latencyMs}`);
  if (jitterMs !== undefined && !(Number.isFinite(jitterMs) && jitterMs >= 0)) throw new RangeError(`simnet: bad jitterMs ${jitterMs}`);
  if (loss !== undefined && !(loss >= 0 && loss <= 1)) throw new RangeError(`simnet: bad loss ${loss}`);
}

type IncarnationState = 'new' | 'up' | 'dead';

/** One incarnation of a party on the simulated network. */
class SimTransport implements Transport {
  state: IncarnationState = 'new';
  readonly view: boolean[];
  readonly messageHandlers: Array<(from: number, data: Uint8Array) => void> = [];
  readonly peerHandlers: Array<(peer: number, up: boolean) => void> = [];
  readonly clock: Clock;

  constructor(
    private readonly net: SimNetwork,
    readonly self: number,
    readonly n: number,
    /** 0 for the first incarnation, +1 per restart. */
    readonly incarnation: number,
  ) {
    this.view = new Array<boolean>(n + 1).fill(false);
    this.clock = {
      now: () => net.clock.now(),
      setTimeout: (cb, ms) => net.scheduleAt(net.clock.now() + Math.max(0, ms), cb, this),
      defer: (cb) => {
        net.scheduleAt(net.clock.now(), cb, this);
      },
    };
  }

  send(to: number, data: Uint8Array): void {
    this.net.sendFrom(this, to, data);
  }

  onMessage(handler: (from: number, data: Uint8Array) => void): void {
    this.messageHandlers.push(handler);
  }

  onPeer(handler: (peer: number, up: boolean) => void): void {
    this.peerHandlers.push(handler);
  }

  isUp(peer: number): boolean {
    this.net.checkParty(peer);
    if (peer === this.self) return this.state === 'up';
    return this.state === 'up' && this.view[peer] === true;
  }

  async start(): Promise<void> {
    if (this.state === 'dead') throw new Error(`simnet: party ${this.self} incarnation ${this.incarnation} was crashed or stopped; use restart(${this.self})`);
    if (this.state === 'up') return;
    this.state = 'up';
    this.net.linksChanged();
  }

  async stop(): Promise<void> {
    this.net.kill(this);
  }
}

/** A deterministic simulated network of parties 1..n (see file comment for the link model). */
export class SimNetwork {
  readonly n: number;
  readonly clock: Clock;
  readonly stats: SimStats;

  private nowMs = 0;
  private seq = 0;
  private running = false;
  private readonly prng: Prng;
  private readonly queue: EventQueue;
  private readonly parties: SimTransport[] = [];
  private readonly group: number[];
  private readonly links: LinkSpec[][];
  /** reach[a][b]: link a-b currently up. Symmetric; reach[a][a] = party a alive and started. */
  private readonly reach: boolean[][];
  /** epoch[a][b] increments each time link a-b goes down; in-flight messages carry it. */
  private readonly epoch: number[][];
  private readonly linkMessages: number[][];
  private readonly linkBytes: number[][];
  private totalMessages = 0;
  private totalBytes = 0;
  private totalDropped = 0;
  /** frozen[i]: party i's current incarnation is paused (SIGSTOP): its timers and the messages to it wait in held[i]. */
  private readonly frozen: boolean[];
  private readonly held: Array<Array<{ cb: () => void; owner?: SimTransport }>>;

  /** Creates n parties (each with a not-yet-started transport) and a seeded PRNG. */
  constructor(opts: SimNetworkOptions) {
    const { n } = opts;
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`simnet: bad n ${n}`);
    const base: LinkSpec = { ...DEFAULT_LINK, ...(opts.link ?? {}) };
    checkSpec(base);
    this.n = n;
    this.prng = new Prng(opts.seed);
    this.queue = new EventQueue(opts.maxQueuedEvents ?? 2_000_000);
    const grid = <T>(v: () => T): T[][] => Array.from({ length: n + 1 }, () => Array.from({ length: n + 1 }, v));
    this.links = grid(() => ({ ...base }));
    this.reach = grid(() => false);
    this.epoch = grid(() => 0);
    this.linkMessages = grid(() => 0);
    this.linkBytes = grid(() => 0);
    this.group = new Array<number>(n + 1).fill(0);
    this.frozen = new Array<boolean>(n + 1).fill(false);
    this.held = Array.from({ length: n + 1 }, () => []);
    for (let i = 1; i <= n; i++) this.parties[i] = new SimTransport(this, i, n, 0);
    this.clock = {
      now: () => this.nowMs,
      setTimeout: (cb, ms) => this.scheduleAt(this.nowMs + Math.max(0, ms), cb),
      defer: (cb) => {
        this.scheduleAt(this.nowMs, cb);
      },
    };
    const self = this;
    this.stats = {
      get messages() { return self.totalMessages; },
      get bytes() { return self.totalBytes; },
      get dropped() { return self.totalDropped; },
      perLink(a: number, b: number): SimLinkStats {
        self.checkParty(a);
        self.checkParty(b);
        return { messages: self.linkMessages[a]![b]!, bytes: self.linkBytes[a]![b]! };
      },
    };
  }

  /** The current incarnation of party i; the same object until restart(i). */
  transport(i: number): Transport {
    this.checkParty(i);
    return this.parties[i]!;
  }

  /** Party i stops: in-flight messages to/from it are dropped, its timers never fire, peers see down. */
  crash(i: number): void {
    this.checkParty(i);
    this.kill(this.parties[i]!);
  }

  /** Crashes party i if needed and returns a fresh, not-yet-started transport for it. */
  restart(i: number): Transport {
    this.checkParty(i);
    const old = this.parties[i]!;
    this.kill(old);
    const t = new SimTransport(this, i, this.n, old.incarnation + 1);
    this.parties[i] = t;
    return t;
  }

  /** True while party i's current incarnation is crashed or stopped (until restart(i)). */
  isCrashed(i: number): boolean {
    this.checkParty(i);
    return this.parties[i]!.state === 'dead';
  }

  /** Splits the parties into groups; links across groups go down. Unlisted parties are each isolated. */
  partition(groups: number[][]): void {
    const seen = new Set<number>();
    const next = new Array<number>(this.n + 1).fill(-1);
    groups.forEach((g, gi) => {
      for (const i of g) {
        this.checkParty(i);
        if (seen.has(i)) throw new Error(`simnet: party ${i} appears in two partition groups`);
        seen.add(i);
        next[i] = gi;
      }
    });
    for (let i = 1; i <= this.n; i++) this.group[i] = next[i]! >= 0 ? next[i]! : groups.length + i;
    this.linksChanged();
  }

  /**
   * Pauses party i like SIGSTOP: its links stay up (peers still see it and send to it) but nothing
   * of it runs: its timers and the messages delivered to it wait, in order, until thaw(i). A crash
   * or restart of i ends the freeze (what was held is dropped with the incarnation).
   */
  freeze(i: number): void {
    this.checkParty(i);
    if (this.parties[i]!.state === 'dead') return;
    this.frozen[i] = true;
  }

  /** Resumes a frozen party: what it missed runs now, in the order it was due. */
  thaw(i: number): void {
    this.checkParty(i);
    if (!this.frozen[i]) return;
    this.frozen[i] = false;
    const held = this.held[i]!.splice(0);
    for (const h of held) this.scheduleAt(this.nowMs, h.cb, h.owner);
  }

  /** True while party i is frozen. */
  isFrozen(i: number): boolean {
    this.checkParty(i);
    return this.frozen[i]!;
  }

  /** Removes any partition. */
  heal(): void {
    this.group.fill(0);
    this.linksChanged();
  }

  /** Changes both directions of link a-b (applies to messages sent from now on). */
  setLink(a: number, b: number, spec: Partial<LinkSpec>): void {
    this.checkParty(a);
    this.checkParty(b);
    checkSpec(spec);
    this.links[a]![b] = { ...this.links[a]![b]!, ...spec };
    this.links[b]![a] = { ...this.links[b]![a]!, ...spec };
  }

  /** Runs events in virtual-time order until the queue is empty, until() is true, or a limit is hit. */
  async run(opts: SimRunOptions = {}): Promise<void> {
    await this.runLoop(opts);
  }

  /** Runs events until p settles and returns its value (rethrows its error); throws on deadlock or limits. */
  async settle<T>(p: Promise<T>, opts: { maxTimeMs?: number; maxEvents?: number } = {}): Promise<T> {
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    p.then(
      (value) => { outcome = { ok: true, value }; },
      (error: unknown) => { outcome = { ok: false, error }; },
    );
    const maxTimeMs = opts.maxTimeMs ?? DEFAULT_SETTLE_MAX_TIME_MS;
    const maxEvents = opts.maxEvents ?? DEFAULT_SETTLE_MAX_EVENTS;
    const end = await this.runLoop({ until: () => outcome !== undefined, maxTimeMs, maxEvents });
    const o = outcome as typeof outcome; // assigned from callbacks; TS cannot see that
    if (o !== undefined) {
      if (o.ok) return o.value;
      throw o.error;
    }
    if (end === 'empty') throw new Error(`simnet deadlock: no events left and promise unsettled (virtual time ${this.nowMs} ms)`);
    if (end === 'time') throw new Error(`simnet time limit: promise unsettled after ${maxTimeMs} virtual ms (virtual time ${this.nowMs} ms)`);
    throw new Error(`simnet event limit: promise unsettled after ${maxEvents} events (virtual time ${this.nowMs} ms)`);
  }

  // ---- internals used by SimTransport ----

  /** @internal Throws unless 1 <= i <= n. */
  checkParty(i: number): void {
    if (!Number.isInteger(i) || i < 1 || i > this.n) throw new RangeError(`simnet: party ${i} out of range 1..${this.n}`);
  }

  /** @internal Schedules cb at virtual time `time`; an owned event is skipped once its owner dies. */
  scheduleAt(time: number, cb: () => void, owner?: SimTransport): Cancel {
    if (!Number.isFinite(time)) throw new RangeError(`simnet: bad event time ${time}`);
    let cancelled = false;
    const ev: SimEvent = {
      time: Math.max(time, this.nowMs),
      seq: this.seq++,
      // a frozen owner's timer waits for thaw (cancellation still applies then)
      fn: owner === undefined ? cb : () => {
        if (this.frozen[owner.self] && this.parties[owner.self] === owner) this.held[owner.self]!.push({ cb: () => { if (!cancelled) cb(); }, owner });
        else cb();
      },
      isDead: owner === undefined ? () => cancelled : () => cancelled || owner.state === 'dead',
    };
    this.queue.push(ev);
    return () => { cancelled = true; };
  }

  /** @internal Sends from one incarnation; silently drops what the link model loses. */
  sendFrom(from: SimTransport, to: number, data: Uint8Array): void {
    this.checkParty(to);
    if (from.state !== 'up') { this.totalDropped++; return; }
    const a = from.self;
    this.totalMessages++;
    this.totalBytes += data.byteLength;
    this.linkMessages[a]![to]!++;
    this.linkBytes[a]![to]! += data.byteLength;
    if (!this.reach[a]![to]) { this.totalDropped++; return; }
    const spec = this.links[a]![to]!;
    if (spec.loss > 0 && this.prng.nextFloat() < spec.loss) { this.totalDropped++; return; }
    const delay = spec.latencyMs + (spec.jitterMs > 0 ? this.prng.nextFloat() * spec.jitterMs : 0);
    const copy = data.slice(); // the sender may reuse its buffer, as with a real socket
    const epoch = this.epoch[a]![to]!;
    const deliver = (): void => {
      if (this.epoch[a]![to] !== epoch || !this.reach[a]![to]) { this.totalDropped++; return; }
      const target = this.parties[to]!;
      // a frozen receiver's socket buffers the message until it resumes
      if (this.frozen[to]) { this.held[to]!.push({ cb: deliver }); return; }
      for (const h of target.messageHandlers) h(a, copy);
    };
    this.scheduleAt(this.nowMs + delay, deliver);
  }

  /** @internal Marks an incarnation dead (crash or stop); no-op if it is not current or already dead. */
  kill(t: SimTransport): void {
    if (t.state === 'dead') return;
    t.state = 'dead';
    if (this.parties[t.self] === t) {
      this.frozen[t.self] = false;
      this.held[t.self] = [];
    }
    if (this.parties[t.self] === t) this.linksChanged();
  }

  /** @internal Recomputes reachability; bumps epochs of links that went down and notifies both ends. */
  linksChanged(): void {
    for (let a = 1; a <= this.n; a++) {
      for (let b = a; b <= this.n; b++) {
        const pa = this.parties[a]!;
        const pb = this.parties[b]!;
        const up = pa.state === 'up' && pb.state === 'up' && this.group[a] === this.group[b];
        if (up === this.reach[a]![b]) continue;
        this.reach[a]![b] = up;
        this.reach[b]![a] = up;
        if (!up) {
          this.epoch[a]![b]!++;
          if (a !== b) this.epoch[b]![a]!++;
        }
        if (a !== b) {
          this.notify(pa, b, up);
          this.notify(pb, a, up);
        }
      }
    }
  }

  private notify(t: SimTransport, peer: number, up: boolean): void {
    this.scheduleAt(this.nowMs, () => {
      t.view[peer] = up;
      for (const h of t.peerHandlers) h(peer, up);
    }, t);
  }

  private async runLoop(opts: SimRunOptions): Promise<RunEnd> {
    if (this.running) throw new Error('simnet: run()/settle() is already running');
    this.running = true;
    try {
      const deadline = opts.maxTimeMs === undefined ? Infinity : this.nowMs + opts.maxTimeMs;
      const maxEvents = opts.maxEvents ?? Infinity;
      let count = 0;
      await settleMicrotasks();
      for (;;) {
        if (opts.until?.()) return 'until';
        if (count >= maxEvents) return 'events';
        const ev = this.queue.peekLive();
        if (ev === undefined) return 'empty';
        if (ev.time > deadline) {
          this.nowMs = deadline;
          return 'time';
        }
        this.queue.pop();
        this.nowMs = ev.time;
        count++;
        ev.fn();
        await settleMicrotasks();
      }
    } finally {
      this.running = false;
    }
  }
}
