// One symbol's order book with a public structure and secret contents: the nodes know which order
// ids rest on which side and in which rank (time priority, side, tif, expiry are public); prices,
// quantities and owners are S values. The book only stores; match.ts decides.
import type { Side } from './types';
import { BookInvariantError } from './types';

/** Spec: per-symbol book depth cap of 100,000 open orders. */
export const DEFAULT_MAX_DEPTH = 100_000;

export interface RestingOrder<S> {
  readonly orderId: string;
  /** Sequence number of the placement (or of the replace that created it): time priority. */
  readonly seq: bigint;
  readonly side: Side;
  readonly type: 'limit' | 'peg';
  readonly tif: 'GTC' | 'GTT';
  readonly expiresAtNs: bigint | null;
  readonly price: S;
  /** Remaining quantity (steps); always > 0 while resting. */
  qty: S;
  readonly owner: S | null;
}

/** JSON-able public part of one resting order in a snapshot. */
export interface RestingOrderPub {
  id: string;
  seq: string;
  side: Side;
  type: 'limit' | 'peg';
  tif: 'GTC' | 'GTT';
  exp: string | null;
  owner: boolean;
  /** Known (from opened bits) to be priced strictly better than the next order on its side; absent: not known. */
  gt?: true;
}

/** JSON-able public part of a book snapshot; secrets are listed per order as [price, qty, owner?]. */
export interface BookSnapshotPub {
  v: 1;
  symbol: string;
  clockNs: string;
  lastSeq: string;
  maxDepth: number;
  /** Bids in priority order, then asks in priority order. */
  orders: RestingOrderPub[];
}

export interface BookOptions {
  maxDepth?: number;
}

export class Book<S> {
  /** Bids: price descending, then seq ascending. Asks: price ascending, then seq ascending. */
  private readonly sides: Record<Side, RestingOrder<S>[]> = { buy: [], sell: [] };
  private readonly byId = new Map<string, RestingOrder<S>>();
  private readonly gtt = new Set<string>();
  /**
   * Orders known to be priced strictly better than the next order on their side. Public: it follows
   * from opened bits alone (an order that rests at rank r < n opened after(r) = 0: its price beats
   * the order behind it), so every node holds the same set. A search plan may place its pivots by it
   * (SearchStart 'levels'): the runs between such boundaries are mostly one price level each.
   */
  private readonly strict = new Set<RestingOrder<S>>();
  /** Latest sequenced time seen (expire / nowNs); GTT orders due at or before it are gone. */
  clockNs = 0n;
  /** Highest placement seq seen; new placements must exceed it (equal price → behind). */
  lastSeq = -1n;
  readonly maxDepth: number;

  constructor(readonly symbol: string, opts: BookOptions = {}) {
    this.maxDepth = opts.maxDepth ?? DEFAULT_MAX_DEPTH;
  }

  /** Orders of one side in priority order (do not mutate; use insertAt/remove). */
  side(side: Side): readonly RestingOrder<S>[] {
    return this.sides[side];
  }
  /** Bids in priority order. */
  get bids(): readonly RestingOrder<S>[] {
    return this.sides.buy;
  }
  /** Asks in priority order. */
  get asks(): readonly RestingOrder<S>[] {
    return this.sides.sell;
  }
  /** Number of resting orders on both sides. */
  get size(): number {
    return this.byId.size;
  }
  /** The live order with this id, if any. */
  get(orderId: string): RestingOrder<S> | undefined {
    return this.byId.get(orderId);
  }
  /** Whether an order with this id rests. */
  has(orderId: string): boolean {
    return this.byId.has(orderId);
  }

  /** Records a placement's seq; throws when it does not exceed every earlier one (misordered feed). */
  noteSeq(seq: bigint): void {
    if (seq <= this.lastSeq) {
      throw new BookInvariantError(`${this.symbol}: seq ${seq} does not exceed the last placement seq ${this.lastSeq}`);
    }
    this.lastSeq = seq;
  }

  /**
   * Inserts at a rank found by the caller (binary search on secrets); enforces the depth cap.
   * `beatsNext`: the caller opened that this order's price is strictly better than the order now
   * behind it (true whenever it rests ahead of some order: the search opened after(rank) = 0). The
   * order ahead of it is then only known to be at least as good as it (its own mark is dropped:
   * the order it beat is now behind the new one, which keeps that fact as its own mark).
   */
  insertAt(order: RestingOrder<S>, index: number, beatsNext = false): void {
    const arr = this.sides[order.side];
    if (this.byId.has(order.orderId)) throw new BookInvariantError(`${this.symbol}: order ${order.orderId} already rests`);
    if (this.byId.size >= this.maxDepth) throw new BookInvariantError(`${this.symbol}: depth cap ${this.maxDepth} reached`);
    if (index < 0 || index > arr.length) throw new BookInvariantError(`${this.symbol}: rank ${index} outside 0..${arr.length}`);
    if (index > 0) this.strict.delete(arr[index - 1] as RestingOrder<S>);
    if (beatsNext && index < arr.length) this.strict.add(order);
    arr.splice(index, 0, order);
    this.byId.set(order.orderId, order);
    if (order.tif === 'GTT') this.gtt.add(order.orderId);
  }

  /** Removes a resting order by id; returns it, or undefined when it is not live. */
  remove(orderId: string): RestingOrder<S> | undefined {
    const o = this.byId.get(orderId);
    if (!o) return undefined;
    const arr = this.sides[o.side];
    const i = arr[0] === o ? 0 : arr.indexOf(o);
    if (i < 0) throw new BookInvariantError(`${this.symbol}: order ${orderId} indexed but not on its side`);
    arr.splice(i, 1);
    // ahead >= o > next (or ahead > o >= next): the order ahead beats the one now behind it
    if (i > 0 && this.strict.has(o)) this.strict.add(arr[i - 1] as RestingOrder<S>);
    if (i > 0 && i === arr.length) this.strict.delete(arr[i - 1] as RestingOrder<S>); // now last: nothing behind it
    this.strict.delete(o);
    this.byId.delete(orderId);
    this.gtt.delete(orderId);
    return o;
  }

  /** Number of resting GTT orders (public): with none, a later op's expiry changes nothing. */
  get gttCount(): number {
    return this.gtt.size;
  }

  /** Whether the order is known (publicly) to be priced strictly better than the next on its side. */
  beatsNext(order: RestingOrder<S>): boolean {
    return this.strict.has(order);
  }

  /** Advances the clock and removes every GTT order with expiry <= nowNs; returns their ids in (expiry, seq) order. */
  expire(nowNs: bigint): string[] {
    if (nowNs > this.clockNs) this.clockNs = nowNs;
    if (this.gtt.size === 0) return [];
    const due: RestingOrder<S>[] = [];
    for (const id of this.gtt) {
      const o = this.byId.get(id);
      if (o && o.expiresAtNs !== null && o.expiresAtNs <= this.clockNs) due.push(o);
    }
    due.sort((a, b) => cmpBig(a.expiresAtNs ?? 0n, b.expiresAtNs ?? 0n) || cmpBig(a.seq, b.seq));
    for (const o of due) this.remove(o.orderId);
    return due.map((o) => o.orderId);
  }

  /** Checks the public invariants (index consistency, unique ids, sides, seq bound); throws on violation. */
  checkInvariants(): void {
    let n = 0;
    for (const side of ['buy', 'sell'] as const) {
      for (const o of this.sides[side]) {
        n += 1;
        if (o.side !== side) throw new BookInvariantError(`${o.orderId} on the wrong side`);
        if (this.byId.get(o.orderId) !== o) throw new BookInvariantError(`${o.orderId} not indexed`);
        if (o.seq > this.lastSeq) throw new BookInvariantError(`${o.orderId} seq above lastSeq`);
        if ((o.tif === 'GTT') !== this.gtt.has(o.orderId)) throw new BookInvariantError(`${o.orderId} GTT index wrong`);
      }
    }
    if (n !== this.byId.size) throw new BookInvariantError(`index holds ${this.byId.size} orders, sides ${n}`);
    for (const o of this.strict) {
      const arr = this.sides[o.side];
      if (this.byId.get(o.orderId) !== o || arr[arr.length - 1] === o) throw new BookInvariantError(`${o.orderId} marked ahead of a next order it does not have`);
    }
    if (n > this.maxDepth) throw new BookInvariantError(`depth ${n} above cap ${this.maxDepth}`);
  }

  /** Public structure plus secrets in a deterministic order: per order (bids then asks, by rank) price, qty, owner if any. */
  toSnapshot(): { pub: BookSnapshotPub; secrets: S[] } {
    const orders: RestingOrderPub[] = [];
    const secrets: S[] = [];
    for (const side of ['buy', 'sell'] as const) {
      for (const o of this.sides[side]) {
        orders.push({
          id: o.orderId,
          seq: o.seq.toString(),
          side: o.side,
          type: o.type,
          tif: o.tif,
          exp: o.expiresAtNs === null ? null : o.expiresAtNs.toString(),
          owner: o.owner !== null,
          ...(this.strict.has(o) ? { gt: true as const } : {}),
        });
        secrets.push(o.price, o.qty);
        if (o.owner !== null) secrets.push(o.owner);
      }
    }
    const pub: BookSnapshotPub = {
      v: 1,
      symbol: this.symbol,
      clockNs: this.clockNs.toString(),
      lastSeq: this.lastSeq.toString(),
      maxDepth: this.maxDepth,
      orders,
    };
    return { pub, secrets };
  }

  /** Rebuilds a book from toSnapshot()'s output; throws when the secrets do not match the structure. */
  static fromSnapshot<S>(pub: BookSnapshotPub, secrets: readonly S[]): Book<S> {
    if (pub.v !== 1) throw new BookInvariantError(`unknown book snapshot version ${String(pub.v)}`);
    const book = new Book<S>(pub.symbol, { maxDepth: pub.maxDepth });
    book.clockNs = BigInt(pub.clockNs);
    book.lastSeq = BigInt(pub.lastSeq);
    let k = 0;
    const marked: RestingOrder<S>[] = [];
    const take = (): S => {
      const s = secrets[k++];
      if (s === undefined) throw new BookInvariantError(`${pub.symbol}: snapshot has too few secrets`);
      return s;
    };
    for (const p of pub.orders) {
      const price = take();
      const qty = take();
      const owner = p.owner ? take() : null;
      const o: RestingOrder<S> = {
        orderId: p.id,
        seq: BigInt(p.seq),
        side: p.side,
        type: p.type,
        tif: p.tif,
        expiresAtNs: p.exp === null ? null : BigInt(p.exp),
        price,
        qty,
        owner,
      };
      book.insertAt(o, book.sides[o.side].length);
      if (p.gt === true) marked.push(o);
    }
    for (const o of marked) book.strict.add(o); // after every insertAt, which drops the mark of the order ahead
    if (k !== secrets.length) throw new BookInvariantError(`${pub.symbol}: snapshot has ${secrets.length - k} extra secrets`);
    book.checkInvariants();
    return book;
  }
}

function cmpBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
