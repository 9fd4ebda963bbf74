// Settlement: fills are settled in batches. Each batch takes every position that changed since its
// last settlement, computes each account's delta (per position: size, margin, realized PnL, fees;
// and the collateral that moved), commits to each account's delta with a salted hash, and publishes
// the commitments, their Merkle root and the shielded pool's total on the simulated public chain.
// Only that total is public; deltas, balances, positions and counterparties are not.
//
// Batch life: `pending` (sealed and stored, not yet on chain) -> `committed` (in a block). A batch
// is sealed in one lmdb transaction with the new settled snapshots, so each change is settled
// exactly once; a crash before the chain append leaves it pending, and start() publishes it.
import type { Database } from 'lmdb';
import type { Logger } from 'pino';
import { positionKey, type GatewayDb } from '../store/db';
import type { GatewayClock } from '../clock';
import type { GatewayEvents, PositionEvent } from '../events';
import type { InstrumentRegistry } from '../instruments';
import { fromUnits, microToUsdc } from '@tenebra/config';
import { big, type PositionRec } from '../store/records';
import { commit, deltaJson, merkleProof, merkleRoot, newSalt, type AccountDelta, type PositionDelta, type ProofStep } from './commitment';
import type { BlockRef, SettlementTx, SimulatedChain } from './chain';
import { shieldedPoolTotal } from './pool';

export type BatchStatus = 'pending' | 'committed';

export interface BatchRec {
  batch_id: string;
  status: BatchStatus;
  created_at: string;
  committed_at: string | null;
  /** commitments in leaf order */
  commitments: string[];
  commitments_root: string;
  /** micro-USDC */
  shielded_pool_total: string;
  positions: number;
  block: BlockRef | null;
}

export interface EntryRec {
  batch_id: string;
  user_id: string;
  leaf: number;
  commitment: string;
  salt: string;
  delta_json: string;
  delta: AccountDelta;
}

/** The settled state of a position (what the last batch covered). */
interface Snapshot {
  size_steps: string;
  margin: string;
  realized_pnl: string;
  fees_paid: string;
}

export interface SettlementOptions {
  /** a batch closes this often when anything is pending (ms); default 2000 */
  intervalMs?: number;
  /** most accounts in one batch (the rest wait for the next); default 1000 */
  maxAccounts?: number;
}

const ID_WIDTH = 12;
const batchKey = (id: number | string): string => `B${String(id).padStart(ID_WIDTH, '0')}`;
const entryKey = (id: string, userId: string): string => `E${id.padStart(ID_WIDTH, '0')}\n${userId}`;
const userIndexKey = (userId: string, id: string): string => `X${userId}\n${id.padStart(ID_WIDTH, '0')}`;
const snapKey = (posKey: string): string => `P${posKey}`;
const LAST_KEY = 'M:last';
/** Most position keys remembered as pending; beyond it a full scan finds them at the next close. */
const MAX_PENDING = 1_000_000;

export class SettlementService {
  private readonly table: Database<unknown, string>;
  private readonly pending = new Set<string>();
  private overflow = false;
  private timer: NodeJS.Timeout | null = null;
  private closing: Promise<BatchRec | null> | null = null;
  private events: GatewayEvents | null = null;
  readonly intervalMs: number;
  private readonly maxAccounts: number;

  constructor(
    private readonly db: GatewayDb,
    readonly chain: SimulatedChain,
    private readonly registry: InstrumentRegistry,
    private readonly clock: GatewayClock,
    private readonly log: Logger,
    opts: SettlementOptions = {},
  ) {
    this.table = db.root.openDB<unknown, string>({ name: 'settlement' });
    this.intervalMs = opts.intervalMs ?? 2_000;
    this.maxAccounts = opts.maxAccounts ?? 1_000;
  }

  /**
   * Marks positions changed by committed fills as pending settlement, and announces committed
   * batches on events: a 'settlement' event per account and a 'position' event (update_reason
   * 'settlement') per position the batch settled.
   */
  attach(events: GatewayEvents): void {
    this.events = events;
    events.on('position', (e: PositionEvent) => {
      // a mark_price update changes nothing stored (risk-monitor/monitor.ts): nothing to settle
      if (e.update_reason !== 'settlement' && e.update_reason !== 'mark_price') this.touch(positionKey(e.position.user_id, e.position.symbol));
    });
  }

  private touch(key: string): void {
    if (this.pending.size >= MAX_PENDING) this.overflow = true;
    else this.pending.add(key);
  }

  /**
   * Opens the chain, publishes batches a crash left pending, and finds positions whose committed
   * state differs from their settled snapshot (changes whose events were lost).
   */
  start(): void {
    this.chain.open();
    for (const { value } of this.table.getRange({ start: 'B', end: 'C' })) {
      const b = value as BatchRec;
      if (b.status === 'pending') this.publish(b);
    }
    this.scanAll();
    this.timer = setInterval(() => {
      if (this.pending.size > 0 || this.overflow) void this.closeBatch().catch((e: unknown) => this.log.error({ err: e instanceof Error ? e.stack : String(e) }, 'settlement batch failed'));
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.chain.close();
  }

  private scanAll(): void {
    for (const { key, value } of this.db.positions.getRange()) {
      const s = this.table.get(snapKey(key)) as Snapshot | undefined;
      if (!s || !sameState(s, value)) this.pending.add(key);
    }
    this.overflow = false;
  }

  /** Number of positions waiting for the next batch. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Seals and publishes one batch of what is pending; null when nothing changed. One close at a time. */
  closeBatch(): Promise<BatchRec | null> {
    this.closing ??= this.closeNow().finally(() => {
      this.closing = null;
    });
    return this.closing;
  }

  /**
   * Off the request path: the batch is sealed in a group-committed transaction and the chain's fsync
   * runs on the thread pool (a synchronous commit and fsync here stalled every order for milliseconds
   * every interval).
   */
  private async closeNow(): Promise<BatchRec | null> {
    await Promise.resolve();
    if (this.overflow) this.scanAll();
    if (this.pending.size === 0) return null;
    // Group pending positions by account; at most maxAccounts accounts per batch.
    const byUser = new Map<string, string[]>();
    for (const key of this.pending) {
      const user = key.slice(0, key.indexOf('\n'));
      const list = byUser.get(user);
      if (list) list.push(key);
      else if (byUser.size < this.maxAccounts) byUser.set(user, [key]);
    }
    const nowMs = this.clock.nowMs();
    let taken = false;
    const batch = await this.db.txAsync(() => {
      // Taken off the pending set when the snapshot is read: a change committed after this point
      // touches its position again and lands in the next batch.
      taken = true;
      for (const keys of byUser.values()) for (const k of keys) this.pending.delete(k);
      return this.seal(byUser, nowMs);
    }).catch((e: unknown) => {
      if (taken) for (const keys of byUser.values()) for (const k of keys) this.touch(k);
      throw e;
    });
    if (!batch) return null;
    await this.db.root.flushed; // the pending batch reaches the disk before its block does (as the synchronous commit did)
    return this.publishDurable(batch);
  }

  /** Computes deltas, commitments and the new snapshots, and stores the batch as pending (inside a transaction). */
  private seal(byUser: Map<string, string[]>, nowMs: number): BatchRec | null {
    const entries: { user: string; delta: AccountDelta }[] = [];
    const snaps: [string, Snapshot][] = [];
    let positions = 0;
    for (const [user, keys] of [...byUser].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const deltas: PositionDelta[] = [];
      let collateral = 0n;
      for (const key of keys.sort()) {
        const cur = this.db.positions.get(key);
        if (!cur) continue;
        const prev = (this.table.get(snapKey(key)) as Snapshot | undefined) ?? { size_steps: '0', margin: '0', realized_pnl: '0', fees_paid: '0' };
        if (sameState(prev, cur)) continue;
        const d: PositionDelta = {
          symbol: cur.symbol,
          size_steps: (big(cur.size_steps) - big(prev.size_steps)).toString(),
          margin: (big(cur.margin) - big(prev.margin)).toString(),
          realized_pnl: (big(cur.realized_pnl) - big(prev.realized_pnl)).toString(),
          fees: (big(cur.fees_paid) - big(prev.fees_paid)).toString(),
        };
        collateral += big(d.realized_pnl) - big(d.fees) - big(d.margin);
        deltas.push(d);
        snaps.push([key, stateOf(cur)]);
        positions++;
      }
      if (deltas.length > 0) entries.push({ user, delta: { collateral: collateral.toString(), positions: deltas } });
    }
    if (entries.length === 0) return null;
    const id = String(((this.table.get(LAST_KEY) as number | undefined) ?? 0) + 1);
    const sealed = entries.map((e, leaf) => {
      const delta_json = deltaJson(e.delta);
      const salt = newSalt();
      return { batch_id: id, user_id: e.user, leaf, commitment: commit(id, e.user, delta_json, salt), salt, delta_json, delta: e.delta } satisfies EntryRec;
    });
    const commitments = sealed.map((e) => e.commitment);
    const pool = shieldedPoolTotal(this.db);
    const batch: BatchRec = {
      batch_id: id, status: 'pending', created_at: new Date(nowMs).toISOString(), committed_at: null, commitments,
      commitments_root: merkleRoot(commitments), shielded_pool_total: pool.toString(), positions, block: null,
    };
    this.table.putSync(LAST_KEY, Number(id));
    this.table.putSync(batchKey(id), batch);
    for (const e of sealed) {
      this.table.putSync(entryKey(id, e.user_id), e);
      this.table.putSync(userIndexKey(e.user_id, id), 1);
    }
    for (const [k, s] of snaps) this.table.putSync(snapKey(k), s);
    return batch;
  }

  /** Appends a pending batch to the chain (unless a crash left it there already) and marks it committed. */
  private publish(b: BatchRec): BatchRec {
    const block = this.chain.find(b.batch_id) ?? this.chain.append({
      type: 'settlement_batch', batch_id: b.batch_id, commitments_root: b.commitments_root, commitments: b.commitments,
      shielded_pool_total: b.shielded_pool_total,
    }, this.clock.nowMs());
    return this.committed(b, block, this.db.tx(() => this.done(b, block)));
  }

  /** As publish, without blocking the event loop on the chain's fsync or the lmdb commit. */
  private async publishDurable(b: BatchRec): Promise<BatchRec> {
    const block = this.chain.find(b.batch_id) ?? await this.chain.appendDurable(this.chainTx(b), this.clock.nowMs());
    return this.committed(b, block, await this.db.txAsync(() => this.done(b, block)));
  }

  private chainTx(b: BatchRec): SettlementTx {
    return {
      type: 'settlement_batch', batch_id: b.batch_id, commitments_root: b.commitments_root, commitments: b.commitments,
      shielded_pool_total: b.shielded_pool_total,
    };
  }

  private done(b: BatchRec, block: BlockRef): BatchRec {
    const ref: BlockRef = { height: block.height, hash: block.hash, tx_hash: block.tx_hash, time: block.time };
    const done: BatchRec = { ...b, status: 'committed', committed_at: ref.time, block: ref };
    this.table.putSync(batchKey(b.batch_id), done);
    return done;
  }

  private committed(b: BatchRec, block: BlockRef, done: BatchRec): BatchRec {
    this.log.info({ batch_id: b.batch_id, accounts: b.commitments.length, height: block.height }, 'settlement batch committed');
    this.announce(done);
    return done;
  }

  /** Emits the batch's per-account settlement events and the settled positions (after the commit). */
  private announce(b: BatchRec): void {
    const events = this.events;
    if (!events) return;
    const atNs = BigInt(this.clock.nowMs()) * 1_000_000n;
    for (const { value } of this.table.getRange({ start: entryKey(b.batch_id, ''), end: `${entryKey(b.batch_id, '')}\uffff` })) {
      const e = value as EntryRec;
      try {
        events.emit('settlement', {
          user_id: e.user_id, batch_id: b.batch_id, status: b.status, at_ns: atNs,
          detail: {
            commitment: e.commitment, block_height: b.block?.height ?? null, collateral: microToUsdc(BigInt(e.delta.collateral)),
            positions: e.delta.positions.map((p) => {
              const inst = this.registry.get(p.symbol);
              return {
                symbol: p.symbol, size: inst ? fromUnits(BigInt(p.size_steps), inst.step_size) : p.size_steps, margin: microToUsdc(BigInt(p.margin)),
                realized_pnl: microToUsdc(BigInt(p.realized_pnl)), fees: microToUsdc(BigInt(p.fees)),
              };
            }),
          },
        });
        for (const p of e.delta.positions) {
          const rec = this.db.positions.get(positionKey(e.user_id, p.symbol));
          if (rec) events.emit('position', { update_reason: 'settlement', position: rec });
        }
      } catch (err) {
        this.log.error({ err: err instanceof Error ? err.stack : String(err), batch_id: b.batch_id }, 'a settlement listener failed');
      }
    }
  }

  /** A batch, or undefined. */
  batch(batchId: string): BatchRec | undefined {
    return this.table.get(batchKey(batchId)) as BatchRec | undefined;
  }

  /** The account's entry in a batch, with its Merkle path, or undefined. */
  entry(batchId: string, userId: string): (EntryRec & { proof: ProofStep[] }) | undefined {
    const e = this.table.get(entryKey(batchId, userId)) as EntryRec | undefined;
    const b = this.batch(batchId);
    if (!e || !b) return undefined;
    return { ...e, proof: merkleProof(b.commitments, e.leaf) };
  }

  /** Ids of the batches holding the account's entries, newest first. */
  batchesOf(userId: string, limit: number): string[] {
    const out: string[] = [];
    const prefix = `X${userId}\n`;
    for (const { key } of this.table.getRange({ start: `${prefix}~`, end: prefix, reverse: true, limit })) {
      out.push(String(Number(key.slice(prefix.length))));
    }
    return out;
  }

  /** The last batch id (0 before the first). */
  get lastBatchId(): number {
    return (this.table.get(LAST_KEY) as number | undefined) ?? 0;
  }
}

function stateOf(p: PositionRec): Snapshot {
  return { size_steps: p.size_steps, margin: p.margin, realized_pnl: p.realized_pnl, fees_paid: p.fees_paid };
}

function sameState(s: Snapshot, p: PositionRec): boolean {
  return s.size_steps === p.size_steps && s.margin === p.margin && s.realized_pnl === p.realized_pnl && s.fees_paid === p.fees_paid;
}
