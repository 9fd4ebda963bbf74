// Quick start for @tenebra/client (the same code as in packages/client/README.md).
//   npm start                                            # a local cluster, gateway on :8080
//   npm run accounts -- create --tier Core --deposit 10000
//   TENEBRA_API_KEY=… TENEBRA_API_SECRET=… TENEBRA_PASSPHRASE=… node --import tsx packages/client/examples/quickstart.ts
import { TenebraRestClient, TenebraSocket, type OrderEvent } from '@tenebra/client';

export async function main(env: Record<string, string | undefined> = process.env): Promise<{ restOrder: string; wsOrder: string; events: OrderEvent[] }> {
  // --- REST: the token is exchanged on first use and refreshed before it expires -----------------
  const rest = new TenebraRestClient({
    baseUrl: env['TENEBRA_BASE_URL'] ?? 'http://127.0.0.1:8080/api/v1',
    credentials: {
      apiKey: env['TENEBRA_API_KEY'] ?? '',
      apiSecret: env['TENEBRA_API_SECRET'] ?? '',
      passphrase: env['TENEBRA_PASSPHRASE'] ?? '',
    },
  });

  const { instruments } = await rest.listInstruments(); // cached; revalidated with If-None-Match
  const eth = instruments.find((i) => i.symbol === 'ETH-USDC-PERP');
  if (!eth) throw new Error('ETH-USDC-PERP is not listed');
  console.log(`ETH tick ${eth.tick_size}, step ${eth.step_size}, symbol_id ${eth.symbol_id}`);

  // Decimals go in as strings (or numbers) and come back as exact strings. A client_order_id is
  // generated, so a retry after a 429 or a timeout can never place the order twice.
  const placed = await rest.placeOrder({ symbol: 'ETH-USDC-PERP', side: 'buy', type: 'limit', quantity: '0.5', price: '3000', time_in_force: 'GTC' });
  console.log(`REST order ${placed.order_id} (${placed.client_order_id}) is ${placed.status}`);

  // Poll it a few times (the orders channel below is the push alternative).
  let order = await rest.getOrder(placed.order_id);
  for (let i = 0; i < 3 && order.status === 'NEW'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    order = await rest.getOrder(placed.order_id);
  }
  console.log(`filled ${order.filled_quantity} of ${order.quantity} at ${order.average_fill_price ?? '-'}`);

  // --- WebSocket: login, encrypted session, orders channel, encrypted order.place ----------------
  const socket = new TenebraSocket({ url: env['TENEBRA_WS_URL'] ?? 'ws://127.0.0.1:8080/ws/v1', rest });
  const events: OrderEvent[] = [];
  socket.on('ordersSnapshot', (orders) => console.log(`${orders.length} open orders`));
  socket.on('order', (o) => {
    events.push(o);
    console.log(`order ${o.order_id}: ${o.message_type} ${o.status} filled ${o.filled_quantity}`);
  });
  socket.on('error', (e) => console.error('socket:', e.message));

  await socket.connect(); // login {token} → user_uuid, then session.setup with a fresh X25519 key
  await socket.subscribe('orders'); // kept across re-login, rekey and reconnect

  const ack = await socket.placeOrder({ symbol: 'ETH-USDC-PERP', side: 'sell', type: 'limit', quantity: '0.25', price: '3100.5', time_in_force: 'GTC' });
  console.log(`WS ack: code ${ack.code}, order ${ack.order_id}, ${ack.status ?? ack.reject_reason}`);

  // Wait (bounded) for the orders channel to report the new order.
  for (let i = 0; i < 50 && !events.some((e) => e.order_id === ack.order_id); i++) await new Promise((r) => setTimeout(r, 20));

  await socket.close();
  await rest.revokeToken();
  return { restOrder: placed.order_id, wsOrder: ack.order_id, events };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
