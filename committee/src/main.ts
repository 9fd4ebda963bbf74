// Committee node process: `node --import tsx committee/src/main.ts --config node-<i>.json`.
import '@tenebra/transport/src/polyfill';
import { checkPreprocessingMode, crash, loadProcessConfig, type NodeConfig } from '@tenebra/config';
import { processRegistry, serveMetrics, type MetricsServer } from '@tenebra/metrics';
import { CommitteeNode } from './node';
import { createNodeLogger } from './log';

const cfg = loadProcessConfig<NodeConfig>(process.argv, 'committee');
// dealer mode (not private): every line says so, and a production node refuses it (config dealer.ts)
const log = createNodeLogger(cfg);
try {
  checkPreprocessingMode(cfg.env, cfg.preprocessing.mode);
} catch (e) {
  log.fatal({ err: (e as Error).message }, 'refusing to start');
  process.exit(2); // nothing opened or queued yet: an ordinary exit
}
const registry = processRegistry('committee', cfg.index);
const node = new CommitteeNode(cfg, log, registry);
let metrics: MetricsServer | null = null;

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'stopping');
  try {
    await metrics?.close();
    await node.stop();
    log.info('stopped');
    process.exit(0);
  } catch (e) {
    log.error({ err: String(e) }, 'unclean stop');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

async function start(): Promise<void> {
  // metrics first: a node waiting for its peers (PRSS setup, share recovery) is worth watching too
  if (cfg.metricsPort !== undefined) {
    metrics = await serveMetrics(registry, cfg.host, cfg.metricsPort);
    log.info({ url: metrics.url }, 'metrics listening');
  }
  await node.start();
}
// start may have queued store writes: no exit() (crash.ts in @tenebra/config)
start().catch((e: unknown) => crash(log, 'node failed to start', e));
