// Placement throughput of one in-process gateway against the fake sequencer (no committee):
//   node --import tsx gateway/bench/place.ts [orders] [concurrency]
// Prints orders/s and acknowledgement latency percentiles; also the cost of the pieces.
import { performance } from 'node:perf_hooks';
import { shareSecret, encodeFieldVector } from '@tenebra/mpc';
import { seal } from '@tenebra/seal';
import { startRig, newAccount, bearer } from '../test/harness';

const total = Number(process.argv[2] ?? 2000);
const conc = Number(process.argv[3] ?? 32);

async function main(): Promise<void> {
  const rig = await startRig({ connectNodes: [] });
  rig.seq.removeAllListeners('op'); // no fake committee work in this process: measure the gateway alone
  const accts = await Promise.all(Array.from({ length: 16 }, () => newAccount(rig, 'Apex', '100000000')));
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: conc }, async () => {
    while (next < total) {
      const i = next++;
      const a = accts[i % accts.length]!;
      const s = performance.now();
      const r = await rig.gw.app.inject({
        method: 'POST', url: '/api/v1/orders', headers: { 'content-type': 'application/json', ...bearer(a) },
        payload: JSON.stringify({ symbol: 'ETH-USDC-PERP', side: i % 2 ? 'buy' : 'sell', type: 'limit', quantity: 0.1, price: i % 2 ? 2000 : 4000, time_in_force: 'GTC' }),
      });
      if (r.statusCode !== 200) throw new Error(r.body);
      lat.push(performance.now() - s);
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  lat.sort((x, y) => x - y);
  const p = (q: number) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))]!.toFixed(2);
  console.log(`placements: ${total} in ${secs.toFixed(2)} s = ${(total / secs).toFixed(0)} orders/s; ack p50 ${p(0.5)} ms p99 ${p(0.99)} ms (concurrency ${conc})`);
  const key = rig.env.nodeKeys[0]!.publicKey;
  let s = performance.now();
  for (let i = 0; i < 1000; i++) shareSecret([123456n, 789n], 5, 2);
  console.log(`shareSecret [2 values, n=5]: ${((performance.now() - s)).toFixed(3)} µs each`);
  s = performance.now();
  const pt = encodeFieldVector([1n, 2n]);
  for (let i = 0; i < 1000; i++) seal(key, pt);
  console.log(`seal one share vector: ${((performance.now() - s)).toFixed(3)} µs each`);
  // restrict the rig's limits: internal, limits off for benchmarking is not possible; accounts are Apex (200 req/s each)
  await rig.close();
}

void main();
