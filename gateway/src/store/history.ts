// Per-account indexes behind GET /orders?status=open|closed and GET /fills (docs/api.md, "Order
// history and fills"). Both live in the gateway's lmdb environment and are written in the same
// transaction as the order or fill they describe, so a kill -9 never leaves an order or a fill
// that its index does not list (a client reconciling after a gateway restart finds every one).
//
//   order_index   o\n<user>\n<in_time_ns:20>\n<order_id>   a live order (NEW, PARTIALLY_FILLED)
//                 c\n<user>\n<out_time_ns:20>\n<order_id>  a finished one (FILLED, CANCELLED, REJECTED)
//   fills         <user>\n<time_ns:20>\n<seq:20>\n<n:6><m|t> one side of one execution
//
// Keys are strings with zero-padded decimal times, so lmdb's byte order is time order.
import type { Database } from 'lmdb';
import type { GatewayDb } from './db';
import { isLive, type OrderRec, type Side } from './records';

/** One side of one execution, as stored (integers: steps, ticks, micro-USDC, ns). */
export interface FillRec {
  fill_id: string;
  order_id: string;
  client_order_id: string | null;
  symbol: string;
  side: Side;
  price_ticks: string;
  qty_steps: string;
  /** fee charged at the tier's rate, micro-USDC, signed (negative: a maker rebate) */
  fee: string;
  liquidity: 'maker' | 'taker';
  time_ns: string;
}

const pad = (v: string | bigint, width = 20): string => v.toString().padStart(width, '0');
const INDEXED_KEY = 'history_indexed_v1';

const openKey = (o: OrderRec): string => `o\n${o.user_id}\n${pad(o.in_time_ns)}\n${o.order_id}`;
const closedKey = (o: OrderRec): string => `c\n${o.user_id}\n${pad(o.out_time_ns)}\n${o.order_id}`;

/** The order's index entry after a write: listed as live while live, then as finished at its out time. Call inside the transaction that writes it. */
export function indexOrder(db: GatewayDb, o: OrderRec): void {
  const idx = db.orderIndex;
  if (isLive(o.status)) {
    idx.putSync(openKey(o), o.order_id);
  } else {
    idx.removeSync(openKey(o));
    idx.putSync(closedKey(o), o.order_id);
  }
}

/** Records one side of an execution (inside the transaction that applies it). `n` numbers the fill within its outcome. */
export function recordFill(db: GatewayDb, user: string, seq: bigint, n: number, f: Omit<FillRec, 'fill_id'>): void {
  const suffix = `${pad(String(n), 6)}${f.liquidity === 'maker' ? 'm' : 't'}`;
  // fill_id: the outcome's sequence number, the execution's number in it, and the side of the book
  // (a maker and a taker fill of one execution differ by the letter), unique and stable.
  const rec: FillRec = { fill_id: `${seq}-${n}-${f.liquidity === 'maker' ? 'M' : 'T'}`, ...f };
  db.fills.putSync(`${user}\n${pad(f.time_ns)}\n${pad(seq)}\n${suffix}`, rec);
}

/** Builds the order index from the orders table once, for a store written before the index existed. */
export function backfillOrderIndex(db: GatewayDb): number {
  if (db.meta.get(INDEXED_KEY) === true) return 0;
  let n = 0;
  db.tx(() => {
    for (const { value } of db.orders.getRange()) {
      indexOrder(db, value);
      n++;
    }
    db.meta.putSync(INDEXED_KEY, true);
  });
  return n;
}

export interface HistoryQuery {
  symbol?: string;
  /** inclusive lower bound on the listed time (fills: time_ns; closed orders: out_time_ns) */
  sinceNs?: bigint;
  limit: number;
}

/** The account's live orders, oldest first (by in_time_ns). */
export function openOrders(db: GatewayDb, user: string, symbol?: string): OrderRec[] {
  const out: OrderRec[] = [];
  for (const { value: id } of range(db.orderIndex, `o\n${user}\n`, false)) {
    const o = db.orders.get(id);
    if (o && isLive(o.status) && (symbol === undefined || o.symbol === symbol)) out.push(o);
  }
  return out;
}

/** The account's finished orders, newest first (by out_time_ns). */
export function closedOrders(db: GatewayDb, user: string, q: HistoryQuery): OrderRec[] {
  const out: OrderRec[] = [];
  const prefix = `c\n${user}\n`;
  for (const { key, value: id } of range(db.orderIndex, prefix, true)) {
    if (q.sinceNs !== undefined && BigInt(key.slice(prefix.length, prefix.length + 20)) < q.sinceNs) break;
    const o = db.orders.get(id);
    if (!o || (q.symbol !== undefined && o.symbol !== q.symbol)) continue;
    out.push(o);
    if (out.length >= q.limit) break;
  }
  return out;
}

/** The account's fills, newest first. */
export function fillsOf(db: GatewayDb, user: string, q: HistoryQuery): FillRec[] {
  const out: FillRec[] = [];
  for (const { value: f } of range(db.fills, `${user}\n`, true)) {
    if (q.sinceNs !== undefined && BigInt(f.time_ns) < q.sinceNs) break;
    if (q.symbol !== undefined && f.symbol !== q.symbol) continue;
    out.push(f);
    if (out.length >= q.limit) break;
  }
  return out;
}

/** Entries whose key starts with prefix, ascending or descending. '\u{10FFFF}' sorts after every key character used here. */
function range<V>(dbi: Database<V, string>, prefix: string, reverse: boolean) {
  const end = `${prefix}\u{10FFFF}`;
  return reverse ? dbi.getRange({ start: end, end: prefix, reverse: true }) : dbi.getRange({ start: prefix, end });
}
