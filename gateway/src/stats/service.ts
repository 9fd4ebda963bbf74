// The public statistics (spec: GET /stats/platform/overview and /series): aggregates of real fills
// through the delayed as_of, as decimal strings. Nothing per trade or per user leaves this module:
// only sums and distinct counts.
//
// Definitions (docs/api.md): volume = traded notional in USDC, each fill counted once; users =
// distinct accounts with at least one fill; open interest = the long side's total size valued at the
// asset's last trade price; funding = funding paid (what paying positions paid, risk-monitor/funding-ledger.ts).
import { microPerTickStep, microToUsdc, ratioToDecimal, divRound, type InstrumentSpec } from '@tenebra/config';
import { ApiError } from '../errors';
import type { InstrumentRegistry } from '../instruments';
import type { GatewayClock } from '../clock';
import type { FillLedger } from './ledger';
import type { StatsStore, Collected } from './store';
import {
  asOf, buckets, parseWindow, rejectUnknownParams, rfc3339, singleParam, slotOf, SLOT_MS, SLOTS_PER_DAY,
  type StatsWindow,
} from './window';

export type Metric = 'volume' | 'oi' | 'funding' | 'users';
export const METRICS: readonly Metric[] = ['volume', 'oi', 'funding', 'users'];
/** Metrics whose points add up, so a running sum (cumulative) is served. */
const CUMULATIVE: ReadonlySet<Metric> = new Set(['volume', 'users']);

const OVERVIEW_PARAMS = ['range', 'from', 'to'] as const;
const SERIES_PARAMS = ['metric', 'range', 'from', 'to', 'assets'] as const;
const CACHE_ENTRIES = 256;

interface Point {
  t: string;
  total: string;
  by_asset?: Record<string, string>;
}

export class StatsService {
  private readonly cache = new Map<string, Record<string, unknown>>();
  private readonly byAsset = new Map<string, InstrumentSpec>();

  constructor(
    private readonly ledger: FillLedger,
    private readonly store: StatsStore,
    registry: InstrumentRegistry,
    private readonly clock: GatewayClock,
    /** funding paid in slots [from, to), micro-USDC (risk-monitor/funding-ledger.ts); none: 0 */
    private readonly fundingPaid: (fromSlot: number, toSlotExcl: number) => { total: bigint; perAsset: Map<string, bigint> } = () => ({ total: 0n, perAsset: new Map() }),
  ) {
    for (const i of registry.list().instruments) this.byAsset.set(i.base_asset, i);
    ledger.onFlush((f) => {
      // Fills land after as_of, so cached answers stay true; a late (reconciled) fill voids them.
      if (f.minSlot < slotOf(asOf(this.clock.nowMs()))) this.cache.clear();
    });
  }

  /** The overview object for query parameters q (invalid_request on a bad parameter). */
  overview(q: Record<string, unknown>): Record<string, unknown> {
    rejectUnknownParams(q, OVERVIEW_PARAMS);
    const asOfMs = asOf(this.clock.nowMs());
    const w = parseWindow(q, asOfMs);
    return this.cached(`o|${w.asOfMs}|${w.fromMs}|${w.toMs}`, () => this.computeOverview(w));
  }

  /** The series object for query parameters q (invalid_request on a bad parameter). */
  series(q: Record<string, unknown>): Record<string, unknown> {
    rejectUnknownParams(q, SERIES_PARAMS);
    const metricText = singleParam(q, 'metric');
    if (metricText === undefined || metricText === '') throw new ApiError('invalid_request', `query parameter 'metric' is required: one of ${METRICS.join(', ')}`);
    if (!(METRICS as readonly string[]).includes(metricText)) throw new ApiError('invalid_request', `metric '${metricText.slice(0, 16)}' is not one of ${METRICS.join(', ')}`);
    const metric = metricText as Metric;
    const assets = this.parseAssets(singleParam(q, 'assets'));
    const asOfMs = asOf(this.clock.nowMs());
    const w = parseWindow(q, asOfMs);
    return this.cached(`s|${metric}|${w.asOfMs}|${w.fromMs}|${w.toMs}|${assets?.join(',') ?? ''}`, () => this.computeSeries(w, metric, assets));
  }

  private parseAssets(text: string | undefined): string[] | null {
    if (text === undefined) return null;
    const parts = text.split(',').map((s) => s.trim());
    if (parts.some((p) => p === '')) throw new ApiError('invalid_request', 'assets must be a comma-separated list of base assets such as BTC,ETH (no empty items)');
    const out: string[] = [];
    for (const p of parts) {
      if (!this.byAsset.has(p)) throw new ApiError('invalid_request', `unknown asset '${p.slice(0, 16)}' in assets; use base assets as listed by GET /instruments (e.g. BTC, ETH)`);
      if (!out.includes(p)) out.push(p);
    }
    return out;
  }

  private cached(key: string, make: () => Record<string, unknown>): Record<string, unknown> {
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const v = make();
    if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, v);
    return v;
  }

  private computeOverview(w: StatsWindow): Record<string, unknown> {
    const a = slotOf(w.asOfMs); // first slot after as_of
    const day = SLOTS_PER_DAY;
    const inWindow = this.store.collect(w.fromSlot, w.toSlotExcl, true);
    const v24 = this.volume(this.store.collect(a - day, a, false)).total;
    const vPrev24 = this.volume(this.store.collect(a - 2 * day, a - day, false)).total;
    const v30 = this.volume(this.store.collect(a - 30 * day, a, false)).total;
    const vPrev30 = this.volume(this.store.collect(a - 60 * day, a - 30 * day, false)).total;
    const oi = this.openInterest(w.toSlotExcl).total;
    const oiPrev = this.openInterest(w.toSlotExcl - day).total;
    const allTime = this.volume(this.store.collect(0, a, false)).total;
    const asOfDayStart = Math.floor(a / day) * day;
    const activeSince = (days: number): number => distinct(this.store.collect(asOfDayStart - (days - 1) * day, a, true)).size;
    const change24 = percentChange(v24, vPrev24);
    const change30 = percentChange(v30, vPrev30);
    const oiChange = percentChange(oi, oiPrev);
    return {
      as_of: rfc3339(w.asOfMs),
      volume_24h: microToUsdc(v24),
      volume: { value: microToUsdc(this.volume(inWindow).total), ...(change24 ? { change_24h: change24 } : {}), ...(change30 ? { change_30d: change30 } : {}) },
      open_interest: { value: microToUsdc(oi), ...(oiChange ? { change_24h: oiChange } : {}) },
      funding: { value: microToUsdc(this.fundingPaid(w.fromSlot, w.toSlotExcl).total) },
      users: { value: String(distinct(inWindow).size) },
      all_time_volume: microToUsdc(allTime),
      all_time_users: String(this.ledger.usersBefore(w.asOfMs)),
      monthly_active_users: String(activeSince(30)),
      quarterly_active_users: String(activeSince(90)),
    };
  }

  private computeSeries(w: StatsWindow, metric: Metric, assets: string[] | null): Record<string, unknown> {
    const points: Point[] = [];
    const cumulative: { t: string; total: string }[] = [];
    let running = metric === 'volume' ? this.volume(this.store.collect(0, w.fromSlot, false)).total : 0n;
    for (const b of buckets(w)) {
      const t = rfc3339(b.t);
      let total: bigint;
      let per: Map<string, bigint>;
      switch (metric) {
        case 'volume': {
          const v = this.volume(this.store.collect(b.fromSlot, b.toSlotExcl, false));
          total = v.total;
          per = v.perAsset;
          running += total;
          cumulative.push({ t, total: microToUsdc(running) });
          break;
        }
        case 'users': {
          const c = this.store.collect(b.fromSlot, b.toSlotExcl, true);
          total = BigInt(distinct(c).size);
          per = new Map([...c.users].map(([k, s]) => [k, BigInt(s.size)]));
          cumulative.push({ t, total: String(this.ledger.usersBefore(b.toSlotExcl * SLOT_MS)) });
          break;
        }
        case 'oi': {
          const v = this.openInterest(b.toSlotExcl);
          total = v.total;
          per = v.perAsset;
          break;
        }
        case 'funding': {
          const f = this.fundingPaid(b.fromSlot, b.toSlotExcl);
          total = f.total;
          per = f.perAsset;
          break;
        }
      }
      const money = metric !== 'users';
      const fmt = (x: bigint): string => (money ? microToUsdc(x) : x.toString());
      const p: Point = { t, total: fmt(total) };
      if (assets) p.by_asset = Object.fromEntries(assets.map((a) => [a, fmt(per.get(a) ?? 0n)]));
      points.push(p);
    }
    return {
      as_of: rfc3339(w.asOfMs), metric, granularity: w.granularity, points,
      ...(CUMULATIVE.has(metric) && cumulative.length > 0 ? { cumulative } : {}),
    };
  }

  /** USDC (micro) of collected ts2 sums: each fill was counted on both sides, so halve. */
  private volume(c: Collected): { total: bigint; perAsset: Map<string, bigint> } {
    const perAsset = new Map<string, bigint>();
    let total = 0n;
    for (const [asset, ts2] of c.ts2) {
      const inst = this.byAsset.get(asset);
      if (!inst) continue;
      const { num, den } = microPerTickStep(inst);
      const micro = divRound(ts2 * num, 2n * den, 'floor');
      perAsset.set(asset, micro);
      total += micro;
    }
    return { total, perAsset };
  }

  /** Open interest (micro-USDC) in force at the start of slot endSlotExcl: long size × last trade price. */
  private openInterest(endSlotExcl: number): { total: bigint; perAsset: Map<string, bigint> } {
    const perAsset = new Map<string, bigint>();
    let total = 0n;
    for (const [asset, inst] of this.byAsset) {
      const p = this.store.oiBefore(asset, endSlotExcl);
      if (!p) continue;
      const { num, den } = microPerTickStep(inst);
      const micro = divRound(BigInt(p.l) * BigInt(p.p) * num, den, 'floor');
      perAsset.set(asset, micro);
      total += micro;
    }
    return { total, perAsset };
  }
}

function distinct(c: Collected): Set<number> {
  const all = new Set<number>();
  for (const s of c.users.values()) for (const u of s) all.add(u);
  return all;
}

/** (cur − prev) / prev in percent with two decimals; undefined when prev is 0 (the field is then omitted). */
export function percentChange(cur: bigint, prev: bigint): string | undefined {
  if (prev === 0n) return undefined;
  return ratioToDecimal((cur - prev) * 100n, prev, 2);
}
