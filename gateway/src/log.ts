// Structured JSON logs (one line per event) tagged with the process role.
import pino, { type Logger } from 'pino';

export type { Logger };

/** The gateway's root logger: JSON lines on stdout with {role:'gateway'}. */
export function createLogger(level = 'info', env?: string): Logger {
  return pino({ level, base: { role: 'gateway', pid: process.pid, ...(env ? { env } : {}) }, timestamp: pino.stdTimeFunctions.isoTime });
}
