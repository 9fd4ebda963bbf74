// Transport between OS processes over libp2p: TCP + Noise + Yamux, a static list of n parties with
// persistent Ed25519 identities, one protocol. Each party keeps one long-lived outbound stream per
// peer (it only writes there) and reads whatever inbound streams its peers open to it. A peer is
// "up" while our outbound stream to it is open; when it drops we redial with capped exponential
// backoff, cut short whenever the peer connects to us.
import './polyfill';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { leanNoise } from './lean-noise';
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys';
import type { Connection, Libp2p, PeerId, Stream } from '@libp2p/interface';
import { peerIdFromPrivateKey as peerIdOfKey } from '@libp2p/peer-id';
import { tcp } from '@libp2p/tcp';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import { FrameDecoder, FrameKind, FRAME_HEADER_BYTES, writeFrameHeader } from './framing';
import type { Cancel, Clock, Transport } from './types';
import { checkLinkEmulation, LinkEmulator, type LinkEmulation } from './link-emulation';
import { quietEventsOf } from './quiet-events';
import { allocBytes } from './byte-pool';
import { directSender, readDirectConnection, readDirectStream, type DirectSend } from './direct-path';
import { prepareUnixListen, unixSocketPathOf } from './unix-links';

/** The one libp2p protocol committee parties speak. */
export const TENEBRA_PROTOCOL = '/tenebra/mpc/1.0.0';

/** One party of the static peer list. */
export interface PeerEntry {
  index: number;
  peerId: string;
  /** Multiaddr to dial, e.g. /ip4/127.0.0.1/tcp/7001; a trailing /p2p/<peerId> is optional. */
  addr: string;
}

export interface Libp2pTransportOptions {
  self: number;
  n: number;
  /** Protobuf-encoded Ed25519 private key (from generateIdentity). */
  privateKey: Uint8Array;
  /**
   * Listen multiaddr, e.g. /ip4/127.0.0.1/tcp/7001, or a Unix domain socket on one host,
   * /unix/<URI-encoded absolute path> (unix-links.ts; a leftover socket file of a killed process is
   * removed first).
   */
  listen: string;
  /** All n parties, including self. */
  peers: PeerEntry[];
  /** Largest message send() accepts and the receiver admits (default 16 MiB). */
  maxMessageBytes?: number;
  /** Outbound queue limit per peer, in messages (default 4096); the oldest is dropped beyond it. */
  maxQueuedMessages?: number;
  /** Outbound queue limit per peer, in bytes (default 64 MiB); the oldest is dropped beyond it. */
  maxQueuedBytes?: number;
  /** Redial backoff bounds (defaults 50 ms and 2000 ms). */
  redialMinMs?: number;
  redialMaxMs?: number;
  /**
   * When our stream to a peer drops, wait this long before the first redial, unless the peer dials
   * us first (default 300 ms; 0 redials at once). See `detachOutbound`.
   */
  redialAfterDropMs?: number;
  /** Budget for one dial attempt (default 5000 ms). */
  dialTimeoutMs?: number;
  /**
   * An outbound stream whose writer made no progress for this long while messages wait is reset
   * and redialled (default 30,000 ms; 0 turns the check off). See `checkWriters`. A reset loses
   * what the stream still held towards the peer, so the limit is well above the seconds a live
   * but starved or busy receiver may take to read.
   */
  writeStallMs?: number;
  /**
   * Yamux window updates on our inbound streams only once half the receive window is used (default
   * true); false keeps the library's one update per data frame (for comparison benchmarks).
   */
  lazyWindowUpdates?: boolean;
  /**
   * Noise with one socket write per message and no exception per read (default true, see
   * lean-noise.ts); false keeps the library as it is (for comparison benchmarks). Same bytes on the wire.
   */
  leanNoise?: boolean;
  /**
   * Skip libp2p's stream events that have no listener (default true, see quiet-events.ts); false
   * keeps the library as it is (for comparison benchmarks).
   */
  quietEvents?: boolean;
  /**
   * Send and receive a message through Yamux, Noise and TCP without libp2p's per-layer buffers and
   * events when every layer is idle (default true, see direct-path.ts); false keeps the library's
   * path for every message (for comparison benchmarks). Same bytes on the wire.
   */
  directPath?: boolean;
  /**
   * Emulated wide-area links: every message read from a peer is held back by this latency, jitter
   * and bandwidth before the handlers see it (link-emulation.ts). Default: none.
   */
  linkEmulation?: LinkEmulation;
  /** Receives non-fatal errors (handler exceptions, bad frames). Default: console.error. */
  log?: (msg: string, err?: unknown) => void;
}

/** Counters for one peer link. */
export interface Libp2pPeerStats {
  up: boolean;
  queuedMessages: number;
  queuedBytes: number;
  /** Messages dropped: outbound queue full, or their write failed when the stream broke. */
  droppedOutbound: number;
  sentMessages: number;
  sentBytes: number;
  /** stream.send calls (each one Yamux frame, one Noise encryption, about one socket write). */
  sentWrites: number;
  /** Of sentWrites, those written by the direct path (direct-path.ts). Optional in the type only, so
   *  stand-ins built elsewhere (committee tests) need not list it; peerStats always sets it. */
  sentDirect?: number;
  receivedMessages: number;
  receivedBytes: number;
  /** Successful outbound stream openings (1 + reconnects). */
  connects: number;
  /** Dial attempts to the peer, successful or not. */
  dialAttempts: number;
  /** Outbound streams reset because their writer made no progress (see writeStallMs). */
  stalledResets: number;
}

/** The committee links' settings in force (emulation and cut peers), as the operator sees them. */
export interface LinkSettings {
  latencyMs: number;
  jitterMs: number;
  /** absent: unlimited */
  bandwidthMbps?: number;
  /** peers whose links are cut (ascending) */
  blockedPeers: number[];
}

/** A run-time change of the links: absent fields keep their setting; bandwidthMbps null removes the limit. */
export interface LinkUpdate {
  latencyMs?: number;
  jitterMs?: number;
  bandwidthMbps?: number | null;
  /** the whole set of peers to cut off (replaces the previous set; [] heals every link) */
  blockedPeers?: number[];
}

/** A Transport over libp2p, with its peer id, listen addresses and per-peer counters. */
export interface Libp2pTransport extends Transport {
  readonly peerId: string;
  /** Actual listen addresses once started (useful with port 0). */
  listenAddrs(): string[];
  peerStats(peer: number): Libp2pPeerStats;
  linkSettings(): LinkSettings;
  /**
   * Changes the links at run time (docs/decisions/0011-link-emulation.md): new emulation settings
   * apply to messages read from now on; a blocked peer's link is cut as a dead peer's is (our stream
   * and connections to it closed, its dials and streams refused, what it had in flight dropped),
   * and unblocking it redials at once. Throws a RangeError, changing nothing, on a bad update.
   */
  setLinks(update: LinkUpdate): LinkSettings;
}

/** Wall-clock Clock: Date.now, setTimeout, setImmediate. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (cb: () => void, ms: number): Cancel => {
    const h = setTimeout(cb, ms);
    return () => clearTimeout(h);
  },
  defer: (cb: () => void): void => {
    setImmediate(cb);
  },
};

/** Generates a fresh Ed25519 identity; persist privateKey to keep the peer id across restarts. */
export async function generateIdentity(): Promise<{ privateKey: Uint8Array; peerId: string }> {
  const key = await generateKeyPair('Ed25519');
  return { privateKey: privateKeyToProtobuf(key), peerId: peerIdOfKey(key).toString() };
}

/** The peer id (base58 string) of a protobuf-encoded private key. */
export async function peerIdFromPrivateKey(privateKey: Uint8Array): Promise<string> {
  return peerIdOfKey(privateKeyFromProtobuf(privateKey)).toString();
}

/** Creates (does not start) a libp2p transport for party `self` of a static n-party list. */
export async function createLibp2pTransport(opts: Libp2pTransportOptions): Promise<Libp2pTransport> {
  const peerId = await peerIdFromPrivateKey(opts.privateKey);
  return new Libp2pTransportImpl(opts, peerId);
}

/** Frames (possibly large) go to the stream in pieces of at most this size, so backpressure acts
 *  between pieces and several small queued frames share one send(). A piece plus Yamux's 12-byte
 *  header fills one Noise message (65,535 bytes with its 16-byte tag): at 64 KiB each piece went out
 *  as a full Noise message and a 29-byte one, each with its own encryption and decryption. */
const WRITE_CHUNK_BYTES = 65_535 - 16 - 12;

/** Per-peer state: the outbound stream, its queue and the redial machinery. */
class PeerLink {
  stream: Stream | undefined;
  /** Writes a piece straight to the socket when the layers under `stream` are idle (direct-path.ts). */
  direct: DirectSend | undefined;
  /** Aborted when `stream` is detached: ends a writer's wait for 'drain' on it. */
  streamGone: AbortController | undefined;
  up = false;
  dialing = false;
  writing = false;
  writeScheduled = false;
  backoffMs: number;
  /** Wait before the dial loop's next attempt (set when the peer's connection dropped; see detachOutbound). */
  holdOffMs = 0;
  /** Wakes the dial loop from its backoff sleep. */
  wake: (() => void) | undefined;
  /** Encoded frames (header + payload) waiting to be written. */
  readonly queue: Uint8Array[] = [];
  queuedBytes = 0;
  droppedOutbound = 0;
  sentMessages = 0;
  sentBytes = 0;
  sentWrites = 0;
  sentDirect = 0;
  receivedMessages = 0;
  receivedBytes = 0;
  connects = 0;
  dialAttempts = 0;
  stalledResets = 0;
  /** When the writer last made progress, or the queue last went from empty to non-empty (ms). */
  progressAt = 0;
  /** Failed dial attempts since the last success, and when the last one was logged. */
  dialFailures = 0;
  dialFailureLoggedAt = 0;

  constructor(
    readonly index: number,
    readonly peerId: string,
    readonly addr: Multiaddr,
    backoffMs: number,
  ) {
    this.backoffMs = backoffMs;
  }
}

/** Consecutive failed dials to a peer before they are logged (the first ones are start-up races). */
const DIAL_FAILURES_BEFORE_LOG = 4;
/** At most one dial-failure log line per peer per this many ms (after the first). */
const DIAL_FAILURE_LOG_MS = 30_000;

/** Yamux stream state 'Established' (@chainsafe/libp2p-yamux StreamState). */
const YAMUX_ESTABLISHED = 3;

/**
 * @chainsafe/libp2p-yamux 8 answers EVERY data frame with a window-update frame: one more Noise
 * encryption, socket write, and at the sender one more read/decrypt/demux, for each MPC message
 * (measured: ~16% of a party's CPU in the single-comparison benchmark on the sending side alone).
 * On our inbound streams (read-only) we send the update only once half the receive window has been
 * consumed, as rust-yamux and go-yamux do; the sender's window never runs dry, so throughput is
 * unchanged. Frames carrying flags (ACK of a new stream) and the paused state still go through the
 * library's own method. Duck-typed: on another muxer or version the stream is left as it is.
 */
function lazyWindowUpdates(stream: Stream): void {
  const s = stream as unknown as { sendWindowUpdate?: () => void; state?: number; recvWindow?: number; recvWindowCapacity?: number };
  const original = s.sendWindowUpdate;
  if (typeof original !== 'function' || typeof s.recvWindow !== 'number' || typeof s.recvWindowCapacity !== 'number') return;
  s.sendWindowUpdate = function lazySendWindowUpdate(this: typeof s): void {
    if (this.state === YAMUX_ESTABLISHED && this.recvWindowCapacity! * 2 >= this.recvWindow!) return;
    original.call(this);
  };
}

type LifeState = 'new' | 'starting' | 'running' | 'stopped';

class Libp2pTransportImpl implements Libp2pTransport {
  readonly self: number;
  readonly n: number;
  readonly clock: Clock = realClock;
  readonly peerId: string;

  private state: LifeState = 'new';
  private node: Libp2p | undefined;
  private readonly links = new Map<number, PeerLink>();
  private readonly indexByPeerId = new Map<string, number>();
  private readonly messageHandlers: Array<(from: number, data: Uint8Array) => void> = [];
  private readonly peerHandlers: Array<(peer: number, up: boolean) => void> = [];
  private readonly stopController = new AbortController();
  private readonly maxMessageBytes: number;
  private readonly maxQueuedMessages: number;
  private readonly maxQueuedBytes: number;
  private readonly redialMinMs: number;
  private readonly redialMaxMs: number;
  private readonly redialAfterDropMs: number;
  private readonly dialTimeoutMs: number;
  private readonly writeStallMs: number;
  private writerCheck: ReturnType<typeof setInterval> | undefined;
  private readonly log: (msg: string, err?: unknown) => void;
  /** holds inbound messages for their emulated arrival; null until some emulation is set */
  private emulator: LinkEmulator | null;
  /** peers whose links the operator cut (setLinks) */
  private readonly blocked = new Set<number>();

  constructor(private readonly opts: Libp2pTransportOptions, peerId: string) {
    const { self, n, peers } = opts;
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`libp2p transport: bad n ${n}`);
    if (!Number.isInteger(self) || self < 1 || self > n) throw new RangeError(`libp2p transport: self ${self} out of range 1..${n}`);
    if (peers.length !== n) throw new Error(`libp2p transport: peer list has ${peers.length} entries, expected n=${n}`);
    this.self = self;
    this.n = n;
    this.peerId = peerId;
    this.maxMessageBytes = opts.maxMessageBytes ?? 16 * 1024 * 1024;
    this.maxQueuedMessages = opts.maxQueuedMessages ?? 4096;
    this.maxQueuedBytes = opts.maxQueuedBytes ?? 64 * 1024 * 1024;
    this.redialMinMs = opts.redialMinMs ?? 50;
    this.redialMaxMs = opts.redialMaxMs ?? 2000;
    this.redialAfterDropMs = opts.redialAfterDropMs ?? 300;
    this.dialTimeoutMs = opts.dialTimeoutMs ?? 5000;
    this.writeStallMs = opts.writeStallMs ?? 30_000;
    if (!(this.writeStallMs >= 0)) throw new RangeError(`libp2p transport: bad writeStallMs ${opts.writeStallMs}`);
    this.log = opts.log ?? ((msg, err) => console.error(`[transport ${self}] ${msg}`, err ?? ''));
    this.emulator = checkLinkEmulation(opts.linkEmulation) ? this.newEmulator(opts.linkEmulation!) : null;
    for (const p of peers) {
      if (!Number.isInteger(p.index) || p.index < 1 || p.index > n) throw new RangeError(`libp2p transport: peer index ${p.index} out of range 1..${n}`);
      if (this.indexByPeerId.has(p.peerId)) throw new Error(`libp2p transport: peer id ${p.peerId} listed twice`);
      if ([...this.indexByPeerId.values()].includes(p.index)) throw new Error(`libp2p transport: index ${p.index} listed twice`);
      this.indexByPeerId.set(p.peerId, p.index);
      if (p.index === self) {
        if (p.peerId !== peerId) throw new Error(`libp2p transport: entry ${self} has peer id ${p.peerId} but the private key gives ${peerId}`);
        continue;
      }
      const ma = multiaddr(p.addr);
      const withId = ma.getComponents().some((c) => c.name === 'p2p') ? ma : ma.encapsulate(`/p2p/${p.peerId}`);
      this.links.set(p.index, new PeerLink(p.index, p.peerId, withId, this.redialMinMs));
    }
  }

  onMessage(handler: (from: number, data: Uint8Array) => void): void {
    this.messageHandlers.push(handler);
  }

  onPeer(handler: (peer: number, up: boolean) => void): void {
    this.peerHandlers.push(handler);
  }

  isUp(peer: number): boolean {
    if (peer === this.self) return this.state === 'running';
    return this.link(peer).up;
  }

  listenAddrs(): string[] {
    return this.node?.getMultiaddrs().map((m) => m.toString()) ?? [];
  }

  peerStats(peer: number): Libp2pPeerStats {
    const l = this.link(peer);
    return {
      up: l.up,
      queuedMessages: l.queue.length,
      queuedBytes: l.queuedBytes,
      droppedOutbound: l.droppedOutbound,
      sentMessages: l.sentMessages,
      sentBytes: l.sentBytes,
      sentWrites: l.sentWrites,
      sentDirect: l.sentDirect,
      receivedMessages: l.receivedMessages,
      receivedBytes: l.receivedBytes,
      connects: l.connects,
      dialAttempts: l.dialAttempts,
      stalledResets: l.stalledResets,
    };
  }

  linkSettings(): LinkSettings {
    const e = this.emulator?.settings ?? {};
    return {
      latencyMs: e.latencyMs ?? 0, jitterMs: e.jitterMs ?? 0,
      ...(e.bandwidthMbps === undefined ? {} : { bandwidthMbps: e.bandwidthMbps }),
      blockedPeers: [...this.blocked].sort((a, b) => a - b),
    };
  }

  setLinks(update: LinkUpdate): LinkSettings {
    // check everything before changing anything
    const now = this.linkSettings();
    const bandwidth = update.bandwidthMbps === null ? undefined : update.bandwidthMbps ?? now.bandwidthMbps;
    const spec: LinkEmulation = {
      latencyMs: update.latencyMs ?? now.latencyMs, jitterMs: update.jitterMs ?? now.jitterMs,
      ...(bandwidth === undefined ? {} : { bandwidthMbps: bandwidth }),
    };
    const adds = checkLinkEmulation(spec);
    const blocked = update.blockedPeers;
    if (blocked !== undefined) {
      for (const p of blocked) {
        if (!Number.isInteger(p) || p < 1 || p > this.n) throw new RangeError(`blocked peer ${p} is not a node index from 1 to ${this.n}`);
        if (p === this.self) throw new RangeError(`blocked peer ${p} is this node itself`);
      }
      if (new Set(blocked).size !== blocked.length) throw new RangeError('blocked peers are listed twice');
    }
    if (this.emulator) this.emulator.update(spec);
    else if (adds) this.emulator = this.newEmulator(spec);
    if (blocked !== undefined) {
      const want = new Set(blocked);
      for (const p of [...this.blocked]) if (!want.has(p)) this.heal(p);
      for (const p of want) if (!this.blocked.has(p)) this.cut(p);
    }
    return this.linkSettings();
  }

  send(to: number, data: Uint8Array): void {
    if (data.byteLength > this.maxMessageBytes) throw new RangeError(`libp2p transport: message of ${data.byteLength} bytes exceeds maxMessageBytes ${this.maxMessageBytes}`);
    if (this.state === 'stopped') return;
    if (to === this.self) {
      const copy = data.slice();
      setImmediate(() => {
        if (this.state === 'running') this.dispatch(this.self, copy);
      });
      return;
    }
    const link = this.link(to);
    // Encode now: one copy, and the caller may reuse its buffer (a slab view for small frames: byte-pool.ts)
    const frame = allocBytes(FRAME_HEADER_BYTES + data.byteLength);
    writeFrameHeader(frame, FrameKind.DATA, data.byteLength);
    frame.set(data, FRAME_HEADER_BYTES);
    if (link.queue.length === 0) link.progressAt = Date.now();
    link.queue.push(frame);
    link.queuedBytes += frame.byteLength;
    while (link.queue.length > this.maxQueuedMessages || (link.queuedBytes > this.maxQueuedBytes && link.queue.length > 1)) {
      const old = link.queue.shift()!;
      link.queuedBytes -= old.byteLength;
      link.droppedOutbound++;
    }
    this.scheduleWrite(link);
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`libp2p transport: start() called in state ${this.state}; create a new transport to restart`);
    this.state = 'starting';
    const unixPath = unixSocketPathOf(this.opts.listen);
    if (unixPath !== undefined) await prepareUnixListen(unixPath);
    const allowed = (pid: PeerId): boolean => this.indexByPeerId.has(pid.toString()) && pid.toString() !== this.peerId;
    const node = await createLibp2p({
      privateKey: privateKeyFromProtobuf(this.opts.privateKey),
      addresses: { listen: [this.opts.listen] },
      transports: [tcp()],
      connectionEncrypters: [this.opts.leanNoise === false ? noise() : leanNoise((m) => this.log(m))],
      streamMuxers: [yamux()],
      connectionGater: {
        denyDialPeer: (pid) => !allowed(pid) || this.isBlocked(pid),
        denyInboundEncryptedConnection: (pid) => !allowed(pid) || this.isBlocked(pid),
        denyOutboundEncryptedConnection: (pid) => !allowed(pid) || this.isBlocked(pid),
      },
      connectionManager: {
        // Redials after a restart come fast; the default rate limit would reset them.
        inboundConnectionThreshold: 100_000,
        maxConnections: Math.max(100, 4 * this.n),
      },
      start: false,
    });
    this.node = node;
    await node.handle(TENEBRA_PROTOCOL, (stream, connection) => this.acceptInbound(stream, connection), { maxInboundStreams: 16 });
    node.addEventListener('peer:connect', (evt) => {
      // The peer is reachable again: skip the rest of our backoff.
      const idx = this.indexByPeerId.get(evt.detail.toString());
      const link = idx === undefined ? undefined : this.links.get(idx);
      if (link !== undefined && link.stream === undefined && !this.blocked.has(link.index)) link.wake?.();
    });
    await node.start();
    if (this.state !== 'starting') {
      // stop() was called while starting.
      await node.stop();
      return;
    }
    this.state = 'running';
    for (const link of this.links.values()) this.runDialLoop(link);
    if (this.writeStallMs > 0) {
      this.writerCheck = setInterval(() => this.checkWriters(), Math.max(50, Math.min(1000, this.writeStallMs / 4)));
      this.writerCheck.unref();
    }
  }

  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    if (this.writerCheck) clearInterval(this.writerCheck);
    this.emulator?.stop();
    this.stopController.abort(new Error('transport stopped'));
    for (const link of this.links.values()) {
      link.wake?.();
      link.up = false;
      link.stream = undefined;
      link.direct = undefined;
    }
    await this.node?.stop();
  }

  // ---- internals ----

  private newEmulator(spec: LinkEmulation): LinkEmulator {
    return new LinkEmulator(spec, (from, data) => {
      if (this.state === 'running' && !this.blocked.has(from)) this.dispatch(from, data);
    });
  }

  private isBlocked(pid: PeerId): boolean {
    const idx = this.indexByPeerId.get(pid.toString());
    return idx !== undefined && this.blocked.has(idx);
  }

  /**
   * Cuts the link to a peer as its death would look from here: our stream to it closed (peer down,
   * the runtime stops waiting for it), every connection to it hung up (its inbound streams end, and
   * it sees us down), what it had in flight in the emulator dropped; the gater refuses its dials and
   * ours until heal(). Messages the runtime sends it meanwhile wait in the link's queue, as for a
   * dead peer (bounded; they go out once it is reachable again).
   */
  private cut(peer: number): void {
    const link = this.link(peer);
    this.blocked.add(peer);
    this.emulator?.dropFrom(peer);
    const stream = link.stream;
    if (stream !== undefined) {
      stream.abort(new Error('link cut by the operator'));
      this.detachOutbound(link, stream);
    }
    this.node?.hangUp(link.addr).catch((err: unknown) => this.log(`hanging up on cut peer ${peer} failed`, err));
  }

  /** Restores a cut link: redial at once (the peer's own redial, backing off up to redialMaxMs, may come first). */
  private heal(peer: number): void {
    const link = this.link(peer);
    this.blocked.delete(peer);
    link.holdOffMs = 0;
    link.backoffMs = this.redialMinMs;
    link.wake?.();
    this.runDialLoop(link);
  }

  private link(peer: number): PeerLink {
    const l = this.links.get(peer);
    if (l === undefined) throw new RangeError(`libp2p transport: peer ${peer} out of range 1..${this.n}`);
    return l;
  }

  private dispatch(from: number, data: Uint8Array): void {
    for (const h of this.messageHandlers) {
      try {
        h(from, data);
      } catch (err) {
        this.log(`message handler threw on a message from ${from}`, err);
      }
    }
  }

  private setUp(link: PeerLink, up: boolean): void {
    if (link.up === up || this.state !== 'running') return;
    link.up = up;
    for (const h of this.peerHandlers) {
      try {
        h(link.index, up);
      } catch (err) {
        this.log(`peer handler threw for peer ${link.index}`, err);
      }
    }
  }

  private acceptInbound(stream: Stream, connection: Connection): void {
    const remote = connection.remotePeer;
    const from = this.indexByPeerId.get(remote.toString());
    const link = from === undefined ? undefined : this.links.get(from);
    if (from === undefined || link === undefined || this.state !== 'running' || this.blocked.has(from)) {
      stream.abort(new Error('unknown or cut-off peer, or transport not running'));
      return;
    }
    if (this.opts.lazyWindowUpdates !== false) lazyWindowUpdates(stream);
    // The peer is alive and reaches us (e.g. it restarted its transport while its old connection
    // lingered, so no peer:connect came): end any wait before our own redial.
    if (link.stream === undefined) link.wake?.();
    const decoder = new FrameDecoder(this.maxMessageBytes);
    const onBytes = (data: Uint8Array | { subarray(): Uint8Array }): void => {
      const bytes = data instanceof Uint8Array ? data : data.subarray();
      let frames;
      try {
        frames = decoder.push(bytes);
      } catch (err) {
        this.log(`bad frame from peer ${from}; dropping its stream`, err);
        stream.abort(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      for (const f of frames) {
        // a cut peer's frames still in the pipe before the hang-up lands are lost, as in a partition
        if (f.kind !== FrameKind.DATA || this.state !== 'running' || this.blocked.has(from)) continue;
        link.receivedMessages++;
        link.receivedBytes += f.payload.byteLength;
        if (this.emulator) this.emulator.push(from, f.payload);
        else this.dispatch(from, f.payload);
      }
    };
    stream.addEventListener('message', (evt) => onBytes(evt.data));
    if (this.opts.directPath !== false) {
      readDirectStream(stream, onBytes);
      readDirectConnection(connection);
    }
  }

  /** Starts the dial loop for a link unless one is running; never rejects. */
  private runDialLoop(link: PeerLink): void {
    if (link.dialing || this.state !== 'running') return;
    link.dialing = true;
    this.dialLoop(link)
      .catch((err: unknown) => this.log(`dial loop for peer ${link.index} failed`, err))
      .finally(() => {
        link.dialing = false;
      });
  }

  private async dialLoop(link: PeerLink): Promise<void> {
    const node = this.node;
    if (node === undefined) throw new Error('libp2p transport: dial loop without a node');
    while (this.state === 'running' && link.stream === undefined) {
      if (this.blocked.has(link.index)) {
        await this.sleep(link, 60_000); // woken by heal()
        continue;
      }
      if (link.holdOffMs > 0) {
        const ms = link.holdOffMs;
        link.holdOffMs = 0;
        link.backoffMs = Math.max(link.backoffMs, Math.min(ms, this.redialMaxMs));
        await this.sleep(link, ms); // woken early when the peer connects to us
        continue;
      }
      try {
        const stream = await this.dialOnce(node, link);
        if (this.state !== 'running') {
          stream.abort(new Error('transport stopped'));
          return;
        }
        if (this.attachOutbound(link, stream)) {
          link.backoffMs = this.redialMinMs;
          return;
        }
        await this.sleep(link, link.backoffMs); // closed already: dial again, after the backoff
      } catch (err) {
        // Peer down or unreachable: wait, then retry. Expected while peers start or restart, so a
        // failure is logged (with the reason) once DIAL_FAILURES_BEFORE_LOG attempts in a row
        // failed, then once every DIAL_FAILURE_LOG_MS.
        if (this.state !== 'running') return;
        link.dialFailures++;
        const now = Date.now();
        if (link.dialFailures === DIAL_FAILURES_BEFORE_LOG || (link.dialFailureLoggedAt > 0 && now - link.dialFailureLoggedAt >= DIAL_FAILURE_LOG_MS)) {
          link.dialFailureLoggedAt = now;
          this.log(`dial to peer ${link.index} failed (${link.dialFailures} attempts so far): ${err instanceof Error ? err.message : String(err)}`);
        }
        await this.sleep(link, link.backoffMs);
        link.backoffMs = Math.min(link.backoffMs * 2, this.redialMaxMs);
      }
    }
  }

  /**
   * One dial of our protocol stream to the peer, bounded by dialTimeoutMs even if libp2p does not
   * settle it (a dial that joins another pending dial, or a stream negotiation on a connection that
   * went quiet, need not honour our signal). A stream that arrives after we gave up is adopted if the
   * link still has none, else closed.
   */
  private dialOnce(node: Libp2p, link: PeerLink): Promise<Stream> {
    link.dialAttempts++;
    const giveUp = new AbortController();
    const signal = AbortSignal.any([this.stopController.signal, giveUp.signal]);
    const attempt = node.dialProtocol(link.addr, TENEBRA_PROTOCOL, { signal });
    return new Promise<Stream>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        giveUp.abort(new Error('dial timeout'));
        reject(new Error(`no stream after ${this.dialTimeoutMs} ms`));
      }, this.dialTimeoutMs);
      attempt.then(
        (stream) => {
          clearTimeout(timer);
          if (!settled) {
            settled = true;
            resolve(stream);
          } else if (link.stream === undefined && this.state === 'running') {
            this.log(`a dial to peer ${link.index} given up on arrived late; using it`);
            // adopted: the dial loop, woken, sees the stream and ends; else it dials again
            this.attachOutbound(link, stream);
            link.wake?.();
          } else {
            stream.abort(new Error('dial arrived after it was given up'));
          }
        },
        (err: unknown) => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  /**
   * Resets an outbound stream whose writer made no progress for writeStallMs while messages wait:
   * we redial, and on peer-up the MPC runtime re-sends what the peer may lack. A safety net for a
   * writer waiting for a 'drain' that never comes on a stream that never reports its close (what a
   * stream closed before we listened for its close did, see attachOutbound: the peer heard nothing
   * from us while we counted it up, and a round that needed our share waited for ever).
   */
  private checkWriters(): void {
    if (this.state !== 'running') return;
    const now = Date.now();
    for (const link of this.links.values()) {
      const stream = link.stream;
      if (stream === undefined || link.queue.length === 0 || now - link.progressAt < this.writeStallMs) continue;
      link.stalledResets++;
      const st = stream as unknown as { status?: string; writeStatus?: string; writableNeedsDrain?: boolean; writeBufferLength?: number };
      this.log(`writer to peer ${link.index} made no progress for ${now - link.progressAt} ms with ${link.queue.length} messages queued ` +
        `(writing ${link.writing}, stream ${st.status}/${st.writeStatus}, needs drain ${st.writableNeedsDrain}, buffered ${st.writeBufferLength}); resetting the stream`);
      stream.abort(new Error(`no write progress for ${this.writeStallMs} ms`));
      // abort() says nothing on a stream that is already closed: detach it ourselves
      this.detachOutbound(link, stream);
      // the peer may be alive and well: redial now, not after the hold-off for a dropped peer
      link.holdOffMs = 0;
      link.wake?.();
    }
  }

  private sleep(link: PeerLink, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const h = setTimeout(done, ms);
      function done(): void {
        clearTimeout(h);
        link.wake = undefined;
        resolve();
      }
      link.wake = done;
    });
  }

  /** Adopts a dialled stream as the link's outbound one; false (nothing adopted) if it is already closed. */
  private attachOutbound(link: PeerLink, stream: Stream): boolean {
    if (this.blocked.has(link.index)) {
      // dialled before the operator cut the link: the cut wins
      stream.abort(new Error('link cut by the operator'));
      return false;
    }
    if (stream.status !== 'open') {
      // Closed (e.g. reset by a peer still starting) before we could listen for its 'close': a
      // stream adopted now would never report that close, and its writer would wait for ever.
      this.log(`a stream dialled to peer ${link.index} was already ${stream.status}; redialling`);
      return false;
    }
    if (this.opts.quietEvents !== false) quietEventsOf(stream);
    link.direct = undefined;
    if (this.opts.directPath !== false) {
      const connection = this.node?.getConnections().find((c) => c.streams.includes(stream));
      link.direct = directSender(stream, connection);
      if (connection !== undefined) readDirectConnection(connection);
    }
    link.stream = stream;
    link.streamGone = new AbortController();
    link.progressAt = Date.now();
    link.connects++;
    if (link.dialFailureLoggedAt > 0) this.log(`dialled peer ${link.index} after ${link.dialFailures} failed attempts`);
    link.dialFailureLoggedAt = 0;
    link.dialFailures = 0;
    stream.addEventListener('close', () => this.detachOutbound(link, stream));
    this.setUp(link, true);
    this.scheduleWrite(link);
    return true;
  }

  /**
   * The stream is gone (closed, or reset by us): the peer is down for us until a redial succeeds.
   * The first redial waits `redialAfterDropMs`: a stream drops when the peer's process died or
   * restarts (its restart takes seconds, and a peer that comes back dials us itself: its connection
   * (peer:connect) or its stream (acceptInbound) wakes the loop) or when we reset it (checkWriters
   * redials at once). Redialling at once cost each
   * survivor of a kill -9 of two peers about 25 ms of CPU in the next 200 ms (a refused libp2p dial
   * is several ms of CPU, and the backoff retried at 50 and 150 ms), contending with the MPC job
   * that had to go on without them (measured 2026-11-24 on `npm start`: 3 ms each with the wait).
   * (Whether a connection to the peer is left cannot tell the cases apart: when the stream's
   * 'close' fires, the dead peer's connection is often still listed as open.)
   */
  private detachOutbound(link: PeerLink, stream: Stream): void {
    if (link.stream !== stream) return;
    link.stream = undefined;
    link.direct = undefined;
    link.streamGone?.abort(new Error('stream closed'));
    link.streamGone = undefined;
    this.setUp(link, false);
    link.holdOffMs = this.redialAfterDropMs;
    if (this.state === 'running') this.runDialLoop(link);
  }

  /** Runs the writer after the current synchronous burst of send()s, so they share writes. */
  private scheduleWrite(link: PeerLink): void {
    if (link.writeScheduled || link.writing || link.stream === undefined) return;
    link.writeScheduled = true;
    queueMicrotask(() => {
      link.writeScheduled = false;
      this.writeLoop(link).catch((err: unknown) => this.log(`writer for peer ${link.index} failed`, err));
    });
  }

  /**
   * Drains the link's queue into its stream, waiting for 'drain' when send() reports a full
   * buffer. Frames leave the queue once all their bytes were accepted by the stream; frames whose
   * write fails are dropped and counted (never resent: that could duplicate them).
   */
  private async writeLoop(link: PeerLink): Promise<void> {
    if (link.writing) return;
    link.writing = true;
    try {
      while (this.state === 'running' && link.stream !== undefined && link.queue.length > 0) {
        const stream = link.stream;
        const gone = link.streamGone!.signal;
        // Coalesce small frames into one write; a large frame goes alone, in pieces.
        let count = 1;
        let bytes = link.queue[0]!.byteLength;
        while (count < link.queue.length && bytes + link.queue[count]!.byteLength <= WRITE_CHUNK_BYTES) {
          bytes += link.queue[count]!.byteLength;
          count++;
        }
        let buf: Uint8Array;
        if (count === 1) {
          buf = link.queue[0]!;
        } else {
          buf = new Uint8Array(bytes);
          let off = 0;
          for (let i = 0; i < count; i++) {
            buf.set(link.queue[i]!, off);
            off += link.queue[i]!.byteLength;
          }
        }
        let written = 0;
        try {
          for (let off = 0; off < buf.byteLength; off += WRITE_CHUNK_BYTES) {
            if (stream.writableNeedsDrain) await stream.onDrain({ signal: AbortSignal.any([this.stopController.signal, gone]) });
            if (link.stream !== stream) throw new Error('stream replaced');
            const piece = buf.subarray(off, Math.min(off + WRITE_CHUNK_BYTES, buf.byteLength));
            if (link.direct?.(piece) === true) link.sentDirect++;
            else stream.send(piece);
            written++;
            link.sentWrites++;
            link.progressAt = Date.now();
          }
        } catch (err) {
          // The stream failed under us. If part of this write may have reached the peer, drop these
          // frames rather than risk a duplicate (delivery is at most once); untouched ones wait for
          // the next stream. Detached here too: a stream that was already closed reports no 'close'.
          if (written > 0) {
            const lost = link.queue.splice(0, count);
            for (const f of lost) link.queuedBytes -= f.byteLength;
            link.droppedOutbound += lost.length;
          }
          stream.abort(err instanceof Error ? err : new Error(String(err)));
          this.detachOutbound(link, stream);
          return;
        }
        const sent = link.queue.splice(0, count);
        for (const f of sent) {
          link.queuedBytes -= f.byteLength;
          link.sentMessages++;
          link.sentBytes += f.byteLength - FRAME_HEADER_BYTES;
        }
      }
    } finally {
      link.writing = false;
    }
    // A new stream may have appeared while we were returning.
    if (link.queue.length > 0 && link.stream !== undefined && this.state === 'running') this.scheduleWrite(link);
  }
}
