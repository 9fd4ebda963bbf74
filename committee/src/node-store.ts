// What a committee node persists, in one lmdb transaction per job: the results it owes the gateway
// and its MPC party state as of that job boundary (shares of the books, cursors, PRSS keys) with
// the sequence number it covers. The party state is split (exportStateParts): the preprocessing
// reserve, megabytes, lives in immutable chunks written once each and dropped when consumed, so a
// job writes kilobytes, not the whole reserve.
import { open, type RootDatabase, type Database } from 'lmdb';
import type { SplitState } from '@tenebra/mpc';
import type { ResultFrame } from '@tenebra/wire';
import { resultText } from './result-text';

/** Results older than this many sequence numbers behind the newest are pruned once the gateway has them. */
const RESULT_RETENTION = 1_000_000n;

export class NodeStore {
  private readonly root: RootDatabase;
  private readonly meta: Database<Uint8Array | string, string>;
  private readonly results: Database<string, string>;
  private readonly chunks: Database<Uint8Array, string>;
  /** keys of the reserve chunks on disk */
  private readonly storedChunks = new Set<string>();

  constructor(dir: string) {
    this.root = open({ path: dir, compression: false });
    this.meta = this.root.openDB({ name: 'meta', encoding: 'binary' }) as unknown as Database<Uint8Array | string, string>;
    this.results = this.root.openDB({ name: 'results', encoding: 'string' });
    this.chunks = this.root.openDB({ name: 'chunks', encoding: 'binary' }) as unknown as Database<Uint8Array, string>;
    for (const key of this.chunks.getKeys()) this.storedChunks.add(key);
  }

  /** Last applied sequence number (0n when nothing was applied yet). */
  lastSeq(): bigint {
    const v = this.meta.get('lastSeq');
    return v === undefined ? 0n : BigInt(Buffer.from(v as Uint8Array).toString('utf8'));
  }

  /**
   * The MPC party state as exported at the last completed job, if any: the core of a split state
   * (whose chunks chunk() gives), or a whole state written before states were split.
   */
  partyState(): Uint8Array | undefined {
    const v = this.meta.get('party');
    return v === undefined ? undefined : new Uint8Array(v as Uint8Array);
  }

  /** One stored reserve chunk of the persisted party state. */
  chunk(key: string): Uint8Array | undefined {
    const v = this.chunks.get(key);
    return v === undefined ? undefined : new Uint8Array(v);
  }

  /** PRSS keys and identity material (exportKeys()), saved once at the first start. */
  partyKeys(): Uint8Array | undefined {
    const v = this.meta.get('keys');
    return v === undefined ? undefined : new Uint8Array(v as Uint8Array);
  }

  async saveKeys(keys: Uint8Array): Promise<void> {
    await this.meta.put('keys', Buffer.from(keys));
  }

  /** True when the previous run ended with markCleanStop() (not killed). */
  wasCleanStop(): boolean {
    const v = this.meta.get('clean');
    return v !== undefined && Buffer.from(v as Uint8Array).toString('utf8') === '1';
  }

  async markRunning(): Promise<void> {
    await this.meta.put('clean', Buffer.from('0', 'utf8'));
  }

  async markCleanStop(): Promise<void> {
    await this.meta.put('clean', Buffer.from('1', 'utf8'));
  }

  /**
   * Records a completed job in one transaction: its results (what the gateway is owed) and the party
   * state as of the boundary after lastSeq. One per job, so a node that dies restarts from the last
   * job it finished: the boundary the other nodes are at too, unless they have finished more since.
   */
  async commitJob(results: ResultFrame[], lastSeq: bigint, partyState: SplitState): Promise<void> {
    await this.writeState(lastSeq, partyState, () => {
      for (const r of results) this.results.put(seqKey(BigInt(r.seq)), resultText(r));
    });
  }

  /** Atomically records a snapshot: party state as of the boundary after lastSeq, with that cursor. */
  async commitSnapshot(lastSeq: bigint, partyState: SplitState): Promise<void> {
    await this.writeState(lastSeq, partyState, () => undefined);
  }

  /** One transaction: `also`, the core, the chunks not yet on disk, and removal of those no longer listed. */
  private async writeState(lastSeq: bigint, state: SplitState, also: () => void): Promise<void> {
    const added = [...state.chunks.keys()].filter((k) => !this.storedChunks.has(k));
    const dropped = [...this.storedChunks].filter((k) => !state.chunks.has(k));
    // batch, not transaction: a transaction's callback runs on the main thread while lmdb's write
    // thread (a libuv pool thread) holds the write lock waiting for it, so a process.exit in that
    // window (a fatal error) never returned: exit joins the pool thread, which waits for the main
    // thread. batch queues the writes now, all in one atomic transaction the write thread runs alone.
    await this.root.batch(() => {
      also();
      for (const k of added) this.chunks.put(k, state.chunks.get(k)!);
      for (const k of dropped) this.chunks.remove(k);
      this.meta.put('party', Buffer.from(state.core));
      this.meta.put('lastSeq', Buffer.from(lastSeq.toString(), 'utf8'));
    });
    for (const k of added) this.storedChunks.add(k);
    for (const k of dropped) this.storedChunks.delete(k);
  }

  /** The highest seq of a stored result (0n when none): no result on disk is above it. */
  lastResultSeq(): bigint {
    for (const key of this.results.getKeys({ reverse: true, limit: 1 })) return BigInt(key);
    return 0n;
  }

  /** Stored results with seq >= from, in order. */
  *resultsFrom(from: bigint): Generator<ResultFrame> {
    for (const { value } of this.results.getRange({ start: seqKey(from) })) {
      yield JSON.parse(value) as ResultFrame;
    }
  }

  /** Drops results the gateway has confirmed (below `upTo`), keeping a retention window. */
  async prune(upTo: bigint): Promise<void> {
    const newest = this.lastSeq();
    const keepFrom = upTo < newest - RESULT_RETENTION ? upTo : newest - RESULT_RETENTION;
    if (keepFrom <= 1n) return;
    await this.root.batch(() => {
      for (const key of this.results.getKeys({ end: seqKey(keepFrom) })) void this.results.remove(key);
    });
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

/** Fixed-width decimal so lexicographic order is numeric order. */
function seqKey(seq: bigint): string {
  return seq.toString().padStart(20, '0');
}
