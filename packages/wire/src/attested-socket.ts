// A reconnecting WebSocket to the sequencer that only ever talks to an attested enclave.
// Per connection: the first frame must be a quote that verifies (platform signature + expected
// measurement); we then send a fresh challenge and require the quoted enclave key's signature over
// it, so a copied quote is useless to an impostor. If the sequencer also sent us a nonce
// (auth_challenge), we then prove our own identity with our link key (mutual authentication, see
// link-auth.ts) and wait for its auth_ok. Only then is the connection "ready".
// Reconnects with capped exponential backoff; pings to detect a dead peer; every timer is cleared
// on close().
import WebSocket from 'ws';
import { AttestationError, checkEnclaveProof, newChallenge, verifyQuote } from '@tenebra/seal';
import { encodeFrame, FrameError, WIRE_LIMITS, type Frame } from './codec';
import { deferred, type Deferred } from './deferred';
import { sendCorked } from './cork';
import {
  authFrame, LinkAuthError, sequencerServerName, signLinkAuth, type LinkAuthCode, type LinkIdentity,
} from './link-auth';
import type { LinkPurpose } from './messages';

/** The logging calls the clients make (pino's signature); pass a pino child logger. */
export interface WireLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

/** Default logger: one JSON line per event on stderr. */
export const stderrLogger = (component: string): WireLogger => {
  const line = (level: string) => (obj: object, msg: string) =>
    process.stderr.write(`${JSON.stringify({ level, time: Date.now(), component, ...obj, msg })}\n`);
  return { info: line('info'), warn: line('warn'), error: line('error') };
};

/** Options common to both sequencer clients. */
export interface AttestedOptions {
  url: string;
  /** The TEE vendor's (modelled: the launcher's) Ed25519 public key. */
  platformPublicKey: Uint8Array;
  /** Hex measurement the enclave must report: expectedMeasurement(config) of @tenebra/sequencer-enclave. */
  expectedMeasurement: string;
  log?: WireLogger;
  /** Time allowed from TCP open to a verified proof (default 5,000 ms). */
  handshakeTimeoutMs?: number;
  /** How long the first connect() keeps retrying an unreachable sequencer (default 30,000 ms). */
  firstConnectTimeoutMs?: number;
  /** Reconnect backoff: first delay and cap (defaults 50 and 2,000 ms). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Ping period; a connection whose previous ping got no pong is dropped (default 5,000 ms). */
  pingIntervalMs?: number;
}

/** Who this client proves to be when the sequencer asks (auth_challenge), and for which link. */
export interface ClientAuth {
  identity: LinkIdentity;
  purpose: LinkPurpose;
}

interface Hooks<In extends Frame> {
  decode: (data: WebSocket.RawData) => In;
  /** Called once the connection is attested; send the first frames here. */
  onReady: () => void;
  /** Called for every frame after the handshake. Throwing drops the connection (it reconnects). */
  onFrame: (frame: In) => void;
  /** Called when a ready connection goes away (before any reconnect). */
  onDown: () => void;
}

type State = 'idle' | 'connecting' | 'handshake' | 'ready' | 'backoff' | 'closed';

/** One logical connection to the sequencer, kept alive across reconnects. */
export class AttestedSocket<In extends Frame> {
  private state: State = 'idle';
  private ws: WebSocket | null = null;
  private everReady = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private handshakeTimer: NodeJS.Timeout | null = null;
  private firstTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private awaitingPong = false;
  private first: Deferred<void> | null = null;
  private lastError = '';
  private readonly log: WireLogger;

  constructor(
    private readonly opts: AttestedOptions,
    private readonly name: string,
    private readonly hooks: Hooks<In>,
    /** null: no link key (the sequencer will refuse us if it asks for a proof) */
    private readonly auth: ClientAuth | null = null,
  ) {
    this.log = opts.log ?? stderrLogger(name);
  }

  /** True while an attested connection is up. */
  get ready(): boolean {
    return this.state === 'ready';
  }

  /** True once closed for good (by close(), or because the first connection failed). */
  get isClosed(): boolean {
    return this.state === 'closed';
  }

  /**
   * Connects and attests. Resolves on the first ready connection; rejects with AttestationError if
   * the enclave's quote or proof does not verify (and stops), with LinkAuthError if the sequencer
   * refuses our link key (and stops), or with an Error if the sequencer stays unreachable for
   * firstConnectTimeoutMs.
   */
  start(): Promise<void> {
    if (this.state !== 'idle') return Promise.reject(new Error(`${this.name}: connect() called twice`));
    this.first = deferred<void>();
    const limit = this.opts.firstConnectTimeoutMs ?? 30_000;
    this.firstTimer = setTimeout(() => {
      this.firstTimer = null;
      this.failFirst(new Error(`${this.name}: cannot reach the sequencer at ${this.opts.url} within ${limit} ms (${this.lastError})`));
    }, limit);
    this.open();
    return this.first.promise;
  }

  /** Sends a frame on the ready connection; false if not ready (the caller keeps it for later). */
  send(frame: Frame): boolean {
    if (this.state !== 'ready' || !this.ws) return false;
    sendCorked(this.ws, encodeFrame(frame));
    return true;
  }

  /** Bytes queued in the socket and not yet written (0 when not connected). */
  get bufferedAmount(): number {
    return this.ws?.bufferedAmount ?? 0;
  }

  /** Stops reading from the socket (backpressure to the sequencer). */
  pause(): void {
    this.ws?.pause();
  }

  /** Resumes reading after pause(). */
  resume(): void {
    this.ws?.resume();
  }

  /** Drops the current connection and reconnects (used after a protocol violation). */
  reconnect(reason: string): void {
    if (this.state === 'closed' || !this.ws) return;
    this.log.warn({ url: this.opts.url, reason }, `${this.name}: dropping connection`);
    this.ws.terminate();
  }

  /** Closes for good: no reconnects, every timer cleared; resolves when the socket is closed. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasReady = this.state === 'ready';
    this.state = 'closed';
    this.clearTimers();
    this.failFirst(new Error(`${this.name}: closed before connecting`));
    const ws = this.ws;
    this.ws = null;
    if (wasReady) this.hooks.onDown();
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      const closed = new Promise<void>((r) => ws.once('close', () => r()));
      ws.terminate();
      await closed;
    }
  }

  private clearTimers(): void {
    for (const t of [this.reconnectTimer, this.handshakeTimer, this.firstTimer, this.pingTimer]) if (t) clearTimeout(t);
    this.reconnectTimer = this.handshakeTimer = this.firstTimer = this.pingTimer = null;
  }

  private failFirst(err: Error): void {
    if (!this.first) return;
    const f = this.first;
    this.first = null;
    if (this.firstTimer) clearTimeout(this.firstTimer);
    this.firstTimer = null;
    f.reject(err);
    if (this.state !== 'closed') void this.close(); // close() never rejects
  }

  private open(): void {
    this.state = 'connecting';
    const ws = new WebSocket(this.opts.url, {
      maxPayload: WIRE_LIMITS.maxFrameBytes,
      perMessageDeflate: false,
      handshakeTimeout: this.opts.handshakeTimeoutMs ?? 5_000,
    });
    this.ws = ws;
    let challenge: string | null = null;
    let enclaveKey: Uint8Array | null = null;
    let enclaveKeyHex = '';
    /** the sequencer's nonce for our own proof (null: it does not authenticate clients) */
    let serverNonce: string | null = null;
    let enclaveProven = false;

    ws.on('open', () => {
      if (this.ws !== ws) return;
      this.state = 'handshake';
      const ms = this.opts.handshakeTimeoutMs ?? 5_000;
      this.handshakeTimer = setTimeout(() => {
        this.handshakeTimer = null;
        this.lastError = `no attested handshake within ${ms} ms`;
        ws.terminate();
      }, ms);
    });

    ws.on('message', (data) => {
      if (this.ws !== ws) return;
      try {
        if (this.state === 'handshake') {
          const frame: Frame = this.hooks.decode(data);
          if (!enclaveKey) {
            if (frame.t !== 'quote') throw new AttestationError(`attestation failed: first frame was '${frame.t}', not a quote`);
            enclaveKey = verifyQuote(frame.quote, this.opts.platformPublicKey, this.opts.expectedMeasurement);
            enclaveKeyHex = frame.quote.enclave_pubkey;
            challenge = newChallenge();
            ws.send(encodeFrame({ t: 'challenge', nonce: challenge }));
            return;
          }
          if (frame.t === 'auth_refused') throw new LinkAuthError(frame.code as LinkAuthCode, `the sequencer refused us: ${frame.message}`);
          if (frame.t === 'auth_challenge') {
            if (serverNonce !== null || enclaveProven) throw new Error('unexpected second auth_challenge');
            serverNonce = frame.nonce;
            return;
          }
          if (!enclaveProven) {
            if (frame.t !== 'proof' || frame.nonce !== challenge) {
              throw new AttestationError(`attestation failed: expected a proof for our challenge, got '${frame.t}'`);
            }
            checkEnclaveProof(enclaveKey, challenge, frame.sig);
            enclaveProven = true;
            // The sequencer sends its nonce right after the quote, so it is here by now if it wants one.
            if (serverNonce === null) return this.becomeReady(ws);
            if (!this.auth) throw new LinkAuthError('NO_LINK_KEY', 'the sequencer asks for client authentication and no link key is configured');
            // Signed for this enclave's key: a proof relayed from another server would not verify here.
            const claim = signLinkAuth(this.auth.identity, this.auth.purpose, serverNonce, sequencerServerName(enclaveKeyHex));
            ws.send(encodeFrame(authFrame(claim)));
            return;
          }
          if (frame.t !== 'auth_ok') throw new Error(`expected auth_ok after our proof, got '${frame.t}'`);
          this.becomeReady(ws);
          return;
        }
        if (this.state === 'ready') {
          const frame: Frame = this.hooks.decode(data);
          if (frame.t === 'auth_refused') throw new LinkAuthError(frame.code as LinkAuthCode, `the sequencer refused us: ${frame.message}`);
          this.hooks.onFrame(frame as In);
        }
      } catch (e) {
        this.onFault(ws, e);
      }
    });

    ws.on('pong', () => {
      this.awaitingPong = false;
    });

    ws.on('error', (e) => {
      this.lastError = e.message;
    });

    ws.on('close', () => {
      if (this.ws !== ws) return;
      this.ws = null;
      const wasReady = this.state === 'ready';
      if (this.handshakeTimer) clearTimeout(this.handshakeTimer);
      if (this.pingTimer) clearInterval(this.pingTimer);
      this.handshakeTimer = this.pingTimer = null;
      if (this.state === 'closed') return;
      if (wasReady) {
        this.log.warn({ url: this.opts.url }, `${this.name}: connection to the sequencer lost; reconnecting`);
        this.hooks.onDown();
      }
      this.scheduleReconnect();
    });
  }

  private becomeReady(ws: WebSocket): void {
    if (this.handshakeTimer) clearTimeout(this.handshakeTimer);
    this.handshakeTimer = null;
    this.state = 'ready';
    this.attempt = 0;
    this.awaitingPong = false;
    const every = this.opts.pingIntervalMs ?? 5_000;
    this.pingTimer = setInterval(() => {
      if (this.awaitingPong) {
        this.lastError = 'no pong';
        ws.terminate();
        return;
      }
      this.awaitingPong = true;
      ws.ping();
    }, every);
    this.log.info({ url: this.opts.url, reconnect: this.everReady }, `${this.name}: attested sequencer connection ready`);
    this.everReady = true;
    if (this.first) {
      const f = this.first;
      this.first = null;
      if (this.firstTimer) clearTimeout(this.firstTimer);
      this.firstTimer = null;
      f.resolve();
    }
    this.hooks.onReady();
  }

  private onFault(ws: WebSocket, e: unknown): void {
    const msg = e instanceof Error ? e.message : String(e);
    this.lastError = msg;
    if (e instanceof AttestationError || e instanceof LinkAuthError) {
      const what = e instanceof AttestationError ? `REFUSING the sequencer: ${msg}` : `REFUSED by the sequencer: ${msg}`;
      this.log.error({ url: this.opts.url, err: msg }, `${this.name}: ${what}`);
      ws.terminate();
      // The first connection fails hard; later ones keep retrying (the genuine enclave may return,
      // or a fixed config be deployed).
      if (this.first) this.failFirst(e);
      return;
    }
    const kind = e instanceof FrameError ? 'malformed frame from the sequencer' : 'frame handler failed';
    this.log.error({ url: this.opts.url, err: msg }, `${this.name}: ${kind}; reconnecting`);
    ws.terminate();
  }

  private scheduleReconnect(): void {
    const initial = this.opts.backoffInitialMs ?? 50;
    const max = this.opts.backoffMaxMs ?? 2_000;
    const delay = Math.min(max, initial * 2 ** Math.min(this.attempt, 16));
    const jittered = Math.round(delay / 2 + Math.random() * (delay / 2));
    this.attempt++;
    this.state = 'backoff';
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.state === 'backoff') this.open();
    }, jittered);
  }
}
