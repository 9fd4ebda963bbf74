// A real gateway wired to the fake sequencer and a committee stand-in that runs the REAL matching
// algorithm (plaintext backend) on the values it reconstructs from the gateway's sealed shares,
// decoding each op with the committee's own decoder (committee/src/apply.ts decodeOp) and reporting
// outcomes with its toWireOutcome. So the gateway's layout (sharing.ts) and the committee's are
// checked against each other here, and every order type behaves as on the MPC committee (the
// differential test in committee/test shows plaintext and MPC agree).
import { rmSync } from 'node:fs';
import pino from 'pino';
import WebSocket from 'ws';
import { PairBox } from '@tenebra/seal';
import { shareSecret, reconstruct, encodeFieldVector, decodeFieldVector, F } from '@tenebra/mpc';
import { decodeGatewayToNode, encodeFrame, opAad, resultAad, resultsHello, type CapacityFrame, type ResultFrame } from '@tenebra/wire';
import { Exchange, PlaintextBackend, type OpResult } from '@tenebra/matching';
import { COMPARISON_BITS, INSTRUMENTS } from '@tenebra/config';
import { committeeBookWidths, decodeOp, toWireOutcome } from '@tenebra/committee';
import { createGateway, type Gateway, type GatewayOptions } from '../src/gateway';
import { createSimulatedOracle, type SimulatedOracle } from '../src/orders/oracle';
import { ADMIN_SECRET_HEADER } from '../src/http/routes-admin';
import { systemClock, type GatewayClock } from '../src/clock';
import { FakeSequencer, makeEnv, until, type Journaled, type TestEnv } from './fakes';
import { call, bearer, type Account, type Json } from './harness';

/** One node's link to the gateway's results listener. */
class Node {
  ws: WebSocket | null = null;
  private from = -1n;
  readonly results: ResultFrame[] = [];
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
        this.from = BigInt(f.from_seq);
        this.flush();
        resolve();
      });
    });
  }

  push(r: ResultFrame): void {
    this.results.push(r);
    this.flush();
  }

  /** Sends a capacity report as a committee node does every 2 s (what its preprocessing reserve covers). */
  reportCapacity(c: Omit<CapacityFrame, 't' | 'node'>): void {
    this.ws?.send(encodeFrame({ t: 'capacity', node: this.index, ...c }));
  }

  private flush(): void {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN || this.from < 1n) return;
    for (const r of this.results) if (BigInt(r.seq) >= this.from) this.ws.send(encodeFrame(r));
    const last = this.results[this.results.length - 1];
    if (last) this.from = BigInt(last.seq) + 1n;
  }

  close(): void {
    this.ws?.terminate();
    this.ws = null;
  }
}

/** The committee stand-in: real matching on reconstructed values, in sequence order. */
export class MatchingCommittee {
  readonly nodes: Node[];
  /** at the committee's widths: the plaintext backend refuses two prices further apart than the book's window (ADR 0024) */
  readonly exchange = new Exchange<bigint>(new PlaintextBackend({ compareBits: COMPARISON_BITS }), { symbols: INSTRUMENTS.map((i) => i.symbol), bookWidths: committeeBookWidths });
  /** reconstructed secret vectors by order id of placements (to check what the gateway shared) */
  readonly inputs = new Map<string, bigint[]>();
  /** every op as decoded, in sequence order */
  readonly applied: { seq: bigint; kind: string; symbol: string; pub: Record<string, unknown>; values: bigint[] }[] = [];
  private chain: Promise<void> = Promise.resolve();
  private lastNs = 0n;

  constructor(private readonly env: TestEnv, sequencer: FakeSequencer) {
    this.nodes = Array.from({ length: env.config.n }, (_, i) => new Node(i + 1, env.nodeLinkKeys[i]!.privateKey));
    sequencer.on('op', (j: Journaled) => {
      this.chain = this.chain.then(() => this.apply(j)).catch((e: unknown) => {
        console.error('matching committee failed', e);
      });
    });
  }

  async connect(url: string): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.connect(url)));
  }

  close(): void {
    for (const n of this.nodes) n.close();
  }

  private async apply(j: Journaled): Promise<void> {
    const { n, t } = this.env.config;
    const op = j.op;
    const orderId = String(op.pub.order_id ?? '');
    const shares = op.sealed.map((s, i) => decodeFieldVector(new PairBox(this.env.nodeKeys[i]!.privateKey, this.env.gatewayKey.publicKey).open(Buffer.from(s, 'base64'), opAad(op.kind, orderId, op.symbol))));
    const values = shares[0]!.length === 0 ? [] : reconstruct([1, 2, 3], shares.slice(0, t + 1), t).map((v) => F.toSigned(v));
    if (op.kind === 'place') this.inputs.set(orderId, values);
    // The sequenced time: the wall clock, strictly increasing (as the sequencer's ts_ns).
    let ts = BigInt(Date.now()) * 1_000_000n;
    if (ts <= this.lastNs) ts = this.lastNs + 1n;
    this.lastNs = ts;
    this.applied.push({ seq: j.seq, kind: op.kind, symbol: op.symbol, pub: op.pub, values });
    const decoded = decodeOp<bigint>({ seq: j.seq, tsNs: ts, kind: op.kind, symbol: op.symbol, pub: op.pub, values }, (v) => v);
    const r: OpResult<bigint> = 'error' in decoded ? { outcome: decoded.reject, outputs: [] } : await this.exchange.apply(decoded);
    const pub = toWireOutcome(r.outcome);
    const outShares = r.outputs.length ? shareSecret(r.outputs, n, t) : null;
    for (const nd of this.nodes) {
      const mine = outShares ? outShares[nd.index - 1]! : null;
      const sealed = mine ? Buffer.from(new PairBox(this.env.nodeKeys[nd.index - 1]!.privateKey, this.env.gatewayKey.publicKey).seal(encodeFieldVector(mine), resultAad(j.seq.toString(), nd.index))).toString('base64') : '';
      nd.push({ t: 'result', node: nd.index, seq: j.seq.toString(), pub, sealed, job: `batch:${j.seq}-${j.seq}:0` });
    }
  }
}

export interface OrderRig {
  env: TestEnv;
  gw: Gateway;
  seq: FakeSequencer;
  committee: MatchingCommittee;
  sim: SimulatedOracle;
  logs: string[];
  close(): Promise<void>;
}

/** Gateway + fake sequencer + matching committee; the oracle does not walk (prices move only when a test sets them). */
export async function startOrderRig(opts: GatewayOptions & { clock?: GatewayClock } = {}): Promise<OrderRig> {
  const env = makeEnv();
  const seq = new FakeSequencer(env);
  env.config.sequencerUrl = await seq.start();
  const committee = new MatchingCommittee(env, seq);
  const clock = opts.clock ?? systemClock();
  const sim = createSimulatedOracle(clock, { walk: false });
  const logs: string[] = [];
  const log = pino({ level: 'info', base: { role: 'gateway' } }, { write: (line: string) => { logs.push(line); } });
  const gw = createGateway(env.config, { resultGraceMs: 5, log, clock, oracle: sim.oracle, ...opts });
  await gw.start();
  await committee.connect(gw.urls.internalUrl);
  return {
    env, gw, seq, committee, sim, logs,
    async close() {
      committee.close();
      await gw.stop();
      await seq.stop();
      rmSync(env.dir, { recursive: true, force: true });
    },
  };
}

/** Creates an account through the admin route and logs it in. */
export async function account(rig: OrderRig, tier = 'Apex', deposit: string | number = '1000000', extra: Record<string, unknown> = {}): Promise<Account> {
  const r = await call(rig.gw, 'POST', '/admin/accounts', { tier, deposit, ...extra }, { [ADMIN_SECRET_HEADER]: rig.env.adminSecret });
  if (r.status !== 200) throw new Error(`create account: ${r.status} ${r.raw}`);
  const c = r.body.data;
  const tok = await call(rig.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: c.api_key, client_secret: c.api_secret, passphrase: c.passphrase });
  if (tok.status !== 200) throw new Error(`token: ${tok.status} ${tok.raw}`);
  return { ...c, token: tok.body.access_token };
}

/** Waits long enough for the spec's spacing (one action per ms per symbol and account). */
export const spaced = (): Promise<void> => new Promise((r) => setTimeout(r, 2));

/** POST /orders (spaced). */
export async function post(rig: OrderRig, a: Account, body: Record<string, unknown>): Promise<Json> {
  await spaced();
  return call(rig.gw, 'POST', '/api/v1/orders', body, bearer(a));
}

/** GET /orders/{id} data (asserts 200). */
export async function getOrder(rig: OrderRig, a: Account, id: string): Promise<Record<string, any>> {
  const r = await call(rig.gw, 'GET', `/api/v1/orders/${id}`, undefined, bearer(a));
  if (r.status !== 200) throw new Error(`GET order ${id}: ${r.status} ${r.raw}`);
  return r.body.data;
}

/** Waits until every journaled op's outcome is applied. */
export async function settled(rig: OrderRig): Promise<void> {
  await until(() => rig.gw.resultsCursor === BigInt(rig.seq.journal.length + 1), 10_000, 'every journaled op to be applied');
}

/** The order's raw JSON text (for exact integers such as in_time_ns). */
export async function rawOrder(rig: OrderRig, a: Account, id: string): Promise<string> {
  return (await call(rig.gw, 'GET', `/api/v1/orders/${id}`, undefined, bearer(a))).raw;
}

/** in_time_ns and out_time_ns of an order, exact. */
export async function times(rig: OrderRig, a: Account, id: string): Promise<{ inNs: bigint; outNs: bigint }> {
  const raw = await rawOrder(rig, a, id);
  return { inNs: BigInt(/"in_time_ns":(\d+)/.exec(raw)![1]!), outNs: BigInt(/"out_time_ns":(\d+)/.exec(raw)![1]!) };
}

/** A fresh token for an account (after a manual clock moved past the token lifetime). */
export async function relogin(rig: OrderRig, a: Account): Promise<void> {
  const tok = await call(rig.gw, 'POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: a.api_key, client_secret: a.api_secret, passphrase: a.passphrase });
  if (tok.status !== 200) throw new Error(`token: ${tok.status} ${tok.raw}`);
  a.token = tok.body.access_token;
}
