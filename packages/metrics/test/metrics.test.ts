import { afterEach, describe, expect, it } from 'vitest';
import { Counter } from 'prom-client';
import { counterOf, gaugeOf, one, parseExposition, processRegistry, serveMetrics, sumOf, scrape, type MetricsServer } from '../src';

const servers: MetricsServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe('processRegistry', () => {
  it('labels every series with role and index, default process metrics included', async () => {
    const reg = processRegistry('committee', 3);
    const c = new Counter({ name: 'tenebra_test_events_total', help: 'test', registers: [reg] });
    c.inc(2);
    const samples = parseExposition(await reg.metrics());
    expect(sumOf(samples, 'tenebra_test_events_total', { role: 'committee', index: '3' })).toBe(2);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(samples.find((s) => s.name === name), name).toMatchObject({ labels: { role: 'committee', index: '3' } });
    }
    expect(samples.every((s) => s.labels.role === 'committee' && s.labels.index === '3')).toBe(true);
  });
});

describe('counterOf and gaugeOf', () => {
  it('read their source at each scrape, showing label sets at zero', async () => {
    const reg = processRegistry('gateway', 0);
    const source = new Map<string, number>([['a', 0]]);
    let level = 5;
    counterOf(reg, 'tenebra_test_bytes_total', 'test', ['peer'], () => [...source].map(([peer, v]) => [{ peer }, v]));
    gaugeOf(reg, 'tenebra_test_level', 'test', [], () => one(level));
    let s = parseExposition(await reg.metrics());
    expect(s.find((x) => x.name === 'tenebra_test_bytes_total')).toMatchObject({ labels: { peer: 'a' }, value: 0 });
    expect(sumOf(s, 'tenebra_test_level')).toBe(5);
    source.set('a', 120);
    source.set('b', 7);
    level = 2;
    s = parseExposition(await reg.metrics());
    expect(sumOf(s, 'tenebra_test_bytes_total', { peer: 'a' })).toBe(120);
    expect(sumOf(s, 'tenebra_test_bytes_total', { peer: 'b' })).toBe(7);
    expect(sumOf(s, 'tenebra_test_level')).toBe(2);
  });
});

describe('serveMetrics', () => {
  it('serves GET /metrics in the text format and 404 elsewhere', async () => {
    const reg = processRegistry('sequencer', 0);
    new Counter({ name: 'tenebra_test_served_total', help: 'test', registers: [reg] }).inc();
    const srv = await serveMetrics(reg, '127.0.0.1', 0);
    servers.push(srv);
    const r = await fetch(srv.url);
    expect(r.headers.get('content-type')).toContain('text/plain');
    expect(sumOf(parseExposition(await r.text()), 'tenebra_test_served_total')).toBe(1);
    expect((await fetch(srv.url.replace('/metrics', '/'))).status).toBe(404);
    expect(sumOf(await scrape(srv.url), 'tenebra_test_served_total', { role: 'sequencer' })).toBe(1);
  });
});

describe('parseExposition', () => {
  it('reads labels with escapes and special values, and refuses malformed lines', () => {
    const s = parseExposition('# HELP x_total a\n# TYPE x_total counter\nx_total{a="q\\"b",c="d"} 3\ny +Inf\nz{le="0.5"} 1e-3\n');
    expect(s).toEqual([
      { name: 'x_total', labels: { a: 'q"b', c: 'd' }, value: 3 },
      { name: 'y', labels: {}, value: Infinity },
      { name: 'z', labels: { le: '0.5' }, value: 0.001 },
    ]);
    expect(() => parseExposition('x_total{a=b} 1')).toThrow(/bad labels/);
    expect(() => parseExposition('x_total one')).toThrow(/bad value/);
    expect(() => parseExposition('not a line at all {')).toThrow(/not a sample/);
  });
});
