// One registry per process, labelled with the process's role and index so that a scrape of every
// process of a cluster (five nodes, sequencer, gateway on one host) keeps their series apart.
import { collectDefaultMetrics, Registry } from 'prom-client';

export type ProcessRole = 'committee' | 'sequencer' | 'gateway';

/**
 * A fresh registry (never prom-client's global one, so tests can build several in one process)
 * with prom-client's default process metrics (CPU, memory, heap, event-loop lag, GC, handles) and
 * `role` and `index` labels on every series. `index` is the node's index, 0 for the sequencer and
 * the gateway (as in cluster.json).
 */
export function processRegistry(role: ProcessRole, index: number): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ role, index: String(index) });
  collectDefaultMetrics({ register: registry });
  return registry;
}
