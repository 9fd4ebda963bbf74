// Structured JSON logs (one line per event) tagged with the process role.
import pino, { type DestinationStream, type Logger } from 'pino';
import { dealerLogBindings, type PreprocessingMode } from '@tenebra/config';

export type { Logger };

/**
 * The gateway's root logger: JSON lines on stdout with {role:'gateway'}; with a dealer-mode committee
 * (not private) every line also carries the label (@tenebra/config dealer.ts).
 */
export function createLogger(level = 'info', env?: string, committeePreprocessing?: PreprocessingMode, dest?: DestinationStream): Logger {
  const opts = {
    level, base: { role: 'gateway', pid: process.pid, ...(env ? { env } : {}), ...dealerLogBindings(committeePreprocessing) },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return dest ? pino(opts, dest) : pino(opts);
}
