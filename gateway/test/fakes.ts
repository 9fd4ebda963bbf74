// Test doubles around a real gateway: an attested sequencer that journals nothing and acks, and a
// committee of n result-reporting nodes that reconstructs each order from its sealed shares, matches
// it in plaintext (price-time priority) and reports the outcome with freshly shared output values.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import WebSocket, { WebSocketServer } from 'ws';
import {
  generateEd25519, generateX25519, makeQuote, proveEnclaveKey, PairBox, writeKeyFile, toHex,
} from '@tenebra/seal';
import { shareSecret, reconstruct, encodeFieldVector, decodeFieldVector } from '@tenebra/mpc';
import {
  decodeGatewayToSequencer, decodeGatewayToNode, encodeFrame, opAad, resultAad, resultsHello,
  type SealedOp, type ResultFrame, type PlaceOutcome, type CancelOutcome,
} from '@tenebra/wire';
import type { GatewayConfig } from '@tenebra/config';

export interface TestEnv {
  dir: string;
  config: GatewayConfig;
  platform: { privateKey: Uint8Array; publicKey: Uint8Array };
  measurement: string;
  nodeKeys: { privateKey: Uint8Array; publicKey: Uint8Array }[];
  /** node i's Ed25519 link key is nodeLinkKeys[i-1]: it signs the results hello */
  nodeLinkKeys: { privateKey: Uint8Array; publicKey: Uint8Array }[];
  gatewayKey: { privateKey: Uint8Array; publicKey: Uint8Array };
  adminSecret: string;
  jwtSecret: string;
}

/** Fresh keys, secrets and a gateway config in a temp folder (ports 0 = chosen by the OS). */
export function makeEnv(n = 5, t = 2, sequencerUrl = 'ws://127.0.0.1:1'): TestEnv {
  const dir = mkdtempSync(join(tmpdir(), 'tenebra-gw-'));
  const platform = generateEd25519();
  const measurement = randomBytes(32).toString('hex');
  const nodeKeys = Array.from({ length: n }, () => generateX25519());
  const nodeLinkKeys = Array.from({ length: n }, () => generateEd25519());
  const gatewayKey = generateX25519();
  writeKeyFile(join(dir, 'gateway.x25519.json'), gatewayKey, 'x25519');
  writeKeyFile(join(dir, 'gateway.link.ed25519.json'), generateEd25519(), 'ed25519');
  const jwtSecret = randomBytes(32).toString('hex');
  const adminSecret = randomBytes(24).toString('hex');
  writeFileSync(join(dir, 'jwt.secret'), jwtSecret, { mode: 0o600 });
  writeFileSync(join(dir, 'admin.secret'), adminSecret, { mode: 0o600 });
  const config: GatewayConfig = {
    role: 'gateway', env: 'test', dataDir: join(dir, 'gateway'), host: '127.0.0.1', port: 0, internalPort: 0, n, t,
    sequencerUrl, platformPublicKey: toHex(platform.publicKey), expectedMeasurement: measurement,
    nodes: nodeKeys.map((k, i) => ({ index: i + 1, x25519PublicKey: toHex(k.publicKey), linkPublicKey: toHex(nodeLinkKeys[i]!.publicKey) })),
    gatewayKeyFile: join(dir, 'gateway.x25519.json'), linkKeyFile: join(dir, 'gateway.link.ed25519.json'), jwtSecretFile: join(dir, 'jwt.secret'), adminSecretFile: join(dir, 'admin.secret'),
    logLevel: 'silent',
  };
  return { dir, config, platform, measurement, nodeKeys, nodeLinkKeys, gatewayKey, adminSecret, jwtSecret };
}

export interface Journaled {
  seq: bigint;
  rid: string;
  op: SealedOp;
}

/** A sequencer that proves a quote signed by the test platform key, acks every submit in order, dedupes rids. */
export class FakeSequencer extends EventEmitter {
  private wss!: WebSocketServer;
  readonly journal: Journaled[] = [];
  private readonly byRid = new Map<string, Journaled>();
  /** when set, submits are held (no ack) until release() */
  hold = false;
  private held: (() => void)[] = [];
  /** rids to refuse with a nack */
  readonly nackRids = new Set<string>();
  /**
   * Refuse the next submit with a nack; a predicate refuses the next submit it matches (e.g. the next
   * placement, so an expire or cancel the gateway sends meanwhile cannot take the nack).
   */
  nackNext: boolean | ((op: SealedOp) => boolean) = false;
  port = 0;

  constructor(private readonly env: TestEnv, private readonly measurement = env.measurement) {
    super();
  }

  async start(port = 0): Promise<string> {
    const enclave = generateEd25519();
    const quote = makeQuote(this.env.platform.privateKey, this.measurement, enclave.publicKey);
    this.wss = new WebSocketServer({ host: '127.0.0.1', port });
    await new Promise<void>((r) => this.wss.once('listening', () => r()));
    this.port = (this.wss.address() as { port: number }).port;
    this.wss.on('connection', (ws) => {
      ws.send(encodeFrame({ t: 'quote', quote }));
      ws.on('message', (data) => {
        const f = decodeGatewayToSequencer(data as Buffer);
        if (f.t === 'challenge') {
          ws.send(encodeFrame({ t: 'proof', nonce: f.nonce, sig: proveEnclaveKey(enclave.privateKey, f.nonce) }));
          return;
        }
        if (f.t !== 'submit') return; // it sends no auth_challenge, so clients send no auth frame
        const act = () => this.onSubmit(ws, f.rid, f.op);
        if (this.hold) this.held.push(act);
        else act();
      });
    });
    return `ws://127.0.0.1:${this.port}`;
  }

  private onSubmit(ws: WebSocket, rid: string, op: SealedOp): void {
    const next = typeof this.nackNext === 'function' ? this.nackNext(op) : this.nackNext;
    if (next || this.nackRids.has(rid)) {
      if (next) this.nackNext = false;
      ws.send(encodeFrame({ t: 'nack', rid, code: 'REFUSED', message: 'test refuses this op' }));
      return;
    }
    let j = this.byRid.get(rid);
    if (!j) {
      j = { seq: BigInt(this.journal.length + 1), rid, op };
      this.journal.push(j);
      this.byRid.set(rid, j);
      this.emit('op', j);
    }
    ws.send(encodeFrame({ t: 'ack', rid, seq: j.seq.toString(), ts_ns: (BigInt(Date.now()) * 1_000_000n).toString() }));
  }

  /** Submits held so far. */
  get heldCount(): number {
    return this.held.length;
  }

  /** Acks every held submit. */
  release(): void {
    this.hold = false;
    const h = this.held;
    this.held = [];
    for (const f of h) f();
  }

  async stop(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    await new Promise<void>((r) => this.wss.close(() => r()));
  }
}

interface BookOrder {
  order_id: string;
  side: 'buy' | 'sell';
  price: bigint;
  qty: bigint;
}

export type NodeFault = 'none' | 'wrong-share' | 'wrong-outcome' | 'silent' | 'garbage-seal';

/** One result-reporting node: keeps its results and streams them from wherever the gateway says. */
class FakeNode {
  ws: WebSocket | null = null;
  readonly results: ResultFrame[] = [];
  private from = -1n;
  fault: NodeFault = 'none';
  /** when set, ignore the gateway's resume point and send everything from seq 1 */
  resendAll = false;

  constructor(readonly index: number, private readonly linkKey: Uint8Array) {}

  connect(url: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      this.ws = ws;
      ws.once('error', reject);
      ws.on('message', (data) => {
        const f = decodeGatewayToNode(data as Buffer);
        if (f.t === 'auth_challenge') return ws.send(encodeFrame(resultsHello(this.index, this.linkKey, f.nonce)));
        if (f.t === 'auth_refused') return reject(new Error(`gateway refused node ${this.index}: ${f.code}`));
        this.from = this.resendAll ? 1n : BigInt(f.from_seq);
        this.flush();
        resolve();
      });
      ws.on('close', () => {
        if (this.ws === ws) {
          this.ws = null;
          this.from = -1n;
        }
      });
    });
  }

  push(r: ResultFrame): void {
    this.results.push(r);
    this.flush();
  }

  /** when > 0, results go out one seq per trickleMs (all nodes in step), so a test can act mid-stream */
  trickleMs = 0;
  private trickling = false;

  private flush(): void {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN || this.from < 1n || this.fault === 'silent') return;
    if (this.trickleMs > 0) {
      if (!this.trickling) this.trickle();
      return;
    }
    for (const r of this.results) {
      if (BigInt(r.seq) >= this.from) this.ws.send(encodeFrame(r));
    }
    const last = this.results[this.results.length - 1];
    if (last) this.from = BigInt(last.seq) + 1n;
  }

  private trickle(): void {
    const next = this.results.find((r) => BigInt(r.seq) >= this.from);
    if (!next || !this.ws || this.ws.readyState !== WebSocket.OPEN) {
      this.trickling = false;
      return;
    }
    this.trickling = true;
    this.ws.send(encodeFrame(next));
    this.from = BigInt(next.seq) + 1n;
    setTimeout(() => this.trickle(), this.trickleMs);
  }

  close(): void {
    this.ws?.terminate();
    this.ws = null;
  }
}

/** n nodes sharing one plaintext book; every sequenced op becomes one ResultFrame per node. */
export class FakeCommittee {
  readonly nodes: FakeNode[];
  private readonly books = new Map<string, { buy: BookOrder[]; sell: BookOrder[] }>();
  /** when set, rewrites the next op's public outcome (to model committee behaviour the fake lacks) */
  amendNext: ((pub: PlaceOutcome | CancelOutcome) => Record<string, unknown>) | null = null;
  /** plaintext inputs the nodes reconstructed, by order id (to check the gateway's sharing) */
  readonly inputs = new Map<string, { price: bigint; qty: bigint }>();

  /** when set, journaled ops wait (no outcome) until resume(): a committee slower than the client */
  hold = false;
  private held: Journaled[] = [];

  constructor(private readonly env: TestEnv, sequencer: FakeSequencer) {
    this.nodes = Array.from({ length: env.config.n }, (_, i) => new FakeNode(i + 1, env.nodeLinkKeys[i]!.privateKey));
    sequencer.on('op', (j: Journaled) => {
      if (this.hold) this.held.push(j);
      else this.apply(j);
    });
  }

  /** Applies the ops held so far, in journal order, and stops holding. */
  resume(): void {
    this.hold = false;
    const h = this.held;
    this.held = [];
    for (const j of h) this.apply(j);
  }

  async connect(url: string, which: number[] = this.nodes.map((n) => n.index)): Promise<void> {
    await Promise.all(which.map((i) => this.nodes[i - 1]!.connect(url)));
  }

  close(): void {
    for (const nd of this.nodes) nd.close();
  }

  /** Drops an order from the plaintext book (so a later cancel finds nothing). */
  forget(orderId: string): void {
    for (const b of this.books.values()) for (const s of [b.buy, b.sell]) {
      const i = s.findIndex((o) => o.order_id === orderId);
      if (i >= 0) s.splice(i, 1);
    }
  }

  node(i: number): FakeNode {
    return this.nodes[i - 1]!;
  }

  private apply(j: Journaled): void {
    const { n, t } = this.env.config;
    const { op } = j;
    const orderId = String(op.pub.order_id);
    // Each node opens only its own sealed share (bound to this op by the aad).
    const shares = op.sealed.map((s, i) => decodeFieldVector(new PairBox(this.env.nodeKeys[i]!.privateKey, this.env.gatewayKey.publicKey).open(Buffer.from(s, 'base64'), opAad(op.kind, orderId, op.symbol))));
    let pub: PlaceOutcome | CancelOutcome;
    let outputs: bigint[] = [];
    const book = this.books.get(op.symbol) ?? { buy: [], sell: [] };
    this.books.set(op.symbol, book);
    if (op.kind === 'place') {
      const [price, qty] = reconstruct(shares.map((_, i) => i + 1).slice(0, t + 1), shares.slice(0, t + 1), t) as [bigint, bigint];
      this.inputs.set(orderId, { price, qty });
      const side = op.pub.side as 'buy' | 'sell';
      const opposite = side === 'buy' ? book.sell : book.buy;
      let left = qty;
      const fills: string[] = [];
      while (left > 0n && opposite.length > 0) {
        const best = opposite[0]!;
        if (side === 'buy' ? best.price > price : best.price < price) break;
        const q = left < best.qty ? left : best.qty;
        fills.push(best.order_id);
        outputs.push(q, best.price);
        left -= q;
        best.qty -= q;
        if (best.qty === 0n) opposite.shift();
      }
      const rest = left > 0n && op.pub.time_in_force === 'GTC';
      if (rest) {
        const mine = side === 'buy' ? book.buy : book.sell;
        const at = mine.findIndex((o) => (side === 'buy' ? o.price < price : o.price > price));
        mine.splice(at < 0 ? mine.length : at, 0, { order_id: orderId, side, price, qty: left });
      }
      pub = { kind: 'place', order_id: orderId, fills, rested: rest, cancel_reason: left > 0n && !rest ? 'IOC_REMAINDER' : null, reject_reason: null };
    } else {
      let found = false;
      for (const s of [book.buy, book.sell]) {
        const i = s.findIndex((o) => o.order_id === orderId);
        if (i >= 0) {
          s.splice(i, 1);
          found = true;
        }
      }
      pub = { kind: 'cancel', order_id: orderId, found };
      outputs = [];
    }
    if (this.amendNext) {
      pub = this.amendNext(pub) as unknown as PlaceOutcome;
      this.amendNext = null;
    }
    const outShares = outputs.length ? shareSecret(outputs, n, t) : null;
    for (const nd of this.nodes) {
      let mine = outShares ? outShares[nd.index - 1]! : null;
      let myPub: Record<string, unknown> = { ...pub };
      if (nd.fault === 'wrong-share' && mine) mine = mine.map((v, i) => (i === 0 ? v + 1n : v));
      if (nd.fault === 'wrong-outcome') myPub = { ...myPub, order_id: '1' };
      let sealed = mine ? Buffer.from(new PairBox(this.env.nodeKeys[nd.index - 1]!.privateKey, this.env.gatewayKey.publicKey).seal(encodeFieldVector(mine), resultAad(j.seq.toString(), nd.index))).toString('base64') : '';
      if (nd.fault === 'garbage-seal' && mine) sealed = Buffer.from(randomBytes(96)).toString('base64');
      nd.push({ t: 'result', node: nd.index, seq: j.seq.toString(), pub: myPub, sealed, job: `batch:${j.seq}-${j.seq}:0` });
    }
  }
}

/** Polls until fn returns a truthy value (or throws after timeoutMs). */
export async function until<T>(fn: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
