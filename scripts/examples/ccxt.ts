// Tenebra through CCXT, as a CCXT user writes it: markets, balance, a resting order that is
// watched, amended and cancelled, positions and fees. Against `npm start` (an account from
// `npm run accounts -- create ...`):
//   TENEBRA_API_KEY=… TENEBRA_API_SECRET=… TENEBRA_PASSPHRASE=… node --import tsx scripts/examples/ccxt.ts
// (TENEBRA_HOST=127.0.0.1:9080 for `npm start -- --env test`). scripts/test/ccxt.test.ts runs the
// same function against a real cluster.
import { pathToFileURL } from 'node:url';
import { tenebrapro } from '@tenebra/ccxt';
import type { Order } from 'ccxt';

export interface ExampleResult {
  symbol: string;
  placed: Order;
  watched: Order[];
  amended: Order;
  cancelled: Order;
}

/** Places a resting buy 10% under SOL's mark (about 150), watches it, amends it and cancels it. */
export async function ccxtExample(exchange: InstanceType<typeof tenebrapro>, log: (...a: unknown[]) => void = console.log): Promise<ExampleResult> {
  const markets = await exchange.loadMarkets();
  const symbol = 'SOL/USDC:USDC';
  const market = markets[symbol]!;
  log(Object.keys(markets).length, 'markets;', symbol, 'tick', market.precision.price, 'step', market.precision.amount);

  const balance = await exchange.fetchBalance();
  const usdc = balance['USDC']!;
  log('USDC free', usdc.free, 'used', usdc.used, 'total', usdc.total);

  const watching = exchange.watchOrders(symbol); // subscribes: the open orders first, then every change
  const placed = await exchange.createOrder(symbol, 'limit', 'buy', 1, 148, { clientOrderId: `ccxt-example-${Date.now()}` });
  log('placed', placed.id, placed.status);
  let watched = await watching;
  while (!watched.some((o) => o.id === placed.id)) watched = watched.concat(await exchange.watchOrders(symbol));
  log('watched', watched.map((o) => `${o.id} ${o.status} ${o.filled}/${o.amount}`).join(', '));

  const amended = await exchange.editOrder(placed.id!, symbol, 'limit', 'buy', 0.8, 148.5);
  log('amended', amended.id, amended.price, amended.amount, amended.status);
  const cancelled = await exchange.cancelOrder(placed.id, symbol);
  log('cancelled', cancelled.id, cancelled.status);

  const positions = await exchange.fetchPositions();
  log(positions.length, 'open positions', positions.map((p) => `${p.symbol} ${p.side} ${p.contracts} @ ${p.entryPrice}`).join(', '));
  const fees = await exchange.fetchTradingFee(symbol);
  log('fees maker', fees.maker, 'taker', fees.taker);
  return { symbol, placed, watched, amended, cancelled };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const exchange = new tenebrapro({
    apiKey: process.env.TENEBRA_API_KEY,
    secret: process.env.TENEBRA_API_SECRET,
    password: process.env.TENEBRA_PASSPHRASE,
    hostname: process.env.TENEBRA_HOST ?? '127.0.0.1:8080',
  });
  try {
    await ccxtExample(exchange);
  } finally {
    await exchange.close();
  }
}
