// How a Tenebra process ends on a fatal error: like kill -9, never through process.exit.
//
// Every process keeps its state in lmdb (the gateway's store, the sequencer's journal, a committee
// node's job boundaries). While a write is queued, lmdb's write thread (a libuv pool thread) can wait
// on the main thread, and exit() joins the pool threads first: the two wait for each other and the
// process hangs with its ports open, so its supervisor never restarts it. Seen in the gateway
// (gateway/test/fatal-exit.test.ts) and twice in committee nodes that found themselves stale (once
// in CI, once in the committee-restarts cluster test: a node stale right after share recovery, while
// its recovered state was being written, logged the error and never ended: its supervisor, which
// restarts a process that ends, did not in the 180 s that followed). Every store is
// crash-safe by design (each change is one transaction; the chaos tests kill -9 every process), so a
// fatal error logs, then ends the process with SIGKILL: no exit handlers, no pool-thread join.
// Orderly stops (SIGTERM, SIGINT) close their stores first and exit normally.

/** The part of a pino logger crash() needs (pino's default destination writes synchronously). */
export interface FatalLog {
  fatal(obj: object, msg: string): void;
}

/** Logs `what` as fatal and ends the process at once, without exit() (see the header). */
export function crash(log: FatalLog, what: string, err: unknown): never {
  try {
    log.fatal({ err: err instanceof Error ? err.stack ?? err.message : String(err) }, what);
  } finally {
    process.kill(process.pid, 'SIGKILL');
  }
  // A SIGKILL a process sends itself takes effect as the kill() call returns: this is unreachable.
  throw new Error('unreachable: the process was killed');
}

/** Routes uncaught exceptions and unhandled rejections to crash(). */
export function crashOnUncaught(log: FatalLog): void {
  process.on('uncaughtException', (err) => crash(log, 'uncaught exception', err));
  process.on('unhandledRejection', (reason) => crash(log, 'unhandled rejection', reason));
}
