// A simulated public chain: an append-only, hash-linked log of blocks in one JSON-lines file, each
// block carrying one settlement transaction (commitments, their Merkle root and the shielded pool's
// total: the only public aggregate). Appends are fsynced before they count. On open the whole log is
// verified (every hash and link); a torn last line from a crash is cut off.
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

export interface Block {
  height: number;
  time: string;
  prev_hash: string;
  tx_hash: string;
  tx: SettlementTx;
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

export function txHash(tx: SettlementTx): string {
  return sha256Hex(JSON.stringify(tx));
}

export class SimulatedChain {
  private tipHash = GENESIS;
  private tipHeight = 0;
  /** batch id -> where it landed, for the most recent MAX_REMEMBERED blocks (recovery needs only the last few) */
  private readonly batches = new Map<string, BlockRef>();
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

  /** Appends a block holding tx and syncs it to disk (blocks the thread for the fsync). */
  append(tx: SettlementTx, timeMs: number): Block {
    const { fd, block } = this.write(tx, timeMs);
    fsyncSync(fd);
    return this.advance(block);
  }

  /**
   * As append, but the fsync runs on the thread pool, so the event loop goes on meanwhile; resolves
   * once the block is on disk. The caller must not append again before it settles.
   */
  async appendDurable(tx: SettlementTx, timeMs: number): Promise<Block> {
    const { fd, block } = this.write(tx, timeMs);
    await new Promise<void>((res, rej) => fsync(fd, (e) => (e ? rej(e) : res())));
    return this.advance(block);
  }

  private write(tx: SettlementTx, timeMs: number): { fd: number; block: Block } {
    if (this.fd === null) throw new Error('public chain: not open');
    if (this.batches.has(tx.batch_id)) throw new Error(`public chain: batch ${tx.batch_id} is already on chain`);
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
    this.batches.set(b.tx.batch_id, ref(b));
    if (this.batches.size > MAX_REMEMBERED) this.batches.delete(this.batches.keys().next().value!);
  }

  /** Height of the latest block (0: empty chain). */
  get height(): number {
    return this.tipHeight;
  }

  /** Where a batch landed, if it is on chain among the last MAX_REMEMBERED blocks. */
  find(batchId: string): BlockRef | undefined {
    return this.batches.get(batchId);
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
