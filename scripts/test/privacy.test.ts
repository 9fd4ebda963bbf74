// The promise that matters most: no single committee node and not the sequencer ever holds a
// plaintext price or quantity. Known, distinctive values go in through REST; afterwards we search
// every byte the sequencer and each node received on their internal links (recorded by a proxy),
// every file they stored, and their logs. As a control, the same search must find the values where
// they are supposed to be (the gateway, which is trusted with order contents).
import { describe, it, expect } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, statSync, rmSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layout, readJson, writeJson, type GatewayConfig, type NodeConfig } from '@tenebra/config';
import { encodeFieldVector } from '@tenebra/mpc';
import { Cluster, ensureCluster } from '../src/cluster';
import { createAccount, testPorts, Trader, waitFor } from './harness';

// ETH-USDC-PERP: tick 0.01, step 0.001.
// within ETH's price band around the mark (3000 ± 2.5%; ADR 0020), still a distinctive value
const PRICE = { text: '3017.83', ticks: 301783n };
const QTY = { text: '1234.567', steps: 1234567n };
const TAKE = { text: '617.283', steps: 617283n };

/** A TCP proxy that records every byte in both directions. */
function recordingProxy(listenPort: number, targetPort: number): { server: Server; bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    client.on('data', (d) => { chunks.push(Buffer.from(d)); upstream.write(d); });
    upstream.on('data', (d) => { chunks.push(Buffer.from(d)); client.write(d); });
    const end = () => { client.destroy(); upstream.destroy(); };
    client.on('close', end); upstream.on('close', end);
    client.on('error', end); upstream.on('error', end);
  });
  server.listen(listenPort, '127.0.0.1');
  return { server, bytes: () => Buffer.concat(chunks) };
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

/** Every form in which a plaintext value could sit in bytes we search. */
function needles(): { what: string; bytes: Buffer }[] {
  const list: { what: string; bytes: Buffer }[] = [];
  for (const [name, text, units] of [['price', PRICE.text, PRICE.ticks], ['qty', QTY.text, QTY.steps], ['fill', TAKE.text, TAKE.steps]] as const) {
    list.push({ what: `${name} decimal ${text}`, bytes: Buffer.from(text) });
    list.push({ what: `${name} units ${units}`, bytes: Buffer.from(units.toString()) });
    list.push({ what: `${name} as a field element`, bytes: Buffer.from(encodeFieldVector([units])) });
  }
  return list;
}

function findIn(haystack: Buffer): string[] {
  return needles().filter((n) => haystack.includes(n.bytes)).map((n) => n.what);
}

describe('privacy: no plaintext price or quantity at the sequencer or any single node', () => {
  it('finds none on their links, in their storage or in their logs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tenebra-privacy-'));
    const { extraBase: proxyBase, ...ports } = await testPorts(5, 2);
    const configs = await ensureCluster({ dataDir, env: 'test', ports });
    // Route every internal link through recording proxies.
    const L = layout(dataDir);
    const seqProxy = recordingProxy(proxyBase, ports.sequencer);
    const gwProxy = recordingProxy(proxyBase + 1, ports.gatewayInternal);
    const gw = readJson<GatewayConfig>(L.gatewayConfig);
    gw.sequencerUrl = `ws://127.0.0.1:${proxyBase}`;
    writeJson(L.gatewayConfig, gw);
    for (const nd of configs.nodes) {
      const c = readJson<NodeConfig>(L.nodeConfig(nd.index));
      c.sequencerUrl = `ws://127.0.0.1:${proxyBase}`;
      c.gatewayInternalUrl = `ws://127.0.0.1:${proxyBase + 1}`;
      writeJson(L.nodeConfig(nd.index), c);
    }
    const cluster = await Cluster.start({ dataDir, env: 'test', ports });
    try {
      await cluster.waitReady(90_000);
      const [a, b] = await Promise.all([createAccount(dataDir, 'Apex', '50000000'), createAccount(dataDir, 'Apex', '50000000')]);
      const maker = new Trader(cluster.baseUrl, a!);
      const taker = new Trader(cluster.baseUrl, b!);
      await Promise.all([maker.login(), taker.login()]);
      const sell = await maker.place({ symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: Number(QTY.text), price: Number(PRICE.text), time_in_force: 'GTC' });
      expect(sell.status, JSON.stringify(sell.body)).toBe(200);
      const buy = await taker.place({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: Number(TAKE.text), price: Number(PRICE.text), time_in_force: 'IOC' });
      expect(buy.status, JSON.stringify(buy.body)).toBe(200);
      await waitFor(async () => (await maker.order(sell.body.data!.order_id)).status === 'PARTIALLY_FILLED', 30_000, 'the fill');
    } finally {
      await cluster.stop(10_000);
      seqProxy.server.close();
      gwProxy.server.close();
    }

    // The links: gateway<->sequencer, sequencer<->nodes, nodes->gateway (results).
    expect(findIn(seqProxy.bytes()), 'sequencer link').toEqual([]);
    expect(findIn(gwProxy.bytes()), 'node->gateway results link').toEqual([]);
    expect(seqProxy.bytes().length).toBeGreaterThan(1000); // the proxy really carried the traffic
    // Storage and logs of the sequencer and of each node.
    const places = [L.sequencerDir, join(L.logsDir, 'sequencer.log')];
    for (const nd of configs.nodes) places.push(L.nodeDir(nd.index), join(L.logsDir, `node-${nd.index}.log`));
    for (const place of places) {
      const files = statSync(place).isDirectory() ? filesUnder(place) : [place];
      for (const f of files) expect(findIn(readFileSync(f)), f).toEqual([]);
    }
    // Control: the gateway, trusted with order contents, does hold them, so the search works.
    const gatewayBytes = Buffer.concat(filesUnder(L.gatewayDir).map((f) => readFileSync(f)));
    expect(findIn(gatewayBytes).length).toBeGreaterThan(0);
    if (!process.env.TENEBRA_KEEP_DATA) rmSync(dataDir, { recursive: true, force: true });
  }, 180_000);
});
