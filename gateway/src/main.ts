// Gateway process: node --import tsx gateway/src/main.ts --config <gateway.json>
import { checkPreprocessingMode, crash, crashOnUncaught, loadProcessConfig, type GatewayConfig } from '@tenebra/config';
import { processRegistry, serveMetrics, type MetricsServer } from '@tenebra/metrics';
import { createGateway } from './gateway';
import { DEFAULT_PRICE_BAND } from './orders/risk';
import { createLogger } from './log';

async function main(): Promise<void> {
  let config: GatewayConfig;
  try {
    config = loadProcessConfig<GatewayConfig>(process.argv, 'gateway');
  } catch (e) {
    createLogger('info').fatal({ err: (e as Error).message }, 'cannot load the gateway config');
    process.exit(2);
  }
  const log = createLogger(config.logLevel ?? 'info', config.env, config.committeePreprocessing);
  try {
    checkPreprocessingMode(config.env, config.committeePreprocessing);
  } catch (e) {
    log.fatal({ err: (e as Error).message }, 'refusing to start');
    process.exit(2);
  }
  crashOnUncaught(log);
  let gw;
  let metrics: MetricsServer | null = null;
  try {
    // The process checks limit prices against each instrument's band around the mark (unless the
    // config sets one for all); createGateway as a library does not, so in-process rigs price freely.
    gw = createGateway(config, { log, metrics: processRegistry('gateway', 0), priceBandBps: config.priceBandBps ?? DEFAULT_PRICE_BAND });
    await gw.start();
    if (config.metricsPort !== undefined) {
      metrics = await serveMetrics(gw.metrics, config.host, config.metricsPort);
      log.info({ url: metrics.url }, 'metrics listening');
    }
  } catch (e) {
    crash(log, 'gateway failed to start', e); // start may have queued store writes: no exit() (crash.ts in @tenebra/config)
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    // the metrics server first: a scrape during the stop would read closed stores
    (metrics?.close() ?? Promise.resolve()).then(() => gw.stop()).then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: String(e) }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

void main();
