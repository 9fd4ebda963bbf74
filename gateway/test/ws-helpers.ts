// A raw WebSocket client for the gateway tests: speaks the frames of docs/websocket.md by hand (no
// SDK), decrypts every encrypted frame on arrival in wire order (as a real client must), and keeps
// every frame it received so tests can assert on sequences.
import WebSocket from 'ws';
import {
  completeSessionSetup,
  createSetupRequest,
  decryptPush,
  decryptResponse,
  encryptRequest,
  isEncryptedBody,
  type Ack,
  type ClientSessionCipher,
  type EdgeSequencerRequest,
  type SequencerToEdgeMessage,
} from '@tenebra/session';

export interface Received {
  /** the frame as parsed JSON */
  f: Record<string, any>;
  /** the raw text */
  raw: string;
  /** decrypted plaintext of an encrypted push or response (undefined when plain or not decryptable) */
  plain?: SequencerToEdgeMessage | Ack;
  /** why decrypting failed, if it did */
  decryptError?: string;
}

export class RawWs {
  readonly frames: Received[] = [];
  cipher: ClientSessionCipher | undefined;
  userUuid: string | undefined;
  closed: { code: number; reason: string } | null = null;
  private ids = 0;
  /** ids whose response is an encrypted ack */
  private readonly tradingIds = new Set<string>();
  /** setup requests in flight: id -> key pair */
  private readonly setups = new Map<string, ReturnType<typeof createSetupRequest>['keyPair']>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => this.onMessage(data.toString()));
    ws.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
  }

  static open(url: string): Promise<RawWs> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const c = new RawWs(ws);
      ws.once('open', () => resolve(c));
      ws.once('error', reject);
    });
  }

  private onMessage(raw: string): void {
    const f = JSON.parse(raw) as Record<string, any>;
    const r: Received = { f, raw };
    try {
      if (typeof f.channel === 'string' && isEncryptedBody(f.data) && this.cipher) r.plain = decryptPush(this.cipher, f.data);
      else if (typeof f.id === 'string' && this.tradingIds.has(f.id) && f.code === 0 && this.cipher) r.plain = decryptResponse(this.cipher, f.data).ack;
      else if (typeof f.id === 'string' && this.setups.has(f.id) && f.code === 0) {
        this.cipher = completeSessionSetup(this.setups.get(f.id)!, f.data, this.userUuid!);
      }
    } catch (e) {
      r.decryptError = (e as Error).message;
    }
    this.frames.push(r);
  }

  nextId(): string {
    return `t${++this.ids}`;
  }

  /** Sends a frame (object or raw text). */
  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame));
  }

  /** Waits for the first received frame (from index `from`) that satisfies pred. */
  async waitFor(pred: (r: Received) => boolean, what = 'frame', ms = 5_000, from = 0): Promise<Received> {
    const end = Date.now() + ms;
    for (;;) {
      const hit = this.frames.slice(from).find(pred);
      if (hit) return hit;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; got ${this.frames.slice(-5).map((r) => r.raw.slice(0, 200)).join('\n')}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Sends {id, op, args} and waits for the frame answering id. */
  async request(op: string, args: unknown = {}): Promise<Received> {
    const id = this.nextId();
    this.send({ id, op, args });
    return this.waitFor((r) => r.f.id === id, `answer to ${op}`);
  }

  async login(token: string, extra: Record<string, unknown> = {}): Promise<Received> {
    const r = await this.request('login', { token, ...extra });
    if (r.f.code === 0) this.userUuid = r.f.data.user_uuid;
    return r;
  }

  /** Runs session.setup; the new cipher is installed when the answer arrives. */
  async setup(): Promise<Received> {
    const id = this.nextId();
    const { keyPair, frame } = createSetupRequest(id);
    this.setups.set(id, keyPair);
    this.send(frame);
    return this.waitFor((r) => r.f.id === id, 'session.setup answer');
  }

  /** Seals a trading op (without sending it). */
  seal(request: EdgeSequencerRequest, symbolId: number): ReturnType<typeof encryptRequest> {
    if (!this.cipher) throw new Error('no session');
    const frame = encryptRequest(this.cipher, this.nextId(), symbolId, request);
    this.tradingIds.add(frame.id);
    return frame;
  }

  /** Sends a sealed frame and waits for its answer. */
  async sendSealed<F extends { id: string }>(frame: F): Promise<Received> {
    this.tradingIds.add(frame.id);
    this.send(frame);
    return this.waitFor((r) => r.f.id === frame.id, `answer to ${frame.id}`, 15_000);
  }

  /** Seals, sends and returns the decrypted ack (throws on an error frame). */
  async trade(request: EdgeSequencerRequest, symbolId: number): Promise<Ack> {
    const r = await this.sendSealed(this.seal(request, symbolId));
    if (r.f.code !== 0) throw new Error(`trading op refused: ${r.raw}`);
    if (!r.plain) throw new Error(`ack not decrypted: ${r.decryptError}`);
    return r.plain as Ack;
  }

  /** Pushes received on channel (in wire order). */
  pushes(channel: string): Received[] {
    return this.frames.filter((r) => r.f.channel === channel);
  }

  /** Server events named name. */
  events(name: string): Received[] {
    return this.frames.filter((r) => r.f.event === name);
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.terminate();
    });
  }

  /** Waits until the server closed the socket. */
  async closedBy(ms = 5_000): Promise<{ code: number; reason: string }> {
    const end = Date.now() + ms;
    while (!this.closed) {
      if (Date.now() > end) throw new Error('socket not closed');
      await new Promise((r) => setTimeout(r, 5));
    }
    return this.closed;
  }
}

/** The order updates (decrypted) of the orders channel, with their frame type and seq. */
export function orderPushes(c: RawWs): { type: string; seq: number; complete: boolean; u: any }[] {
  return c.pushes('orders').map((r) => ({
    type: r.f.type, seq: r.f.seq, complete: r.f.snapshot_complete,
    u: r.plain && 'order_update' in (r.plain as object) ? (r.plain as any).order_update : null,
  }));
}

export const ETH = 10;
export const BTC = 7;
export const BNB = 6;

/** A place request for ETH-USDC-PERP. */
export const ethLimit = (over: Record<string, unknown> = {}): EdgeSequencerRequest => ({
  place: { symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: '0.5', price: '3000', time_in_force: 'GTC', ...over } as any,
});

/** A place request for BNB-USDC-PERP (tests that need a book of their own). */
export const bnbLimit = (over: Record<string, unknown> = {}): EdgeSequencerRequest => ({
  place: { symbol: 'BNB-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '600', time_in_force: 'GTC', ...over } as any,
});
