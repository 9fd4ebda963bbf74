// The fill ledger's lmdb table ('stats'): aggregates only, never a trade or an order.
//
//   S<slot>             SlotAgg of a 10-minute slot     (volume per asset, active user numbers per asset)
//   D<day>              SlotAgg of a UTC day            (the sum of its slots, written with them)
//   O<asset>\0<slot>    OiPoint: published long open interest (steps) and price (ticks) from the slot on
//   L                   current long open interest per asset (steps), published or not
//   P<asset>            Pending: what of the asset is not published yet (fills, their ts2 and size,
//                       position changes): see the release rule in ledger.ts
//   U<user_id>          UserRec: the user's number and first fill time
//   N                   next user number
//   V<user#><day>       the user's notional volume that UTC day (micro-USDC), for the VIP tier
//   F<user_id>          the user's assigned (floor) fee tier
//   A<order_id>         Accounted: filled steps and notional already counted for an order
//
// Volume is kept as ts2 = Σ qty_steps × price_ticks over BOTH sides of every fill (twice the
// traded notional, in the instrument's tick×step units), so it stays exact; it is halved and turned
// into USDC only when read.
import type { Database } from 'lmdb';
import type { GatewayDb } from '../store/db';
import type { Tier } from '../tiers';
import { SLOTS_PER_DAY } from './window';

export interface SlotAgg {
  /** asset -> ts2 (decimal string) */
  v: Record<string, string>;
  /** asset -> user numbers with a fill (sorted, distinct) */
  u: Record<string, number[]>;
}

export interface OiPoint {
  /** long open interest in steps, as of the last release of position changes */
  l: string;
  /** volume-weighted price in ticks of the last released pool of fills ('0' before the first) */
  p: string;
}

/** An asset's activity not yet in the public statistics (ledger.ts, "release rule"). */
export interface Pending {
  /** fills (one per side of a trade) */
  f: number;
  /** their Σ qty × price (ticks × steps) */
  ts2: string;
  /** their Σ qty (steps) */
  q: string;
  /** position events that moved the asset's long open interest (a long opened, grown, cut or closed) */
  pc: number;
  /** the largest single fill's qty × price in the pool (ticks × steps; the dominance rule); absent = 0 */
  mx?: string;
}

export interface UserRec {
  i: number;
  /** first fill, ms */
  f: number;
}

export interface Accounted {
  f: string;
  n: string;
}

/** A window's totals: ts2 per asset and distinct user numbers per asset. */
export interface Collected {
  ts2: Map<string, bigint>;
  users: Map<string, Set<number>>;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
export const slotKey = (slot: number): string => `S${pad(slot, 10)}`;
export const dayKey = (day: number): string => `D${pad(day, 7)}`;
export const oiKey = (asset: string, slot: number): string => `O${asset}\u0000${pad(slot, 10)}`;
export const userKey = (userId: string): string => `U${userId}`;
export const volKey = (userNo: number, day: number): string => `V${pad(userNo, 9)}${pad(day, 7)}`;
export const floorKey = (userId: string): string => `F${userId}`;
export const accountedKey = (orderId: string): string => `A${orderId}`;
export const pendingKey = (asset: string): string => `P${asset}`;
export const LONG_OI_KEY = 'L';
export const NEXT_USER_KEY = 'N';

/** Typed access to the 'stats' table; writers must run inside a GatewayDb transaction. */
export class StatsStore {
  readonly table: Database<unknown, string>;

  constructor(readonly db: GatewayDb) {
    this.table = db.root.openDB<unknown, string>({ name: 'stats' });
  }

  get<T>(key: string): T | undefined {
    return this.table.get(key) as T | undefined;
  }

  /** Write inside a transaction. */
  put(key: string, value: unknown): void {
    this.table.putSync(key, value);
  }

  slot(slot: number): SlotAgg | undefined {
    return this.get<SlotAgg>(slotKey(slot));
  }

  /** Totals over slots [fromSlot, toSlotExcl): day rollups for whole days inside, slots at the edges. */
  collect(fromSlot: number, toSlotExcl: number, withUsers: boolean): Collected {
    const out: Collected = { ts2: new Map(), users: new Map() };
    if (fromSlot >= toSlotExcl) return out;
    const firstWholeDay = Math.ceil(fromSlot / SLOTS_PER_DAY);
    const endWholeDay = Math.floor(toSlotExcl / SLOTS_PER_DAY); // exclusive
    if (firstWholeDay >= endWholeDay) {
      this.addRange(out, slotKey(fromSlot), slotKey(toSlotExcl), withUsers);
      return out;
    }
    this.addRange(out, slotKey(fromSlot), slotKey(firstWholeDay * SLOTS_PER_DAY), withUsers);
    this.addRange(out, dayKey(firstWholeDay), dayKey(endWholeDay), withUsers);
    this.addRange(out, slotKey(endWholeDay * SLOTS_PER_DAY), slotKey(toSlotExcl), withUsers);
    return out;
  }

  private addRange(out: Collected, start: string, end: string, withUsers: boolean): void {
    if (start >= end) return;
    for (const { value } of this.table.getRange({ start, end })) addAgg(out, value as SlotAgg, withUsers);
  }

  /** Slot aggregates in [fromSlot, toSlotExcl), in order, as (slot, agg) pairs. */
  *slots(fromSlot: number, toSlotExcl: number): Generator<[number, SlotAgg]> {
    for (const { key, value } of this.table.getRange({ start: slotKey(fromSlot), end: slotKey(toSlotExcl) })) {
      yield [Number(key.slice(1)), value as SlotAgg];
    }
  }

  /** Day aggregates in [fromDay, toDayExcl). */
  *days(fromDay: number, toDayExcl: number): Generator<[number, SlotAgg]> {
    for (const { key, value } of this.table.getRange({ start: dayKey(fromDay), end: dayKey(toDayExcl) })) {
      yield [Number(key.slice(1)), value as SlotAgg];
    }
  }

  /** The open-interest point of asset in force just before slot `beforeSlot` (latest point at a smaller slot). */
  oiBefore(asset: string, beforeSlot: number): OiPoint | undefined {
    if (beforeSlot <= 0) return undefined;
    for (const { value } of this.table.getRange({ start: oiKey(asset, beforeSlot - 1), end: `O${asset}\u0000`, reverse: true, limit: 1 })) {
      return value as OiPoint;
    }
    return undefined;
  }

  /** Open-interest points of asset at slots in [fromSlot, toSlotExcl), in order. */
  *oiPoints(asset: string, fromSlot: number, toSlotExcl: number): Generator<[number, OiPoint]> {
    for (const { key, value } of this.table.getRange({ start: oiKey(asset, fromSlot), end: oiKey(asset, toSlotExcl) })) {
      yield [Number(key.slice(key.indexOf('\u0000') + 1)), value as OiPoint];
    }
  }

  user(userId: string): UserRec | undefined {
    return this.get<UserRec>(userKey(userId));
  }

  /** Every user's first fill time (ms), unsorted. */
  firstFills(): number[] {
    const out: number[] = [];
    for (const { value } of this.table.getRange({ start: 'U', end: 'V' })) out.push((value as UserRec).f);
    return out;
  }

  /** Σ of the user's daily volumes over days [fromDay, toDayIncl], micro-USDC. */
  userVolume(userNo: number, fromDay: number, toDayIncl: number): bigint {
    let sum = 0n;
    for (const { value } of this.table.getRange({ start: volKey(userNo, fromDay), end: volKey(userNo, toDayIncl + 1) })) sum += BigInt(value as string);
    return sum;
  }

  floor(userId: string): Tier | undefined {
    return this.get<Tier>(floorKey(userId));
  }

  accounted(orderId: string): Accounted | undefined {
    return this.get<Accounted>(accountedKey(orderId));
  }

  pending(asset: string): Pending | undefined {
    return this.get<Pending>(pendingKey(asset));
  }

  longOi(): Record<string, string> {
    return this.get<Record<string, string>>(LONG_OI_KEY) ?? {};
  }
}

function addAgg(out: Collected, a: SlotAgg, withUsers: boolean): void {
  for (const [asset, v] of Object.entries(a.v)) out.ts2.set(asset, (out.ts2.get(asset) ?? 0n) + BigInt(v));
  if (!withUsers) return;
  for (const [asset, list] of Object.entries(a.u)) {
    let set = out.users.get(asset);
    if (!set) out.users.set(asset, (set = new Set()));
    for (const u of list) set.add(u);
  }
}

/** Adds ts2 and users to an aggregate record (returns a new record). */
export function mergeAgg(a: SlotAgg | undefined, ts2: Map<string, bigint>, users: Map<string, Set<number>>): SlotAgg {
  const v: Record<string, string> = { ...(a?.v ?? {}) };
  const u: Record<string, number[]> = { ...(a?.u ?? {}) };
  for (const [asset, x] of ts2) v[asset] = (BigInt(v[asset] ?? '0') + x).toString();
  for (const [asset, set] of users) {
    const merged = new Set([...(u[asset] ?? []), ...set]);
    u[asset] = [...merged].sort((x, y) => x - y);
  }
  return { v, u };
}
