// Counters whose value another component already counts (a transport's bytes, the engine's items
// made): read at scrape time through prom-client's collect(), so nothing is counted twice and no
// timer polls. The source must only grow while the process lives (a restarted source, e.g. a new
// transport, is a counter reset, which Prometheus handles).
import { Counter, Gauge, type Registry } from 'prom-client';

/** A counter set at each scrape from `read`: one value per label set it returns. */
export function counterOf<L extends string>(
  registry: Registry, name: string, help: string, labelNames: readonly L[],
  read: () => Iterable<[Partial<Record<L, string | number>>, number]>,
): Counter<L> {
  return new Counter<L>({
    name, help, labelNames, registers: [registry],
    collect() {
      this.reset();
      // inc by 0 still shows the label set: a scrape tells "none yet" from "not measured"
      for (const [labels, v] of read()) this.inc(labels, Math.max(0, v));
    },
  });
}

/** A gauge set at each scrape from `read`. */
export function gaugeOf<L extends string>(
  registry: Registry, name: string, help: string, labelNames: readonly L[],
  read: () => Iterable<[Partial<Record<L, string | number>>, number]>,
): Gauge<L> {
  return new Gauge<L>({
    name, help, labelNames, registers: [registry],
    collect() {
      this.reset();
      for (const [labels, v] of read()) this.set(labels, v);
    },
  });
}

/** The single unlabelled series of a counterOf / gaugeOf source. */
export const one = (v: number): [[Record<string, never>, number]] => [[{}, v]];
