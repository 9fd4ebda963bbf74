// The sequencer process's root logger: JSON lines, labelled on every line when the committee runs
// dealer mode (not private; @tenebra/config dealer.ts).
import { pino, type DestinationStream, type Logger } from 'pino';
import { dealerLogBindings, type SequencerConfig } from '@tenebra/config';

/** Root logger of the sequencer (stdout unless `dest`). */
export function createSequencerLogger(cfg: Pick<SequencerConfig, 'logLevel' | 'committeePreprocessing'>, dest?: DestinationStream): Logger {
  const opts = { level: cfg.logLevel ?? 'info', base: { role: 'sequencer', pid: process.pid, ...dealerLogBindings(cfg.committeePreprocessing) } };
  return dest ? pino(opts, dest) : pino(opts);
}
