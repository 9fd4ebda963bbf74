// Tenebra for CCXT: a REST exchange class written the way CCXT's own exchange files are (describe()
// with urls, api, has, fees, exceptions; sign(); parse*(); handleErrors()). It speaks only the
// gateway's public interface (../shared/spec/interface-spec.md, docs/api.md, docs/orders.md).
import {
  Precise,
  functions,
  AuthenticationError,
  BadRequest,
  BadSymbol,
  DuplicateOrderId,
  ExchangeError,
  ExchangeNotAvailable,
  InsufficientFunds,
  InvalidOrder,
  MarketClosed,
  NotSupported,
  OperationRejected,
  OrderNotFound,
  PermissionDenied,
  RateLimitExceeded,
  RequestTimeout,
  ArgumentsRequired,
} from 'ccxt';
import type { Balances, Dict, Int, Leverage, MarginModification, Market, Num, Order, OrderSide, OrderType, Position, Str, Strings, Trade, TradingFeeInterface, TradingFees } from 'ccxt';
import TenebraApi from './abstract';

const { TICK_SIZE } = functions;

/** Renew the bearer token when less than this is left of its 900 s (the gateway's auth_expired lead is 60 s). */
const TOKEN_MIN_VALIDITY_MS = 60_000;

export default class tenebra extends TenebraApi {
  override describe(): Dict {
    return this.deepExtend(super.describe(), {
      'id': 'tenebra',
      'name': 'Tenebra',
      'countries': [],
      'version': 'v1',
      // Core's REST budget is 2 requests/s (burst 5): 500 ms keeps a Core account under it; higher
      // tiers may pass a smaller rateLimit to the constructor (docs/api.md, Rate limits).
      'rateLimit': 500,
      'certified': false,
      'pro': true,
      'dex': false,
      'hostname': '127.0.0.1:8080',
      'has': {
        'CORS': undefined,
        'spot': false,
        'margin': false,
        'swap': true,
        'future': false,
        'option': false,
        'addMargin': true,
        'cancelAllOrders': true,
        'cancelOrder': true,
        'cancelOrders': false,
        'createMarketOrder': true,
        'createLimitOrder': true,
        'createOrder': true,
        'createPostOnlyOrder': false,
        'createReduceOnlyOrder': false,
        'createStopOrder': false,
        'createTriggerOrder': false,
        'editOrder': true,
        'fetchBalance': true,
        'fetchClosedOrders': true,
        'fetchCurrencies': false,
        'fetchLeverage': true,
        'fetchMarginMode': false,
        'fetchMarkets': true,
        'fetchMyTrades': true,
        'fetchOHLCV': false,
        'fetchOpenOrders': true,
        'fetchOrder': true,
        'fetchOrderBook': false, // a dark pool: the book is secret-shared, never shown
        'fetchOrders': true,
        'fetchPositions': true,
        'fetchTicker': false,
        'fetchTime': true,
        'fetchTrades': false,
        'fetchTradingFee': true,
        'fetchTradingFees': true,
        'reduceMargin': true,
        'sandbox': true,
        'setLeverage': true,
        'setMarginMode': false,
        'withdraw': false,
      },
      'timeframes': {},
      'urls': {
        'logo': undefined,
        'api': {
          'public': 'http://{hostname}/api/v1',
          'private': 'http://{hostname}/api/v1',
        },
        // `npm start -- --env test` (setSandboxMode(true))
        'test': {
          'public': 'http://127.0.0.1:9080/api/v1',
          'private': 'http://127.0.0.1:9080/api/v1',
        },
        'www': 'http://127.0.0.1:8080',
        'doc': ['docs/api.md', 'docs/orders.md', 'docs/websocket.md'],
        'fees': 'docs/api.md#fee-tiers-get-accountvip-read-get-viptiers-no-token',
      },
      'api': {
        'public': {
          'get': {
            'instruments': 1,
            'vip/tiers': 1,
          },
          'post': {
            'auth/token': 1,
            'auth/token/revoke': 1,
          },
        },
        'private': {
          'get': {
            'time': 1,
            'account': 1,
            'account/vip': 1,
            'positions': 1,
            'positions/{symbol}/leverage': 1,
            'orders': 1,
            'orders/{orderId}': 1,
            'fills': 1,
          },
          'post': {
            'orders': 1,
            'positions/{symbol}/leverage': 1,
            'positions/{symbol}/margin': 1,
          },
          'patch': {
            'orders/{orderId}': 1,
          },
          'delete': {
            'orders': 1,
            'orders/{orderId}': 1,
          },
        },
      },
      // the spec's credential model: api_key, api_secret and the passphrase, exchanged for a bearer token
      'requiredCredentials': {
        'apiKey': true,
        'secret': true,
        'password': true,
      },
      'fees': {
        'trading': {
          'tierBased': true,
          'percentage': true,
          // Core (spec: fee tier schedule); fetchTradingFees reads the account's own tier
          'maker': this.parseNumber('0.0002'),
          'taker': this.parseNumber('0.0005'),
        },
      },
      'precisionMode': TICK_SIZE,
      'exceptions': {
        // the envelope's `error`: the spec's names (gateway/src/errors.ts)
        'exact': {
          'invalid_request': BadRequest,
          'unsupported_grant_type': BadRequest,
          'invalid_scope': PermissionDenied,
          'insufficient_collateral': InsufficientFunds,
          'invalid_client': AuthenticationError,
          'token_expired': AuthenticationError,
          'token_revoked': AuthenticationError,
          'invalid_token': AuthenticationError,
          'insufficient_scope': PermissionDenied,
          'forbidden': PermissionDenied,
          'tier_not_eligible': PermissionDenied,
          'not_found': BadRequest,
          'conflict': BadRequest,
          'payload_too_large': BadRequest,
          'unsupported_media_type': BadRequest,
          'rate_limited': RateLimitExceeded,
          'internal_error': ExchangeError,
          'INVALID_ORDER': InvalidOrder,
          'UNKNOWN_SYMBOL': BadSymbol,
          'INVALID_PRICE': InvalidOrder,
          'INVALID_QUANTITY': InvalidOrder,
          'MIN_NOTIONAL': InvalidOrder,
          'UNSUPPORTED_ORDER': InvalidOrder,
          'LEVERAGE_EXCEEDED': InvalidOrder,
          'INSTRUMENT_HALTED': MarketClosed,
          // the oracle is stale: pre-trade checks fail closed until a feed is fresh again
          'MARK_PRICE_UNAVAILABLE': ExchangeNotAvailable,
          'POSITION_LIMIT_EXCEEDED': InvalidOrder,
          'MARGIN_INSUFFICIENT': InsufficientFunds,
          'ACCOUNT_IN_LIQUIDATION': OperationRejected,
          'OPEN_ORDER_LIMIT': InvalidOrder,
          'BOOK_DEPTH_EXCEEDED': InvalidOrder,
          'DUPLICATE_CLIENT_ORDER_ID': DuplicateOrderId,
          'ORDER_NOT_FOUND': OrderNotFound,
          // filled or cancelled already: CCXT's convention for a cancel of an order that is gone
          'ORDER_NOT_LIVE': OrderNotFound,
          'ORDER_BUSY': OperationRejected,
          'MODIFY_REJECTED': InvalidOrder,
          'SEQUENCER_REJECTED': ExchangeNotAvailable,
          // 202 / 1502: the op is journaled and will execute; never resubmit (RequestTimeout's meaning
          // in CCXT: look the order up instead)
          'QUEUED': RequestTimeout,
          'SEQUENCER_UNAVAILABLE': ExchangeNotAvailable,
          'VENUE_AT_CAPACITY': ExchangeNotAvailable,
          'RESERVE_EXHAUSTED': ExchangeNotAvailable,
        },
        'broad': {},
      },
      'options': {
        'accessToken': undefined,
        'accessTokenExpiresAt': 0,
      },
    });
  }

  // ------------------------------------------------------------------------------------------
  // Authentication

  /**
   * The bearer token (POST /auth/token, client_credentials grant with the passphrase), cached in
   * options until less than minValidityMs of it is left. Every private method calls it first.
   */
  async authenticate(minValidityMs: number = TOKEN_MIN_VALIDITY_MS, forceRefresh = false): Promise<string> {
    const cached = this.safeString(this.options, 'accessToken');
    const expiresAt = this.safeInteger(this.options, 'accessTokenExpiresAt', 0) ?? 0;
    if (!forceRefresh && cached !== undefined && this.milliseconds() + minValidityMs < expiresAt) return cached;
    this.checkRequiredCredentials();
    const response = await this.publicPostAuthToken({
      'grant_type': 'client_credentials',
      'client_id': this.apiKey,
      'client_secret': this.secret,
      'passphrase': this.password,
    });
    //     { "access_token": "eyJ...", "token_type": "Bearer", "expires_in": 900, "scope": "trade read" }
    const token = this.safeString(response, 'access_token');
    if (token === undefined) throw new AuthenticationError(this.id + ' POST /auth/token answered no access_token');
    this.options['accessToken'] = token;
    this.options['accessTokenExpiresAt'] = this.milliseconds() + (this.safeInteger(response, 'expires_in', 900) ?? 900) * 1000;
    return token;
  }

  // ------------------------------------------------------------------------------------------
  // Public data

  override async fetchMarkets(params: Dict = {}): Promise<Market[]> {
    const response = await this.publicGetInstruments(params);
    //     { "code": 0, "data": { "version": 7, "updated_at": "...", "instruments": [ { "symbol": "BTC-USDC-PERP", ... } ] } }
    const data = this.safeDict(response, 'data', {});
    const instruments = this.safeList(data, 'instruments', []) ?? [];
    return instruments.map((i) => this.parseMarket(i as Dict));
  }

  override parseMarket(market: Dict): Market {
    //     { "symbol": "ETH-USDC-PERP", "symbol_id": 10, "base_asset": "ETH", "quote_asset": "USDC", "type": "perp",
    //       "status": "trading", "tick_size": 0.01, "step_size": 0.001, "min_qty": 0.001, "max_qty": 1000,
    //       "min_notional": 25, "contract_size": 1, "margin_asset": "USDC", "max_leverage": 20, "maker_fee_bps": 2,
    //       "taker_fee_bps": 5, "initial_margin_ratio": 0.05, "maintenance_margin_ratio": 0.025, "listed_at": "...", "expires_at": null }
    const id = this.safeString(market, 'symbol');
    const baseId = this.safeString(market, 'base_asset');
    const quoteId = this.safeString(market, 'quote_asset');
    const settleId = this.safeString(market, 'margin_asset');
    const base = this.safeCurrencyCode(baseId);
    const quote = this.safeCurrencyCode(quoteId);
    const settle = this.safeCurrencyCode(settleId);
    const bps = (key: string): Num => {
      const v = this.safeString(market, key);
      return v === undefined ? undefined : this.parseNumber(Precise.stringDiv(v, '10000'));
    };
    return this.safeMarketStructure({
      'id': id,
      'symbol': base + '/' + quote + ':' + settle,
      'base': base,
      'quote': quote,
      'settle': settle,
      'baseId': baseId,
      'quoteId': quoteId,
      'settleId': settleId,
      'type': 'swap',
      'spot': false,
      'margin': false,
      'swap': true,
      'future': false,
      'option': false,
      'active': this.safeString(market, 'status') === 'trading',
      'contract': true,
      'linear': true,
      'inverse': false,
      'taker': bps('taker_fee_bps'),
      'maker': bps('maker_fee_bps'),
      'contractSize': this.safeNumber(market, 'contract_size'),
      'expiry': undefined,
      'expiryDatetime': undefined,
      'strike': undefined,
      'optionType': undefined,
      'precision': {
        'amount': this.safeNumber(market, 'step_size'),
        'price': this.safeNumber(market, 'tick_size'),
      },
      'limits': {
        'leverage': { 'min': this.parseNumber('1'), 'max': this.safeNumber(market, 'max_leverage') },
        'amount': { 'min': this.safeNumber(market, 'min_qty'), 'max': this.safeNumber(market, 'max_qty') },
        'price': { 'min': undefined, 'max': undefined },
        'cost': { 'min': this.safeNumber(market, 'min_notional'), 'max': undefined },
      },
      'marginModes': { 'isolated': true, 'cross': false },
      'created': this.parse8601(this.safeString(market, 'listed_at')),
      'info': market,
    });
  }

  // ------------------------------------------------------------------------------------------
  // Account

  override async fetchTime(params: Dict = {}): Promise<Int> {
    await this.authenticate(); // GET /time needs a token (spec: bearer by the general rule)
    const response = await this.privateGetTime(params);
    //     { "code": 0, "data": { "server_time": "2026-11-27T22:40:00.123Z", "server_time_ns": 1795... } }
    const data = this.safeDict(response, 'data', {});
    return this.nsToMs(this.safeString(data, 'server_time_ns')) ?? this.parse8601(this.safeString(data, 'server_time'));
  }

  override async fetchBalance(params: Dict = {}): Promise<Balances> {
    await this.authenticate();
    const response = await this.privateGetAccount(params);
    return this.parseBalance(this.safeDict(response, 'data', {}));
  }

  override parseBalance(response: Dict): Balances {
    //     { "currency": "USDC", "balance": 999000, "reserved_margin": 310.5, "free_collateral": 998689.5,
    //       "position_margin": 1000, "unrealized_pnl": -2.1, "equity": 999997.9, ... }
    // Isolated margin: free is what new orders can use; used is what live orders reserve plus the
    // positions' margins; total = free + used = balance + position margin (unrealized PnL is not
    // collateral until realized, and is reported per position).
    const account = this.account();
    const free = this.safeString(response, 'free_collateral');
    const reserved = this.safeString(response, 'reserved_margin', '0') ?? '0';
    const positionMargin = this.safeString(response, 'position_margin', '0') ?? '0';
    account['free'] = free;
    account['used'] = Precise.stringAdd(reserved, positionMargin);
    const code = this.safeCurrencyCode(this.safeString(response, 'currency', 'USDC')) ?? 'USDC';
    const result: Dict = { 'info': response, 'timestamp': undefined, 'datetime': undefined };
    result[code] = account;
    return this.safeBalance(result);
  }

  override async fetchTradingFees(params: Dict = {}): Promise<TradingFees> {
    await this.loadMarkets();
    await this.authenticate();
    const response = await this.privateGetAccountVip(params);
    //     { "code": 0, "data": { "tier": "Core", "maker_fee_bps": 2, "taker_fee_bps": 5, "volume_30d": 0, ... } }
    // The account's tier governs execution on every instrument (spec: fee authority).
    const data = this.safeDict(response, 'data', {});
    const result: TradingFees = {};
    for (const symbol of this.symbols) result[symbol] = this.parseTradingFee(data, this.market(symbol));
    return result;
  }

  override async fetchTradingFee(symbol: string, params: Dict = {}): Promise<TradingFeeInterface> {
    const fees = await this.fetchTradingFees(params);
    const market = this.market(symbol);
    return fees[market['symbol']] as TradingFeeInterface;
  }

  parseTradingFee(fee: Dict, market: Market = undefined): TradingFeeInterface {
    const bps = (key: string): Num => {
      const v = this.safeString(fee, key);
      return v === undefined ? undefined : this.parseNumber(Precise.stringDiv(v, '10000'));
    };
    return {
      'info': fee,
      'symbol': this.safeSymbol(undefined, market),
      'maker': bps('maker_fee_bps'),
      'taker': bps('taker_fee_bps'),
      'percentage': true,
      'tierBased': true,
    };
  }

  // ------------------------------------------------------------------------------------------
  // Orders

  /**
   * createOrder: type `limit` or `market` (params.type `peg` with params.peg_reference for a peg);
   * params.timeInForce GTC (limit default) / IOC (market default) / FOK / GTD (needs
   * params.expiryTime in ms, sent as the venue's GTT expiry_time); params.clientOrderId; venue
   * extras pass through (`aon`, `min_fill_size`). The venue has no post-only or reduce-only orders:
   * asking for one is NotSupported, never silently dropped.
   */
  override async createOrder(symbol: string, type: OrderType, side: OrderSide, amount: number, price: Num = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const request = this.createOrderRequest(symbol, type, side, amount, price, params);
    await this.authenticate();
    const response = await this.privatePostOrders(request);
    //     { "code": 0, "data": { "order_id": "1234", "client_order_id": "my-1", "status": "NEW" } }
    // (a repeated client_order_id answers the original order's whole object instead)
    const data = this.safeDict(response, 'data', {}) ?? {};
    return this.parseOrder(this.extend(request, data), market);
  }

  createOrderRequest(symbol: string, type: OrderType, side: OrderSide, amount: number, price: Num = undefined, params: Dict = {}): Dict {
    const market = this.market(symbol);
    const venueType = this.safeStringLower(params, 'type', type) ?? type;
    const isMarket = venueType === 'market';
    const [postOnly, rest1] = this.handlePostOnly(isMarket, this.safeStringUpper(params, 'timeInForce') === 'PO', params) as [boolean, Dict];
    if (postOnly) throw new NotSupported(this.id + ' createOrder() does not support post-only orders: the venue has none');
    if (this.safeBool2(rest1, 'reduceOnly', 'reduce_only', false)) {
      throw new NotSupported(this.id + ' createOrder() does not support reduce-only orders: the venue has none');
    }
    let timeInForce = this.safeStringUpper2(rest1, 'timeInForce', 'time_in_force', isMarket ? 'IOC' : 'GTC') ?? 'GTC';
    const request: Dict = {
      'symbol': market['id'],
      'side': side,
      'type': venueType,
      'quantity': this.amountToPrecision(symbol, amount),
    };
    if (timeInForce === 'GTD' || timeInForce === 'GTT') {
      timeInForce = 'GTT';
      const expiryMs = this.safeInteger(rest1, 'expiryTime');
      const expiryNs = this.safeString(rest1, 'expiry_time');
      if (expiryMs === undefined && expiryNs === undefined) {
        throw new ArgumentsRequired(this.id + ' createOrder() needs params.expiryTime (ms) for a GTD order');
      }
      request['expiry_time'] = expiryNs ?? Precise.stringMul(String(expiryMs), '1000000');
    }
    request['time_in_force'] = timeInForce;
    if (venueType === 'peg') {
      // a peg's price is its reference (docs/orders.md): none is sent
    } else if (price !== undefined) {
      request['price'] = this.priceToPrecision(symbol, price); // for a market order: the price cap
    } else if (!isMarket) {
      throw new ArgumentsRequired(this.id + ' createOrder() needs a price for a limit order');
    }
    const clientOrderId = this.safeString2(rest1, 'clientOrderId', 'client_order_id');
    if (clientOrderId !== undefined) request['client_order_id'] = clientOrderId;
    const rest = this.omit(rest1, ['type', 'timeInForce', 'time_in_force', 'clientOrderId', 'client_order_id', 'reduceOnly', 'reduce_only', 'expiryTime', 'expiry_time']);
    return this.extend(request, rest);
  }

  /** editOrder: PATCH /orders/{id} with the new total amount and/or price (docs/orders.md, modify). */
  override async editOrder(id: string, symbol: string, type: OrderType, side: OrderSide, amount: Num = undefined, price: Num = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const request: Dict = { 'orderId': id };
    if (amount !== undefined) request['quantity'] = this.amountToPrecision(symbol, amount);
    if (price !== undefined) request['price'] = this.priceToPrecision(symbol, price);
    await this.authenticate();
    const response = await this.privatePatchOrdersOrderId(this.extend(request, params));
    return this.parseOrder(this.safeDict(response, 'data', {}) ?? {}, market);
  }

  /** fetchOrder: by venue id, or by params.clientOrderId (then id may be undefined). */
  override async fetchOrder(id: Str, symbol: Str = undefined, params: Dict = {}): Promise<Order> {
    return this.orderByIdOrClientId('fetchOrder', id, symbol, params, (r) => this.privateGetOrders(r), (r) => this.privateGetOrdersOrderId(r));
  }

  /** One order addressed by params.clientOrderId (then id may be undefined) or else by its venue id. */
  private async orderByIdOrClientId(method: string, id: Str, symbol: Str, params: Dict, byClient: (r: Dict) => Promise<Dict>, byId: (r: Dict) => Promise<Dict>): Promise<Order> {
    await this.loadMarkets();
    const market = symbol === undefined ? undefined : this.market(symbol);
    const clientOrderId = this.safeString2(params, 'clientOrderId', 'client_order_id');
    await this.authenticate();
    let response: Dict;
    if (clientOrderId !== undefined) {
      response = await byClient(this.extend({ 'client_order_id': clientOrderId }, this.omit(params, ['clientOrderId', 'client_order_id'])));
    } else {
      if (id === undefined) throw new ArgumentsRequired(this.id + ' ' + method + '() needs an id or params.clientOrderId');
      response = await byId(this.extend({ 'orderId': id }, params));
    }
    return this.parseOrder(this.safeDict(response, 'data', {}) ?? {}, market);
  }

  override async fetchOpenOrders(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Order[]> {
    return this.fetchOrdersByStatus('open', symbol, since, limit, params);
  }

  override async fetchClosedOrders(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Order[]> {
    return this.fetchOrdersByStatus('closed', symbol, since, limit, params);
  }

  /** fetchOrders: the open orders and the closed ones (since / limit apply to the closed listing), oldest first. */
  override async fetchOrders(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Order[]> {
    const open = await this.fetchOrdersByStatus('open', symbol, undefined, undefined, params);
    const closed = await this.fetchOrdersByStatus('closed', symbol, since, limit, params);
    const all = this.sortBy(this.arrayConcat(closed, open), 'timestamp') as Order[];
    return this.filterBySinceLimit(all, since, limit) as Order[];
  }

  /** GET /orders?status=open|closed[&symbol][&since_ns][&limit] (closed: newest first, limit ≤ 500). */
  async fetchOrdersByStatus(status: 'open' | 'closed', symbol: Str, since: Int, limit: Int, params: Dict): Promise<Order[]> {
    await this.loadMarkets();
    const request: Dict = { 'status': status };
    let market: Market = undefined;
    if (symbol !== undefined) {
      market = this.market(symbol);
      request['symbol'] = market['id'];
    }
    if (status === 'closed') {
      if (since !== undefined) request['since_ns'] = Precise.stringMul(String(since), '1000000');
      if (limit !== undefined) request['limit'] = Math.min(limit, 500);
    }
    await this.authenticate();
    const response = await this.privateGetOrders(this.extend(request, params));
    const orders = this.safeList(response, 'data', []) ?? [];
    return this.parseOrders(orders as Dict[], market, since, limit);
  }

  override async cancelOrder(id: Str, symbol: Str = undefined, params: Dict = {}): Promise<Order> {
    //     { "code": 0, "data": { ...order object, "status": "CANCELLED", "cancel_reason": "USER_REQUESTED" } }
    return this.orderByIdOrClientId('cancelOrder', id, symbol, params, (r) => this.privateDeleteOrders(r), (r) => this.privateDeleteOrdersOrderId(r));
  }

  /**
   * cancelAllOrders: the venue has no mass-cancel route for every tier (mass quote is Prime/Apex and
   * one symbol per batch), so the open orders are listed and cancelled one by one; an order that
   * filled or ended in between (OrderNotFound) is skipped. Returns the cancelled orders.
   */
  override async cancelAllOrders(symbol: Str = undefined, params: Dict = {}): Promise<Order[]> {
    const open = await this.fetchOpenOrders(symbol, undefined, undefined, params);
    const cancelled: Order[] = [];
    for (const order of open) {
      try {
        cancelled.push(await this.cancelOrder(order['id'], order['symbol']));
      } catch (e) {
        if (!(e instanceof OrderNotFound)) throw e;
      }
    }
    return cancelled;
  }

  override parseOrder(order: Dict, market: Market = undefined): Order {
    //     { "order_id": "1234", "client_order_id": "my-1", "symbol": "ETH-USDC-PERP", "side": "buy", "type": "limit",
    //       "time_in_force": "GTC", "price": 3000, "quantity": 0.5, "filled_quantity": 0.1, "remaining_quantity": 0.4,
    //       "average_fill_price": 2999.5, "last_fill_qty": 0.1, "last_fill_price": 2999.5, "status": "PARTIALLY_FILLED",
    //       "in_time_ns": 1795..., "out_time_ns": 1795..., "cancel_reason": null, "reject_reason": null }
    const marketId = this.safeString(order, 'symbol');
    market = this.safeMarket(marketId, market);
    const timestamp = this.nsToMs(this.safeString(order, 'in_time_ns'));
    const rawType = this.safeString(order, 'type');
    const filled = this.safeString(order, 'filled_quantity');
    return this.safeOrder({
      'info': order,
      'id': this.safeString(order, 'order_id'),
      'clientOrderId': this.safeString(order, 'client_order_id'),
      'timestamp': timestamp,
      'datetime': this.iso8601(timestamp),
      'lastTradeTimestamp': undefined,
      'lastUpdateTimestamp': this.nsToMs(this.safeString(order, 'out_time_ns')),
      'symbol': market['symbol'],
      // a peg is a limit order at its oracle reference (info.type keeps 'peg')
      'type': rawType === 'peg' ? 'limit' : rawType,
      'timeInForce': this.parseTimeInForce(this.safeString(order, 'time_in_force')),
      'postOnly': false,
      'reduceOnly': false,
      'side': this.safeString(order, 'side'),
      'price': this.safeString(order, 'price'),
      'triggerPrice': undefined,
      'amount': this.safeString(order, 'quantity'),
      'filled': filled,
      'remaining': this.safeString(order, 'remaining_quantity'),
      'average': this.safeString(order, 'average_fill_price'),
      'cost': undefined,
      'status': this.parseOrderStatus(this.safeString(order, 'status')),
      'fee': undefined,
      'trades': undefined,
    }, market);
  }

  parseOrderStatus(status: Str): Str {
    const statuses: Dict = {
      'NEW': 'open',
      'PARTIALLY_FILLED': 'open',
      'FILLED': 'closed',
      'CANCELLED': 'canceled',
      'REJECTED': 'rejected',
    };
    return this.safeString(statuses, status, status);
  }

  parseTimeInForce(timeInForce: Str): Str {
    // the spec's web interface labels GTT as GTD, CCXT's unified name
    return timeInForce === 'GTT' ? 'GTD' : timeInForce;
  }

  // ------------------------------------------------------------------------------------------
  // Trades

  /** GET /fills[?symbol][&since_ns][&limit ≤ 500], newest first. */
  override async fetchMyTrades(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Trade[]> {
    await this.loadMarkets();
    const request: Dict = {};
    let market: Market = undefined;
    if (symbol !== undefined) {
      market = this.market(symbol);
      request['symbol'] = market['id'];
    }
    if (since !== undefined) request['since_ns'] = Precise.stringMul(String(since), '1000000');
    if (limit !== undefined) request['limit'] = Math.min(limit, 500);
    await this.authenticate();
    const response = await this.privateGetFills(this.extend(request, params));
    const fills = this.safeList(response, 'data', []) ?? [];
    return this.parseTrades(fills as Dict[], market, since, limit);
  }

  override parseTrade(trade: Dict, market: Market = undefined): Trade {
    //     { "fill_id": "f-1", "order_id": "1234", "client_order_id": null, "symbol": "ETH-USDC-PERP", "side": "buy",
    //       "price": 3000, "quantity": 0.1, "fee": 0.15, "liquidity": "taker", "time_ns": 1795... }
    const marketId = this.safeString(trade, 'symbol');
    market = this.safeMarket(marketId, market);
    const timestamp = this.nsToMs(this.safeString(trade, 'time_ns'));
    return this.safeTrade({
      'info': trade,
      'id': this.safeString(trade, 'fill_id'),
      'order': this.safeString(trade, 'order_id'),
      'timestamp': timestamp,
      'datetime': this.iso8601(timestamp),
      'symbol': market['symbol'],
      'type': undefined,
      'side': this.safeString(trade, 'side'),
      'takerOrMaker': this.safeString(trade, 'liquidity'),
      'price': this.safeString(trade, 'price'),
      'amount': this.safeString(trade, 'quantity'),
      'cost': undefined,
      'fee': {
        'cost': this.safeString(trade, 'fee'),
        'currency': market['settle'] ?? 'USDC',
      },
    }, market);
  }

  // ------------------------------------------------------------------------------------------
  // Positions and leverage

  override async fetchPositions(symbols: Strings = undefined, params: Dict = {}): Promise<Position[]> {
    await this.loadMarkets();
    await this.authenticate();
    const response = await this.privateGetPositions(params);
    //     { "code": 0, "data": { "positions": [ { "position_id": "…", "symbol": "ETH-USDC-PERP", "side": "long", ... } ] } }
    const data = this.safeDict(response, 'data', {});
    const positions = this.safeList(data, 'positions', []) ?? [];
    return this.parsePositions(positions as Dict[], this.marketSymbols(symbols));
  }

  override parsePosition(position: Dict, market: Market = undefined): Position {
    //     { "position_id": "…24 hex…", "symbol": "ETH-USDC-PERP", "side": "long", "size": 0.5, "entry_price": 3000.1,
    //       "mark_price": 3001, "margin": 150.01, "leverage": 10, "unrealized_pnl": 0.45, "realized_pnl": 0,
    //       "funding_accrued": 0, "liquidation_price": 2865.3, "status": "OPEN", "updated_at": "2026-11-27T22:40:00.000Z" }
    const marketId = this.safeString(position, 'symbol');
    market = this.safeMarket(marketId, market);
    const size = Precise.stringAbs(this.safeString(position, 'size', '0') ?? '0');
    const mark = this.safeString(position, 'mark_price');
    const notional = mark === undefined ? undefined : Precise.stringMul(size, mark);
    const margin = this.safeString(position, 'margin');
    const leverage = this.safeString(position, 'leverage');
    const info = this.safeDict(market, 'info', {});
    const mmr = this.safeString(info, 'maintenance_margin_ratio');
    const maintenance = notional !== undefined && mmr !== undefined ? Precise.stringMul(notional, mmr) : undefined;
    const initial = notional !== undefined && leverage !== undefined && Precise.stringGt(leverage, '0') ? Precise.stringDiv(notional, leverage) : undefined;
    const unrealized = this.safeString(position, 'unrealized_pnl');
    const liquidation = this.safeString(position, 'liquidation_price');
    const timestamp = this.parse8601(this.safeString(position, 'updated_at'));
    return this.safePosition({
      'info': position,
      'id': this.safeString(position, 'position_id'),
      'symbol': market['symbol'],
      'timestamp': timestamp,
      'datetime': this.iso8601(timestamp),
      'lastUpdateTimestamp': timestamp,
      'side': this.safeString(position, 'side'),
      'contracts': this.parseNumber(size),
      'contractSize': this.safeNumber(market, 'contractSize'),
      'entryPrice': this.safeNumber(position, 'entry_price'),
      'markPrice': this.parseNumber(mark),
      'lastPrice': undefined,
      'notional': this.parseNumber(notional),
      'leverage': this.parseNumber(leverage),
      'collateral': this.parseNumber(margin),
      'initialMargin': this.parseNumber(initial),
      'initialMarginPercentage': this.parseNumber(leverage !== undefined && Precise.stringGt(leverage, '0') ? Precise.stringDiv('1', leverage) : undefined),
      'maintenanceMargin': this.parseNumber(maintenance),
      'maintenanceMarginPercentage': this.parseNumber(mmr),
      'unrealizedPnl': this.parseNumber(unrealized),
      'realizedPnl': this.safeNumber(position, 'realized_pnl'),
      // 0 means "not positive" at the venue (docs/api.md): CCXT's undefined
      'liquidationPrice': liquidation === undefined || Precise.stringLe(liquidation, '0') ? undefined : this.parseNumber(liquidation),
      'marginMode': 'isolated',
      'hedged': false,
      'marginRatio': this.parseNumber(maintenance !== undefined && margin !== undefined && Precise.stringGt(margin, '0') ? Precise.stringDiv(maintenance, margin, 8) : undefined),
      'percentage': this.parseNumber(unrealized !== undefined && initial !== undefined && Precise.stringGt(initial, '0') ? Precise.stringDiv(Precise.stringMul(unrealized, '100'), initial, 4) : undefined),
      'stopLossPrice': undefined,
      'takeProfitPrice': undefined,
    });
  }

  /** GET /positions/{symbol}/leverage: the account's leverage for that instrument (isolated margin). */
  override async fetchLeverage(symbol: string, params: Dict = {}): Promise<Leverage> {
    await this.loadMarkets();
    const market = this.market(symbol);
    await this.authenticate();
    const response = await this.privateGetPositionsSymbolLeverage(this.extend({ 'symbol': market['id'] }, params));
    return this.parseLeverage(this.safeDict(response, 'data', {}) ?? {}, market);
  }

  /** POST /positions/{symbol}/leverage {leverage}; above the instrument's maximum is LEVERAGE_EXCEEDED (InvalidOrder). */
  override async setLeverage(leverage: number, symbol: Str = undefined, params: Dict = {}): Promise<Dict> {
    if (symbol === undefined) throw new ArgumentsRequired(this.id + ' setLeverage() requires a symbol argument');
    await this.loadMarkets();
    const market = this.market(symbol);
    await this.authenticate();
    const response = await this.privatePostPositionsSymbolLeverage(this.extend({ 'symbol': market['id'], 'leverage': leverage }, params));
    //     { "code": 0, "data": { "symbol": "ETH-USDC-PERP", "leverage": 5, "max_leverage": 20 } }
    return response as Dict;
  }

  /** addMargin / reduceMargin: POST /positions/{symbol}/margin {action: add|remove, amount} (isolated margin). */
  override async addMargin(symbol: string, amount: number, params: Dict = {}): Promise<MarginModification> {
    return this.modifyMarginHelper(symbol, amount, 'add', params);
  }

  override async reduceMargin(symbol: string, amount: number, params: Dict = {}): Promise<MarginModification> {
    return this.modifyMarginHelper(symbol, amount, 'reduce', params);
  }

  async modifyMarginHelper(symbol: string, amount: number, type: 'add' | 'reduce', params: Dict = {}): Promise<MarginModification> {
    await this.loadMarkets();
    const market = this.market(symbol);
    await this.authenticate();
    const response = await this.privatePostPositionsSymbolMargin(this.extend({
      'symbol': market['id'],
      'action': type === 'add' ? 'add' : 'remove',
      'amount': this.numberToString(amount),
    }, params));
    //     { "code": 0, "data": { ...the Position object, "margin": 160.01 } }
    const position = this.safeDict(response, 'data', {}) ?? {};
    const timestamp = this.parse8601(this.safeString(position, 'updated_at'));
    return {
      'info': position,
      'symbol': market['symbol'],
      'type': type,
      'marginMode': 'isolated',
      'amount': amount,
      'total': this.safeNumber(position, 'margin'),
      'code': market['settle'],
      'status': 'ok',
      'timestamp': timestamp,
      'datetime': this.iso8601(timestamp),
    } as MarginModification;
  }

  override parseLeverage(leverage: Dict, market: Market = undefined): Leverage {
    const marketId = this.safeString(leverage, 'symbol');
    market = this.safeMarket(marketId, market);
    const value = this.safeNumber(leverage, 'leverage');
    return {
      'info': leverage,
      'symbol': market['symbol'],
      'marginMode': 'isolated',
      'longLeverage': value,
      'shortLeverage': value,
    } as Leverage;
  }

  // ------------------------------------------------------------------------------------------
  // Transport

  /** Nanoseconds since the epoch (an integer, possibly beyond 2^53) to CCXT's integer milliseconds. */
  nsToMs(ns: Str): Int {
    if (ns === undefined) return undefined;
    return this.parseToInt(Precise.stringDiv(ns, '1000000', 0));
  }

  override sign(path: string, api: string = 'public', method: string = 'GET', params: Dict = {}, headers: Dict | undefined = undefined, body: Str = undefined): Dict {
    let url = this.implodeHostname(this.urls['api'][api]) + '/' + this.implodeParams(path, params);
    const query = this.omit(params, this.extractParams(path));
    headers = { 'Accept': 'application/json' };
    if (api === 'private') {
      headers['Authorization'] = 'Bearer ' + this.safeString(this.options, 'accessToken', '');
    }
    if (method === 'POST' || method === 'PATCH') {
      headers['Content-Type'] = 'application/json';
      body = this.json(query);
    } else if (Object.keys(query).length > 0) {
      url += '?' + this.urlencode(query);
    }
    return { 'url': url, 'method': method, 'body': body, 'headers': headers };
  }

  override handleErrors(httpCode: number, reason: string, url: string, method: string, headers: Dict, body: string, response: unknown, requestHeaders: unknown, requestBody: unknown): undefined {
    if (response === undefined || response === null || typeof response !== 'object') return undefined; // CCXT's HTTP-status fallback
    //     { "code": 1410, "error": "MARGIN_INSUFFICIENT", "message": "MARGIN_INSUFFICIENT: ...", "timestamp": "...", "request_id": "..." }
    const code = this.safeInteger(response as Dict, 'code');
    if (code === undefined || code === 0) return undefined;
    const error = this.safeString(response as Dict, 'error');
    if (error === 'token_expired' || error === 'token_revoked' || error === 'invalid_token') {
      this.options['accessToken'] = undefined; // the next call exchanges the credentials again
    }
    const feedback = this.id + ' ' + body;
    this.throwExactlyMatchedException(this.exceptions['exact'], error, feedback);
    this.throwBroadlyMatchedException(this.exceptions['broad'], body, feedback);
    throw new ExchangeError(feedback);
  }
}
