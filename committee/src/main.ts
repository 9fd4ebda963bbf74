// Committee node process: `node --import tsx committee/src/main.ts --config node-<i>.json`.
import '@tenebra/transport/src/polyfill';
import { checkPreprocessingMode, crash, loadProcessConfig, OPERATOR_TOKEN_ENV, type NodeConfig } from '@tenebra/config';
import { processRegistry, serveMetrics, type MetricsServer } from '@tenebra/metrics';
import { CommitteeNode } from './node';
import { createNodeLogger } from './log';
import { linkControlRoute } from './link-control';
import { loadLinkSettings, runIdOf, saveLinkSettings } from './link-persist';

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
// the operator token comes from the launcher (scripts/src/operator-token.ts); nothing else needs it
const operatorToken = process.env[OPERATOR_TOKEN_ENV];
delete process.env[OPERATOR_TOKEN_ENV];
// this run's operator settings, if the node is restarting within the run (link-persist.ts)
const runId = operatorToken ? runIdOf(operatorToken) : undefined;
if (runId !== undefined) {
  try {
    node.restoreLinks(loadLinkSettings(cfg.dataDir, runId));
  } catch (e) {
    log.fatal({ err: (e as Error).message }, 'refusing to start: the link settings kept for this run cannot be read');
    process.exit(2); // nothing opened or queued yet: an ordinary exit
  }
}

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
    const control = linkControlRoute({
      node: cfg.index, token: operatorToken, target: () => node.links(),
      onChange: (settings) => {
        log.warn({ links: settings }, 'operator changed the committee links');
        const now = node.links()?.linkSettings();
        if (runId !== undefined && now) {
          try {
            saveLinkSettings(cfg.dataDir, runId, now);
          } catch (e) {
            log.error({ err: (e as Error).message }, 'could not keep the link settings for a restart: a restart would come back with the config\'s');
          }
        }
      },
    });
    metrics = await serveMetrics(registry, cfg.host, cfg.metricsPort, control);
    log.info({ url: metrics.url, link_control: operatorToken ? 'on' : 'off (no operator token)' }, 'metrics listening');
  }
  await node.start();
}
// start may have queued store writes: no exit() (crash.ts in @tenebra/config)
start().catch((e: unknown) => crash(log, 'node failed to start', e));
