// The SDK against real processes across a gateway kill -9 (issue 24): a fill committed while its push
// is lost and the gateway then killed is still reported (reconciliation over GET /orders/{id} and
// GET /fills); a placement queued during the outage fails with StaleOrderError instead of going out
// late; the socket is back within about a second of the gateway. One cluster for the file.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import net from 'node:net';
import { StaleOrderError, TenebraRestClient, TenebraSocket, type Fill, type OrderEvent } from '@tenebra/client';
import { startTestCluster, createAccount, waitFor, type TestCluster, type Credentials } from './harness';

/**
 * A TCP relay in front of the gateway's WebSocket port. While `dropFromGateway` is set, bytes from the
 * gateway are discarded: the client's socket stays open but receives nothing, as when the gateway
 * committed a fill and died before its push left the machine.
 */
class Relay {
  dropFromGateway = false;
  private readonly server: net.Server;
  private readonly pairs = new Set<net.Socket>();
  port = 0;
  constructor(private readonly target: number) {
    this.server = net.createServer((client) => {
      const up = net.connect(this.target, '127.0.0.1');
      this.pairs.add(client).add(up);
      client.on('data', (d) => up.write(d));
      up.on('data', (d) => {
        if (!this.dropFromGateway) client.write(d);
      });
      const end = () => {
        client.destroy();
        up.destroy();
        this.pairs.delete(client);
        this.pairs.delete(up);
      };
      client.on('close', end).on('error', end);
      up.on('close', end).on('error', end);
    });
  }
  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
  }
  async stop(): Promise<void> {
    for (const s of this.pairs) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

const credentials = (c: Credentials) => ({ apiKey: c.api_key, apiSecret: c.api_secret, passphrase: c.passphrase });

describe('SDK recovery across a gateway kill -9', () => {
  let tc: TestCluster;
  let relay: Relay;
  beforeAll(async () => {
    tc = await startTestCluster();
    relay = new Relay(Number(new URL(tc.baseUrl).port));
    await relay.start();
  }, 320_000); // a loaded CI box can take minutes to start the processes (TENEBRA_TEST_READY_MS)
  afterAll(async () => {
    await relay?.stop();
    await tc?.cleanup();
  });

  it('reports a fill whose push was lost when the gateway died; refuses a late placement; is back within ~1 s', async () => {
    const [m, t] = await Promise.all([createAccount(tc.dataDir), createAccount(tc.dataDir)]);
    const rest = new TenebraRestClient({ baseUrl: tc.baseUrl, credentials: credentials(m!) });
    const takerRest = new TenebraRestClient({ baseUrl: tc.baseUrl, credentials: credentials(t!) });
    const socket = new TenebraSocket({ url: `ws://127.0.0.1:${relay.port}/ws/v1`, rest, heartbeat: false, requestTimeoutMs: 30_000 });
    const events: { e: OrderEvent; recovered: boolean }[] = [];
    const fills: Fill[] = [];
    const readyAt: number[] = [];
    socket.on('order', (e, meta) => events.push({ e, recovered: meta.recovered === true }));
    socket.on('fill', (f) => fills.push(f));
    socket.on('ready', (r) => r.reconnect && readyAt.push(Date.now()));
    socket.on('error', () => undefined); // disconnects are expected here
    const reconciled = new Promise<{ orders: number; fills: number }>((r) => socket.once('reconciled', r));
    await socket.connect();
    await socket.subscribe('orders');

    const ack = await socket.placeOrder({ symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: '0.5', price: '3000', time_in_force: 'GTC' }, { maxAgeMs: 30_000 });
    expect(ack).toMatchObject({ code: 0, status: 'NEW', reject_reason: null });
    await waitFor(async () => events.some(({ e }) => e.order_id === ack.order_id && e.message_type === 'open'), 60_000, 'the open event');

    // The push of the fill is lost: the maker's socket hears nothing while the cross commits.
    relay.dropFromGateway = true;
    const taker = await takerRest.placeOrder({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: '0.5', price: '3000', time_in_force: 'IOC' }, { maxAgeMs: 30_000 });
    await waitFor(async () => (await rest.getOrder(ack.order_id)).status === 'FILLED', 60_000, 'the maker order to fill');
    await tc.cluster.kill('gateway', 0);
    relay.dropFromGateway = false;
    expect(events.filter(({ e }) => e.order_id === ack.order_id).map(({ e }) => e.message_type)).toEqual(['open']); // nothing arrived

    // During the outage: a placement is not held back and sent late.
    await waitFor(async () => socket.state === 'reconnecting', 30_000, 'the socket to notice the dead gateway');
    const late = await socket.placeOrder({ symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: '0.5', price: '3500', time_in_force: 'GTC', client_order_id: 'late-ws' }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(StaleOrderError);
    const lateRest = await rest.placeOrder({ symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: '0.5', price: '3500', time_in_force: 'GTC', client_order_id: 'late-rest' }).catch((e: unknown) => e);
    expect(lateRest).toBeInstanceOf(StaleOrderError);
    expect((lateRest as StaleOrderError).maybePlaced).toBe(false); // the connection was refused

    tc.cluster.spawnProc('gateway', 0);
    const backAt = await waitFor(async () => {
      const r = await fetch(`${tc.baseUrl}/system/health`).catch(() => null);
      return r?.ok ? Date.now() : null;
    }, 90_000, 'the gateway to answer again');
    expect(await reconciled).toMatchObject({ orders: 1 });
    // back within about a second of the gateway (backoff capped at 1 s; generous for a loaded box)
    expect(readyAt[0]! - backAt).toBeLessThan(3_000);

    const mine = events.filter(({ e }) => e.order_id === ack.order_id);
    expect(mine.map(({ e, recovered }) => [e.message_type, e.status, e.last_fill_qty, recovered])).toEqual([['open', 'NEW', null, false], ['filled', 'FILLED', '0.5', true]]);
    expect(fills).toHaveLength(1);
    expect(fills[0]).toMatchObject({ order_id: ack.order_id, side: 'sell', price: '3000', quantity: '0.5', liquidity: 'maker' });
    expect((await takerRest.fills())[0]).toMatchObject({ order_id: taker.order_id, liquidity: 'taker', fill_id: fills[0]!.fill_id.replace(/M$/, 'T') });
    // neither late placement exists
    for (const id of ['late-ws', 'late-rest']) await expect(rest.getOrderByClientId(id)).rejects.toMatchObject({ error: 'ORDER_NOT_FOUND' });
    await socket.close();
  }, 300_000);
});
