// Sequencer enclave process: `node --import tsx sequencer-enclave/src/main.ts --config sequencer.json`.
import { crash, loadProcessConfig, type SequencerConfig } from '@tenebra/config';
import { readKeyFile } from '@tenebra/seal';
import { processRegistry, serveMetrics, type MetricsServer } from '@tenebra/metrics';
import { startSequencer, type RunningSequencer } from './server';
import { createSequencerLogger } from './log';

const cfg = loadProcessConfig<SequencerConfig>(process.argv, 'sequencer');
// a dealer-mode committee (not private) labels the whole cluster's logs, this process's too (config dealer.ts)
const log = createSequencerLogger(cfg);

let running: RunningSequencer | null = null;
let metrics: MetricsServer | null = null;
let stopping = false;

async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'stopping');
  try {
    await metrics?.close();
    await running?.close();
    process.exit(0);
  } catch (e) {
    log.error({ err: e instanceof Error ? e.message : String(e) }, 'unclean stop');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

try {
  // The platform key models the TEE vendor's attestation key: it only signs this start's quote.
  const platform = readKeyFile(cfg.platformKeyFile);
  const registry = processRegistry('sequencer', 0);
  running = await startSequencer(cfg, platform.privateKey, log, registry);
  if (cfg.metricsPort !== undefined) {
    metrics = await serveMetrics(registry, cfg.host, cfg.metricsPort);
    log.info({ url: metrics.url }, 'metrics listening');
  }
  // A journal failure means nothing more can be acknowledged: end so a supervisor restarts us, like
  // kill -9 (closing a failed lmdb journal may never return; the journal is crash-safe).
  const watchdog = setInterval(() => {
    const failure = running?.sequencer.failure;
    if (failure) crash(log, 'journal failure: nothing more can be acknowledged', failure);
  }, 200);
  watchdog.unref();
} catch (e) {
  crash(log, 'sequencer failed to start', e); // the journal may have queued writes: no exit() (crash.ts in @tenebra/config)
}
