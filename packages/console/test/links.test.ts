import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpLinkControl } from '../src/links';

describe('httpLinkControl', () => {
  // node 1 answers at once; node 2 holds its first request past the timeout (a node busy recovering
  // its shares), then answers; node 3 says 503 (links not up yet) twice; node 4 refuses the setting
  let server: Server;
  let port = 0;
  let closedPort = 0;
  const seen = new Map<number, number>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString(); });
      req.on('end', () => {
        const node = Number(req.url!.split('/')[1]);
        const k = (seen.get(node) ?? 0) + 1;
        seen.set(node, k);
        const ok = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ node, latency_ms: 20, jitter_ms: 2, bandwidth_mbps: null, blocked_peers: [], ...(body ? {} : { read: true }) }));
        if (node === 2 && k === 1) return void setTimeout(ok, 1_500);
        if (node === 3 && k <= 2) return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"not up yet"}');
        if (node === 4) return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"latency_ms too large"}');
        ok();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    // a port nobody listens on: a node that is not running
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const urls = () => [
    ...[1, 2, 3, 4].map((i) => ({ index: i, url: `http://127.0.0.1:${port}/${i}/control/links` })),
    { index: 5, url: `http://127.0.0.1:${closedPort}/5/control/links` },
  ];

  it('asks a node that timed out or was not ready again; reports a refusal or a node not running at once', async () => {
    seen.clear();
    // tries of 1 s (node 2 holds its first for 1.5 s): wide enough that a loaded CI machine's
    // answer at once is not taken for a timeout
    const links = httpLinkControl(urls, 'op', 1_000, 6_000);
    const results = await links.set({ latency_ms: 20, jitter_ms: 2 });
    expect(results.map((r) => [r.node, r.ok])).toEqual([[1, true], [2, true], [3, true], [4, false], [5, false]]);
    expect(seen.get(1)).toBe(1);
    expect(seen.get(2)).toBe(2); // the first try timed out
    expect(seen.get(3)).toBe(3); // two 503s, then the setting
    expect(seen.get(4)).toBe(1); // a refusal is final
    expect(results[3]!.error).toBe('400 latency_ms too large');
    expect(results[4]!.error).toBe('no answer (connection refused: not running)');
    expect(links.current().map((s) => s.node)).toEqual([1, 2, 3]);
  });

  it('gives up on a node that keeps timing out once the retry time is over, and says how often it tried', async () => {
    const slow = createServer((_req, res) => void setTimeout(() => res.writeHead(200).end('{}'), 1_000));
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const sp = (slow.address() as AddressInfo).port;
    try {
      const [r] = await httpLinkControl(() => [{ index: 2, url: `http://127.0.0.1:${sp}/2/control/links` }], 'op', 150, 600).set({ latency_ms: 0 });
      expect(r!.ok).toBe(false);
      expect(r!.error).toMatch(/^no answer \(timeout\) \(\d+ tries\)$/);
      expect(Number(/(\d+) tries/.exec(r!.error!)![1])).toBeGreaterThanOrEqual(2);
    } finally {
      slow.closeAllConnections();
      await new Promise((r) => slow.close(r));
    }
  });
});
