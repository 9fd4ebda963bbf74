// The gateway's durable state in one lmdb environment under dataDir. Every multi-record change is one
// transaction, so a kill -9 leaves either all of a change or none of it. Hot paths (placements, acks,
// results) use txAsync: lmdb batches every transaction queued in one event-loop turn into one commit
// (group commit; a synchronous commit costs an fsync, about 3 ms here), and a throw rolls back only
// that callback's writes.
import { open, type RootDatabase, type RootDatabaseOptionsWithPath, type Database } from 'lmdb';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AccountRec, DepositRec, OrderRec, OutboxRec, PositionRec } from './records';
import type { FillRec } from './history';

export interface ClientIdRec {
  order_id: string;
  at_ms: number;
}

/** What a background transaction's callback returns when it gave way (it wrote nothing). */
const YIELDED: unique symbol = Symbol('yielded');

export class GatewayDb {
  /** txAsync callbacks queued and not yet run (txAsyncBackground gives way to them) */
  private pendingTx = 0;
  readonly root: RootDatabase;
  readonly accounts: Database<AccountRec, string>;
  /** api_key -> user_id */
  readonly apiKeys: Database<string, string>;
  readonly orders: Database<OrderRec, string>;
  /** `${user_id}\n${client_order_id}` -> order id and creation time */
  readonly clientIds: Database<ClientIdRec, string>;
  /** `${user_id}\n${symbol}` -> position */
  readonly positions: Database<PositionRec, string>;
  /** local submission number -> operation not yet acknowledged by the sequencer */
  readonly outbox: Database<OutboxRec, number>;
  /** token jti -> expiry (Unix seconds) */
  readonly revoked: Database<number, string>;
  readonly deposits: Database<DepositRec, string>;
  /** small named values: results cursor, counters, instrument overrides, venue ledger */
  readonly meta: Database<unknown, string>;
  /** taker bonuses: hourly window accruals and payouts (bonus/store.ts) */
  readonly bonuses: Database<unknown, string>;
  /** per-account order listing keys -> order id (store/history.ts) */
  readonly orderIndex: Database<string, string>;
  /** per-account fills, by time (store/history.ts) */
  readonly fills: Database<FillRec, string>;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    // useRecords: false stores plain msgpack maps. With records but no shared structures (lmdb-js's
    // default here) every value carries its record definition and every get compiles a reader for
    // it again (~3x slower reads on the order path). Values written either way read back the same.
    const opts: RootDatabaseOptionsWithPath & { useRecords: boolean } = { path: join(dataDir, 'gateway.lmdb'), maxDbs: 32, compression: false, useRecords: false };
    this.root = open(opts);
    this.accounts = this.root.openDB<AccountRec, string>({ name: 'accounts' });
    this.apiKeys = this.root.openDB<string, string>({ name: 'api_keys' });
    this.orders = this.root.openDB<OrderRec, string>({ name: 'orders' });
    this.clientIds = this.root.openDB<ClientIdRec, string>({ name: 'client_ids' });
    this.positions = this.root.openDB<PositionRec, string>({ name: 'positions' });
    this.outbox = this.root.openDB<OutboxRec, number>({ name: 'outbox' });
    this.revoked = this.root.openDB<number, string>({ name: 'revoked' });
    this.deposits = this.root.openDB<DepositRec, string>({ name: 'deposits' });
    this.meta = this.root.openDB<unknown, string>({ name: 'meta' });
    this.bonuses = this.root.openDB<unknown, string>({ name: 'bonuses' });
    this.orderIndex = this.root.openDB<string, string>({ name: 'order_index' });
    this.fills = this.root.openDB<FillRec, string>({ name: 'fills' });
  }

  /** Runs fn in one synchronous write transaction, committed and flushed on return; a throw aborts it. */
  tx<T>(fn: () => T): T {
    return this.root.transactionSync(fn);
  }

  /**
   * Runs fn atomically in the next batched write transaction; resolves with its result once committed
   * (visible, and safe from a process crash; the disk sync follows). A throw rolls back fn's writes
   * and rejects with the thrown error. fn runs later, so it must read what it checks itself.
   */
  txAsync<T>(fn: () => T): Promise<T> {
    this.pendingTx++;
    let ran = false;
    try {
      return this.root.childTransaction(() => {
        ran = true;
        this.pendingTx--;
        return fn();
      });
    } catch (e) {
      if (!ran) this.pendingTx--; // refused before it was queued (closed store): nothing waits
      throw e;
    }
  }

  /**
   * txAsync for background work that should not hold up the requests' transactions (clearing).
   * lmdb-js adds a txAsync to the last queued, not yet started transaction, and resolves it only
   * when that transaction commits: a placement queued while a clearing batch waits for the writer
   * would run after clearing's callback and commit with it (ADR 0008, helpers hadmit and hadmit2).
   * So when fn's turn comes and a txAsync queued after it has not run yet (it is in this lmdb
   * transaction or waits for it), fn writes nothing and is queued again behind it, at most
   * `maxYields` times in a row, so a stream of requests cannot starve it. `onYield` is told each time.
   */
  async txAsyncBackground<T>(fn: () => T, maxYields = 4, onYield?: () => void): Promise<T> {
    for (let yields = 0; ; yields++) {
      const mayYield = yields < maxYields;
      const r = await this.root.childTransaction((): T | typeof YIELDED => (mayYield && this.pendingTx > 0 ? YIELDED : fn()));
      if (r !== YIELDED) return r as T;
      onYield?.();
    }
  }

  /** Next value of a persistent counter (call inside tx). */
  nextCounter(name: string): number {
    const key = `counter:${name}`;
    const v = ((this.meta.get(key) as number | undefined) ?? 0) + 1;
    this.meta.putSync(key, v);
    return v;
  }

  /** Waits for queued writes to be committed and synced, then closes. */
  async close(): Promise<void> {
    await this.root.committed;
    await this.root.flushed;
    await this.root.close();
  }
}

export const positionKey = (userId: string, symbol: string): string => `${userId}\n${symbol}`;
export const clientIdKey = (userId: string, clientOrderId: string): string => `${userId}\n${clientOrderId}`;
