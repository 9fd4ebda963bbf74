import { NodeStore } from './src/node-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
const dir = mkdtempSync('/work/hfill2/node_modules/.cache/store-');
const s = new NodeStore(dir);
const chunks = new Map<string, Uint8Array>();
for (let i = 0; i < 83; i++) chunks.set(`g0.0/nib/${i}`, randomBytes(58000));
const core = randomBytes(8600);
const res = (seq: number) => [{ t: 'result', node: 1, seq: String(seq), pub: { kind: 'place', order_id: 'x'.repeat(36), fills: [] }, sealed: randomBytes(100).toString('base64'), job: `batch:${seq}-${seq}:0` }] as any;
await s.commitSnapshot(0n, { core, chunks });
const N = 200;
for (const mode of ['seq', 'spaced']) {
  const c0 = process.cpuUsage(); const t0 = performance.now();
  for (let i = 1; i <= N; i++) {
    const ch = new Map(chunks); ch.set(`store/${i}`, randomBytes(2000)); ch.delete(`store/${i - 1}`);
    await s.commitJob(res(i), BigInt(i), { core, chunks: ch });
    if (mode === 'spaced') await new Promise((r) => setTimeout(r, 20));
  }
  const c = process.cpuUsage(c0);
  console.log(mode, 'cpu ms per commitJob', ((c.user + c.system) / 1000 / N).toFixed(3), 'user', (c.user / 1000 / N).toFixed(3), 'sys', (c.system / 1000 / N).toFixed(3), 'wall', ((performance.now() - t0) / N).toFixed(2));
}
await s.close(); rmSync(dir, { recursive: true });
