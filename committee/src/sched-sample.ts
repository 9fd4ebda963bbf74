// Where a traced job's wall time went on this process (TENEBRA_TRACE_OPS=1 only): CPU used, and
// time runnable but not running (waiting for a core: the kernel's run-queue wait), read from
// /proc/self/schedstat (main thread; Linux). The rest of the wall time the thread slept: waiting
// for a message, a timer or I/O. scripts/bench/fill-trace.ts sums these over the committee per job.
import { readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

let available = true;

/**
 * {run, rq}: the main thread's ms on a CPU and ms runnable-but-waiting since it started; undefined
 * off Linux. `cpu`: the whole process's CPU ms (every thread: lmdb's writer, libuv's pool too).
 * `mono`: the monotonic clock in µs (V8's CPU profiles time their samples on it).
 */
export function schedSample(): { run: number; rq: number; cpu: number; mono: number } | undefined {
  if (!available) return undefined;
  try {
    const [run, rq] = readFileSync('/proc/self/schedstat', 'utf8').split(' ');
    const c = process.cpuUsage();
    return { run: +(Number(run) / 1e6).toFixed(3), rq: +(Number(rq) / 1e6).toFixed(3), cpu: (c.user + c.system) / 1000, mono: Number(process.hrtime.bigint() / 1000n) };
  } catch {
    available = false;
    return undefined;
  }
}

/**
 * Logs each GC pause of at least 0.5 ms as a `gc` line ({at: epoch ms of its start, ms, kind}) and
 * this process's performance.timeOrigin once (the engine's round events carry performance.now()
 * times). Tracing only: bench:trace lines a peer's pause up with a slow round.
 */
export function traceGc(log: { info(obj: object, msg: string): void }): void {
  log.info({ origin: performance.timeOrigin }, 'time origin');
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.duration >= 0.5) log.info({ at: +(performance.timeOrigin + e.startTime).toFixed(3), ms: +e.duration.toFixed(3), kind: ((e as { detail?: { kind?: number } }).detail)?.kind }, 'gc');
    }
  });
  obs.observe({ entryTypes: ['gc'] });
}
