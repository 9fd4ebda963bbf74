// The operator's POST /control/links on a node's metrics port: the token is required, bad input is
// refused with the error envelope and changes nothing, a good one answers the settings in force.
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { processRegistry, serveMetrics, type MetricsServer } from '@tenebra/metrics';
import { createLibp2pTransport, generateIdentity, type Libp2pTransport } from '@tenebra/transport';
import { linkControlRoute, type LinkSettingsJson } from '../src/link-control';

const TOKEN = 'op-token-for-tests-0123456789';

/** A node 1 of 3 whose (unstarted) transport the control changes. */
async function rig(opts: { token?: string; noTarget?: boolean } = {}) {
  const ids = await Promise.all([1, 2, 3].map(() => generateIdentity()));
  const peers = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: `/ip4/127.0.0.1/tcp/${40_000 + k}` }));
  const transport: Libp2pTransport = await createLibp2pTransport({ self: 1, n: 3, privateKey: ids[0]!.privateKey, listen: peers[0]!.addr, peers });
  const changes: LinkSettingsJson[] = [];
  const route = linkControlRoute({
    node: 1, token: 'token' in opts ? opts.token : TOKEN, target: () => (opts.noTarget ? null : transport), onChange: (s) => changes.push(s),
  });
  const server = await serveMetrics(processRegistry('committee', 1), '127.0.0.1', 0, route);
  return { transport, server, changes };
}

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

function call(server: MetricsServer, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const auth = (token = TOKEN) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

describe('POST /control/links', () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('changes the links with the operator token and answers the settings in force', async () => {
    const r = await rig();
    server = r.server;
    const a = await call(server, 'POST', '/control/links', JSON.stringify({ latency_ms: 30, jitter_ms: 5, bandwidth_mbps: 50, blocked_peers: [3] }), auth());
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body)).toEqual({ node: 1, latency_ms: 30, jitter_ms: 5, bandwidth_mbps: 50, blocked_peers: [3] });
    expect(r.transport.linkSettings()).toEqual({ latencyMs: 30, jitterMs: 5, bandwidthMbps: 50, blockedPeers: [3] });
    // absent fields keep their setting; null bandwidth is unlimited; [] heals
    const b = await call(server, 'POST', '/control/links', JSON.stringify({ bandwidth_mbps: null, blocked_peers: [] }), auth());
    expect(JSON.parse(b.body)).toEqual({ node: 1, latency_ms: 30, jitter_ms: 5, bandwidth_mbps: null, blocked_peers: [] });
    const g = await call(server, 'GET', '/control/links', undefined, auth());
    expect(JSON.parse(g.body)).toEqual(JSON.parse(b.body));
    expect(r.changes).toHaveLength(2); // GET changes nothing
  });

  it('refuses without the token, or with another one (401), and changes nothing', async () => {
    const r = await rig();
    server = r.server;
    const body = JSON.stringify({ blocked_peers: [2] });
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Basic ${TOKEN}` }];
    for (const headers of attempts) {
      const a = await call(server, 'POST', '/control/links', body, headers);
      expect(a.status).toBe(401);
      const env = JSON.parse(a.body) as Record<string, unknown>;
      expect(env).toMatchObject({ code: 401, message: expect.stringMatching(/operator token/) as unknown });
      expect(env.request_id).toBe(a.headers['x-request-id']);
      expect(typeof env.timestamp).toBe('string');
    }
    expect(r.transport.linkSettings().blockedPeers).toEqual([]);
    expect(r.changes).toEqual([]);
  });

  it('a node started without a token refuses every request', async () => {
    const r = await rig({ token: undefined });
    server = r.server;
    const a = await call(server, 'POST', '/control/links', '{}', auth(''));
    expect(a.status).toBe(401);
    expect(a.body).toMatch(/link control is off/);
  });

  it('refuses bad input with 400 (the whole update: nothing changes)', async () => {
    const r = await rig();
    server = r.server;
    const bad: Array<[string, RegExp]> = [
      ['not json', /JSON object/],
      ['[1]', /JSON object/],
      ['null', /JSON object/],
      ['{"latency":5}', /unknown field "latency"/],
      ['{"latency_ms":"5"}', /latency_ms must be a number/],
      ['{"latency_ms":-1}', /latency_ms must be a number of ms from 0/],
      ['{"latency_ms":10,"jitter_ms":20}', /jitter_ms \(20\) may not exceed latency_ms/],
      ['{"bandwidth_mbps":0}', /bandwidth_mbps must be a positive number/],
      ['{"latency_ms":70000}', /from 0 to 60000/],
      ['{"blocked_peers":2}', /array of node indexes/],
      ['{"blocked_peers":["2"]}', /array of node indexes/],
      ['{"blocked_peers":[4]}', /not a node index from 1 to 3/],
      ['{"blocked_peers":[1]}', /this node itself/],
      ['{"blocked_peers":[2,2]}', /twice/],
      ['{"latency_ms":5,"blocked_peers":[9]}', /not a node index/],
    ];
    for (const [body, why] of bad) {
      const a = await call(server, 'POST', '/control/links', body, auth());
      expect([body, a.status]).toEqual([body, 400]);
      expect(JSON.parse(a.body).message).toMatch(why);
    }
    const q = await call(server, 'POST', '/control/links?x=1', '{}', auth());
    expect(q.status).toBe(400);
    expect(r.transport.linkSettings()).toEqual({ latencyMs: 0, jitterMs: 0, blockedPeers: [] });
    expect(r.changes).toEqual([]);
  });

  it('other methods 405, oversized bodies 413, no transport yet 503; a browser preflight is answered; /metrics is untouched', async () => {
    const r = await rig();
    server = r.server;
    const d = await call(server, 'DELETE', '/control/links', undefined, auth());
    expect(d.status).toBe(405);
    expect(d.headers.allow).toBe('GET, POST, OPTIONS');
    const big = await call(server, 'POST', '/control/links', JSON.stringify({ blocked_peers: [], pad: 'x'.repeat(10_000) }), auth());
    expect(big.status).toBe(413);
    const o = await call(server, 'OPTIONS', '/control/links', undefined, { origin: 'http://127.0.0.1:8080', 'access-control-request-method': 'POST' });
    expect(o.status).toBe(204);
    expect(o.headers['access-control-allow-headers']).toMatch(/authorization/);
    expect((await call(server, 'GET', '/metrics')).status).toBe(200);
    expect((await call(server, 'GET', '/control/other')).status).toBe(404);
    await server.close();
    const none = await rig({ noTarget: true });
    server = none.server;
    expect((await call(server, 'POST', '/control/links', '{}', auth())).status).toBe(503);
  });
});
