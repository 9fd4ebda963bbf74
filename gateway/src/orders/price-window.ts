// The committee compares a book's prices at the width of a price window, not of the price ceiling
// (docs/decisions/0024-price-window.md): Catrina-de Hoogh needs only |a - b| < 2^bandBits for
// the two prices compared, so every two prices that may meet in the book must be less than
// 2^bandBits ticks apart (packages/config bookWidthsOf; on shares a pair further apart gives a
// wrong bit, so a wrong fill). The gateway, which admits every price, keeps that true:
//   - admission (inside the admitting transaction, so no two admissions race): a price is accepted
//     only if the span of the book's live prices with it stays below the window, else INVALID_PRICE.
//     Live = any order not yet known ended (resting, in flight, being modified or cancelled: an old
//     and a new price both count until the modify is applied), so an order the committee may still
//     compare is never left out. An order that ended was applied before anything admitted now.
//   - liveness (orders/resting-guard.ts): a resting order the mark has left further than the window
//     half minus the limit band is cancelled (SYSTEM_CANCEL), so new orders inside the band around
//     a moving mark keep fitting and refusals stay rare.
// The set is this process's memory, loaded from the store at start (one gateway admits a book's
// orders); ended orders are pruned lazily, when a price would not fit and every PRUNE_EVERY admits.
// Each book keeps its span (lowest and highest live price): an admission only widens it, so it is
// widened in place, and worked out again from the entries only after a prune changed them (the
// walk over every live price on each admission was 5% of the gateway's CPU with thousands resting).
import { priceWindowTicks, fromUnits, type InstrumentSpec } from '@tenebra/config';
import { fail } from '../errors';
import type { GatewayDb } from '../store/db';
import { big, isLive, type OrderRec } from '../store/records';

/** Admissions per symbol between two prunes of ended orders. */
const PRUNE_EVERY = 512;
/** An entry whose order record is missing (its transaction failed after the check) goes after this long. */
const ORPHAN_MS = 60_000;

interface Entry {
  /** every price of the order the committee may still compare (two while a price change is pending) */
  prices: bigint[];
  addedAtMs: number;
}

interface Book {
  entries: Map<string, Entry>;
  /** lowest and highest price of the entries; null when there are none; undefined when it must be worked out again */
  span: { lo: bigint; hi: bigint } | null | undefined;
}

export class PriceWindows {
  private readonly books = new Map<string, Book>();
  private readonly admits = new Map<string, number>();

  constructor(private readonly db: GatewayDb, private readonly nowMs: () => number = Date.now) {}

  /** Loads the live orders' prices from the store (once, before admissions). */
  load(): number {
    let n = 0;
    for (const { value } of this.db.orders.getRange()) {
      if (!isLive(value.status)) continue;
      const p = bookPriceOf(value);
      if (p === null) continue;
      const prices = [p];
      const pm = value.pending_modify?.price_ticks;
      if (pm !== undefined && pm !== null) prices.push(big(pm));
      const book = this.book(value.symbol);
      book.entries.set(value.order_id, { prices, addedAtMs: this.nowMs() });
      book.span = undefined;
      n++;
    }
    return n;
  }

  /**
   * Admits `priceTicks` for order `orderId` (a new order, or a new price of a live one) or throws
   * INVALID_PRICE when the book's live prices with it would span 2^bandBits ticks or more. Call
   * inside the transaction that writes the order, after its other checks.
   */
  admit(inst: InstrumentSpec, orderId: string, priceTicks: bigint): void {
    const w = priceWindowTicks(inst);
    const book = this.book(inst.symbol);
    const count = (this.admits.get(inst.symbol) ?? 0) + 1;
    this.admits.set(inst.symbol, count);
    if (count % PRUNE_EVERY === 0) this.prune(inst.symbol);
    let s = this.spanOf(book);
    if (s && !fits(s, priceTicks, w)) {
      this.prune(inst.symbol);
      s = this.spanOf(book);
    }
    if (s && !fits(s, priceTicks, w)) {
      const px = (t: bigint): string => fromUnits(t, inst.tick_size);
      const lo = s.hi - w + 1n;
      const hi = s.lo + w - 1n;
      fail('INVALID_PRICE', `price ${px(priceTicks)} is outside ${inst.symbol}'s price window ${px(lo > 1n ? lo : 1n)} to ${px(hi)} (live prices of the book span ${px(s.lo)} to ${px(s.hi)}; the committee compares prices less than ${px(w)} apart)`);
    }
    const e = book.entries.get(orderId);
    if (e) e.prices.push(priceTicks);
    else book.entries.set(orderId, { prices: [priceTicks], addedAtMs: this.nowMs() });
    book.span = s ? { lo: priceTicks < s.lo ? priceTicks : s.lo, hi: priceTicks > s.hi ? priceTicks : s.hi } : { lo: priceTicks, hi: priceTicks };
  }

  /** Lowest and highest live price of a book (ticks), null when it holds none. */
  span(symbol: string): { lo: bigint; hi: bigint } | null {
    return this.spanOf(this.book(symbol));
  }

  /** Drops ended orders and settles the prices of applied modifies (one store read per entry). */
  prune(symbol: string): void {
    const book = this.book(symbol);
    const now = this.nowMs();
    book.span = undefined;
    for (const [id, e] of book.entries) {
      const o = this.db.orders.get(id);
      if (!o) {
        if (now - e.addedAtMs > ORPHAN_MS) book.entries.delete(id);
        continue;
      }
      if (!isLive(o.status)) {
        book.entries.delete(id);
        continue;
      }
      const p = bookPriceOf(o);
      if ((o.pending_modify ?? null) === null && p !== null) e.prices = [p];
    }
  }

  /** The book's span, worked out from its entries when a prune or load left it unknown. */
  private spanOf(book: Book): { lo: bigint; hi: bigint } | null {
    if (book.span !== undefined) return book.span;
    let lo: bigint | null = null;
    let hi: bigint | null = null;
    for (const e of book.entries.values()) {
      for (const p of e.prices) {
        if (lo === null || p < lo) lo = p;
        if (hi === null || p > hi) hi = p;
      }
    }
    book.span = lo === null || hi === null ? null : { lo, hi };
    return book.span;
  }

  private book(symbol: string): Book {
    let b = this.books.get(symbol);
    if (!b) this.books.set(symbol, (b = { entries: new Map(), span: null }));
    return b;
  }
}

function fits(s: { lo: bigint; hi: bigint }, p: bigint, w: bigint): boolean {
  const lo = p < s.lo ? p : s.lo;
  const hi = p > s.hi ? p : s.hi;
  return hi - lo < w;
}

/** The price an order holds in the book: its limit, cap or peg price, or the implicit cap of a market order sent without one. */
export function bookPriceOf(o: Pick<OrderRec, 'price_ticks' | 'book_ticks'>): bigint | null {
  if (o.price_ticks !== null) return big(o.price_ticks);
  return o.book_ticks ? big(o.book_ticks) : null;
}

/**
 * How far from the mark (ticks) a resting order may stay before the guard cancels it: half the
 * window less the limit band, so that any two of what stays and what the band admits fit (a quarter
 * of the window when the band leaves less).
 */
export function windowKeepTicks(inst: InstrumentSpec, bandTicks: bigint): bigint {
  const half = priceWindowTicks(inst) / 2n;
  const keep = half - bandTicks;
  return keep > half / 2n ? keep : half / 2n;
}
