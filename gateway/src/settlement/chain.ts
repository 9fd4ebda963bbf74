// A simulated public chain: an append-only, hash-linked log of blocks in one JSON-lines file, each
// block carrying one transaction: a settlement batch (commitments, their Merkle root and the
// shielded pool's total: the only public aggregate) or a withdrawal (an amount released from the
// shielded pool to a fresh recipient address). Appends are fsynced before they count, one at a time
// whoever asks. On open the whole log is verified (every hash and link); a torn last line from a
// crash is cut off.
import { closeSync, existsSync, fsync, fsyncSync, openSync, readFileSync, truncateSync, writeSync } from 'node:fs';
import { sha256Hex } from './commitment';

export interface SettlementTx {
  type: 'settlement_batch';
  batch_id: string;
  commitments_root: string;
  commitments: string[];
  /** total USDC in the shielded pool, micro-USDC decimal string */
  shielded_pool_total: string;
}

/** Collateral leaving the shielded pool for a fresh address; nothing on chain names the account. */
export interface WithdrawalTx {
  type: 'withdrawal';
  withdrawal_id: string;
  /** 0x + 40 hex, never used before on this chain */
  recipient: string;
  /** micro-USDC decimal string */
  amount: string;
  /** the pool's total after the release, micro-USDC decimal string */
  shielded_pool_total: string;
}

export type ChainTx = SettlementTx | WithdrawalTx;

/** The key a transaction is found by: a batch id or a withdrawal id, in separate name spaces. */
export function txKey(tx: ChainTx): string {
  return tx.type === 'settlement_batch' ? `batch:${tx.batch_id}` : `withdrawal:${tx.withdrawal_id}`;
}

export interface Block {
  height: number;
  time: string;
  prev_hash: string;
  tx_hash: string;
  tx: ChainTx;
  hash: string;
}

/** Where a transaction landed. */
export interface BlockRef {
  height: number;
  hash: string;
  tx_hash: string;
  time: string;
}

function ref(b: Block): BlockRef {
  return { height: b.height, hash: b.hash, tx_hash: b.tx_hash, time: b.time };
}

const GENESIS = '0'.repeat(64);
/** Blocks whose batch id stays indexed in memory. */
const MAX_REMEMBERED = 10_000;
/** Largest block line we write or accept (a batch holds at most a few thousand commitments). */
const MAX_LINE = 4 * 1024 * 1024;

/** Hash of a block's contents (everything but its own hash). */
export function blockHash(b: Omit<Block, 'hash'>): string {
  return sha256Hex(JSON.stringify({ height: b.height, time: b.time, prev_hash: b.prev_hash, tx_hash: b.tx_hash }));
}

export function txHash(tx: ChainTx): string {
  return sha256Hex(JSON.stringify(tx));
}

export class SimulatedChain {
  private tipHash = GENESIS;
  private tipHeight = 0;
  /** txKey -> where it landed, for the most recent MAX_REMEMBERED blocks (recovery needs only the last few) */
  private readonly landed = new Map<string, BlockRef>();
  /** every recipient address a withdrawal has paid (the chain's own check that each is fresh) */
  private readonly recipients = new Set<string>();
  /** the last durable append in flight: the next one waits for it (one fsync'd write at a time) */
  private tail: Promise<unknown> = Promise.resolve();
  private fd: number | null = null;

  constructor(readonly file: string) {}

  /** Opens (creating if needed) and verifies the log; remembers where each batch landed. */
  open(): void {
    if (existsSync(this.file)) {
      const text = readFileSync(this.file, 'utf8');
      let good = 0;
      let pos = 0;
      while (pos < text.length) {
        const nl = text.indexOf('\n', pos);
        if (nl < 0) break; // torn last line: never acknowledged
        const line = text.slice(pos, nl);
        const b = JSON.parse(line) as Block;
        if (b.height !== this.tipHeight + 1 || b.prev_hash !== this.tipHash || txHash(b.tx) !== b.tx_hash || blockHash(b) !== b.hash) {
          throw new Error(`public chain ${this.file}: block ${b.height} does not verify`);
        }
        this.tipHash = b.hash;
        this.tipHeight = b.height;
        this.remember(b);
        pos = nl + 1;
        good += Buffer.byteLength(line) + 1;
      }
      if (pos < text.length) truncateSync(this.file, good);
    }
    this.fd = openSync(this.file, 'a');
  }

  /** Appends a block holding tx and syncs it to disk (blocks the thread for the fsync). Only while no durable append is in flight (start-up). */
  append(tx: ChainTx, timeMs: number): Block {
    const { fd, block } = this.write(tx, timeMs);
    fsyncSync(fd);
    return this.advance(block);
  }

  /**
   * As append, but the fsync runs on the thread pool, so the event loop goes on meanwhile; resolves
   * once the block is on disk. Appends from several callers (settlement batches, withdrawals) are
   * queued: each block links to the one before it, so a write waits for the previous fsync.
   */
  appendDurable(tx: ChainTx, timeMs: number): Promise<Block> {
    const run = this.tail.then(async () => {
      const { fd, block } = this.write(tx, timeMs);
      await new Promise<void>((res, rej) => fsync(fd, (e) => (e ? rej(e) : res())));
      return this.advance(block);
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  private write(tx: ChainTx, timeMs: number): { fd: number; block: Block } {
    if (this.fd === null) throw new Error('public chain: not open');
    if (this.landed.has(txKey(tx))) throw new Error(`public chain: ${txKey(tx)} is already on chain`);
    if (tx.type === 'withdrawal' && this.recipients.has(tx.recipient)) throw new Error(`public chain: recipient ${tx.recipient} was paid before`);
    const partial = { height: this.tipHeight + 1, time: new Date(timeMs).toISOString(), prev_hash: this.tipHash, tx_hash: txHash(tx), tx };
    const block: Block = { ...partial, hash: blockHash(partial) };
    const line = `${JSON.stringify(block)}\n`;
    if (line.length > MAX_LINE) throw new Error('public chain: block too large');
    writeSync(this.fd, line);
    return { fd: this.fd, block };
  }

  private advance(block: Block): Block {
    this.tipHash = block.hash;
    this.tipHeight = block.height;
    this.remember(block);
    return block;
  }

  private remember(b: Block): void {
    this.landed.set(txKey(b.tx), ref(b));
    if (this.landed.size > MAX_REMEMBERED) this.landed.delete(this.landed.keys().next().value!);
    if (b.tx.type === 'withdrawal') this.recipients.add(b.tx.recipient);
  }

  /** Height of the latest block (0: empty chain). */
  get height(): number {
    return this.tipHeight;
  }

  /** Where a batch landed, if it is on chain among the last MAX_REMEMBERED blocks. */
  find(batchId: string): BlockRef | undefined {
    return this.landed.get(`batch:${batchId}`);
  }

  /** Where a withdrawal landed, if it is on chain among the last MAX_REMEMBERED blocks. */
  findWithdrawal(withdrawalId: string): BlockRef | undefined {
    return this.landed.get(`withdrawal:${withdrawalId}`);
  }

  /** True iff a withdrawal on this chain has paid the address. */
  hasPaid(recipient: string): boolean {
    return this.recipients.has(recipient);
  }

  /** Every block, read back from the file (tests, audits). */
  readAll(): Block[] {
    if (!existsSync(this.file)) return [];
    return readFileSync(this.file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Block);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
