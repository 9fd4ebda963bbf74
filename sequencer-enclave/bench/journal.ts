// Prints journal throughput: appends/s with N concurrent appenders, each awaiting durability.
// Usage: node --import tsx sequencer-enclave/bench/journal.ts [--records 50000] [--concurrency 256] [--bytes 400] [--mode sync|overlapping]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openJournal } from '@tenebra/journal';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '50000' },
    concurrency: { type: 'string', default: '256' },
    bytes: { type: 'string', default: '400' },
    mode: { type: 'string', default: 'sync' },
  },
});
const total = Number(values.records);
const concurrency = Number(values.concurrency);
const record = new Uint8Array(Number(values.bytes)).fill(7);
const mode = values.mode === 'overlapping' ? 'overlapping' : 'sync';

const dir = mkdtempSync(join(tmpdir(), 'journal-bench-'));
const journal = openJournal(dir, { syncMode: mode });
const latencies: number[] = [];
let issued = 0;
async function worker(): Promise<void> {
  while (issued < total) {
    issued++;
    const t0 = performance.now();
    await journal.append(record);
    latencies.push(performance.now() - t0);
  }
}
const t0 = performance.now();
await Promise.all(Array.from({ length: concurrency }, worker));
const secs = (performance.now() - t0) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(2);
console.log(
  JSON.stringify({
    bench: 'journal', mode, records: total, concurrency, record_bytes: record.length,
    appends_per_s: Math.round(total / secs), ack_ms_p50: pct(0.5), ack_ms_p99: pct(0.99), last_seq: String(journal.lastSeq),
  }),
);
await journal.close();
rmSync(dir, { recursive: true, force: true });
