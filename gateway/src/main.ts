// Gateway process: node --import tsx gateway/src/main.ts --config <gateway.json>
import { crash, crashOnUncaught, loadProcessConfig, type GatewayConfig } from '@tenebra/config';
import { createGateway } from './gateway';
import { createLogger } from './log';

async function main(): Promise<void> {
  let config: GatewayConfig;
  try {
    config = loadProcessConfig<GatewayConfig>(process.argv, 'gateway');
  } catch (e) {
    createLogger('info').fatal({ err: (e as Error).message }, 'cannot load the gateway config');
    process.exit(2);
  }
  const log = createLogger(config.logLevel ?? 'info', config.env);
  crashOnUncaught(log);
  let gw;
  try {
    gw = createGateway(config, { log });
    await gw.start();
  } catch (e) {
    crash(log, 'gateway failed to start', e); // start may have queued store writes: no exit() (crash.ts in @tenebra/config)
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    gw.stop().then(
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
