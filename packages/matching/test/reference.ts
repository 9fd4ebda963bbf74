// An independent, naive reference matcher for tests: plain bigints, sorted arrays re-sorted after
// every insert, no Arith, no reveals, no shared code with src/ beyond the operation types. It also
// keeps every order's state (status, remaining, filled, reasons) the way the gateway would.
import type { Op, PlaceOp, Side } from '../src/types';

export interface RefOrder {
  id: string;
  seq: bigint;
  side: Side;
  type: 'limit' | 'peg';
  tif: 'GTC' | 'GTT';
  exp: bigint | null;
  price: bigint;
  qty: bigint;
  owner: bigint | null;
}

export interface RefFill {
  maker: string;
  qty: bigint;
  price: bigint;
}

/** Plain comparable form of one operation's result (built from the algorithm's result too). */
export interface PlainResult {
  kind: string;
  orderId: string | null;
  expired: string[];
  reject: string | null; // reject code
  found: boolean | null;
  exhausted: boolean | null;
  fills: RefFill[];
  selfTradeCancelled: string[];
  takerFilled: boolean;
  rested: boolean;
  cancelReason: string | null;
}

export type Status = 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELLED' | 'REJECTED';
export interface OrderState {
  status: Status;
  remaining: bigint;
  filled: bigint;
  reason: string | null;
}

interface RefBook {
  bids: RefOrder[];
  asks: RefOrder[];
  clock: bigint;
}

const MAX_DEPTH = 100_000;

export class ReferenceMatcher {
  readonly books = new Map<string, RefBook>();
  readonly states = new Map<string, OrderState>();
  constructor(private readonly maxDepth = MAX_DEPTH) {}

  private book(sym: string): RefBook {
    let b = this.books.get(sym);
    if (!b) {
      b = { bids: [], asks: [], clock: 0n };
      this.books.set(sym, b);
    }
    return b;
  }

  private static sortSides(b: RefBook): void {
    b.bids.sort((x, y) => (x.price !== y.price ? (x.price > y.price ? -1 : 1) : x.seq < y.seq ? -1 : 1));
    b.asks.sort((x, y) => (x.price !== y.price ? (x.price < y.price ? -1 : 1) : x.seq < y.seq ? -1 : 1));
  }

  private all(b: RefBook): RefOrder[] {
    return [...b.bids, ...b.asks];
  }

  private removeOrder(b: RefBook, id: string): RefOrder | null {
    for (const arr of [b.bids, b.asks]) {
      const i = arr.findIndex((o) => o.id === id);
      if (i >= 0) return arr.splice(i, 1)[0] ?? null;
    }
    return null;
  }

  private setState(id: string, s: Partial<OrderState>): void {
    const cur = this.states.get(id) ?? { status: 'NEW', remaining: 0n, filled: 0n, reason: null };
    this.states.set(id, { ...cur, ...s });
  }

  private expireBook(b: RefBook, now: bigint): string[] {
    if (now > b.clock) b.clock = now;
    const due = this.all(b)
      .filter((o) => o.tif === 'GTT' && o.exp !== null && o.exp <= b.clock)
      .sort((x, y) => (x.exp! !== y.exp! ? (x.exp! < y.exp! ? -1 : 1) : x.seq < y.seq ? -1 : 1));
    for (const o of due) {
      this.removeOrder(b, o.id);
      this.setState(o.id, { status: 'CANCELLED', reason: 'GTT_EXPIRED' });
    }
    return due.map((o) => o.id);
  }

  private static unsupported(op: PlaceOp<bigint>): string | null {
    const now = op.tif === 'IOC' || op.tif === 'FOK';
    if (op.type === 'market' && !now) return 'MARKET_TIF';
    if (op.aon && !now) return 'AON_TIF';
    if (op.minFill != null && !now) return 'MIN_FILL_TIF';
    if (op.minFill != null && (op.tif === 'FOK' || op.aon === true)) return 'MIN_FILL_AON';
    if (op.type !== 'market' && op.price == null) return 'PRICE_REQUIRED';
    if (op.tif === 'GTT' && op.expiresAtNs == null) return 'EXPIRY_REQUIRED';
    if (op.tif !== 'GTT' && op.expiresAtNs != null) return 'EXPIRY_NOT_GTT';
    return null;
  }

  private static blank(kind: string, orderId: string | null, expired: string[]): PlainResult {
    return { kind, orderId, expired, reject: null, found: null, exhausted: null, fills: [], selfTradeCancelled: [], takerFilled: false, rested: false, cancelReason: null };
  }

  /** Applies one operation; returns its plain result. */
  apply(op: Op<bigint>): PlainResult {
    if (op.kind === 'expire') {
      const syms = op.symbol !== undefined ? [op.symbol] : [...this.books.keys()];
      const expired: string[] = [];
      for (const s of syms) expired.push(...this.expireBook(this.book(s), op.nowNs));
      return ReferenceMatcher.blank('expire', null, expired);
    }
    const b = this.book(op.symbol);
    const expired = op.nowNs !== undefined ? this.expireBook(b, op.nowNs) : [];
    const r = ReferenceMatcher.blank(op.kind, op.orderId, expired);

    if (op.kind === 'cancel') {
      const o = this.removeOrder(b, op.orderId);
      r.found = o !== null;
      if (o) this.setState(o.id, { status: 'CANCELLED', reason: 'USER_REQUESTED' });
      return r;
    }

    if (op.kind === 'modify') {
      r.found = false;
      r.exhausted = false;
      if (op.mode === 'reduce' && op.price != null) {
        r.reject = 'REDUCE_WITH_PRICE';
        return r;
      }
      const o = this.all(b).find((x) => x.id === op.orderId);
      if (!o) return r;
      r.found = true;
      const delta = op.mode === 'reduce' && op.qtyDelta > 0n ? 0n : op.qtyDelta;
      const newQty = o.qty + delta;
      if (newQty <= 0n) {
        this.removeOrder(b, o.id);
        r.exhausted = true;
        this.setState(o.id, { status: 'CANCELLED', reason: 'USER_REQUESTED', remaining: 0n });
        return r;
      }
      if (op.mode === 'reduce') {
        o.qty = newQty;
        this.setState(o.id, { remaining: newQty });
        return r;
      }
      this.removeOrder(b, o.id);
      this.setState(o.id, { remaining: newQty });
      this.take(b, r, { kind: 'place', symbol: op.symbol, orderId: o.id, seq: op.seq, side: o.side, type: o.type, tif: o.tif, price: op.price ?? o.price, qty: newQty, owner: o.owner, expiresAtNs: o.exp });
      return r;
    }

    // place
    const bad = ReferenceMatcher.unsupported(op);
    if (bad) {
      r.reject = bad;
      this.setState(op.orderId, { status: 'REJECTED', reason: bad, remaining: 0n, filled: 0n });
      return r;
    }
    if (this.all(b).some((x) => x.id === op.orderId)) {
      r.reject = 'DUPLICATE_ORDER_ID';
      return r;
    }
    if ((op.tif === 'GTC' || op.tif === 'GTT') && this.all(b).length >= this.maxDepth) {
      r.reject = 'BOOK_DEPTH_EXCEEDED';
      this.setState(op.orderId, { status: 'REJECTED', reason: 'BOOK_DEPTH_EXCEEDED', remaining: 0n, filled: 0n });
      return r;
    }
    this.setState(op.orderId, { status: 'NEW', remaining: op.qty, filled: 0n, reason: null });
    this.take(b, r, op);
    return r;
  }

  /** The taker path shared by place and replace; the taker's state entry exists already. */
  private take(b: RefBook, r: PlainResult, op: PlaceOp<bigint>): void {
    const id = op.orderId;
    const done = (reason: string): void => {
      r.cancelReason = reason;
      this.setState(id, { status: 'CANCELLED', reason });
    };
    if (op.tif === 'GTT' && op.expiresAtNs != null && op.expiresAtNs <= b.clock) return done('GTT_EXPIRED');
    const opp = op.side === 'buy' ? b.asks : b.bids;
    const crosses = (m: RefOrder): boolean => op.price == null || (op.side === 'buy' ? m.price <= op.price : m.price >= op.price);
    const self = (m: RefOrder): boolean => op.owner != null && m.owner !== null && m.owner === op.owner;
    const allOrNone = op.tif === 'FOK' || op.aon === true;
    if (allOrNone) {
      let avail = 0n;
      for (const m of opp) if (crosses(m) && !self(m)) avail += m.qty;
      if (opp.length === 0 || avail < op.qty) return done(op.tif === 'FOK' ? 'FOK_NOT_FILLED' : 'IOC_REMAINDER');
    }
    // min_fill: every execution at least the minimum (a smaller maker is passed over in place)
    const min = op.minFill ?? null;
    let rem = op.qty;
    let j = 0;
    while (j < opp.length && rem > 0n) {
      const m = opp[j]!;
      if (!crosses(m)) break;
      if (self(m)) {
        opp.splice(j, 1);
        r.selfTradeCancelled.push(m.id);
        this.setState(m.id, { status: 'CANCELLED', reason: 'SELF_TRADE_PREVENTION' });
        continue;
      }
      if (min !== null && m.qty < min) {
        j += 1;
        continue;
      }
      const q = m.qty < rem ? m.qty : rem;
      r.fills.push({ maker: m.id, qty: q, price: m.price });
      m.qty -= q;
      rem -= q;
      const ms = this.states.get(m.id)!;
      this.setState(m.id, { remaining: m.qty, filled: ms.filled + q, status: m.qty === 0n ? 'FILLED' : 'PARTIALLY_FILLED' });
      if (m.qty === 0n) opp.splice(j, 1);
      if (min !== null && rem > 0n && rem < min) break;
    }
    const ts = this.states.get(id)!;
    const filledNow = op.qty - rem;
    this.setState(id, { remaining: rem, filled: ts.filled + filledNow, status: rem === 0n ? 'FILLED' : filledNow > 0n || ts.filled > 0n ? 'PARTIALLY_FILLED' : 'NEW' });
    if (rem === 0n) {
      r.takerFilled = true;
      return;
    }
    if (op.tif === 'IOC' || op.tif === 'FOK') return done('IOC_REMAINDER');
    const resting: RefOrder = { id, seq: op.seq, side: op.side, type: op.type === 'peg' ? 'peg' : 'limit', tif: op.tif, exp: op.expiresAtNs ?? null, price: op.price!, qty: rem, owner: op.owner ?? null };
    (op.side === 'buy' ? b.bids : b.asks).push(resting);
    ReferenceMatcher.sortSides(b);
    r.rested = true;
  }

  /** Final book of a symbol as plain rows in priority order (bids then asks). */
  rows(sym: string): string[] {
    const b = this.books.get(sym);
    if (!b) return [];
    return [...b.bids, ...b.asks].map((o) => `${o.side} ${o.id} seq=${o.seq} px=${o.price} qty=${o.qty}`);
  }
}
