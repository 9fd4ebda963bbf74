// How the gateway process ends on a fatal error: like kill -9, never through process.exit.
//
// The gateway's hot writes are lmdb childTransaction()s (store/db.ts txAsync). While one is queued,
// lmdb's write thread (a libuv pool thread) holds the write transaction and waits for its callback
// to run on the main thread, and any exit() joins the pool threads first: the two wait for each other
// and the process hangs with its ports open, so its supervisor never restarts it (reproduced in
// test/fatal-exit.test.ts; the committee node's store hit the same in CI and moved to batch()).
// The store is crash-safe by design (every change is one transaction; the chaos tests kill -9 the
// gateway under load), so a fatal error ends the process with SIGKILL after logging it: no exit
// handlers, no pool-thread join. An orderly stop (SIGTERM/SIGINT) closes the store first and exits.
import type { Logger } from 'pino';

/** Logs `what` as fatal and ends the process at once, without exit() (see the header). */
export function crash(log: Pick<Logger, 'fatal'>, what: string, err: unknown): never {
  try {
    log.fatal({ err: err instanceof Error ? err.stack ?? err.message : String(err) }, what);
  } finally {
    process.kill(process.pid, 'SIGKILL');
  }
  // A SIGKILL a process sends itself takes effect as the kill() call returns: this is unreachable.
  throw new Error('unreachable: the process was killed');
}

/** Routes uncaught exceptions and unhandled rejections to crash(). */
export function crashOnUncaught(log: Pick<Logger, 'fatal'>): void {
  process.on('uncaughtException', (err) => crash(log, 'uncaught exception', err));
  process.on('unhandledRejection', (reason) => crash(log, 'unhandled rejection', reason));
}
