// Committee preprocessing on the simulated network, bench:mpc's production mix (five parties in this
// one thread): CPU ms per 1000 random bits per party, the arithmetic and the engine without any
// transport. Prints figures, asserts nothing.
//   node --import tsx scripts/bench/prep-cpu.ts [--x K] [--batch B] [--runs R] [--kernel-times]
// --kernel-times: also the wall ms inside each field-kernel export over all runs (their exports
// wrapped in a timer; V8's profiles give part of the kernel's time to the JS-to-wasm wrapper).
import '@tenebra/transport/src/polyfill';
import { SimNetwork } from '@tenebra/transport';
import { createParty, type Party, type PreprocessingOptions } from '@tenebra/mpc';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
// the kernel is instantiated at its first call, after this runs: wrap its exports' functions
const kernelTimes = new Map<string, number>();
if (process.argv.includes('--kernel-times')) {
  // (the scripts' lib settings do not declare the WebAssembly global)
  const W = (globalThis as unknown as { WebAssembly: { Instance: new (m: object, i: object) => { exports: Record<string, unknown> } } }).WebAssembly;
  const Orig = W.Instance;
  W.Instance = function (m: object, i: object) {
    const inst = new Orig(m, i);
    const ex: Record<string, unknown> = {};
    for (const [name, f] of Object.entries(inst.exports)) {
      if (typeof f !== 'function') {
        Object.defineProperty(ex, name, { get: () => inst.exports[name] });
        continue;
      }
      const fn = f as (...a: unknown[]) => unknown;
      ex[name] = (...a: unknown[]): unknown => {
        const t0 = performance.now();
        const r = fn(...a);
        kernelTimes.set(name, (kernelTimes.get(name) ?? 0) + performance.now() - t0);
        return r;
      };
    }
    return { exports: ex };
  } as unknown as typeof W.Instance;
}
const n = 5;
const t = 2;
const x = arg('x', 1);
const runs = arg('runs', 3);
const prep: PreprocessingOptions = { mode: 'committee', targetTriples: 5000 * x, targetBits: 20000 * x, batch: arg('batch', 500), background: false };
for (let run = 0; run < runs; run++) {
  const net = new SimNetwork({ n, seed: 1 + run, link: { latencyMs: 0.1 } });
  const parties: Party[] = Array.from({ length: n }, (_, i) => createParty({ n, t, transport: net.transport(i + 1), preprocessing: prep }));
  await net.settle(Promise.all(parties.map((p) => p.start())));
  // the longest the event loop was blocked: one party's longest phase-A step (they run one at a
  // time in this thread), what a node's online round waits behind when a step runs mid-job
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await net.settle(Promise.all(parties.map((p) => p.fill())));
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  loop.disable();
  const made = parties[0]!.status().preprocessing.made;
  const cpu = (c.user + c.system) / 1000;
  console.log(`run ${run + 1}: ${made.triples} triples + ${made.lex4} lex4 + ${made.prod4} prod4 + ${made.bits} bits in ${ms.toFixed(0)} ms (cpu ${cpu.toFixed(0)} ms, all ${n} parties) => CPU ms per 1000 bits, per party: ${(cpu / n / made.bits * 1000).toFixed(2)}; longest event-loop block ${(loop.max / 1e6).toFixed(1)} ms, heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB + external ${(process.memoryUsage().external / 2 ** 20).toFixed(0)} MB at the end`);
  for (const p of parties) await p.stop();
}
if (kernelTimes.size > 0) {
  const rows = [...kernelTimes.entries()].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((a, [, ms]) => a + ms, 0);
  console.log(`kernel ms over ${runs} runs (all ${n} parties): ${total.toFixed(0)}: ${rows.filter(([, ms]) => ms >= 1).map(([f, ms]) => `${f} ${ms.toFixed(0)}`).join(', ')}`);
}
