// Tenebra for CCXT pro: watchOrders / watchPositions and createOrderWs / editOrderWs / cancelOrderWs
// over the venue's authenticated WebSocket.
// That socket is an encrypted session (login with the bearer token, X25519 session.setup, AES-GCM
// pushes with a protobuf header as associated data: spec, "Encrypted WebSocket session"), which
// CCXT's generic WsClient cannot speak. So the transport is @tenebra/client's TenebraSocket (login,
// session, rekey, re-login on auth_expired, gap recovery, reconnect), fed with this exchange's own
// bearer token, and its decrypted order / position events and acks are parsed with the REST class's
// parseOrder / parsePosition into CCXT's unified structures. A watch call consumes what it returns:
// updates its since / limit leave out are not handed to a later call.
import { ExchangeClosedByUser, ExchangeError, type Dict, type Int, type Num, type Order, type OrderSide, type OrderType, type Position, type Str, type Strings } from 'ccxt';
import { TenebraSocket, type SocketAck, type OrderEvent, type Position as VenuePosition, type SocketCancelOrder, type SocketModifyOrder, type SocketPlaceOrder } from '@tenebra/client';
import tenebraRest from '../tenebra';
import { UpdateQueue } from './updates';

export default class tenebra extends tenebraRest {
  #socket: Promise<TenebraSocket> | undefined;
  readonly #subscribed = new Map<string, Promise<void>>();
  readonly #orders = new UpdateQueue<Order>();
  readonly #positions = new UpdateQueue<Position>();

  override describe(): Dict {
    return this.deepExtend(super.describe(), {
      'has': {
        'ws': true,
        'watchOrders': true,
        'watchPositions': true,
        'createOrderWs': true,
        'editOrderWs': true,
        'cancelOrderWs': true,
        'watchMyTrades': false,
        'watchBalance': false,
        'watchOrderBook': false, // the book is secret-shared: nothing to watch
        'watchTicker': false,
        'watchTrades': false,
      },
      'urls': {
        'api': {
          'ws': 'ws://{hostname}/ws/v1',
        },
        'test': {
          'ws': 'ws://127.0.0.1:9080/ws/v1',
        },
      },
      'options': {
        // passed to TenebraSocket (e.g. {reconnect: false}, {cancelOnDisconnect: true})
        'socket': {},
      },
    });
  }

  /**
   * watchOrders: the orders channel as CCXT orders — on (re)subscription the snapshot of open
   * orders, then every event (open, fills, modified, cancelled, rejected...) — the ones no earlier
   * call returned, oldest first; waits for the next one when there are none. `symbol` filters;
   * `since` / `limit` as in CCXT.
   */
  override async watchOrders(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Order[]> {
    await this.loadMarkets();
    const wanted = symbol === undefined ? undefined : this.market(symbol)['symbol'];
    await this.subscribeChannel('orders', params);
    const orders = await this.#orders.next((o) => wanted === undefined || o['symbol'] === wanted);
    return this.filterBySinceLimit(orders, since, limit, 'timestamp', true) as Order[];
  }

  /** watchPositions: the open positions' snapshot, then updates (fills, mark moves, funding, liquidation, closes, settlement). */
  override async watchPositions(symbols: Strings = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Position[]> {
    await this.loadMarkets();
    const wanted = this.marketSymbols(symbols);
    await this.subscribeChannel('positions', params);
    const positions = await this.#positions.next((p) => wanted === undefined || wanted.includes(p['symbol'] as string));
    return this.filterBySinceLimit(positions, since, limit, 'timestamp', true) as Position[];
  }

  /**
   * createOrderWs: the same order as createOrder (same params), sent as the encrypted order.place.
   * Resolves with the order as acknowledged (id, client id, status NEW); a refusal raises the CCXT
   * class of its reason, as over REST.
   */
  override async createOrderWs(symbol: string, type: OrderType, side: OrderSide, amount: number, price: Num = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const request = this.createOrderRequest(symbol, type, side, amount, price, params);
    const socket = await this.authenticatedSocket();
    const ack = this.checkAck(await socket.placeOrder(request as unknown as SocketPlaceOrder));
    return this.parseOrder(this.extend(request, this.ackFields(ack)), market);
  }

  /** editOrderWs: order.modify with the new total amount and/or price. */
  override async editOrderWs(id: string, symbol: string, type: OrderType, side: OrderSide, amount: Num = undefined, price: Num = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const request: Dict = { 'order_id': id, 'symbol': market['id'] };
    if (amount !== undefined) request['quantity'] = this.amountToPrecision(symbol, amount);
    if (price !== undefined) request['price'] = this.priceToPrecision(symbol, price);
    const socket = await this.authenticatedSocket();
    const ack = this.checkAck(await socket.modifyOrder(this.extend(request, params) as unknown as SocketModifyOrder));
    return this.parseOrder(this.extend({ 'symbol': market['id'], 'side': side, 'type': type, 'quantity': request['quantity'], 'price': request['price'] }, this.ackFields(ack)), market);
  }

  /** cancelOrderWs: order.cancel by id (or params.clientOrderId). */
  override async cancelOrderWs(id: string, symbol: Str = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const market = symbol === undefined ? undefined : this.market(symbol);
    const clientOrderId = this.safeString2(params, 'clientOrderId', 'client_order_id');
    const request: Dict = clientOrderId !== undefined ? { 'client_order_id': clientOrderId } : { 'order_id': id };
    if (market !== undefined) request['symbol'] = market['id'];
    const socket = await this.authenticatedSocket();
    const ack = this.checkAck(await socket.cancelOrder(request as unknown as SocketCancelOrder));
    return this.parseOrder(this.extend(market === undefined ? {} : { 'symbol': market['id'] }, this.ackFields(ack)), market);
  }

  /** An ack with code 0 passes; otherwise the CCXT class of its reason (the REST table), as handleErrors does. */
  checkAck(ack: SocketAck): SocketAck {
    if (ack.code === 0) return ack;
    //     { "code": 1410, "message": "MARGIN_INSUFFICIENT: ...", "order_id": "…", "client_order_id": "…", "reject_reason": "MARGIN_INSUFFICIENT" }
    const name = ack.code === 1502 ? 'QUEUED' : (ack.reject_reason || ack.message.split(':')[0] || '');
    const feedback = this.id + ' ' + this.json(ack);
    this.throwExactlyMatchedException(this.exceptions['exact'], name, feedback);
    throw new ExchangeError(feedback);
  }

  ackFields(ack: SocketAck): Dict {
    const fields: Dict = { 'order_id': ack.order_id, 'client_order_id': ack.client_order_id === '' || ack.client_order_id === null ? undefined : ack.client_order_id };
    if (ack.status !== undefined) fields['status'] = ack.status;
    return fields;
  }

  /** Subscribes a channel once per socket (TenebraSocket keeps it across rekey, re-login and reconnect). */
  async subscribeChannel(channel: 'orders' | 'positions', _params: Dict = {}): Promise<void> {
    const socket = await this.authenticatedSocket();
    let done = this.#subscribed.get(channel);
    if (done === undefined) {
      done = socket.subscribe(channel);
      this.#subscribed.set(channel, done);
      done.catch(() => this.#subscribed.delete(channel));
    }
    await done;
  }

  /** The account's encrypted WebSocket session, opened on first use. */
  async authenticatedSocket(): Promise<TenebraSocket> {
    if (this.#socket === undefined) {
      this.#socket = this.#openSocket();
      this.#socket.catch(() => {
        this.#socket = undefined;
      });
    }
    return this.#socket;
  }

  async #openSocket(): Promise<TenebraSocket> {
    await this.loadMarkets();
    const socket = new TenebraSocket({
      ...(this.safeDict(this.options, 'socket', {}) ?? {}),
      url: this.implodeHostname(this.urls['api']['ws']),
      // the REST token: one credential exchange serves both (renewed when auth_expired asks)
      token: ({ minValidityMs, forceRefresh }) => this.authenticate(minValidityMs, forceRefresh),
      // the encrypted header's symbol_id comes from GET /instruments, already loaded as markets
      resolveSymbolId: (venueSymbol: string) => {
        const id = this.safeInteger(this.safeDict(this.safeMarket(venueSymbol), 'info', {}), 'symbol_id');
        if (id === undefined) throw new Error(this.id + ' unknown symbol ' + venueSymbol);
        return id;
      },
    });
    // a (re)subscription's snapshot is the current state: delivered first, then the updates
    socket.on('ordersSnapshot', (events: OrderEvent[]) => {
      for (const e of events) this.#orders.push(this.parseOrder(e as unknown as Dict));
    });
    socket.on('order', (event: OrderEvent) => this.#orders.push(this.parseOrder(event as unknown as Dict)));
    socket.on('positionsSnapshot', (positions: VenuePosition[]) => {
      for (const p of positions) this.#positions.push(this.parsePosition(p as unknown as Dict));
    });
    socket.on('position', (p: VenuePosition) => this.#positions.push(this.parsePosition(p as unknown as Dict)));
    // transport trouble is TenebraSocket's to recover (reconnect, resubscribe); keep the last for callers
    socket.on('error', (e: Error) => {
      this.options['lastSocketError'] = e.message;
    });
    await socket.connect();
    return socket;
  }

  /** Closes the socket (logging out first, so cancel-on-disconnect does not fire) and fails pending watches. */
  override async close(): Promise<void> {
    const socket = this.#socket;
    this.#socket = undefined;
    this.#subscribed.clear();
    const closed = new ExchangeClosedByUser(this.id + ' closed by user');
    this.#orders.fail(closed);
    this.#positions.fail(closed);
    // a socket that never opened has nothing to close (its failure went to the watch that opened it)
    const opened = socket === undefined ? undefined : await socket.catch(() => undefined);
    if (opened !== undefined) await opened.close();
    await super.close();
  }
}
