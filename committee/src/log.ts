// The node process's root logger: JSON lines, labelled on every line in dealer mode (config dealer.ts).
import { pino, type DestinationStream, type Logger } from 'pino';
import { dealerLogBindings, type NodeConfig } from '@tenebra/config';

/** Root logger of node `cfg.index` (stdout unless `dest`); its children (the node, engine, transport) inherit the label. */
export function createNodeLogger(cfg: Pick<NodeConfig, 'index' | 'logLevel' | 'preprocessing'>, dest?: DestinationStream): Logger {
  const opts = { level: cfg.logLevel ?? 'info', base: { role: 'committee', node: cfg.index, pid: process.pid, ...dealerLogBindings(cfg.preprocessing.mode) } };
  return dest ? pino(opts, dest) : pino(opts);
}
