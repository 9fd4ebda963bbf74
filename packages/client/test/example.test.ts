// The README's quick start (examples/quickstart.ts) runs end to end against the mock gateway.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { main } from '../examples/quickstart';
import { API_KEY, MockGateway } from './mock-gateway';

const gw = new MockGateway();
let urls: { baseUrl: string; wsUrl: string };
beforeAll(async () => {
  urls = await gw.start();
});
afterAll(() => gw.stop());

it('the quick start places over REST and over the encrypted socket and sees the order event', async () => {
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  const out = await main({
    TENEBRA_BASE_URL: urls.baseUrl,
    TENEBRA_WS_URL: urls.wsUrl,
    TENEBRA_API_KEY: API_KEY.apiKey,
    TENEBRA_API_SECRET: API_KEY.apiSecret,
    TENEBRA_PASSPHRASE: API_KEY.passphrase,
  });
  log.mockRestore();
  expect(gw.orders.get(out.restOrder)).toMatchObject({ symbol: 'ETH-USDC-PERP', price: '3000', quantity: '0.5' });
  expect(gw.orders.get(out.wsOrder)).toMatchObject({ side: 'sell', price: '3100.5', quantity: '0.25' });
  expect(out.events.find((e) => e.order_id === out.wsOrder)).toMatchObject({ message_type: 'open', status: 'NEW', price: '3100.5' });
  expect(gw.last.ops).toEqual(['login', 'session.setup', 'subscribe', 'order.place', 'logout']);
  expect(gw.requests.at(-1)?.path).toBe('/auth/token/revoke');
});
