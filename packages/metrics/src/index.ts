// @tenebra/metrics: what every process needs to serve Prometheus metrics (docs/decisions/0012-metrics.md).
export { processRegistry, type ProcessRole } from './registry';
export { serveMetrics, type ExtraRoute, type MetricsServer } from './server';
export { counterOf, gaugeOf, one } from './counter-of';
export { parseExposition, scrape, sumOf, type Sample } from './parse';
