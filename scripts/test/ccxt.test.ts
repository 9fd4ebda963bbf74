// Issue 26 (CCXT) on real processes: Tenebra driven through CCXT the way a CCXT user drives any
// venue — markets, time, balance, fees, leverage, orders placed / watched / amended / cancelled,
// a fill between two accounts, positions and trades — and every unified structure checked against
// CCXT's own expectations (packages/ccxt/test/ccxt-structures.ts), errors against CCXT's classes.
// One cluster for the whole file.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import {
  AuthenticationError, BadSymbol, InsufficientFunds, InvalidOrder, NotSupported, OrderNotFound, RateLimitExceeded,
  type Order, type Position, type Str,
} from 'ccxt';
import { tenebra, tenebrapro } from '@tenebra/ccxt';
import { startTestCluster, createAccount, type Credentials, type TestCluster } from './harness';
import { ccxtExample } from '../examples/ccxt';
import {
  checkBalance, checkLeverage, checkMarginModification, checkMarket, checkOrder, checkPosition, checkTrade, checkTradingFee,
} from '../../packages/ccxt/test/ccxt-structures';

const SOL = 'SOL/USDC:USDC'; // reference price 150.00 in the gateway's simulated oracle; limits within its band of the mark ± 2.5% (about 146.2-153.8)

type Pro = InstanceType<typeof tenebrapro>;

describe('Tenebra through CCXT (real processes)', () => {
  let tc: TestCluster;
  let host: string;
  let maker: Pro;
  let taker: Pro;
  let makerCreds: Credentials;
  let takerCreds: Credentials;
  let coreCreds: Credentials;
  const opened: Pro[] = [];
  const exchange = (c: Credentials, extra: Record<string, unknown> = {}): Pro => {
    // rateLimit 20 ms: the accounts are Apex (200 requests/s); Core's default is 500 ms
    const ex = new tenebrapro({ apiKey: c.api_key, secret: c.api_secret, password: c.passphrase, hostname: host, rateLimit: 20, ...extra });
    opened.push(ex);
    return ex;
  };
  /** Watches until an order event matches (CCXT users loop over watch* the same way). */
  const watchUntil = async (ex: Pro, pred: (o: Order) => boolean): Promise<Order> => {
    for (;;) {
      const hit = (await ex.watchOrders(SOL)).find(pred);
      if (hit) return hit;
    }
  };
  const pollOrder = async (ex: Pro, id: Str, pred: (o: Order) => boolean): Promise<Order> => {
    for (let i = 0; ; i++) {
      const o = await ex.fetchOrder(id, SOL);
      if (pred(o) || i > 300) return o;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    tc = await startTestCluster();
    host = new URL(tc.baseUrl).host;
    // a Core account with 20 USDC for the error cases
    [makerCreds, takerCreds, coreCreds] = await Promise.all([createAccount(tc.dataDir, 'Apex', '1000000'), createAccount(tc.dataDir, 'Apex', '1000000'), createAccount(tc.dataDir, 'Core', '20')]);
    maker = exchange(makerCreds);
    taker = exchange(takerCreds);
  }, 420_000);
  afterAll(async () => {
    for (const ex of opened) await ex.close().catch(() => undefined);
    await tc?.cleanup();
  });

  it('loads markets, time, balance and fees as CCXT structures', async () => {
    const markets = await maker.loadMarkets();
    expect(Object.keys(markets).length).toBeGreaterThanOrEqual(20);
    for (const m of Object.values(markets)) checkMarket(maker, 'fetchMarkets', m as unknown as Record<string, unknown>);
    expect(markets[SOL]).toMatchObject({ id: 'SOL-USDC-PERP', type: 'swap', linear: true, settle: 'USDC' });

    const time = await maker.fetchTime();
    expect(Math.abs((time ?? 0) - Date.now())).toBeLessThan(60_000);

    const balance = await maker.fetchBalance();
    checkBalance(maker, 'fetchBalance', balance as unknown as Record<string, unknown>);
    expect(balance['USDC']).toMatchObject({ total: 1_000_000, free: 1_000_000, used: 0 });

    const fees = await maker.fetchTradingFees();
    for (const [symbol, fee] of Object.entries(fees)) checkTradingFee('fetchTradingFees', fee as unknown as Record<string, unknown>, symbol);
    expect(fees[SOL]).toMatchObject({ maker: -0.0001, taker: 0.0002, percentage: true, tierBased: true }); // Apex: -0.01% / 0.02%
  }, 180_000);

  it('the example script places, watches, amends and cancels an order', async () => {
    const lines: string[] = [];
    const r = await ccxtExample(maker, (...a) => lines.push(a.join(' ')));
    checkOrder('createOrder', r.placed as unknown as Record<string, unknown>, SOL, Date.now(), ['id', 'symbol', 'type', 'side', 'amount', 'status']);
    expect(r.placed.status).toBe('open');
    for (const o of r.watched) checkOrder('watchOrders', o as unknown as Record<string, unknown>, SOL, Date.now());
    expect(r.watched.map((o) => o.id)).toContain(r.placed.id);
    checkOrder('editOrder', r.amended as unknown as Record<string, unknown>, SOL, Date.now());
    expect(r.amended).toMatchObject({ id: r.placed.id, price: 148.5, amount: 0.8, status: 'open' });
    checkOrder('cancelOrder', r.cancelled as unknown as Record<string, unknown>, SOL, Date.now());
    expect(r.cancelled).toMatchObject({ id: r.placed.id, status: 'canceled', clientOrderId: r.placed.clientOrderId });
    // the watch saw the cancel too
    const seen = await watchUntil(maker, (o) => o.id === r.placed.id && o.status === 'canceled');
    expect(seen.info).toMatchObject({ message_type: 'cancelled', cancel_reason: 'USER_REQUESTED' });
    expect(lines.join('\n')).toMatch(/cancelled \d+ canceled/);
  }, 180_000);

  it('fills a resting order against a market order: orders, positions and trades on both sides', async () => {
    const positionWatch = taker.watchPositions([SOL]);
    const ask = await maker.createOrder(SOL, 'limit', 'sell', 2, 150.1, { clientOrderId: 'ccxt-ask-1' });
    const open = await watchUntil(maker, (o) => o.id === ask.id);
    expect(open).toMatchObject({ status: 'open', side: 'sell', price: 150.1, amount: 2, timeInForce: 'GTC', clientOrderId: 'ccxt-ask-1' });

    // amend: more size at a new price (loses priority, keeps the id)
    const amended = await maker.editOrder(ask.id!, SOL, 'limit', 'sell', 3, 150.2);
    expect(amended).toMatchObject({ id: ask.id, amount: 3, price: 150.2, status: 'open' });

    const buy = await taker.createOrder(SOL, 'market', 'buy', 1);
    expect(buy).toMatchObject({ type: 'market', side: 'buy', timeInForce: 'IOC' });
    const done = await pollOrder(taker, buy.id, (o) => o.status !== 'open');
    checkOrder('fetchOrder', done as unknown as Record<string, unknown>, SOL, Date.now());
    expect(done).toMatchObject({ status: 'closed', filled: 1, remaining: 0, average: 150.2, cost: 150.2 });

    const partial = await watchUntil(maker, (o) => o.id === ask.id && o.filled === 1);
    expect(partial).toMatchObject({ status: 'open', filled: 1, remaining: 2, average: 150.2 });
    const byClientId = await maker.fetchOrder(undefined, SOL, { clientOrderId: 'ccxt-ask-1' });
    expect(byClientId).toMatchObject({ id: ask.id, filled: 1 });

    const watchedPositions: Position[] = await positionWatch;
    for (const p of watchedPositions) checkPosition('watchPositions', p as unknown as Record<string, unknown>, SOL, Date.now());
    expect(watchedPositions.at(-1)).toMatchObject({ symbol: SOL, side: 'long', contracts: 1, marginMode: 'isolated' });

    const [long] = await taker.fetchPositions([SOL]);
    const [short] = await maker.fetchPositions([SOL]);
    for (const p of [long!, short!]) checkPosition('fetchPositions', p as unknown as Record<string, unknown>, SOL, Date.now());
    expect(long).toMatchObject({ side: 'long', contracts: 1, entryPrice: 150.2 });
    expect(short).toMatchObject({ side: 'short', contracts: 1, entryPrice: 150.2 });

    const balance = await taker.fetchBalance();
    checkBalance(taker, 'fetchBalance', balance as unknown as Record<string, unknown>);
    expect(balance['USDC']!.used).toBeGreaterThan(0); // the position's isolated margin

    // fills (GET /fills): one taker trade, one maker trade
    const takerTrades = await taker.fetchMyTrades(SOL);
    const makerTrades = await maker.fetchMyTrades(SOL);
    for (const t of [...takerTrades, ...makerTrades]) checkTrade(taker, 'fetchMyTrades', t as unknown as Record<string, unknown>, SOL, Date.now());
    expect(takerTrades).toHaveLength(1);
    expect(takerTrades[0]).toMatchObject({ order: buy.id, side: 'buy', takerOrMaker: 'taker', price: 150.2, amount: 1 });
    expect(takerTrades[0]!.fee).toMatchObject({ currency: 'USDC' });
    expect(makerTrades[0]).toMatchObject({ order: ask.id, side: 'sell', takerOrMaker: 'maker', price: 150.2, amount: 1 });

    // open and closed orders (GET /orders?status=)
    const openOrders = await maker.fetchOpenOrders(SOL);
    for (const o of openOrders) checkOrder('fetchOpenOrders', o as unknown as Record<string, unknown>, SOL, Date.now());
    expect(openOrders.map((o) => o.id)).toEqual([ask.id]);
    const closed = await taker.fetchClosedOrders(SOL, undefined, 10);
    for (const o of closed) checkOrder('fetchClosedOrders', o as unknown as Record<string, unknown>, SOL, Date.now());
    expect(closed.map((o) => o.id)).toContain(buy.id);

    // cancel the rest of the ask, then cancel-all of two more
    const cancelled = await maker.cancelOrder(ask.id, SOL);
    expect(cancelled).toMatchObject({ status: 'canceled', filled: 1 });
    await maker.createOrder(SOL, 'limit', 'buy', 1, 148);
    await maker.createOrder(SOL, 'limit', 'buy', 1, 148.5);
    const all = await maker.cancelAllOrders(SOL);
    expect(all.map((o) => o.status)).toEqual(['canceled', 'canceled']);
    expect(await maker.fetchOpenOrders(SOL)).toEqual([]);
  }, 240_000);

  it('reads and sets leverage, adds and removes isolated margin', async () => {
    await taker.setLeverage(5, SOL);
    const lev = await taker.fetchLeverage(SOL);
    checkLeverage('fetchLeverage', lev as unknown as Record<string, unknown>, SOL);
    expect(lev).toMatchObject({ marginMode: 'isolated', longLeverage: 5, shortLeverage: 5 });
    const max = taker.market(SOL).limits.leverage!.max!;
    await expect(taker.setLeverage(max + 1, SOL)).rejects.toThrow(InvalidOrder); // LEVERAGE_EXCEEDED

    // the long 1 SOL of the fill above: at 5x its margin is at least 150.2 / 5
    const [before] = await taker.fetchPositions([SOL]);
    expect(before).toMatchObject({ leverage: 5 });
    const added = await taker.addMargin(SOL, 10);
    checkMarginModification(taker, 'addMargin', added as unknown as Record<string, unknown>);
    expect(added).toMatchObject({ type: 'add', amount: 10, code: 'USDC', symbol: SOL, status: 'ok' });
    expect(added.total).toBeCloseTo(before!.collateral! + 10, 6);
    const reduced = await taker.reduceMargin(SOL, 4);
    checkMarginModification(taker, 'reduceMargin', reduced as unknown as Record<string, unknown>);
    expect(reduced.total).toBeCloseTo(added.total! - 4, 6);
    await expect(taker.reduceMargin(SOL, 1_000_000)).rejects.toThrow(InsufficientFunds); // MARGIN_INSUFFICIENT
  }, 180_000);

  it('trades over the encrypted WebSocket: createOrderWs, editOrderWs, cancelOrderWs', async () => {
    const placed = await maker.createOrderWs(SOL, 'limit', 'buy', 1, 148, { clientOrderId: 'ccxt-ws-1' });
    checkOrder('createOrderWs', placed as unknown as Record<string, unknown>, SOL, Date.now(), ['id', 'symbol', 'type', 'side', 'amount', 'status']);
    expect(placed).toMatchObject({ clientOrderId: 'ccxt-ws-1', status: 'open', price: 148, amount: 1 });
    await watchUntil(maker, (o) => o.id === placed.id && o.status === 'open');
    const edited = await maker.editOrderWs(placed.id!, SOL, 'limit', 'buy', 1, 148.5);
    expect(edited).toMatchObject({ id: placed.id, price: 148.5 });
    const modified = await watchUntil(maker, (o) => o.id === placed.id && o.price === 148.5);
    expect(modified.info).toMatchObject({ message_type: 'modified' });
    await maker.cancelOrderWs(placed.id!, SOL);
    const gone = await watchUntil(maker, (o) => o.id === placed.id && o.status === 'canceled');
    expect(gone.info).toMatchObject({ cancel_reason: 'USER_REQUESTED' });
    await expect(maker.createOrderWs(SOL, 'limit', 'buy', 1, 300)).rejects.toThrow(InvalidOrder); // INVALID_PRICE
  }, 180_000);

  it('maps the venue errors to CCXT error classes', async () => {
    await expect(maker.createOrder(SOL, 'limit', 'buy', 1, 300)).rejects.toThrow(InvalidOrder); // INVALID_PRICE: outside the band
    await expect(maker.fetchOrder('123456789012', SOL)).rejects.toThrow(OrderNotFound);
    await expect(maker.createOrder(SOL, 'limit', 'buy', 1, 148, { reduceOnly: true })).rejects.toThrow(NotSupported);
    await expect(maker.createOrder(SOL, 'limit', 'buy', 1, 148, { postOnly: true })).rejects.toThrow(NotSupported);
    await maker.authenticate();
    await expect(maker.privatePostOrders({ symbol: 'NOPE-USDC-PERP', side: 'buy', type: 'limit', quantity: '1', price: '1', time_in_force: 'GTC' })).rejects.toThrow(BadSymbol);

    const wrong = new tenebra({ apiKey: makerCreds.api_key, secret: makerCreds.api_secret, password: 'not-the-passphrase', hostname: host });
    await expect(wrong.fetchBalance()).rejects.toThrow(AuthenticationError);

    // the Core account with 20 USDC: 3 SOL at 149 needs more margin than it has
    const small = exchange(coreCreds, { enableRateLimit: false });
    await small.loadMarkets();
    await expect(small.createOrder(SOL, 'limit', 'buy', 3, 149)).rejects.toThrow(InsufficientFunds);
    // Core's REST budget is 2/s with a burst of 5: ten at once cannot all pass
    const burst = await Promise.allSettled(Array.from({ length: 10 }, () => small.fetchBalance()));
    const refused = burst.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as unknown);
    expect(refused.length).toBeGreaterThan(0);
    for (const e of refused) expect(e).toBeInstanceOf(RateLimitExceeded);
  }, 180_000);
});
