import { describe, it, expect } from 'vitest';
import { reportHtml } from '../src/report';

describe('benchmark report page', () => {
  it('inlines uPlot, the charts and the runs, and no run can close its script', () => {
    const html = reportHtml([{ bench: 'orders', __file: 'a.json', sustained: { ackPerSec: 120 } }, { bench: 'mpc', __file: '</script><b>x', sections: [] }]);
    expect(html).toContain('uPlot');
    expect(html).toContain('function drawRuns');
    expect(html).not.toMatch(/^export /m);
    const data = /<script type="application\/json" id="runs-data">([\s\S]*?)<\/script>/.exec(html)![1]!;
    expect(JSON.parse(data)).toHaveLength(2);
    expect(html).not.toContain('</script><b>x');
  });

  it('reads the figures of both benchmarks', async () => {
    const path = '../public/charts.js';
    const { figuresOf } = (await import(path)) as { figuresOf: (run: unknown) => { group: string; title: string; value: number }[] };
    const orders = figuresOf({ bench: 'orders', sustained: { ackPerSec: 100, matchedPerSec: 30, ackP50Ms: 2 }, stall: { inFlight: [{ stall: 900, base: 100 }, { stall: 1100, base: 100 }], resting: [500] } });
    expect(orders.map((f) => [f.group, f.value])).toEqual([['throughput', 100], ['throughput', 30], ['latency', 2], ['stall', 1100], ['stall', 1000], ['stall', 500]]);
    const mpc = figuresOf({ bench: 'mpc', sections: [{ where: 'sim', preprocessing: { bitsPerSec: 17000, triplesPerSec: 900 }, mul: [], lt: [{ k: 1000, perSec: 400 }], ltLatency: { p50Ms: 3, p99Ms: 9, maxMs: 20 } }] });
    expect(mpc.map((f) => f.value)).toEqual([17000, 900, 400, 3, 9, 20]);
  });
});
