// The floor of a single comparison's message pattern on this machine (prints figures, asserts
// nothing): five processes, jobs of R rounds (default 3, as one comparison), in each round every
// party sends one message of B bytes (default 448: one comparison's 28 field elements) to each of
// the others and waits for all of theirs; no arithmetic at all. Run over bare Node TCP sockets
// (length-prefixed frames, TCP_NODELAY, no encryption) and over this project's libp2p transport
// (TCP + Noise + Yamux). Whatever the MPC code does, a comparison over that transport cannot be
// faster than this on the same machine.
//   npm run bench:floor -- [--jobs 300] [--warmup 500] [--rounds 3] [--bytes 448] [--only tcp,unix,libp2p,libp2p-unix,libp2p-lib]
// --only takes a comma list of modes, run in that order; libp2p-lib is the libp2p transport with
// directPath off (every message through the library's layers, for an A/B in one run); unix and
// libp2p-unix are tcp and libp2p over Unix domain sockets instead of loopback TCP (the links of
// `npm start -- --links unix`, docs/decisions/0041-unix-socket-links.md).
// --node drives the transport as a committee node does instead: in each round every party sends each
// peer --per-peer messages (default 6), one batch to every peer per event-loop turn (setImmediate in
// between: a node's runtime sends as its gates finish, not in one burst), sizes drawn from a node-like
// mix (--big-pct of them, default 8%, 4-16 KB; the rest 100-500 B; seeded, the same for every party),
// and prints CPU µs per message sent or received (process.cpuUsage) and messages/s.
// FLOOR_CHILD_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the five parties.
import '@tenebra/transport/src/polyfill';
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLibp2pTransport, generateIdentity, unixSocketMultiaddr, type PeerEntry } from '@tenebra/transport';
import { directReads } from '@tenebra/transport/src/direct-path';
import { parseFlags } from '../src/flags';

const N = 5;
type Mode = 'tcp' | 'unix' | 'libp2p' | 'libp2p-unix' | 'libp2p-lib';
const MODES: readonly Mode[] = ['tcp', 'unix', 'libp2p', 'libp2p-unix', 'libp2p-lib'];
/** the modes whose links are Unix domain sockets */
const overUnix = (m: Mode): boolean => m === 'unix' || m === 'libp2p-unix';

interface Plan { jobs: number; warmup: number; rounds: number; bytes: number; node: boolean; perPeer: number; bigPct: number }
interface Config { mode: Mode; self: number; ports: number[]; /** socket paths (unix modes; else empty) */ paths: string[]; keys: string[]; peerIds: string[]; plan: Plan }
/** sysMs: the kernel's part of cpuMs (on loopback TCP it includes the peer's receive path, run inline in our write) */
interface Report { self: number; samples: number[]; cpuMs: number; sysMs: number; wallMs: number; direct?: string }

type Handler = (from: number, data: Uint8Array) => void;
/** What a party needs: send to a peer (arrivals go to the handler given at creation, so none is missed). */
interface Link { send(to: number, data: Uint8Array): void; stop(): Promise<void>; direct?: () => string }

/** Bare sockets (TCP ports, or Unix socket paths when given): one outbound socket per peer (written only), inbound sockets read; u32 length frames. */
async function bareTcp(self: number, ports: number[], paths: string[], handler: Handler): Promise<Link> {
  const server = createServer((sock) => {
    sock.setNoDelay(true);
    let from = 0;
    let buf: Buffer = Buffer.alloc(0);
    sock.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      for (;;) {
        if (from === 0) {
          if (buf.length < 1) return;
          from = buf[0]!;
          buf = buf.subarray(1);
        }
        if (buf.length < 4) return;
        const len = buf.readUInt32BE(0);
        if (buf.length < 4 + len) return;
        handler(from, buf.subarray(4, 4 + len));
        buf = buf.subarray(4 + len);
      }
    });
  });
  await new Promise<void>((res) => (paths.length > 0 ? server.listen(paths[self - 1]!, res) : server.listen(ports[self - 1], '127.0.0.1', res)));
  const out = new Map<number, Socket>();
  const dial = (j: number): Promise<void> =>
    new Promise((res) => {
      const s = createConnection(paths.length > 0 ? { path: paths[j - 1]! } : { port: ports[j - 1]!, host: '127.0.0.1' }, () => {
        s.setNoDelay(true);
        s.write(Buffer.from([self]));
        out.set(j, s);
        res();
      });
      s.once('error', () => setTimeout(() => void dial(j).then(res), 50));
    });
  await new Promise((r) => setTimeout(r, 300)); // every party listens before anyone dials
  await Promise.all([...Array(N).keys()].map((k) => k + 1).filter((j) => j !== self).map(dial));
  return {
    send(to, data) {
      const frame = Buffer.allocUnsafe(4 + data.length);
      frame.writeUInt32BE(data.length, 0);
      frame.set(data, 4);
      out.get(to)!.write(frame);
    },
    async stop() {
      for (const s of out.values()) s.destroy();
      server.close();
    },
  };
}

async function libp2pLink(self: number, cfg: Config, handler: Handler): Promise<Link> {
  const peers: PeerEntry[] = cfg.peerIds.map((peerId, k) => ({
    index: k + 1, peerId, addr: cfg.paths.length > 0 ? unixSocketMultiaddr(cfg.paths[k]!) : `/ip4/127.0.0.1/tcp/${cfg.ports[k]}`,
  }));
  const t = await createLibp2pTransport({ self, n: N, privateKey: Buffer.from(cfg.keys[self - 1]!, 'hex'), listen: peers[self - 1]!.addr, peers, directPath: cfg.mode !== 'libp2p-lib' });
  t.onMessage(handler);
  await t.start();
  const allUp = (): boolean => [...Array(N).keys()].every((k) => k + 1 === self || t.isUp(k + 1));
  while (!allUp()) await new Promise((r) => setTimeout(r, 20));
  // the share of writes and of received chunks per layer that took the direct path (direct-path.ts)
  const direct = (): string => {
    let writes = 0;
    let viaDirect = 0;
    for (let p = 1; p <= N; p++) if (p !== self) { const s = t.peerStats(p); writes += s.sentWrites; viaDirect += s.sentDirect ?? 0; }
    return `writes ${viaDirect}/${writes} direct; chunks read direct: tcp ${directReads.tcp}, noise ${directReads.noise}, stream ${directReads.stream}`;
  };
  return { send: (to, d) => t.send(to, d), stop: () => t.stop(), direct };
}

/** Counts arrivals per (job, round) key; wakes the party waiting for a key once all peers sent it. */
class Arrivals {
  constructor(private readonly expect: number) {}
  readonly got = new Map<number, number>(); // job*rounds+round -> peers heard
  waiting: { key: number; wake: () => void } | undefined;
  readonly handler: Handler = (_from, data) => {
    const key = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(0);
    const c = (this.got.get(key) ?? 0) + 1;
    this.got.set(key, c);
    if (this.waiting && this.waiting.key === key && c === this.expect) this.waiting.wake();
  };
}

/** Runs the jobs, every party back to back (a peer ahead of us has its messages counted early). */
async function runJobs(self: number, link: Link, arrivals: Arrivals, plan: Plan): Promise<Report> {
  const { got } = arrivals;
  const msg = new Uint8Array(plan.bytes);
  const samples: number[] = [];
  let c0 = process.cpuUsage();
  let w0 = performance.now();
  for (let j = 0; j < plan.warmup + plan.jobs; j++) {
    if (j === plan.warmup) {
      // the warm-up jobs (code not yet compiled) are neither timed nor counted
      samples.length = 0;
      c0 = process.cpuUsage();
      w0 = performance.now();
    }
    const t0 = performance.now();
    for (let r = 0; r < plan.rounds; r++) {
      const key = j * plan.rounds + r;
      new DataView(msg.buffer).setUint32(0, key);
      for (let p = 1; p <= N; p++) if (p !== self) link.send(p, msg);
      if ((got.get(key) ?? 0) < N - 1) await new Promise<void>((wake) => { arrivals.waiting = { key, wake }; });
      arrivals.waiting = undefined;
      got.delete(key);
    }
    samples.push(performance.now() - t0);
  }
  const c = process.cpuUsage(c0);
  return { self, samples, cpuMs: (c.user + c.system) / 1000, sysMs: c.system / 1000, wallMs: performance.now() - w0 };
}

/** Node-like message sizes: a fixed seeded sequence (xorshift32), so every run and party draws the same. */
function sizeMix(count: number, bigPct: number): number[] {
  let x = 0x9e3779b9;
  const next = (): number => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 0x1_0000_0000;
  };
  return [...Array(count)].map(() => (next() * 100 < bigPct ? 4096 + Math.floor(next() * 12_289) : 100 + Math.floor(next() * 401)));
}

/** --node: per round, perPeer turns, each sending one message to every peer; then wait for all of theirs. */
async function runNodeJobs(self: number, link: Link, arrivals: Arrivals, plan: Plan): Promise<Report> {
  const { got } = arrivals;
  const sizes = sizeMix(4096, plan.bigPct);
  const bufs = sizes.map((b) => new Uint8Array(b));
  const expect = plan.perPeer * (N - 1);
  const samples: number[] = [];
  let c0 = process.cpuUsage();
  let w0 = performance.now();
  let pick = 0;
  const total = plan.warmup + plan.jobs;
  for (let j = 0; j < total; j++) {
    if (j === plan.warmup) {
      samples.length = 0;
      c0 = process.cpuUsage();
      w0 = performance.now();
    }
    if (self === 1 && j > 0 && j % Math.max(1, Math.floor(total / 5)) === 0) console.log(`  party 1: job ${j}/${total}`);
    const t0 = performance.now();
    for (let r = 0; r < plan.rounds; r++) {
      const key = j * plan.rounds + r;
      for (let m = 0; m < plan.perPeer; m++) {
        if (m > 0) await new Promise<void>((res) => setImmediate(res));
        for (let p = 1; p <= N; p++) {
          if (p === self) continue;
          const msg = bufs[pick++ % bufs.length]!;
          new DataView(msg.buffer).setUint32(0, key);
          link.send(p, msg);
        }
      }
      if ((got.get(key) ?? 0) < expect) await new Promise<void>((wake) => { arrivals.waiting = { key, wake }; });
      arrivals.waiting = undefined;
      got.delete(key);
    }
    samples.push(performance.now() - t0);
  }
  const c = process.cpuUsage(c0);
  return { self, samples, cpuMs: (c.user + c.system) / 1000, sysMs: c.system / 1000, wallMs: performance.now() - w0 };
}

async function child(cfg: Config): Promise<void> {
  const arrivals = new Arrivals(cfg.plan.node ? cfg.plan.perPeer * (N - 1) : N - 1);
  const link = cfg.mode === 'tcp' || cfg.mode === 'unix' ? await bareTcp(cfg.self, cfg.ports, cfg.paths, arrivals.handler) : await libp2pLink(cfg.self, cfg, arrivals.handler);
  process.send!({ type: 'ready' });
  await new Promise<void>((res) => process.once('message', () => res())); // everyone connected
  const report = await (cfg.plan.node ? runNodeJobs : runJobs)(cfg.self, link, arrivals, cfg.plan);
  process.send!({ type: 'report', report: { ...report, direct: link.direct?.() } });
  await new Promise((r) => setTimeout(r, 500)); // let the peers finish their last round
  await link.stop();
  process.exit(0);
}

function freePorts(k: number): Promise<number[]> {
  return Promise.all([...Array(k)].map(() => new Promise<number>((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => res(p));
    });
  })));
}

const pct = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

async function parent(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2), ['jobs', 'warmup', 'rounds', 'bytes', 'only', 'per-peer', 'big-pct'], ['node']);
  const node = flags.bool.has('node');
  const plan: Plan = {
    jobs: Number(flags.str.get('jobs') ?? (node ? 100 : 300)), warmup: Number(flags.str.get('warmup') ?? (node ? 100 : 500)),
    rounds: Number(flags.str.get('rounds') ?? 3), bytes: Math.max(4, Number(flags.str.get('bytes') ?? 448)),
    node, perPeer: Math.max(1, Number(flags.str.get('per-peer') ?? 6)), bigPct: Number(flags.str.get('big-pct') ?? 8),
  };
  const modes = (flags.str.get('only')?.split(',') ?? ['tcp', 'libp2p']) as Mode[];
  for (const m of modes) if (!MODES.includes(m)) throw new Error(`--only: unknown mode '${m}' (${MODES.join(', ')})`);
  const ids = await Promise.all([...Array(N)].map(() => generateIdentity()));
  if (node) console.log(`floor --node: ${N} processes, ${plan.jobs} jobs (after ${plan.warmup} untimed) of ${plan.rounds} rounds, ${plan.perPeer} messages to each peer per round in ${plan.perPeer} turns, ${plan.bigPct}% of 4-16 KB, the rest 100-500 B`);
  else console.log(`floor: ${N} processes, ${plan.jobs} jobs (after ${plan.warmup} untimed) of ${plan.rounds} rounds, ${plan.bytes} B to each peer per round, no arithmetic`);
  for (const mode of modes) {
    const ports = await freePorts(N);
    const sockets = overUnix(mode) ? mkdtempSync(join(tmpdir(), 'tenebra-floor-')) : undefined;
    const paths = sockets === undefined ? [] : ports.map((_, k) => join(sockets, `p${k + 1}.sock`));
    const cfgs: Config[] = ports.map((_, k) => ({ mode, self: k + 1, ports, paths, keys: ids.map((i) => Buffer.from(i.privateKey).toString('hex')), peerIds: ids.map((i) => i.peerId), plan }));
    const kids = cfgs.map((c) => fork(fileURLToPath(import.meta.url), ['--child', JSON.stringify(c)], { execArgv: ['--import', 'tsx', ...(process.env.FLOOR_CHILD_ARGS?.split(' ').filter(Boolean) ?? [])], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    await Promise.all(kids.map((k) => new Promise((res) => k.once('message', res))));
    const reports = new Promise<Report[]>((res) => {
      const out: Report[] = [];
      for (const k of kids) k.on('message', (m: { type: string; report?: Report }) => {
        if (m.type === 'report' && out.push(m.report!) === N) res(out);
      });
    });
    for (const k of kids) k.send('go');
    const rs = (await reports).sort((a, b) => a.self - b.self);
    const s = rs[0]!.samples;
    const cpu = rs.map((r) => r.cpuMs / plan.jobs);
    const msgs = 2 * plan.rounds * (N - 1) * (node ? plan.perPeer : 1);
    console.log(`${mode.padEnd(12)} one job p50 ${pct(s, 0.5).toFixed(2)} ms, p99 ${pct(s, 0.99).toFixed(2)} ms (party 1); CPU per party per job ${Math.min(...cpu).toFixed(2)}-${Math.max(...cpu).toFixed(2)} ms (${(1000 * cpu.reduce((a, b) => a + b, 0) / N / msgs).toFixed(1)} µs per message sent or received, ${(1000 * rs.reduce((a, r) => a + r.sysMs, 0) / plan.jobs / N / msgs).toFixed(1)} of it in the kernel)`);
    if (rs[0]!.direct !== undefined) console.log(`${mode.padEnd(12)} party 1: ${rs[0]!.direct}`);
    if (node) {
      const wall = rs.reduce((a, r) => a + r.wallMs, 0) / N;
      console.log(`${mode.padEnd(12)} --node: ${((msgs / 2) * plan.jobs / (wall / 1000)).toFixed(0)} messages/s sent per party (mean of ${N} parties' wall time)`);
    }
    await Promise.all(kids.map((k) => new Promise((res) => (k.exitCode !== null ? res(null) : k.once('exit', res)))));
    if (sockets !== undefined) rmSync(sockets, { recursive: true, force: true });
  }
}

const at = process.argv.indexOf('--child');
if (at >= 0) void child(JSON.parse(process.argv[at + 1]!) as Config);
else parent().catch((e: unknown) => { console.error(e); process.exit(1); });
