// Withdrawals: free collateral leaves the shielded pool for a fresh recipient address on the
// simulated public chain (spec: "A withdrawal releases collateral to a fresh ephemeral recipient
// address"). The chain shows the amount, the address and the pool's new total; nothing on it names
// the account. docs/api.md ("Withdrawals") has the interface.
//
// Life of a withdrawal, each step durable before the next:
// 1. one lmdb transaction checks free collateral (balance − reserved), debits the balance, adds to
//    the account's `withdrawn`, stores the record as `pending` and claims the recipient address;
// 2. the release is appended to the chain (fsync'd; the chain queues it behind any settlement block);
// 3. the record becomes `released` with its block.
// A crash between 1 and 3 leaves it pending; start() and a retry timer finish it, and the chain's
// own index makes the append happen at most once.
import { randomBytes } from 'node:crypto';
import type { Database } from 'lmdb';
import type { Logger } from 'pino';
import { microToUsdc } from '@tenebra/config';
import { isWalletAddress } from '@tenebra/seal';
import { ApiError } from '../errors';
import type { GatewayClock } from '../clock';
import type { GatewayDb } from '../store/db';
import { big, str, type AccountRec } from '../store/records';
import type { BlockRef, SimulatedChain, WithdrawalTx } from './chain';
import { shieldedPoolTotal } from './pool';

export type WithdrawalStatus = 'pending' | 'released';

export interface WithdrawalRec {
  withdrawal_id: string;
  user_id: string;
  client_withdrawal_id: string | null;
  /** micro-USDC */
  amount: string;
  recipient: string;
  status: WithdrawalStatus;
  created_at: string;
  released_at: string | null;
  /** the pool's total after this release, micro-USDC (as of the debit) */
  shielded_pool_total: string;
  block: BlockRef | null;
}

export interface WithdrawalRequest {
  userId: string;
  amountMicro: bigint;
  recipient: string;
  clientWithdrawalId: string | null;
}

/** Largest single withdrawal: the largest single deposit (10^12 USDC). */
export const MAX_WITHDRAWAL_MICRO = 10n ** 18n;
/** client_withdrawal_id: as client_order_id, at most 64 characters of a safe set. */
export const CLIENT_WITHDRAWAL_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Pending releases are retried this often (ms) after a failed chain append. */
const RETRY_MS = 5_000;

const recKey = (id: string): string => `W${id}`;
/** per-account index, oldest first: created time (ms, fixed width) then id */
const userKey = (userId: string, createdMs: number, id: string): string => `U${userId}\n${String(createdMs).padStart(15, '0')}${id}`;
const clientKey = (userId: string, clientId: string): string => `C${userId}\n${clientId}`;
const recipientKey = (address: string): string => `R${address}`;

export class WithdrawalService {
  private readonly table: Database<unknown, string>;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** ids whose release is under way (a retry must not start a second one) */
  private readonly releasing = new Set<string>();
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly db: GatewayDb,
    private readonly chain: SimulatedChain,
    private readonly clock: GatewayClock,
    private readonly log: Logger,
  ) {
    this.table = db.root.openDB<unknown, string>({ name: 'withdrawals' });
  }

  /** Releases what a crash left pending (the chain must be open: call after settlement's start()). */
  start(): void {
    this.stopped = false;
    this.releasePending();
  }

  /** Waits for releases in flight and stops retrying; the chain may be closed afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Debits the account and releases the amount to the recipient. Resolves with the record: `released`
   * once the block is on disk, or `pending` if the chain append failed (it is retried; the debit stands).
   * A repeated client_withdrawal_id with the same amount and recipient returns the first record.
   */
  async withdraw(r: WithdrawalRequest): Promise<WithdrawalRec> {
    if (r.amountMicro <= 0n) throw new ApiError('invalid_request', 'amount must be greater than 0');
    if (r.amountMicro > MAX_WITHDRAWAL_MICRO) throw new ApiError('invalid_request', `amount must be at most ${microToUsdc(MAX_WITHDRAWAL_MICRO)} USDC`);
    if (!isWalletAddress(r.recipient)) throw new ApiError('invalid_request', "recipient must be an address: '0x' and 40 lowercase hex digits");
    if (r.clientWithdrawalId !== null && !CLIENT_WITHDRAWAL_ID.test(r.clientWithdrawalId)) {
      throw new ApiError('invalid_request', 'client_withdrawal_id must be 1 to 64 characters of A-Z a-z 0-9 . _ : -');
    }
    const nowMs = this.clock.nowMs();
    const { rec, fresh } = await this.db.txAsync(() => this.debit(r, nowMs));
    if (!fresh || rec.status === 'released') return rec;
    this.log.info({ withdrawal_id: rec.withdrawal_id, user_id: rec.user_id, amount: microToUsdc(big(rec.amount)) }, 'withdrawal debited');
    return this.track(this.release(rec));
  }

  /** One withdrawal of the account, or undefined. */
  get(userId: string, withdrawalId: string): WithdrawalRec | undefined {
    const rec = this.table.get(recKey(withdrawalId)) as WithdrawalRec | undefined;
    return rec && rec.user_id === userId ? rec : undefined;
  }

  /** The account's withdrawals, newest first. */
  list(userId: string, limit: number): WithdrawalRec[] {
    const prefix = `U${userId}\n`;
    const out: WithdrawalRec[] = [];
    for (const { key } of this.table.getRange({ start: `${prefix}~`, end: prefix, reverse: true, limit })) {
      const rec = this.table.get(recKey(key.slice(prefix.length + 15))) as WithdrawalRec | undefined;
      if (rec) out.push(rec);
    }
    return out;
  }

  /** Inside a transaction: the checks, then the debit and the pending record. */
  private debit(r: WithdrawalRequest, nowMs: number): { rec: WithdrawalRec; fresh: boolean } {
    if (r.clientWithdrawalId !== null) {
      const prior = this.table.get(clientKey(r.userId, r.clientWithdrawalId)) as string | undefined;
      const rec = prior === undefined ? undefined : (this.table.get(recKey(prior)) as WithdrawalRec | undefined);
      if (rec) {
        if (rec.amount !== str(r.amountMicro) || rec.recipient !== r.recipient) {
          throw new ApiError('conflict', `client_withdrawal_id '${r.clientWithdrawalId}' was used for withdrawal ${rec.withdrawal_id} with another amount or recipient`);
        }
        return { rec, fresh: false };
      }
    }
    const acct = this.db.accounts.get(r.userId);
    if (!acct) throw new ApiError('not_found', `no account ${r.userId}`);
    if (acct.in_liquidation) throw new ApiError('ACCOUNT_IN_LIQUIDATION', 'the account is being liquidated; withdrawals wait until it ends');
    if (r.recipient === acct.user_id || this.db.accounts.get(r.recipient) !== undefined) {
      throw new ApiError('invalid_request', 'recipient must be a fresh address, not an account of this venue (a withdrawal to it would link the two)');
    }
    if (this.table.get(recipientKey(r.recipient)) !== undefined || this.chain.hasPaid(r.recipient)) {
      throw new ApiError('invalid_request', `recipient ${r.recipient} was paid before; every withdrawal goes to a fresh address`);
    }
    const free = big(acct.balance) - big(acct.reserved);
    if (r.amountMicro > free) {
      throw new ApiError('insufficient_collateral', `withdrawal of ${microToUsdc(r.amountMicro)} USDC exceeds free collateral of ${microToUsdc(free > 0n ? free : 0n)} USDC (balance less the margin reserved by open orders)`);
    }
    const next: AccountRec = { ...acct, balance: str(big(acct.balance) - r.amountMicro), withdrawn: str(big(acct.withdrawn ?? '0') + r.amountMicro) };
    this.db.accounts.putSync(acct.user_id, next);
    const id = `wd_${randomBytes(12).toString('hex')}`;
    const rec: WithdrawalRec = {
      withdrawal_id: id, user_id: acct.user_id, client_withdrawal_id: r.clientWithdrawalId, amount: str(r.amountMicro), recipient: r.recipient,
      status: 'pending', created_at: new Date(nowMs).toISOString(), released_at: null, shielded_pool_total: str(shieldedPoolTotal(this.db)), block: null,
    };
    this.table.putSync(recKey(id), rec);
    this.table.putSync(userKey(acct.user_id, nowMs, id), 1);
    this.table.putSync(recipientKey(r.recipient), id);
    if (r.clientWithdrawalId !== null) this.table.putSync(clientKey(acct.user_id, r.clientWithdrawalId), id);
    return { rec, fresh: true };
  }

  /** Appends the release (unless a crash left it on chain already) and marks the record released. */
  private async release(rec: WithdrawalRec): Promise<WithdrawalRec> {
    if (this.releasing.has(rec.withdrawal_id)) return rec;
    this.releasing.add(rec.withdrawal_id);
    try {
      await this.db.root.flushed; // the debit reaches the disk before its block does
      const tx: WithdrawalTx = { type: 'withdrawal', withdrawal_id: rec.withdrawal_id, recipient: rec.recipient, amount: rec.amount, shielded_pool_total: rec.shielded_pool_total };
      const block = this.chain.findWithdrawal(rec.withdrawal_id) ?? await this.chain.appendDurable(tx, this.clock.nowMs());
      const ref: BlockRef = { height: block.height, hash: block.hash, tx_hash: block.tx_hash, time: block.time };
      const done: WithdrawalRec = { ...rec, status: 'released', released_at: ref.time, block: ref };
      await this.db.txAsync(() => this.table.putSync(recKey(rec.withdrawal_id), done));
      this.log.info({ withdrawal_id: rec.withdrawal_id, height: ref.height }, 'withdrawal released on chain');
      return done;
    } catch (e) {
      this.log.error({ err: e instanceof Error ? e.stack : String(e), withdrawal_id: rec.withdrawal_id }, `withdrawal release failed; retrying in ${RETRY_MS} ms`);
      this.scheduleRetry();
      return rec;
    } finally {
      this.releasing.delete(rec.withdrawal_id);
    }
  }

  private releasePending(): void {
    for (const { key, value } of this.table.getRange({ start: 'W', end: 'X' })) {
      const rec = value as WithdrawalRec;
      if (key.startsWith('W') && rec.status === 'pending') void this.track(this.release(rec));
    }
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) this.releasePending();
    }, RETRY_MS);
    this.retryTimer.unref();
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const forget = (): void => void this.inFlight.delete(p);
    void p.then(forget, forget);
    return p;
  }
}
