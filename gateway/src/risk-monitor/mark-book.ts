// The marks the monitor accepted: per symbol, the last FRESH oracle mid (ticks). A stale or missing
// reference leaves the last accepted mark in place (the views keep showing it) and is reported, so
// nothing is marked, funded or liquidated on stale data. REST (GET /positions, GET /account) and the
// positions channel read marks here, so they agree with what the monitor evaluated.
import type { PriceOracle } from '../orders/oracle';

/** Where the position views read the current mark of a symbol (null: none accepted yet). */
export interface MarkSource {
  markTicks(symbol: string): bigint | null;
}

export type MarkRefresh = { ok: true; ticks: bigint; moved: boolean } | { ok: false; detail: string };

export class MarkBook implements MarkSource {
  private readonly marks = new Map<string, { ticks: bigint; atMs: number }>();

  constructor(private readonly oracle: PriceOracle) {}

  markTicks(symbol: string): bigint | null {
    return this.marks.get(symbol)?.ticks ?? null;
  }

  /** Reads the oracle: a fresh mid becomes the mark; otherwise the last one stays and why is returned. */
  refresh(symbol: string): MarkRefresh {
    const r = this.oracle.reference(symbol);
    if (!r.ok) return { ok: false, detail: r.detail };
    const prev = this.marks.get(symbol);
    this.marks.set(symbol, { ticks: r.quote.mid, atMs: r.quote.atMs });
    return { ok: true, ticks: r.quote.mid, moved: prev?.ticks !== r.quote.mid };
  }
}
