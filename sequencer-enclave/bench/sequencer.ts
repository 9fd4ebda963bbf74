// Prints sequencer figures: sustained submits/s through one SequencerClient with C ops in flight,
// and ack latency p50/p99 at a paced rate, with 5 live feeds attached.
// Usage: node --import tsx sequencer-enclave/bench/sequencer.ts [--ops 20000] [--concurrency 256] [--rate 1000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { generateEd25519, toHex, writeKeyFile } from '@tenebra/seal';
import { SequencerClient, SequencerFeed, type SealedOp } from '@tenebra/wire';
import type { SequencerConfig } from '@tenebra/config';
import { expectedMeasurement, startSequencer } from '../src/index';

const { values } = parseArgs({
  options: { ops: { type: 'string', default: '20000' }, concurrency: { type: 'string', default: '256' }, rate: { type: 'string', default: '1000' } },
});
const OPS = Number(values.ops);
const C = Number(values.concurrency);
const RATE = Number(values.rate);

const dir = mkdtempSync(join(tmpdir(), 'seq-bench-'));
const platform = generateEd25519();
writeKeyFile(join(dir, 'platform.json'), platform);
// Link keys: the bench's client is the gateway, its feeds are nodes 1..5.
const gatewayLink = generateEd25519();
const nodeLinks = [1, 2, 3, 4, 5].map(() => generateEd25519());
const config: SequencerConfig = {
  role: 'sequencer', dataDir: join(dir, 'journal'), host: '127.0.0.1', port: 0, n: 5, platformKeyFile: join(dir, 'platform.json'),
  clientLinkKeys: { gateway: toHex(gatewayLink.publicKey), nodes: nodeLinks.map((k, i) => ({ index: i + 1, publicKey: toHex(k.publicKey) })) },
};
const s = await startSequencer(config, platform.privateKey, pino({ level: 'warn' }));
const opts = { url: s.url, platformPublicKey: platform.publicKey, expectedMeasurement: expectedMeasurement(config) };
// A realistic op: five sealed entries of two 16-byte field elements each (+60 bytes of sealing).
const blob = Buffer.alloc(92, 1).toString('base64');
const op = (i: number): SealedOp => ({ kind: 'place', symbol: 'BTC-PERP', pub: { side: 'buy', tif: 'GTC', i }, sealed: Array(5).fill(blob) });

let fed = 0;
const feeds = await Promise.all([1, 2, 3, 4, 5].map(async (node) => {
  const f = new SequencerFeed();
  await f.connect({ ...opts, node, authKey: nodeLinks[node - 1]!.privateKey, fromSeq: 1n, onOp: () => void fed++ });
  return f;
}));
const client = new SequencerClient();
await client.connect({ ...opts, authKey: gatewayLink.privateKey, maxPending: 100_000 });

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!.toFixed(3);

// 1. Throughput with C in flight.
{
  let issued = 0;
  const lat: number[] = [];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: C }, async () => {
    while (issued < OPS) {
      const i = issued++;
      const t = performance.now();
      await client.submit(op(i));
      lat.push(performance.now() - t);
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  console.log(JSON.stringify({ bench: 'sequencer-throughput', ops: OPS, concurrency: C, ops_per_s: Math.round(OPS / secs), ack_ms_p50: pct(lat, 0.5), ack_ms_p99: pct(lat, 0.99) }));
}
// 2. Ack latency at a paced rate.
{
  const N = Math.min(OPS, RATE * 5);
  const lat: number[] = [];
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const t = performance.now();
    pending.push(client.submit(op(i)).then(() => void lat.push(performance.now() - t)));
  }
  await Promise.all(pending);
  lat.sort((a, b) => a - b);
  console.log(JSON.stringify({ bench: 'sequencer-paced', rate_per_s: RATE, ops: N, ack_ms_p50: pct(lat, 0.5), ack_ms_p99: pct(lat, 0.99) }));
}
const total = BigInt(OPS + Math.min(OPS, RATE * 5));
const t1 = performance.now();
while (BigInt(fed) < total * 5n && performance.now() - t1 < 30_000) await new Promise((r) => setTimeout(r, 10));
console.log(JSON.stringify({ bench: 'sequencer-feeds', feeds: 5, delivered: fed, expected: Number(total * 5n) }));
await client.close();
await Promise.all(feeds.map((f) => f.close()));
await s.close();
rmSync(dir, { recursive: true, force: true });
