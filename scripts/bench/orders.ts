// Order benchmark (prints figures; asserts nothing): starts a fresh local cluster of real processes,
// drives limit orders through the gateway's REST interface with concurrent clients, and prints
// sustained ack and match rates, latencies, the plaintext reference rate on the same stream, and
// the stall after killing two committee nodes.
//   npm run bench:orders -- [--seconds 10] [--clients 24] [--rate 200] [--keep]
import '@tenebra/transport/src/polyfill';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Exchange, PlaintextBackend, generateStream } from '@tenebra/matching';
import { INSTRUMENTS, layout } from '@tenebra/config';
import { Cluster } from '../src/cluster';
import { run as accounts } from '../src/accounts';
import { parseFlags } from '../src/flags';
import { testPorts, Trader, type Credentials } from '../test/harness';

const SYMBOL = 'ETH-USDC-PERP';
const MID = 300_000; // ticks (3000.00)

const flags = parseFlags(process.argv.slice(2), ['seconds', 'clients', 'rate'], ['keep']);
const SECONDS = Number(flags.str.get('seconds') ?? 10);
const CLIENTS = Number(flags.str.get('clients') ?? 24);
const RATE = Number(flags.str.get('rate') ?? 200);

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const ms = (x: number) => `${x.toFixed(2)} ms`;

/** Highest seq node 1 reports applied, from its JSON log. */
function appliedSeq(dataDir: string, node = 1): number {
  const text = readFileSync(join(layout(dataDir).logsDir, `node-${node}.log`), 'utf8');
  const i = text.lastIndexOf('"msg":"batch applied"');
  if (i < 0) return 0;
  const line = text.slice(text.lastIndexOf('\n', i) + 1, text.indexOf('\n', i));
  return Number((JSON.parse(line) as { last: string }).last);
}

/** steps of 0.001 ETH; at least 40 (120 USD) to pass every tier's minimum notional (Apex: 100 USD). */
function order(side: 'buy' | 'sell', ticksOff: number, steps: number, tif = 'GTC'): Record<string, unknown> {
  return { symbol: SYMBOL, side, type: 'limit', price: (MID + ticksOff) / 100, quantity: steps / 1000, time_in_force: tif };
}

async function until(pred: () => Promise<boolean>, timeoutMs: number, everyMs = 2): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    if (await pred()) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return NaN;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tenebra-bench-'));
  const ports = await testPorts();
  console.log(`starting a 5-node cluster in ${dataDir} ...`);
  const cluster = await Cluster.start({ dataDir, env: 'test', ports, logLevel: 'info' });
  try {
    await cluster.waitReady(120_000);
    const creds = await Promise.all(Array.from({ length: CLIENTS }, () =>
      accounts(['--data', dataDir, 'create', '--tier', 'Apex', '--deposit', '100000000']) as Promise<unknown> as Promise<Credentials>));
    const traders = creds.map((c) => new Trader(cluster.baseUrl, c));
    await Promise.all(traders.map((t) => t.login()));
    console.log(`${CLIENTS} Apex accounts ready; warming up (committee preprocessing) ...`);
    await new Promise((r) => setTimeout(r, 5_000));

    // 1. Sustained throughput: every client places as fast as acks come back.
    const ack: number[] = [];
    const seq0 = appliedSeq(dataDir);
    const tStart = performance.now();
    const deadline = tStart + SECONDS * 1000;
    let sent = 0;
    let refused = 0;
    const reasons = new Map<string, number>();
    await Promise.all(traders.map(async (t, c) => {
      let i = 0;
      while (performance.now() < deadline) {
        const side = (i + c) % 2 === 0 ? 'buy' : 'sell';
        const off = ((i * 7 + c * 3) % 11) - 5;
        const t0 = performance.now();
        const r = await t.place(order(side, side === 'buy' ? off : -off, 40 + ((i * 13) % 90)));
        if (r.status === 200) ack.push(performance.now() - t0);
        else {
          refused++;
          const why = `${r.status} ${String((r.body as { error?: string }).error ?? r.body.message ?? '')}`;
          reasons.set(why, (reasons.get(why) ?? 0) + 1);
        }
        sent++;
        i++;
      }
    }));
    const ackSecs = (performance.now() - tStart) / 1000;
    const lastAck = appliedSeq(dataDir);
    const drainMs = await until(async () => appliedSeq(dataDir) >= seq0 + ack.length, 300_000, 50);
    const matchSecs = (performance.now() - tStart) / 1000;
    console.log('\n== sustained load (limit orders, about half crossing)');
    console.log(`sent ${sent}, acknowledged ${ack.length}, refused ${refused}${refused ? ` (${[...reasons].map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}`);
    console.log(`acknowledged orders/s   ${(ack.length / ackSecs).toFixed(0)}`);
    console.log(`ack latency             p50 ${ms(pct(ack, 50))}  p99 ${ms(pct(ack, 99))}`);
    console.log(`matched on shares/s     ${((appliedSeq(dataDir) - seq0) / matchSecs).toFixed(0)} (committee caught up ${Number.isNaN(drainMs) ? 'NOT within 300 s' : `${((drainMs) / 1000).toFixed(1)} s after the last ack`}; applied at end of load: ${lastAck - seq0})`);

    // 2. Order-to-fill latency at a fixed rate: a resting sell, then a crossing buy; poll the buy.
    const fill: number[] = [];
    const gap = 1000 / RATE;
    const pairs = Math.max(20, Math.min(400, Math.round(RATE * 3 / 2)));
    const polls: Promise<void>[] = [];
    for (let i = 0; i < pairs; i++) {
      const t = traders[i % traders.length]!;
      const u = traders[(i + 1) % traders.length]!;
      await t.place(order('sell', 50, 40));
      await new Promise((r) => setTimeout(r, gap));
      const t0 = performance.now();
      const r = await u.place(order('buy', 50, 40, 'IOC'));
      if (r.status !== 200) continue;
      const id = r.body.data!.order_id;
      if (i % 4 === 0) {
        polls.push(until(async () => (await u.order(id)).status === 'FILLED', 30_000, 1).then((d) => {
          if (!Number.isNaN(d)) fill.push(performance.now() - t0);
        }));
      }
      await new Promise((r2) => setTimeout(r2, gap));
    }
    await Promise.all(polls);
    console.log(`\n== order-to-fill at ~${RATE} orders/s (${fill.length} sampled fills)`);
    console.log(`fill latency            p50 ${ms(pct(fill, 50))}  p99 ${ms(pct(fill, 99))}`);

    // 3. The same kind of stream through the plaintext reference, in this process.
    const stream = generateStream({ seed: 7, orders: 20_000, symbols: [SYMBOL], features: 'limit' });
    const ex = new Exchange<bigint>(new PlaintextBackend(), { symbols: INSTRUMENTS.map((i) => i.symbol) });
    const p0 = performance.now();
    for (const op of stream) await ex.apply(op);
    const plainRate = stream.length / ((performance.now() - p0) / 1000);
    const mpcRate = (appliedSeq(dataDir) - seq0) / matchSecs;
    console.log('\n== plaintext reference (same algorithm, plaintext backend, in-process, no network)');
    console.log(`plaintext matching ops/s ${plainRate.toFixed(0)}   MPC committee / plaintext = ${(mpcRate / plainRate).toExponential(2)}`);

    // 4. Stall: kill -9 two nodes, then time a crossing pair until its fill.
    await traders[0]!.place(order('sell', 60, 40));
    const tKill = performance.now();
    await cluster.kill('committee', 4);
    await cluster.kill('committee', 5);
    const r = await traders[1]!.place(order('buy', 60, 40, 'IOC'));
    const stall = r.status === 200
      ? await until(async () => (await traders[1]!.order(r.body.data!.order_id)).status === 'FILLED', 60_000, 1)
      : NaN;
    console.log('\n== stall after kill -9 of two committee nodes');
    console.log(`kill to next fill       ${Number.isNaN(stall) ? 'no fill within 60 s' : ms(performance.now() - tKill)}`);
  } finally {
    await cluster.stop(10_000);
    if (!flags.bool.has('keep')) rmSync(dataDir, { recursive: true, force: true });
    else console.log(`kept ${dataDir}`);
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack : String(e));
  process.exit(1);
});
