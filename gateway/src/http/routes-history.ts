// GET /orders?status=open|closed and GET /fills (scope read): a trader's open orders, finished
// orders and executions, for reconciling after a disconnect or a gateway restart. The spec shows no
// shape for these; docs/api.md ("Order history and fills") fixes it, and packages/ccxt builds on it.
import type { FastifyInstance } from 'fastify';
import { fromUnits, microToUsdc, type InstrumentSpec } from '@tenebra/config';
import { ApiError } from '../errors';
import type { InstrumentRegistry } from '../instruments';
import { RawNumber } from '../json';
import { orderView } from '../orders/view';
import type { GatewayDb } from '../store/db';
import { closedOrders, fillsOf, openOrders, type FillRec, type HistoryQuery } from '../store/history';
import { big, type OrderRec } from '../store/records';
import { limitParam, rejectUnknownParams, singleParam } from '../stats/window';
import { API_PREFIX, requireAuth } from './app';
import { sendData } from './reply';

/** Largest page of closed orders or fills. */
export const MAX_HISTORY = 500;
/** Page size when no limit is given. */
export const DEFAULT_HISTORY = 100;

export interface HistoryDeps {
  db: GatewayDb;
  registry: InstrumentRegistry;
}

/** GET /orders?status=open[&symbol]: the account's live orders (NEW, committee-pending NEW, PARTIALLY_FILLED), oldest first. */
export function listOpenOrders(deps: HistoryDeps, userId: string, q: Record<string, unknown>): Record<string, unknown>[] {
  rejectUnknownParams(q, ['status', 'symbol']);
  return openOrders(deps.db, userId, symbolParam(deps, q)).map((o) => view(deps, o));
}

/** GET /orders?status=closed[&symbol][&since_ns][&limit]: FILLED, CANCELLED and REJECTED orders, newest first (by out_time_ns). */
export function listClosedOrders(deps: HistoryDeps, userId: string, q: Record<string, unknown>): Record<string, unknown>[] {
  rejectUnknownParams(q, ['status', 'symbol', 'since_ns', 'limit']);
  return closedOrders(deps.db, userId, historyQuery(deps, q)).map((o) => view(deps, o));
}

/** GET /fills[?symbol][&since_ns][&limit]: the account's fills, newest first. */
export function registerFillRoutes(app: FastifyInstance, deps: HistoryDeps): void {
  app.get<{ Querystring: Record<string, unknown> }>(`${API_PREFIX}/fills`, async (req, reply) => {
    const acct = requireAuth(req, 'read');
    rejectUnknownParams(req.query, ['symbol', 'since_ns', 'limit']);
    const fills = fillsOf(deps.db, acct.user_id, historyQuery(deps, req.query));
    return sendData(req, reply, fills.map((f) => fillView(f, deps.registry.get(f.symbol)!)));
  });
}

/** The Fill object: one side of one execution. fee is in USDC at the tier's rate (negative: a maker rebate). */
export function fillView(f: FillRec, inst: InstrumentSpec): Record<string, unknown> {
  return {
    fill_id: f.fill_id,
    order_id: f.order_id,
    client_order_id: f.client_order_id,
    symbol: f.symbol,
    side: f.side,
    price: new RawNumber(fromUnits(big(f.price_ticks), inst.tick_size)),
    quantity: new RawNumber(fromUnits(big(f.qty_steps), inst.step_size)),
    fee: new RawNumber(microToUsdc(big(f.fee))),
    liquidity: f.liquidity,
    time_ns: big(f.time_ns),
  };
}

function view(deps: HistoryDeps, o: OrderRec): Record<string, unknown> {
  return orderView(o, deps.registry.get(o.symbol)!);
}

function symbolParam(deps: HistoryDeps, q: Record<string, unknown>): string | undefined {
  const s = singleParam(q, 'symbol');
  if (s === undefined) return undefined;
  if (!deps.registry.get(s)) throw new ApiError('UNKNOWN_SYMBOL', `unknown symbol '${s.slice(0, 64)}'; GET /instruments lists the symbols`);
  return s;
}

function historyQuery(deps: HistoryDeps, q: Record<string, unknown>): HistoryQuery {
  const since = singleParam(q, 'since_ns');
  if (since !== undefined && !/^\d{1,20}$/.test(since)) throw new ApiError('invalid_request', 'since_ns must be a non-negative integer (nanoseconds since the Unix epoch)');
  const symbol = symbolParam(deps, q);
  return {
    ...(symbol === undefined ? {} : { symbol }),
    ...(since === undefined ? {} : { sinceNs: BigInt(since) }),
    limit: limitParam(q, DEFAULT_HISTORY, MAX_HISTORY),
  };
}
