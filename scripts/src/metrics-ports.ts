// Metrics ports (docs/decisions/0012-metrics.md): a new folder gets them from its port plan; a
// folder made before metrics existed gets them at its next start, like link keys (link-keys.ts).
import { checkPortClash, metricsPorts, type GatewayConfig, type NodeConfig, type PortPlan, type SequencerConfig } from '@tenebra/config';

/**
 * Gives every process config that has no metricsPort the plan's, and checks that the folder's ports
 * and the added ones do not clash. Mutates the configs; returns which ones changed (the caller
 * writes them). A plan without metrics ports changes nothing.
 */
export function upgradeMetricsPorts(
  plan: PortPlan, nodes: NodeConfig[], sequencer: SequencerConfig, gateway: GatewayConfig,
): { nodes: NodeConfig[]; sequencer: boolean; gateway: boolean } {
  const m = metricsPorts(plan);
  const none = { nodes: [], sequencer: false, gateway: false };
  if (!m) return none;
  const changed = {
    nodes: nodes.filter((nd) => nd.metricsPort === undefined),
    sequencer: sequencer.metricsPort === undefined,
    gateway: gateway.metricsPort === undefined,
  };
  if (changed.nodes.length === 0 && !changed.sequencer && !changed.gateway) return none;
  for (const nd of changed.nodes) nd.metricsPort = m.node(nd.index);
  if (changed.sequencer) sequencer.metricsPort = m.sequencer;
  if (changed.gateway) gateway.metricsPort = m.gateway;
  checkPortClash(folderPorts(nodes, sequencer, gateway));
  return changed;
}

/** Every port a folder's configs name, for the clash check. */
export function folderPorts(nodes: NodeConfig[], sequencer: SequencerConfig, gateway: GatewayConfig): { name: string; port: number }[] {
  const out = [
    { name: 'gateway', port: gateway.port }, { name: 'gateway internal', port: gateway.internalPort }, { name: 'sequencer', port: sequencer.port },
    ...nodes.map((nd) => ({ name: `node ${nd.index}`, port: nd.port })),
  ];
  if (gateway.metricsPort !== undefined) out.push({ name: 'gateway metrics', port: gateway.metricsPort });
  if (sequencer.metricsPort !== undefined) out.push({ name: 'sequencer metrics', port: sequencer.metricsPort });
  for (const nd of nodes) if (nd.metricsPort !== undefined) out.push({ name: `node ${nd.index} metrics`, port: nd.metricsPort });
  return out;
}
