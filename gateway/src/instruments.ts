// The live instrument set: the built-in catalogue plus persisted run-time changes (status), with the
// list version that rises on every change (it is the ETag of GET /instruments).
import {
  INSTRUMENTS, INSTRUMENTS_VERSION, INSTRUMENTS_UPDATED_AT, INSTRUMENT_STATUSES, checkInstrument,
  type InstrumentSpec, type InstrumentStatus,
} from '@tenebra/config';
import type { GatewayDb } from './store/db';
import { num } from './json';

interface Overrides {
  version: number;
  updated_at: string;
  status: Record<string, InstrumentStatus>;
}

const META_KEY = 'instruments';

/** Called inside a status change's write transaction. */
export type StatusListener = (symbol: string, status: InstrumentStatus, previous: InstrumentStatus) => void;

export class InstrumentRegistry {
  private current: InstrumentSpec[] = [];
  private bySymbol = new Map<string, InstrumentSpec>();
  private version = INSTRUMENTS_VERSION;
  private updatedAt = INSTRUMENTS_UPDATED_AT;
  private readonly listeners: StatusListener[] = [];

  constructor(private readonly db: GatewayDb) {
    for (const i of INSTRUMENTS) checkInstrument(i);
    this.load();
  }

  private load(): void {
    const o = this.db.meta.get(META_KEY) as Overrides | undefined;
    this.current = INSTRUMENTS.map((i) => ({ ...i, status: o?.status[i.symbol] ?? i.status }));
    this.bySymbol = new Map(this.current.map((i) => [i.symbol, i]));
    this.version = o?.version ?? INSTRUMENTS_VERSION;
    this.updatedAt = o?.updated_at ?? INSTRUMENTS_UPDATED_AT;
  }

  /** The list as GET /instruments serves it. */
  list(): { version: number; updated_at: string; instruments: readonly InstrumentSpec[] } {
    return { version: this.version, updated_at: this.updatedAt, instruments: this.current };
  }

  get(symbol: string): InstrumentSpec | undefined {
    return this.bySymbol.get(symbol);
  }

  get listVersion(): number {
    return this.version;
  }

  /** Changes an instrument's status (admin); raises the version when anything changed. */
  setStatus(symbol: string, status: InstrumentStatus, nowIso: string): number {
    this.db.tx(() => this.writeStatus(symbol, status, nowIso));
    this.load();
    return this.version;
  }

  /**
   * Writes a status change inside the CALLER's write transaction (putSync), so that it commits
   * with whatever caused it or not at all (the risk monitor's halt commits with the deficit that
   * caused it: a crash cannot keep one and lose the other). The live list changes only at reload(),
   * which the caller runs after the commit. Compares with the persisted status, not the live one
   * (which lags a committed change until reload). Returns whether anything changed.
   */
  writeStatus(symbol: string, status: InstrumentStatus, nowIso: string): boolean {
    const listed = INSTRUMENTS.find((i) => i.symbol === symbol);
    if (!listed) throw new Error(`unknown symbol ${symbol}`);
    if (!INSTRUMENT_STATUSES.includes(status)) throw new Error(`unknown status ${status}`);
    const o = (this.db.meta.get(META_KEY) as Overrides | undefined) ?? { version: INSTRUMENTS_VERSION, updated_at: INSTRUMENTS_UPDATED_AT, status: {} };
    const previous = o.status[symbol] ?? listed.status;
    if (previous === status) return false;
    this.db.meta.putSync(META_KEY, { version: o.version + 1, updated_at: nowIso, status: { ...o.status, [symbol]: status } });
    for (const fn of this.listeners) fn(symbol, status, previous);
    return true;
  }

  /** Re-reads the persisted list (after a transaction that ran writeStatus has committed). */
  reload(): void {
    this.load();
  }

  /**
   * Runs fn inside the transaction of every status change, with the change (e.g. the risk monitor
   * starts a market's socialized-loss count again when it goes back to trading). fn may write with
   * putSync; a throw aborts the change.
   */
  onStatusChange(fn: StatusListener): void {
    this.listeners.push(fn);
  }
}

/** The spec's Instrument object (numbers exact, plus symbol_id) for JSON output. */
export function instrumentView(i: InstrumentSpec): Record<string, unknown> {
  return {
    symbol: i.symbol, symbol_id: i.symbol_id, base_asset: i.base_asset, quote_asset: i.quote_asset, type: i.type, status: i.status,
    tick_size: num(i.tick_size), step_size: num(i.step_size), min_qty: num(i.min_qty), max_qty: num(i.max_qty),
    min_notional: num(i.min_notional), contract_size: num(i.contract_size), margin_asset: i.margin_asset,
    max_leverage: i.max_leverage, maker_fee_bps: num(i.maker_fee_bps), taker_fee_bps: num(i.taker_fee_bps),
    initial_margin_ratio: num(i.initial_margin_ratio), maintenance_margin_ratio: num(i.maintenance_margin_ratio),
    listed_at: i.listed_at, expires_at: i.expires_at,
  };
}
