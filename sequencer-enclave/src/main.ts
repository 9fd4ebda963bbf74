// Sequencer enclave process: `node --import tsx sequencer-enclave/src/main.ts --config sequencer.json`.
import { pino } from 'pino';
import { crash, loadProcessConfig, type SequencerConfig } from '@tenebra/config';
import { readKeyFile } from '@tenebra/seal';
import { startSequencer, type RunningSequencer } from './server';

const cfg = loadProcessConfig<SequencerConfig>(process.argv, 'sequencer');
const log = pino({ level: cfg.logLevel ?? 'info', base: { role: 'sequencer', pid: process.pid } });

let running: RunningSequencer | null = null;
let stopping = false;

async function shutdown(signal: string, code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'stopping');
  try {
    await running?.close();
    process.exit(code);
  } catch (e) {
    log.error({ err: e instanceof Error ? e.message : String(e) }, 'unclean stop');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM', 0));
process.on('SIGINT', () => void shutdown('SIGINT', 0));

try {
  // The platform key models the TEE vendor's attestation key: it only signs this start's quote.
  const platform = readKeyFile(cfg.platformKeyFile);
  running = await startSequencer(cfg, platform.privateKey, log);
  // A journal failure means nothing more can be acknowledged: exit so a supervisor restarts us.
  const watchdog = setInterval(() => {
    if (running?.sequencer.failure) void shutdown('journal-failure', 2);
  }, 200);
  watchdog.unref();
} catch (e) {
  crash(log, 'sequencer failed to start', e); // the journal may have queued writes: no exit() (crash.ts in @tenebra/config)
}
