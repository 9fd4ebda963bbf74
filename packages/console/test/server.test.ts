// The console server against a fake cluster: real metrics servers (prom-client) and a fake link
// control endpoint; checks the token, the state it serves, the controls and the error envelope.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge, Registry } from 'prom-client';
import { serveMetrics, type MetricsServer } from '@tenebra/metrics';
import { httpLinkControl, startConsole, type ChaosTarget, type ConsoleServer, type ProcEvent, type ProcRole } from '../src/index';

class FakeCluster implements ChaosTarget {
  readonly running = new Map<string, boolean>();
  readonly frozen = new Set<string>();
  readonly calls: string[] = [];
  private readonly fns = new Set<(e: ProcEvent) => void>();
  constructor(private readonly urls: { role: ProcRole; index: number; url: string }[]) {
    for (const u of urls) this.running.set(`${u.role}:${u.index}`, true);
  }
  processes() {
    return this.urls.map((u) => ({ role: u.role, index: u.index, pid: this.running.get(`${u.role}:${u.index}`) ? 1000 + u.index : null }));
  }
  metricsUrls() {
    return this.urls;
  }
  isRunning(role: ProcRole, index: number) {
    return this.running.get(`${role}:${index}`) ?? false;
  }
  isFrozen(role: ProcRole, index: number) {
    return this.frozen.has(`${role}:${index}`);
  }
  async kill(role: ProcRole, index: number, signal?: NodeJS.Signals) {
    this.calls.push(`kill ${role} ${index} ${signal}`);
    this.running.set(`${role}:${index}`, false);
    for (const fn of this.fns) fn({ time: Date.now(), role, index, kind: 'killed', detail: signal ?? 'SIGKILL' });
  }
  async restart(role: ProcRole, index: number) {
    this.calls.push(`restart ${role} ${index}`);
    this.running.set(`${role}:${index}`, true);
  }
  freeze(role: ProcRole, index: number) {
    this.calls.push(`freeze ${role} ${index}`);
    this.frozen.add(`${role}:${index}`);
    return true;
  }
  thaw(role: ProcRole, index: number) {
    this.calls.push(`thaw ${role} ${index}`);
    return this.frozen.delete(`${role}:${index}`);
  }
  onEvent(fn: (e: ProcEvent) => void) {
    this.fns.add(fn);
    return () => this.fns.delete(fn);
  }
}

describe('console server', () => {
  const token = 'a'.repeat(48);
  const metrics: MetricsServer[] = [];
  let cluster: FakeCluster;
  let con: ConsoleServer;
  let linkServer: Server;
  const linkCalls: { auth: string | undefined; body: string }[] = [];
  const auth = { authorization: `Bearer ${token}` };
  const post = (path: string, body: unknown, headers: Record<string, string> = auth) =>
    fetch(`${con.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    const procs: { role: ProcRole; index: number }[] = [{ role: 'sequencer', index: 0 }, { role: 'gateway', index: 0 }, ...[1, 2, 3].map((i) => ({ role: 'committee' as const, index: i }))];
    const urls = [];
    for (const p of procs) {
      const reg = new Registry();
      if (p.role === 'committee') {
        new Gauge({ name: 'tenebra_node_quorum', help: 'q', registers: [reg] }).set(1);
        new Gauge({ name: 'tenebra_node_reveals_total', help: 'r', labelNames: ['label'], registers: [reg] }).set({ label: 'cross' }, 7);
      }
      const m = await serveMetrics(reg, '127.0.0.1', 0);
      metrics.push(m);
      urls.push({ ...p, url: m.url });
    }
    cluster = new FakeCluster(urls);
    linkServer = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString(); });
      req.on('end', () => {
        linkCalls.push({ auth: req.headers.authorization, body });
        const node = Number(req.url!.split('/')[1]);
        if (node === 3) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"bad token"}');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ node, latency_ms: 40, jitter_ms: 5, bandwidth_mbps: null, blocked_peers: [] }));
      });
    });
    await new Promise<void>((r) => linkServer.listen(0, '127.0.0.1', r));
    const lp = (linkServer.address() as AddressInfo).port;
    const links = httpLinkControl(() => [1, 2, 3].map((i) => ({ index: i, url: `http://127.0.0.1:${lp}/${i}/control/links` })), 'op-token');
    con = await startConsole({ target: cluster, n: 3, port: 0, token, links, sampler: { intervalMs: 100 } });
  });
  afterAll(async () => {
    await con?.close();
    for (const m of metrics) await m.close();
    await new Promise((r) => linkServer?.close(r));
  });

  it('answers 401 with the error envelope without the token, and sets a cookie from the address', async () => {
    for (const path of ['', 'api/state', 'assets/app.js', 'vendor/uPlot.iife.min.js']) {
      const r = await fetch(`${con.url}${path}`);
      expect(r.status, path).toBe(401);
      expect(await r.json()).toMatchObject({ code: 40103, error: 'invalid_token', request_id: expect.any(String), timestamp: expect.any(String) });
    }
    const r = await fetch(`${con.url}?token=${token}`, { redirect: 'manual' });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/');
    const cookie = r.headers.get('set-cookie')!;
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    const page = await fetch(con.url, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Tenebra committee console');
    const lib = await fetch(`${con.url}vendor/uPlot.iife.min.js`, { headers: auth });
    expect(lib.status).toBe(200);
    expect(await lib.text()).toContain('uPlot');
  });

  it('serves every process as a tile and the leakage counts', async () => {
    await new Promise((r) => setTimeout(r, 400));
    const r = await fetch(`${con.url}api/state`, { headers: auth });
    const s = (await r.json()) as { data: { snapshot: { nodes: { state: string }[]; leakage: unknown[]; gateway: { state: string } } } };
    expect(s.data.snapshot.nodes.map((x) => x.state)).toEqual(['up', 'up', 'up']);
    expect(s.data.snapshot.gateway.state).toBe('up');
    expect(s.data.snapshot.leakage).toEqual([{ label: 'cross', perS: 0, total: 7 }]);
  });

  it('acts on the cluster and records each action on the timeline; refuses bad input', async () => {
    expect((await post('api/control', { action: 'kill', role: 'committee', index: 2 })).status).toBe(200);
    expect(cluster.calls).toContain('kill committee 2 SIGKILL');
    expect((await post('api/control', { action: 'kill', role: 'committee', index: 2 })).status).toBe(409); // already down
    expect((await post('api/control', { action: 'freeze', role: 'gateway', index: 0 })).status).toBe(200);
    expect((await post('api/control', { action: 'thaw', role: 'gateway', index: 0 })).status).toBe(200);
    expect((await post('api/control', { action: 'restart', role: 'committee', index: 2 })).status).toBe(200);
    const bad = await post('api/control', { action: 'kill', role: 'committee', index: 9 });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 40000, error: 'invalid_request' });
    expect((await post('api/control', { action: 'kill', role: 'committee', index: 1 }, {})).status).toBe(401);
    const text = await fetch(`${con.url}api/control`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'kill' });
    expect(text.status).toBe(415);
    const events = ((await (await fetch(`${con.url}api/state`, { headers: auth })).json()) as { data: { events: { who: string; what: string }[] } }).data.events;
    expect(events.map((e) => `${e.who}: ${e.what}`)).toEqual(expect.arrayContaining([
      'node 2: kill -9 (console)', 'node 2: killed (SIGKILL)', 'gateway: freeze (console)', 'gateway: thaw (console)', 'node 2: restart (console)',
    ]));
  });

  it('sends link settings to every node with the operator token and reports who refused', async () => {
    const r = await post('api/links', { latency_ms: 40, jitter_ms: 5 });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { data: { results: { node: number; ok: boolean; error?: string }[] } };
    expect(body.data.results.map((x) => [x.node, x.ok])).toEqual([[1, true], [2, true], [3, false]]);
    expect(body.data.results[2]!.error).toContain('401');
    expect(linkCalls.filter((c) => c.body !== '').every((c) => c.auth === 'Bearer op-token' && JSON.parse(c.body).latency_ms === 40)).toBe(true);
    const bad = await post('api/links', { latency_ms: -1 });
    expect(bad.status).toBe(400);
    expect((await post('api/links', { blocked_peers: [4] })).status).toBe(400); // n = 3
    expect((await post('api/links', { speed: 1 })).status).toBe(400);
  });
});
