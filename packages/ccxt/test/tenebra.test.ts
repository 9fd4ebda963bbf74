// The CCXT class against a node:http stand-in for the gateway (fast, no cluster): the token flow,
// the request each unified method sends, the error envelope → CCXT class table, and the parsed
// structures under CCXT's own checks. scripts/test/ccxt.test.ts runs it against a real cluster.
import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AuthenticationError, BadSymbol, DuplicateOrderId, ExchangeNotAvailable, InsufficientFunds, InvalidOrder, MarketClosed,
  NotSupported, OperationRejected, OrderNotFound, PermissionDenied, RateLimitExceeded, RequestTimeout, ArgumentsRequired,
} from 'ccxt';
import { tenebra, tenebrapro } from '../src/index';
import { UpdateQueue } from '../src/pro/updates';
import { checkBalance, checkMarket, checkOrder, checkPosition, checkTrade, checkTradingFee } from './ccxt-structures';

interface Seen { method: string; path: string; query: URLSearchParams; auth: string | undefined; body: unknown }

const SOL = {
  symbol: 'SOL-USDC-PERP', symbol_id: 12, base_asset: 'SOL', quote_asset: 'USDC', type: 'perp', status: 'trading', tick_size: 0.01,
  step_size: 0.01, min_qty: 0.01, max_qty: 10000, min_notional: 25, contract_size: 1, margin_asset: 'USDC', max_leverage: 20,
  maker_fee_bps: 2, taker_fee_bps: 5, initial_margin_ratio: 0.05, maintenance_margin_ratio: 0.025, listed_at: '2026-01-01T00:00:00.000Z', expires_at: null,
};
const NOW_NS = '1795811234567890123'; // beyond 2^53: only its digits are exact
const ORDER = `{"order_id":"4113278209365313076","client_order_id":"c-1","symbol":"SOL-USDC-PERP","side":"sell","type":"limit","time_in_force":"GTC","price":150.1,"quantity":2,"filled_quantity":0.5,"remaining_quantity":1.5,"average_fill_price":150.1,"last_fill_qty":0.5,"last_fill_price":150.1,"status":"PARTIALLY_FILLED","in_time_ns":${NOW_NS},"out_time_ns":${NOW_NS},"cancel_reason":null,"reject_reason":null}`;

describe('tenebra (CCXT) against a stand-in gateway', () => {
  let server: Server;
  let host: string;
  const seen: Seen[] = [];
  let tokens = 0;
  /** the next answer to a private route: [http status, body text] */
  let next: [number, string] | undefined;

  const envelope = (data: string) => `{"code":0,"data":${data},"timestamp":"2026-11-27T22:00:00.000Z","request_id":"r"}`;
  const route = (req: IncomingMessage, url: URL): [number, string] => {
    if (url.pathname === '/api/v1/auth/token') {
      tokens++;
      return [200, `{"access_token":"tok-${tokens}","token_type":"Bearer","expires_in":900,"scope":"trade read"}`];
    }
    if (url.pathname === '/api/v1/instruments') return [200, envelope(`{"version":1,"updated_at":"2026-01-01T00:00:00Z","instruments":[${JSON.stringify(SOL)}]}`)];
    if (next) {
      const n = next;
      next = undefined;
      return n;
    }
    if (req.method === 'POST' && url.pathname === '/api/v1/orders') return [200, envelope('{"order_id":"77","client_order_id":null,"status":"NEW"}')];
    if (url.pathname === '/api/v1/orders' || url.pathname.startsWith('/api/v1/orders/')) return [200, envelope(url.searchParams.has('status') ? `[${ORDER}]` : ORDER)];
    if (url.pathname === '/api/v1/account') return [200, envelope('{"currency":"USDC","balance":999000,"reserved_margin":310.5,"free_collateral":998689.5,"position_margin":1000,"unrealized_pnl":-2.1}')];
    if (url.pathname === '/api/v1/account/vip') return [200, envelope('{"tier":"Select","maker_fee_bps":1,"taker_fee_bps":4}')];
    if (url.pathname === '/api/v1/positions') return [200, envelope(`{"positions":[{"position_id":"0123456789abcdef01234567","symbol":"SOL-USDC-PERP","side":"short","size":2,"entry_price":150.1,"mark_price":151,"margin":15.02,"leverage":20,"unrealized_pnl":-1.8,"realized_pnl":0,"funding_accrued":0,"liquidation_price":156.2,"status":"OPEN","updated_at":"2026-11-27T22:00:00.000Z"}]}`)];
    if (url.pathname === '/api/v1/fills') return [200, envelope(`[{"fill_id":"412-0-M","order_id":"4113278209365313076","client_order_id":"c-1","symbol":"SOL-USDC-PERP","side":"sell","price":150.1,"quantity":0.5,"fee":0.015,"liquidity":"maker","time_ns":${NOW_NS}}]`)];
    return [404, '{"code":40400,"error":"not_found","message":"not_found: no route"}'];
  };

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        seen.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, auth: req.headers.authorization, body: text ? JSON.parse(text) : undefined });
        const [status, body] = route(req, url);
        res.writeHead(status, { 'content-type': 'application/json' }).end(body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => {
    seen.length = 0;
    next = undefined;
  });

  const make = () => new tenebra({ apiKey: 'key', secret: 'secret', password: 'pass', hostname: host, enableRateLimit: false });

  it('exchanges the credentials once for a bearer token and sends it on private routes', async () => {
    const ex = make();
    await ex.fetchBalance();
    await ex.fetchPositions();
    const auth = seen.filter((s) => s.path === '/api/v1/auth/token');
    expect(auth).toHaveLength(1);
    expect(auth[0]!.body).toEqual({ grant_type: 'client_credentials', client_id: 'key', client_secret: 'secret', passphrase: 'pass' });
    const privates = seen.filter((s) => s.path === '/api/v1/account' || s.path === '/api/v1/positions');
    expect(privates.map((s) => s.auth)).toEqual([`Bearer tok-${tokens}`, `Bearer tok-${tokens}`]);
    // an expired token is an AuthenticationError, and the next call exchanges the credentials again
    next = [401, '{"code":40101,"error":"token_expired","message":"token_expired: expired"}'];
    await expect(ex.fetchBalance()).rejects.toThrow(AuthenticationError);
    const before = tokens;
    await ex.fetchBalance();
    expect(tokens).toBe(before + 1);
  });

  it('parses markets, balance, fees, orders, trades and positions into structures CCXT accepts', async () => {
    const ex = make();
    const markets = await ex.loadMarkets();
    const m = markets['SOL/USDC:USDC']!;
    checkMarket(ex, 'fetchMarkets', m as unknown as Record<string, unknown>);
    expect(m).toMatchObject({ id: 'SOL-USDC-PERP', type: 'swap', linear: true, maker: 0.0002, taker: 0.0005, precision: { price: 0.01, amount: 0.01 }, limits: { leverage: { max: 20 }, cost: { min: 25 } } });

    const balance = await ex.fetchBalance();
    checkBalance(ex, 'fetchBalance', balance as unknown as Record<string, unknown>);
    expect(balance['USDC']).toEqual({ free: 998689.5, used: 1310.5, total: 1_000_000 });

    const fees = await ex.fetchTradingFees();
    checkTradingFee('fetchTradingFees', fees['SOL/USDC:USDC'] as unknown as Record<string, unknown>, 'SOL/USDC:USDC');
    expect(fees['SOL/USDC:USDC']).toMatchObject({ maker: 0.0001, taker: 0.0004 });

    const order = await ex.fetchOrder('4113278209365313076', 'SOL/USDC:USDC');
    checkOrder('fetchOrder', order as unknown as Record<string, unknown>, 'SOL/USDC:USDC');
    expect(order).toMatchObject({ id: '4113278209365313076', clientOrderId: 'c-1', status: 'open', filled: 0.5, remaining: 1.5, timestamp: 1795811234567, timeInForce: 'GTC' });

    const [trade] = await ex.fetchMyTrades('SOL/USDC:USDC', 1795811234000, 10);
    checkTrade(ex, 'fetchMyTrades', trade as unknown as Record<string, unknown>, 'SOL/USDC:USDC');
    expect(trade).toMatchObject({ id: '412-0-M', order: '4113278209365313076', takerOrMaker: 'maker', cost: 75.05, fee: { cost: 0.015, currency: 'USDC' } });
    const fills = seen.find((s) => s.path === '/api/v1/fills')!;
    expect(Object.fromEntries(fills.query)).toEqual({ symbol: 'SOL-USDC-PERP', since_ns: '1795811234000000000', limit: '10' });

    const [position] = await ex.fetchPositions(['SOL/USDC:USDC']);
    checkPosition('fetchPositions', position as unknown as Record<string, unknown>, 'SOL/USDC:USDC');
    expect(position).toMatchObject({ side: 'short', contracts: 2, notional: 302, collateral: 15.02, maintenanceMargin: 7.55, marginMode: 'isolated', liquidationPrice: 156.2 });
  });

  it('sends the venue order body: time in force defaults, GTD expiry, client id; refuses what the venue lacks', async () => {
    const ex = make();
    await ex.loadMarkets();
    const placed = await ex.createOrder('SOL/USDC:USDC', 'limit', 'buy', 1.234, 149.987, { clientOrderId: 'mine-1' });
    expect(seen.at(-1)!.body).toEqual({ symbol: 'SOL-USDC-PERP', side: 'buy', type: 'limit', quantity: '1.23', price: '149.99', time_in_force: 'GTC', client_order_id: 'mine-1' }); // CCXT truncates amounts, rounds prices to the tick
    checkOrder('createOrder', placed as unknown as Record<string, unknown>, 'SOL/USDC:USDC', undefined, ['id', 'symbol', 'type', 'side', 'amount', 'status']);
    expect(placed).toMatchObject({ id: '77', status: 'open', amount: 1.23, price: 149.99 });

    await ex.createOrder('SOL/USDC:USDC', 'market', 'sell', 1);
    expect(seen.at(-1)!.body).toEqual({ symbol: 'SOL-USDC-PERP', side: 'sell', type: 'market', quantity: '1', time_in_force: 'IOC' });
    await ex.createOrder('SOL/USDC:USDC', 'limit', 'buy', 1, 140, { timeInForce: 'GTD', expiryTime: 1795811300000, leverage: 5 });
    expect(seen.at(-1)!.body).toMatchObject({ time_in_force: 'GTT', expiry_time: '1795811300000000000', leverage: 5 });
    await expect(ex.createOrder('SOL/USDC:USDC', 'limit', 'buy', 1, 140, { timeInForce: 'GTD' })).rejects.toThrow(ArgumentsRequired);
    await expect(ex.createOrder('SOL/USDC:USDC', 'limit', 'buy', 1, 140, { reduceOnly: true })).rejects.toThrow(NotSupported);
    await expect(ex.createOrder('SOL/USDC:USDC', 'limit', 'buy', 1, 140, { postOnly: true })).rejects.toThrow(NotSupported);

    await ex.editOrder('4113278209365313076', 'SOL/USDC:USDC', 'limit', 'sell', 3, 150.2);
    expect(seen.at(-1)).toMatchObject({ method: 'PATCH', path: '/api/v1/orders/4113278209365313076', body: { quantity: '3', price: '150.2' } });
    await ex.cancelOrder(undefined, 'SOL/USDC:USDC', { clientOrderId: 'c-1' });
    expect(seen.at(-1)).toMatchObject({ method: 'DELETE', path: '/api/v1/orders' });
    expect(seen.at(-1)!.query.get('client_order_id')).toBe('c-1');
    await ex.cancelOrder('4113278209365313076', 'SOL/USDC:USDC');
    expect(seen.at(-1)).toMatchObject({ method: 'DELETE', path: '/api/v1/orders/4113278209365313076' });
    await ex.fetchOrder(undefined, 'SOL/USDC:USDC', { client_order_id: 'c-1' });
    expect(seen.at(-1)).toMatchObject({ method: 'GET', path: '/api/v1/orders' });
    expect(seen.at(-1)!.query.get('client_order_id')).toBe('c-1');
    await expect(ex.cancelOrder(undefined, 'SOL/USDC:USDC')).rejects.toThrow(/cancelOrder\(\) needs an id/);
    await expect(ex.fetchOrder(undefined, 'SOL/USDC:USDC')).rejects.toThrow(ArgumentsRequired);
    await ex.fetchClosedOrders('SOL/USDC:USDC', 1795811234000, 900);
    expect(Object.fromEntries(seen.at(-1)!.query)).toEqual({ status: 'closed', symbol: 'SOL-USDC-PERP', since_ns: '1795811234000000000', limit: '500' });
    seen.length = 0;
    const both = await ex.fetchOrders('SOL/USDC:USDC');
    expect(seen.map((s) => s.query.get('status'))).toEqual(['open', 'closed']);
    expect(both).toHaveLength(2);
  });

  it('close() after a watch whose socket never opened resolves', async () => {
    // the stand-in speaks no WebSocket: the upgrade fails after markets and token are in
    const ex = new tenebrapro({ apiKey: 'key', secret: 'secret', password: 'pass', hostname: host, enableRateLimit: false, options: { socket: { reconnect: false } } });
    await expect(ex.watchOrders()).rejects.toThrow();
    expect(seen.some((s) => s.path === '/api/v1/instruments')).toBe(true);
    await expect(ex.close()).resolves.toBeUndefined();
  });

  it('maps every venue error name to its CCXT class', async () => {
    const ex = make();
    await ex.loadMarkets();
    const cases: [number, number, string, new (...a: never[]) => Error][] = [
      [400, 1410, 'MARGIN_INSUFFICIENT', InsufficientFunds],
      [400, 40003, 'insufficient_collateral', InsufficientFunds],
      [400, 1402, 'INVALID_PRICE', InvalidOrder],
      [400, 1404, 'MIN_NOTIONAL', InvalidOrder],
      [400, 1406, 'LEVERAGE_EXCEEDED', InvalidOrder],
      [400, 1401, 'UNKNOWN_SYMBOL', BadSymbol],
      [400, 1407, 'INSTRUMENT_HALTED', MarketClosed],
      [400, 1411, 'ACCOUNT_IN_LIQUIDATION', OperationRejected],
      [409, 1414, 'DUPLICATE_CLIENT_ORDER_ID', DuplicateOrderId],
      [404, 1420, 'ORDER_NOT_FOUND', OrderNotFound],
      [409, 1421, 'ORDER_NOT_LIVE', OrderNotFound],
      [429, 42900, 'rate_limited', RateLimitExceeded],
      [401, 40100, 'invalid_client', AuthenticationError],
      [403, 40300, 'insufficient_scope', PermissionDenied],
      [503, 1504, 'VENUE_AT_CAPACITY', ExchangeNotAvailable],
      [503, 1505, 'RESERVE_EXHAUSTED', ExchangeNotAvailable],
      [400, 1408, 'MARK_PRICE_UNAVAILABLE', ExchangeNotAvailable],
      [202, 1502, 'QUEUED', RequestTimeout],
    ];
    for (const [http, code, error, cls] of cases) {
      next = [http, `{"code":${code},"error":"${error}","message":"${error}: detail","timestamp":"t","request_id":"r"}`];
      const e = await ex.createOrder('SOL/USDC:USDC', 'limit', 'buy', 1, 140).then(() => undefined, (err: unknown) => err);
      expect(e, error).toBeInstanceOf(cls);
      expect(String((e as Error).message)).toContain(error);
    }
  });
});

describe('tenebrapro acks (order.place / modify / cancel over the encrypted session)', () => {
  it('passes code 0 and raises the REST table\'s class for a refusal', () => {
    const ex = new tenebrapro({});
    const ack = { code: 0, message: '', order_id: '9', client_order_id: 'c', status: 'NEW' as const, reject_reason: '' };
    expect(ex.checkAck(ack)).toBe(ack);
    expect(() => ex.checkAck({ ...ack, code: 1410, message: 'MARGIN_INSUFFICIENT: needs 10', reject_reason: 'MARGIN_INSUFFICIENT' })).toThrow(InsufficientFunds);
    expect(() => ex.checkAck({ ...ack, code: 1402, message: 'INVALID_PRICE: outside', reject_reason: '' })).toThrow(InvalidOrder);
    expect(() => ex.checkAck({ ...ack, code: 1502, message: 'QUEUED', reject_reason: '' })).toThrow(RequestTimeout);
    expect(ex.ackFields({ ...ack, client_order_id: '' })).toEqual({ order_id: '9', client_order_id: undefined, status: 'NEW' });
  });
});

describe('UpdateQueue (watch* delivery)', () => {
  it('hands buffered matches at once, waits for the next match otherwise, keeps the rest', async () => {
    const q = new UpdateQueue<{ s: string; n: number }>(3);
    q.push({ s: 'A', n: 1 });
    q.push({ s: 'B', n: 2 });
    expect(await q.next((x) => x.s === 'A')).toEqual([{ s: 'A', n: 1 }]);
    const waiting = q.next((x) => x.s === 'A');
    q.push({ s: 'B', n: 3 });
    q.push({ s: 'A', n: 4 });
    expect(await waiting).toEqual([{ s: 'A', n: 4 }]);
    expect(await q.next(() => true)).toEqual([{ s: 'B', n: 2 }, { s: 'B', n: 3 }]);
    for (let n = 5; n < 10; n++) q.push({ s: 'C', n });
    expect((await q.next(() => true)).map((x) => x.n)).toEqual([7, 8, 9]); // bounded: the oldest went
    const pending = q.next(() => true);
    q.fail(new Error('closed'));
    await expect(pending).rejects.toThrow('closed');
  });
});
