// Per-op latency trace (TENEBRA_TRACE_OPS=1): each process logs one line per stage an op passes,
// with a wall-clock time in fractional ms comparable across the processes of one host
// (performance.timeOrigin + performance.now()). scripts/bench/fill-trace.ts joins them by seq.
// Off by default: the check is one boolean per stage.
/** the part of a pino logger the trace uses */
interface InfoLog { info(obj: object, msg: string): void }

/** True when the processes of this run trace ops (read once, at load). */
export const OP_TRACE = process.env.TENEBRA_TRACE_OPS === '1';

/** Epoch ms with sub-ms precision (same host: comparable between processes). */
export function traceNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Logs stage `stage` of the op(s) in `fields` (seq, or first/last, or rid) at `at` (default now). */
export function traceOp(log: InfoLog, stage: string, fields: Record<string, unknown>, at: number = traceNow()): void {
  if (!OP_TRACE) return;
  // mono: this process's monotonic clock in µs (V8's CPU profiles time their samples on it), so a
  // profile's samples can be cut to an op's window (fill-trace --windows-out, profile-areas --windows)
  log.info({ ...fields, stage, at: +at.toFixed(3), mono: Number(process.hrtime.bigint() / 1000n) }, 'trace');
}
