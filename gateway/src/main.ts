// Gateway process: node --import tsx gateway/src/main.ts --config <gateway.json>
import { loadProcessConfig, type GatewayConfig } from '@tenebra/config';
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
  let gw;
  try {
    gw = createGateway(config, { log });
    await gw.start();
  } catch (e) {
    log.fatal({ err: e instanceof Error ? e.message : String(e) }, 'gateway failed to start');
    process.exit(1);
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
