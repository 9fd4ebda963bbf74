// The fill ledger: turns committed order and position changes into the aggregates behind the public
// statistics, the VIP 30-day volume and open interest (stats/store.ts), exactly once.
//
// It reads only committed records: the 'order' and 'position' events clearing emits after each
// commit, and at start the order and position tables themselves. A fill is the growth of an order's
// filled_steps over what the ledger has already accounted for that order (A<order_id>), so an event
// lost to a crash between clearing's commit and the ledger's is found again by reconcile() at the
// next start (dated at the order's last change), and nothing is counted twice.
//
// Release rule (what the public statistics may show; docs/leakage.md). A public aggregate made of one
// trade gives that trade away: a quiet asset's only fill in a slot showed its notional, and the step
// in open interest its size and price. So an asset's fills go into a pending pool first, and the pool
// is published whole (volume in the slot and day of the fill that completes it) once it holds
// `releaseFills` fills (a trade is two fills, one per side; default 10, five trades). Open interest
// is published the same way: the long size moves in public only after `releaseFills` changes of the
// asset's long side (position events that moved it), and its price is the volume-weighted price of the asset's last released pool,
// never one trade's. Distinct trader counts are published at once (counts, not amounts). With
// releaseFills = 1 every fill is published at once (the former rule, kept for tests).
// Dominance rule (as statistical agencies suppress a cell one contributor dominates): five trades
// of which one is nearly all the volume still give that trade away, so a pool is released only once
// its largest fill is at most `dominancePercent` (default 50) of the pool's traded notional; until
// then it keeps collecting.
import type { Logger } from 'pino';
import type { InstrumentSpec } from '@tenebra/config';
import { notionalMicro } from '@tenebra/config';
import { positionKey, type GatewayDb } from '../store/db';
import type { GatewayEvents, OrderEvent, PositionEvent } from '../events';
import type { InstrumentRegistry } from '../instruments';
import type { GatewayClock } from '../clock';
import { big, type OrderRec, type PositionRec } from '../store/records';
import {
  StatsStore, mergeAgg, slotKey, dayKey, oiKey, userKey, volKey, accountedKey, pendingKey, LONG_OI_KEY, NEXT_USER_KEY,
  type Accounted, type UserRec, type OiPoint, type Pending,
} from './store';
import { slotOf, dayOf } from './window';

/** What a flush changed, for the caches and the VIP tiers. */
export interface LedgerFlush {
  /** users that got fills */
  users: Set<string>;
  /** smallest slot written (Infinity when none) */
  minSlot: number;
}

/** Fills (and position changes) of an asset published together at least: five trades (release rule above). */
export const DEFAULT_RELEASE_FILLS = 10;
/** The largest fill of a released pool is at most this share of its traded notional (dominance rule above). */
export const DEFAULT_DOMINANCE_PERCENT = 50;

/** Most events held before a flush is forced; events are flushed every event-loop turn anyway. */
const MAX_PENDING = 100_000;

/** What one transaction recorded, applied to memory after it commits. */
interface Recorded {
  flush: LedgerFlush;
  /** first fill times of users seen for the first time */
  newFirst: number[];
  /** position sizes after the transaction */
  sizes: Map<string, bigint>;
}

interface Fill {
  userId: string;
  asset: string;
  inst: InstrumentSpec;
  qty: bigint;
  ts: bigint;
  priceTicks: bigint;
  atMs: number;
}

export class FillLedger {
  private orders: OrderRec[] = [];
  private positions: PositionRec[] = [];
  private scheduled = false;
  private chain: Promise<void> = Promise.resolve();
  /** position key -> signed size (steps), mirror of the positions table for open-interest deltas */
  private readonly sizes = new Map<string, bigint>();
  /** first fill time of every user, sorted (for all-time user counts) */
  private firstFillsSorted: number[] = [];
  private readonly listeners: ((f: LedgerFlush) => void)[] = [];
  private stopped = false;

  constructor(
    private readonly db: GatewayDb,
    readonly store: StatsStore,
    private readonly registry: InstrumentRegistry,
    private readonly clock: GatewayClock,
    private readonly log: Logger,
    /** fills per published pool (release rule above); 1 publishes every fill at once */
    private readonly releaseFills = DEFAULT_RELEASE_FILLS,
    /** the largest fill's most share of a released pool's traded notional (dominance rule above); 100 turns it off */
    private readonly dominancePercent = DEFAULT_DOMINANCE_PERCENT,
  ) {
    if (!Number.isInteger(releaseFills) || releaseFills < 1) throw new RangeError(`releaseFills must be a positive integer, got ${releaseFills}`);
    if (!Number.isInteger(dominancePercent) || dominancePercent < 1 || dominancePercent > 100) throw new RangeError(`dominancePercent must be an integer in 1..100, got ${dominancePercent}`);
  }

  /**
   * Whether a pool may be released: enough fills, and no fill dominating it. The pool counts both
   * sides of each trade, so its traded notional is ts2 / 2 and the test is mx <= pct% of ts2 / 2.
   * Conservative at pool boundaries: a pool is cut at its 10th fill, so a taker's fill can land in
   * it without all its makers' fills and weigh more than half of ts2 / 2 there. 100 turns the rule
   * off outright (that boundary case would otherwise still hold a pool at 100%).
   */
  private releasable(p: { f: number; ts2: bigint; mx: bigint }): boolean {
    if (p.f < this.releaseFills) return false;
    if (this.releaseFills === 1 || this.dominancePercent === 100) return true;
    return 200n * p.mx <= BigInt(this.dominancePercent) * p.ts2;
  }

  /** Subscribes to committed order and position events. */
  attach(events: GatewayEvents): void {
    events.on('order', (e: OrderEvent) => this.onOrder(e));
    events.on('position', (e: PositionEvent) => this.onPosition(e));
  }

  /** Calls fn after every committed flush. */
  onFlush(fn: (f: LedgerFlush) => void): void {
    this.listeners.push(fn);
  }

  private onOrder(e: OrderEvent): void {
    if (e.order.filled_steps === '0') return;
    this.orders.push(e.order);
    this.schedule();
  }

  private onPosition(e: PositionEvent): void {
    if (e.update_reason === 'settlement' || e.update_reason === 'mark_price') return; // no size change
    this.positions.push(e.position);
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.orders.length + this.positions.length >= MAX_PENDING) {
      this.flushNow();
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flushNow();
    });
  }

  private flushNow(): void {
    const orders = this.orders;
    const positions = this.positions;
    this.orders = [];
    this.positions = [];
    if (orders.length === 0 && positions.length === 0) return;
    // One flush at a time, in event order.
    this.chain = this.chain.then(() => this.commit(orders, positions)).catch((e: unknown) => {
      this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'fill ledger flush failed; the next start reconciles it');
    });
  }

  /** Resolves when every event received so far is committed. */
  async idle(): Promise<void> {
    this.flushNow();
    await this.chain;
  }

  /** Stops taking events and waits for what is in flight. */
  async stop(): Promise<void> {
    await this.idle();
    this.stopped = true;
  }

  private async commit(orders: OrderRec[], positions: PositionRec[]): Promise<void> {
    const result = await this.db.txAsync(() => this.apply(orders, positions, this.clock.nowMs()));
    this.afterCommit(result);
  }

  /** In-memory state follows the transaction only once it has committed. */
  private afterCommit(r: Recorded): void {
    for (const [k, v] of r.sizes) this.sizes.set(k, v);
    for (const f of r.newFirst) insertSorted(this.firstFillsSorted, f);
    for (const fn of this.listeners) {
      try {
        fn(r.flush);
      } catch (e) {
        this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'fill ledger listener failed');
      }
    }
  }

  /**
   * Applies order snapshots (fills = growth of filled_steps over what is accounted) and position
   * snapshots (open interest) in one transaction. Must run inside a GatewayDb transaction.
   */
  private apply(orders: readonly OrderRec[], positions: readonly PositionRec[], nowMs: number): Recorded {
    const fills: Fill[] = [];
    const seen = new Map<string, Accounted>();
    for (const o of orders) {
      const acc = seen.get(o.order_id) ?? this.store.accounted(o.order_id) ?? { f: '0', n: '0' };
      const df = big(o.filled_steps) - big(acc.f);
      if (df <= 0n) continue;
      const dn = big(o.notional_ts) - big(acc.n);
      const inst = this.registry.get(o.symbol);
      const next = { f: o.filled_steps, n: o.notional_ts };
      seen.set(o.order_id, next);
      this.store.put(accountedKey(o.order_id), next);
      if (!inst || dn <= 0n) {
        this.log.error({ order_id: o.order_id, symbol: o.symbol }, 'fill ledger: fill on an unknown instrument or without notional; not counted');
        continue;
      }
      const px = o.last_fill_ticks !== null && o.last_fill_steps === df.toString() ? big(o.last_fill_ticks) : dn / df;
      fills.push({ userId: o.user_id, asset: inst.base_asset, inst, qty: df, ts: dn, priceTicks: px, atMs: Number(big(o.out_time_ns) / 1_000_000n) });
    }
    return this.record(fills, positions, nowMs);
  }

  private record(fills: readonly Fill[], positions: readonly PositionRec[], nowMs: number): Recorded {
    const flush: LedgerFlush = { users: new Set(), minSlot: Number.POSITIVE_INFINITY };
    const sizes = new Map<string, bigint>();
    const newFirst: number[] = [];
    // Aggregates per slot and per day, user numbers, per-user daily volume, last prices.
    const bySlot = new Map<number, { ts2: Map<string, bigint>; users: Map<string, Set<number>> }>();
    const byDay = new Map<number, { ts2: Map<string, bigint>; users: Map<string, Set<number>> }>();
    const userVol = new Map<string, bigint>();
    /** volume-weighted price (ticks) of each asset's pool released in this flush, the last one */
    const releasedPx = new Map<string, bigint>();
    const pools = new Map<string, { f: number; ts2: bigint; q: bigint; pc: number; mx: bigint }>();
    const pool = (asset: string) => {
      let p = pools.get(asset);
      if (!p) {
        const s = this.store.pending(asset);
        pools.set(asset, (p = { f: s?.f ?? 0, ts2: BigInt(s?.ts2 ?? '0'), q: BigInt(s?.q ?? '0'), pc: s?.pc ?? 0, mx: BigInt(s?.mx ?? '0') }));
      }
      return p;
    };
    const users = new Map<string, UserRec>();
    for (const f of fills) {
      let u = users.get(f.userId) ?? this.store.user(f.userId);
      if (!u) {
        const n = (this.store.get<number>(NEXT_USER_KEY) ?? 0) + 1;
        this.store.put(NEXT_USER_KEY, n);
        u = { i: n, f: f.atMs };
        newFirst.push(f.atMs);
        users.set(f.userId, u);
        this.store.put(userKey(f.userId), u);
      } else if (f.atMs < u.f) {
        // a reconciled fill older than the first one known
        u = { ...u, f: f.atMs };
        users.set(f.userId, u);
        this.store.put(userKey(f.userId), u);
      } else {
        users.set(f.userId, u);
      }
      const slot = slotOf(f.atMs);
      const day = dayOf(f.atMs);
      addTo(bySlot, slot, f.asset, 0n, u.i);
      addTo(byDay, day, f.asset, 0n, u.i);
      const vk = volKey(u.i, day);
      userVol.set(vk, (userVol.get(vk) ?? 0n) + notionalMicro(f.inst, f.ts, 'floor'));
      const p = pool(f.asset);
      p.f += 1;
      p.ts2 += f.ts;
      p.q += f.qty;
      if (f.ts > p.mx) p.mx = f.ts;
      if (this.releasable(p)) {
        addTo(bySlot, slot, f.asset, p.ts2);
        addTo(byDay, day, f.asset, p.ts2);
        releasedPx.set(f.asset, p.q > 0n ? p.ts2 / p.q : f.priceTicks);
        p.f = 0;
        p.ts2 = 0n;
        p.q = 0n;
        p.mx = 0n;
      }
      flush.users.add(f.userId);
      flush.minSlot = Math.min(flush.minSlot, slot);
    }
    for (const [slot, a] of bySlot) this.store.put(slotKey(slot), mergeAgg(this.store.slot(slot), a.ts2, a.users));
    for (const [day, a] of byDay) this.store.put(dayKey(day), mergeAgg(this.store.get(dayKey(day)), a.ts2, a.users));
    for (const [k, v] of userVol) this.store.put(k, (BigInt(this.store.get<string>(k) ?? '0') + v).toString());

    // Open interest: the long side's total size per asset, from position snapshots.
    const long = this.store.longOi();
    const changed = new Set<string>(releasedPx.keys());
    for (const p of positions) {
      const inst = this.registry.get(p.symbol);
      if (!inst) continue;
      const key = positionKey(p.user_id, p.symbol);
      const before = sizes.get(key) ?? this.sizes.get(key) ?? 0n;
      const after = big(p.size_steps);
      sizes.set(key, after);
      const d = pos(after) - pos(before);
      if (d !== 0n) {
        long[inst.base_asset] = (BigInt(long[inst.base_asset] ?? '0') + d).toString();
        pool(inst.base_asset).pc += 1;
        changed.add(inst.base_asset);
      }
    }
    if (changed.size > 0) this.store.put(LONG_OI_KEY, long);
    const slot = slotOf(nowMs);
    for (const asset of changed) {
      if (this.publishOi(asset, slot, long[asset] ?? '0', pool(asset), releasedPx.get(asset))) flush.minSlot = Math.min(flush.minSlot, slot);
    }
    for (const [asset, p] of pools) {
      this.store.put(pendingKey(asset), { f: p.f, ts2: p.ts2.toString(), q: p.q.toString(), pc: p.pc, ...(p.mx > 0n ? { mx: p.mx.toString() } : {}) } satisfies Pending);
    }
    return { flush, newFirst, sizes };
  }

  /**
   * Writes the asset's open-interest point at `slot` when something may be published: the long size
   * once `pool.pc` long-side changes are pending (then resets them), the price when a pool of fills
   * was released (`releasedPx`). Returns whether it wrote one. Must run inside a transaction.
   */
  private publishOi(asset: string, slot: number, long: string, pool: { pc: number }, releasedPx: bigint | undefined): boolean {
    const publishLong = pool.pc >= this.releaseFills;
    if (!publishLong && releasedPx === undefined) return false;
    const prev = this.store.oiBefore(asset, slot + 1);
    const point: OiPoint = { l: publishLong ? long : prev?.l ?? '0', p: releasedPx?.toString() ?? prev?.p ?? '0' };
    if (publishLong) pool.pc = 0;
    this.store.put(oiKey(asset, slot), point);
    return true;
  }

  /**
   * Brings the ledger up to the committed order and position tables (at start, before events flow):
   * fills the ledger has not accounted (lost with a crash) are counted at the order's last change, and
   * open interest is recomputed from the positions. Returns the number of fills recovered.
   */
  reconcile(): number {
    const fills: Fill[] = [];
    const accountedNow: [string, Accounted][] = [];
    for (const { value: o } of this.db.orders.getRange()) {
      if (o.filled_steps === '0') continue;
      const acc = this.store.accounted(o.order_id) ?? { f: '0', n: '0' };
      const df = big(o.filled_steps) - big(acc.f);
      if (df <= 0n) continue;
      const dn = big(o.notional_ts) - big(acc.n);
      const inst = this.registry.get(o.symbol);
      accountedNow.push([o.order_id, { f: o.filled_steps, n: o.notional_ts }]);
      if (!inst || dn <= 0n) continue;
      fills.push({ userId: o.user_id, asset: inst.base_asset, inst, qty: df, ts: dn, priceTicks: dn / df, atMs: Number(big(o.out_time_ns) / 1_000_000n) });
    }
    // Open interest from the positions table, the authority.
    const long: Record<string, bigint> = {};
    this.sizes.clear();
    for (const { key, value: p } of this.db.positions.getRange()) {
      const size = big(p.size_steps);
      this.sizes.set(key, size);
      const inst = this.registry.get(p.symbol);
      if (inst && size > 0n) long[inst.base_asset] = (long[inst.base_asset] ?? 0n) + size;
    }
    const stored = this.store.longOi();
    const drift = new Set<string>();
    for (const a of new Set([...Object.keys(stored), ...Object.keys(long)])) {
      if (BigInt(stored[a] ?? '0') !== (long[a] ?? 0n)) drift.add(a);
    }
    if (fills.length > 0 || drift.size > 0) {
      const now = this.clock.nowMs();
      this.db.tx(() => {
        for (const [id, a] of accountedNow) this.store.put(accountedKey(id), a);
        this.record(fills, [], now);
        if (drift.size > 0) {
          const next: Record<string, string> = {};
          for (const [a, v] of Object.entries(long)) next[a] = v.toString();
          this.store.put(LONG_OI_KEY, next);
          // a drift counts as one position change of its asset (release rule)
          const slot = slotOf(now);
          for (const a of drift) {
            const s = this.store.pending(a) ?? { f: 0, ts2: '0', q: '0', pc: 0 };
            const p = { ...s, pc: s.pc + 1 };
            this.publishOi(a, slot, next[a] ?? '0', p, undefined);
            this.store.put(pendingKey(a), p satisfies Pending);
          }
        }
      });
      this.log.warn({ fills: fills.length, oi_assets: [...drift] }, 'fill ledger reconciled with the committed orders and positions');
    }
    this.firstFillsSorted = this.store.firstFills().sort((a, b) => a - b);
    return fills.length;
  }

  /** Number of users whose first fill is before tMs. */
  usersBefore(tMs: number): number {
    const a = this.firstFillsSorted;
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[mid]! < tMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function pos(x: bigint): bigint {
  return x > 0n ? x : 0n;
}

/** Adds released volume (ts2) and, with `user`, a trader to the asset's aggregate of slot or day k. */
function addTo(m: Map<number, { ts2: Map<string, bigint>; users: Map<string, Set<number>> }>, k: number, asset: string, ts: bigint, user?: number): void {
  let a = m.get(k);
  if (!a) m.set(k, (a = { ts2: new Map(), users: new Map() }));
  if (ts !== 0n) a.ts2.set(asset, (a.ts2.get(asset) ?? 0n) + ts);
  if (user === undefined) return;
  let s = a.users.get(asset);
  if (!s) a.users.set(asset, (s = new Set()));
  s.add(user);
}

function insertSorted(a: number[], x: number): void {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  a.splice(lo, 0, x);
}
