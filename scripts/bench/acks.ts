// Acknowledgement path without the MPC committee: the real sequencer and gateway as child processes,
// a plaintext stand-in committee (in this process: it reads the five sequencer feeds, matches, and
// reports result frames to the gateway), and clients placing limit orders: HTTP POST /orders, or with
// --via ws the encrypted WebSocket order.place of the client SDK (@tenebra/client, one socket per account).
//
//   npm run bench:acks -- [--rates 200,500,1000] [--secs 8] [--clients 1,8,32] [--committee fake|none]
//                         [--via rest|ws|rest,ws] [--log-level info] [--prof DIR] [--accounts 96]
//
// Prints, per phase: acks/s, ack latency p50/p99/p999 (client-observed: HTTP 200 NEW, or a WebSocket
// ack with code 0 and status NEW), other answers' counts,
// and the CPU time each process spent in that phase. Asserts nothing. --prof DIR runs the gateway and
// the sequencer under `node --cpu-prof` (profiles written to DIR at exit).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { closeHttpClient, httpRequest } from '../src/http-client';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { generateEd25519, generateX25519, writeKeyFile, toHex, PairBox } from '@tenebra/seal';
import { shareSecret, reconstruct, encodeFieldVector, decodeFieldVector } from '@tenebra/mpc';
import {
  JOB_END_KIND, SequencerFeed, decodeGatewayToNode, encodeFrame, opAad, resultAad, resultsHello,
  type SequencedFrame, type ResultFrame,
} from '@tenebra/wire';
import type { GatewayConfig, SequencerConfig } from '@tenebra/config';
import { TenebraSocket } from '@tenebra/client';
import { expectedMeasurement } from '@tenebra/sequencer-enclave';
import { parseFlags, positiveList, positiveNumber } from '../src/flags';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const FLAGS = parseFlags(process.argv.slice(2), ['rates', 'secs', 'clients', 'committee', 'via', 'log-level', 'prof', 'accounts']);
const arg = (name: string, dflt: string): string => FLAGS.str.get(name) ?? dflt;
const RATES = positiveList(arg('rates', '200,500,1000'), 'rates');
const CLIENTS = positiveList(arg('clients', '1,8,32'), 'clients');
const SECS = positiveNumber(arg('secs', '8'), 'secs');
const COMMITTEE = arg('committee', 'fake');
if (COMMITTEE !== 'fake' && COMMITTEE !== 'none') throw new Error(`--committee: '${COMMITTEE}' is not fake or none`);
const LOG_LEVEL = arg('log-level', 'info');
const PROF = arg('prof', '');
const N_ACCOUNTS = positiveNumber(arg('accounts', '96'), 'accounts');
const VIA = arg('via', 'rest').split(',').filter(Boolean);
/** accounts that open a socket with --via ws (the gateway's per-IP socket cap is 64) */
const WS_SOCKETS = 48;
for (const v of VIA) if (v !== 'rest' && v !== 'ws') throw new Error(`--via: '${v}' is not rest or ws`);
const N = 5;
const T = 2;

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

// ---------- keys and configs ----------
const dir = mkdtempSync(join(tmpdir(), 'tenebra-acks-'));
mkdirSync(join(dir, 'keys'));
const platform = generateEd25519();
writeKeyFile(join(dir, 'keys', 'platform.json'), platform);
const gatewayKey = generateX25519();
writeKeyFile(join(dir, 'keys', 'gateway.x25519.json'), gatewayKey, 'x25519');
const gatewayLink = generateEd25519();
writeKeyFile(join(dir, 'keys', 'gateway.link.json'), gatewayLink, 'ed25519');
const nodeSeal = Array.from({ length: N }, () => generateX25519());
const nodeLink = Array.from({ length: N }, () => generateEd25519());
const adminSecret = randomBytes(24).toString('hex');
writeFileSync(join(dir, 'keys', 'jwt.secret'), randomBytes(32).toString('hex'), { mode: 0o600 });
writeFileSync(join(dir, 'keys', 'admin.secret'), adminSecret, { mode: 0o600 });

// ---------- processes ----------
interface Proc { name: string; child: ChildProcess; out: string[] }
const procs: Proc[] = [];

function startProc(name: string, entry: string, config: unknown, ready: RegExp): Promise<Proc> {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  const flags = PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(PROF, name)}`] : [];
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', entry, '--config', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const p: Proc = { name, child, out: [] };
  procs.push(p);
  return new Promise((res, rej) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (p.out.length < 2000) p.out.push(line);
        if (ready.test(line)) res(p);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => rej(new Error(`${name} exited (${code}) before it was ready:\n${p.out.slice(-20).join('\n')}`)));
  });
}

/** utime+stime of a child process in ms (from /proc; clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

// ---------- stand-in committee ----------
interface Resting { id: string; price: bigint; qty: bigint }
class StandInCommittee {
  private readonly feeds: SequencerFeed[] = [];
  private readonly pending = new Map<string, { op: SequencedFrame; shares: (bigint[] | null)[]; got: number }>();
  private next = 1n;
  private readonly books = new Map<string, { buy: Resting[]; sell: Resting[] }>();
  private readonly links: { ws: WebSocket | null; from: bigint; queue: ResultFrame[] }[] = [];
  applied = 0;

  async start(sequencerUrl: string, gatewayInternalUrl: string, measurement: string): Promise<void> {
    for (let k = 1; k <= N; k++) this.links.push({ ws: null, from: -1n, queue: [] });
    await Promise.all(this.links.map((_, i) => this.connectResults(i + 1, gatewayInternalUrl)));
    for (let k = 1; k <= N; k++) {
      const f = new SequencerFeed();
      this.feeds.push(f);
      await f.connect({
        url: sequencerUrl, platformPublicKey: platform.publicKey, expectedMeasurement: measurement,
        node: k, authKey: nodeLink[k - 1]!.privateKey, fromSeq: 1n,
        log: { info() {}, warn() {}, error: (o: unknown, m?: string) => console.error('feed', m, o) } as never,
        onOp: (op) => this.onOp(k, op),
      });
    }
  }

  private connectResults(k: number, url: string): Promise<void> {
    return new Promise((res, rej) => {
      const ws = new WebSocket(url);
      const link = this.links[k - 1]!;
      ws.once('error', rej);
      ws.on('message', (data) => {
        const f = decodeGatewayToNode(data as Buffer);
        if (f.t === 'auth_challenge') return ws.send(encodeFrame(resultsHello(k, nodeLink[k - 1]!.privateKey, f.nonce)));
        if (f.t === 'auth_refused') return rej(new Error(`gateway refused node ${k}: ${f.code}`));
        link.ws = ws;
        link.from = BigInt(f.from_seq);
        res();
      });
    });
  }

  private onOp(k: number, op: SequencedFrame): void {
    let p = this.pending.get(op.seq);
    if (!p) {
      p = { op, shares: new Array(N).fill(null), got: 0 };
      this.pending.set(op.seq, p);
    }
    const orderId = String(op.pub.order_id ?? '');
    // t+1 shares reconstruct; the stand-in opens no more (its CPU competes with the measured processes)
    if (p.got < T + 1 && op.kind !== JOB_END_KIND) p.shares[k - 1] = decodeFieldVector(new PairBox(nodeSeal[k - 1]!.privateKey, gatewayKey.publicKey).open(Buffer.from(op.sealed, 'base64'), opAad(op.kind, orderId, op.symbol)));
    p.got++;
    while (true) {
      const q = this.pending.get(this.next.toString());
      if (!q || q.got < T + 1) break;
      this.pending.delete(this.next.toString());
      this.apply(q.op, q.shares);
      this.next++;
    }
    // it applies every op at once: what it has taken lets the sequencer close each intake group
    this.feeds[k - 1]!.reportTaken(this.next - 1n);
  }

  private apply(op: SequencedFrame, shares: (bigint[] | null)[]): void {
    const orderId = String(op.pub.order_id ?? '');
    const have = shares.map((s, i) => [i + 1, s] as const).filter(([, s]) => s !== null).slice(0, T + 1);
    const book = this.books.get(op.symbol) ?? { buy: [], sell: [] };
    this.books.set(op.symbol, book);
    let pub: Record<string, unknown>;
    const outputs: bigint[] = [];
    if (op.kind === JOB_END_KIND) {
      pub = { kind: JOB_END_KIND };
    } else if (op.kind === 'place') {
      const [price, qty] = reconstruct(have.map(([x]) => x), have.map(([, s]) => s!), T) as [bigint, bigint];
      const side = op.pub.side as 'buy' | 'sell';
      const opp = side === 'buy' ? book.sell : book.buy;
      let left = qty;
      const fills: string[] = [];
      while (left > 0n && opp.length > 0) {
        const best = opp[0]!;
        if (side === 'buy' ? best.price > price : best.price < price) break;
        const q = left < best.qty ? left : best.qty;
        fills.push(best.id);
        outputs.push(q, best.price);
        left -= q;
        best.qty -= q;
        if (best.qty === 0n) opp.shift();
      }
      const rest = left > 0n && op.pub.time_in_force === 'GTC';
      if (rest) {
        const mine = side === 'buy' ? book.buy : book.sell;
        // binary search for the first worse price (price-time priority)
        let lo = 0, hi = mine.length;
        while (lo < hi) {
          const m = (lo + hi) >> 1;
          const worse = side === 'buy' ? mine[m]!.price < price : mine[m]!.price > price;
          if (worse) hi = m; else lo = m + 1;
        }
        mine.splice(lo, 0, { id: orderId, price, qty: left });
      }
      pub = { kind: 'place', order_id: orderId, fills, rested: rest, cancel_reason: left > 0n && !rest ? 'IOC_REMAINDER' : null, reject_reason: null };
    } else {
      let found = false;
      for (const s of [book.buy, book.sell]) {
        const i = s.findIndex((o) => o.id === orderId);
        if (i >= 0) { s.splice(i, 1); found = true; }
      }
      pub = { kind: 'cancel', order_id: orderId, found };
    }
    const out = outputs.length ? shareSecret(outputs, N, T) : null;
    for (let k = 1; k <= N; k++) {
      const mine = out ? out[k - 1]! : null;
      const sealed = mine ? Buffer.from(new PairBox(nodeSeal[k - 1]!.privateKey, gatewayKey.publicKey).seal(encodeFieldVector(mine), resultAad(op.seq, k))).toString('base64') : '';
      const link = this.links[k - 1]!;
      if (link.ws && BigInt(op.seq) >= link.from) link.ws.send(encodeFrame({ t: 'result', node: k, seq: op.seq, pub, sealed, job: `batch:${op.seq}-${op.seq}:0` } as ResultFrame));
    }
    this.applied++;
  }

  async close(): Promise<void> {
    await Promise.all(this.feeds.map((f) => f.close()));
    for (const l of this.links) l.ws?.terminate();
  }
}

// ---------- HTTP client ----------
let gwHost = '127.0.0.1';
let gwPort = 0;
async function request(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const r = await httpRequest(`http://${gwHost}:${gwPort}${path}`, method, body, headers);
  return { status: r.status, body: r.text };
}

interface Acct { token: string; user_id: string; socket?: TenebraSocket }
async function createAccount(): Promise<Acct> {
  const r = await request('POST', '/admin/accounts', { tier: 'Apex', deposit: '100000000' }, { 'x-admin-secret': adminSecret });
  if (r.status !== 200) throw new Error(`create account: ${r.status} ${r.body}`);
  const c = JSON.parse(r.body).data;
  const tok = await request('POST', '/api/v1/auth/token', { grant_type: 'client_credentials', client_id: c.api_key, client_secret: c.api_secret, passphrase: c.passphrase });
  if (tok.status !== 200) throw new Error(`token: ${tok.status} ${tok.body}`);
  return { token: JSON.parse(tok.body).access_token, user_id: c.user_id };
}

// Three symbols; prices in ticks around the simulated oracle's reference mids (gateway/src/orders/oracle.ts,
// so fills do not put positions under water). Most orders rest a few ticks away from the mid; about
// one in twelve crosses (a buy above the best ask or a sell below the best bid) and fills.
const SYMBOLS = [
  { symbol: 'ETH-USDC-PERP', mid: 300000, tick: 100, qty: '0.05' },
  { symbol: 'BTC-USDC-PERP', mid: 650000, tick: 10, qty: '0.002' },
  { symbol: 'SOL-USDC-PERP', mid: 15000, tick: 100, qty: '1' },
];
let orderNo = 0;
function nextOrder(): { acct: number; body: Record<string, unknown> } {
  const k = orderNo++;
  // accounts round-robin; each account cycles through the symbols (open-order caps are per symbol)
  const s = SYMBOLS[Math.floor(k / N_ACCOUNTS) % SYMBOLS.length]!;
  // each account alternates sides per symbol round, so positions stay flat (no liquidations)
  const side = (Math.floor(k / N_ACCOUNTS) + (k % 2)) % 2 ? 'buy' : 'sell';
  const cross = k % 13 === 5;
  const off = cross ? -3 : 1 + (k % 40);
  const ticks = s.mid + (side === 'buy' ? -off : off);
  const price = (ticks / s.tick).toString();
  return { acct: k, body: { symbol: s.symbol, side, type: 'limit', quantity: s.qty, price, time_in_force: 'GTC' } };
}

interface PhaseStats { lat: number[]; codes: Map<number, number>; sent: number }
function newStats(): PhaseStats { return { lat: [], codes: new Map(), sent: 0 }; }

let accounts: Acct[] = [];
/** the accounts with a socket (--via ws) */
let wsAccounts: Acct[] = [];
/** 'rest' or 'ws': how the phase being measured places its orders */
let via = 'rest';
// Per-account spacing: one action per ms per symbol (the spec); a round robin over many accounts keeps
// each account far below its limits (Apex: 200 req/s, 2,400 placements/min).
async function placeOne(st: PhaseStats): Promise<void> {
  const { acct, body } = nextOrder();
  const pool = via === 'ws' ? wsAccounts : accounts;
  const a = pool[acct % pool.length]!;
  st.sent++;
  const s = performance.now();
  try {
    // an answer's code: the HTTP status, or for a WebSocket ack 200 when it is NEW, else its code
    let code: number;
    let detail: string;
    if (via === 'ws') {
      const ack = await a.socket!.placeOrder(body as unknown as Parameters<TenebraSocket['placeOrder']>[0]);
      code = ack.code === 0 && ack.status === 'NEW' ? 200 : ack.code;
      detail = JSON.stringify(ack);
    } else {
      const r = await request('POST', '/api/v1/orders', body, { authorization: `Bearer ${a.token}` });
      code = r.status;
      detail = r.body;
    }
    const ms = performance.now() - s;
    st.codes.set(code, (st.codes.get(code) ?? 0) + 1);
    if (code === 200) st.lat.push(ms);
    else if ((st.codes.get(code) ?? 0) <= 2) console.log(`  ${code} ${detail.slice(0, 200)}`);
  } catch (e) {
    st.codes.set(-1, (st.codes.get(-1) ?? 0) + 1);
    if ((st.codes.get(-1) ?? 0) <= 2) console.log(`  request error ${(e as Error).message}`);
  }
}

function pct(sorted: number[], q: number): string {
  if (!sorted.length) return '-';
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2);
}

async function measure(label: string, run: (st: PhaseStats) => Promise<void>): Promise<void> {
  const st = newStats();
  const before = procs.map((p) => cpuMs(p.child.pid!));
  const selfBefore = process.cpuUsage();
  const la = loadavg()[0]!.toFixed(2);
  const t0 = performance.now();
  await run(st);
  const secs = (performance.now() - t0) / 1000;
  const cpu = procs.map((p, i) => `${p.name} ${((cpuMs(p.child.pid!) - before[i]!) / secs / 10).toFixed(0)}%`);
  const self = process.cpuUsage(selfBefore);
  cpu.push(`bench ${(((self.user + self.system) / 1000) / secs / 10).toFixed(0)}%`);
  const lat = st.lat.sort((a, b) => a - b);
  const perAck = procs.map((p, i) => `${p.name} ${(((cpuMs(p.child.pid!) - before[i]!) * 1000) / Math.max(1, lat.length)).toFixed(0)}µs`);
  const codes = [...st.codes].filter(([c]) => c !== 200).map(([c, n]) => `${c}×${n}`).join(' ');
  console.log(
    `${label.padEnd(21)} acks/s ${(lat.length / secs).toFixed(0).padStart(5)}  p50 ${pct(lat, 0.5).padStart(7)}  p99 ${pct(lat, 0.99).padStart(7)}  p999 ${pct(lat, 0.999).padStart(7)} ms` +
    `  | cpu ${cpu.join(', ')} | cpu/ack ${perAck.join(', ')}${codes ? ` | non-200 ${codes}` : ''} | load1 ${la}`,
  );
}

async function openLoop(rate: number, st: PhaseStats): Promise<void> {
  const inflight = new Set<Promise<void>>();
  const t0 = performance.now();
  const total = Math.round(rate * SECS);
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const w = due - performance.now();
    if (w > 1) await new Promise((r) => setTimeout(r, w));
    const p = placeOne(st).finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.all(inflight);
}

async function closedLoop(clients: number, st: PhaseStats): Promise<void> {
  const end = performance.now() + SECS * 1000;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (performance.now() < end) await placeOne(st);
  }));
}

async function main(): Promise<void> {
  const seqPort = await freePort();
  const gwPortChosen = await freePort();
  const internalPort = await freePort();
  const sequencerConfig: SequencerConfig = {
    role: 'sequencer', dataDir: join(dir, 'sequencer'), host: '127.0.0.1', port: seqPort, n: N,
    platformKeyFile: join(dir, 'keys', 'platform.json'), logLevel: LOG_LEVEL,
    clientLinkKeys: { gateway: toHex(gatewayLink.publicKey), nodes: nodeLink.map((k, i) => ({ index: i + 1, publicKey: toHex(k.publicKey) })) },
  };
  const measurement = expectedMeasurement(sequencerConfig);
  const gatewayConfig: GatewayConfig = {
    role: 'gateway', env: 'test', dataDir: join(dir, 'gateway'), host: '127.0.0.1', port: gwPortChosen, internalPort, n: N, t: T,
    sequencerUrl: `ws://127.0.0.1:${seqPort}`, platformPublicKey: toHex(platform.publicKey), expectedMeasurement: measurement,
    nodes: nodeSeal.map((k, i) => ({ index: i + 1, x25519PublicKey: toHex(k.publicKey), linkPublicKey: toHex(nodeLink[i]!.publicKey) })),
    gatewayKeyFile: join(dir, 'keys', 'gateway.x25519.json'), linkKeyFile: join(dir, 'keys', 'gateway.link.json'),
    jwtSecretFile: join(dir, 'keys', 'jwt.secret'), adminSecretFile: join(dir, 'keys', 'admin.secret'), logLevel: LOG_LEVEL,
  };
  if (PROF) mkdirSync(PROF, { recursive: true });
  await startProc('sequencer', join(ROOT, 'sequencer-enclave', 'src', 'main.ts'), sequencerConfig, /"msg":"listening"/);
  await startProc('gateway', join(ROOT, 'gateway', 'src', 'main.ts'), gatewayConfig, /"msg":"gateway ready"/);
  gwPort = gwPortChosen;
  const committee = COMMITTEE === 'fake' ? new StandInCommittee() : null;
  await committee?.start(`ws://127.0.0.1:${seqPort}`, `ws://127.0.0.1:${internalPort}`, measurement);
  const t0 = performance.now();
  accounts = [];
  for (let i = 0; i < N_ACCOUNTS; i += 8) accounts.push(...await Promise.all(Array.from({ length: Math.min(8, N_ACCOUNTS - i) }, () => createAccount())));
  console.log(`acks bench: ${N_ACCOUNTS} Apex accounts in ${((performance.now() - t0) / 1000).toFixed(1)} s; committee ${COMMITTEE}; log level ${LOG_LEVEL}; ${SECS} s per phase; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  if (VIA.includes('ws')) {
    // one encrypted session per account (login, X25519 session set-up), as a trading client keeps open
    const ids = JSON.parse((await request('GET', '/api/v1/instruments', undefined)).body).data.instruments as { symbol: string; symbol_id: number }[];
    const symbolIds = new Map(ids.map((i) => [i.symbol, i.symbol_id]));
    // the gateway takes at most 64 sockets per IP address (gateway/src/ws/protocol.ts)
    for (const a of accounts.slice(0, WS_SOCKETS)) {
      a.socket = new TenebraSocket({
        url: `ws://127.0.0.1:${gwPort}/ws/v1`, token: a.token, resolveSymbolId: (sym) => symbolIds.get(sym)!,
        reconnect: false, heartbeat: false,
      });
      await a.socket.connect();
    }
    wsAccounts = accounts.filter((a) => a.socket);
  }
  for (const v of VIA) {
    via = v;
    const tag = v === 'ws' ? 'ws ' : '';
    // warm-up (JIT, lmdb maps, connections)
    await measure(`${tag}warm-up 8 clients`, (st) => closedLoop(8, st).then(() => undefined));
    for (const r of RATES) await measure(`${tag}open ${r}/s`, (st) => openLoop(r, st));
    for (const c of CLIENTS) await measure(`${tag}closed ${c} clients`, (st) => closedLoop(c, st));
  }
  console.log(`committee stand-in applied ${committee?.applied ?? 0} ops; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  for (const a of accounts) await a.socket?.close();
  await committee?.close();
}

async function stopAll(): Promise<void> {
  for (const p of procs.reverse()) {
    if (p.child.exitCode !== null) continue;
    const exited = new Promise((r) => p.child.once('exit', r));
    p.child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  }
  closeHttpClient();
  rmSync(dir, { recursive: true, force: true });
}

main().then(stopAll, async (e: unknown) => {
  console.error(e);
  await stopAll();
  process.exitCode = 1;
});
