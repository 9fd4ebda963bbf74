// What a committee node persists: snapshots of its MPC party state (shares of the books, the
// preprocessing reserve, PRSS keys) together with the sequence number they cover, written at most
// once a second and at a clean stop (a snapshot is megabytes: the reserve dominates), and after
// every job the results it owes the gateway.
import { open, type RootDatabase, type Database } from 'lmdb';
import type { ResultFrame } from '@tenebra/wire';

/** Results older than this many sequence numbers behind the newest are pruned once the gateway has them. */
const RESULT_RETENTION = 1_000_000n;

export class NodeStore {
  private readonly root: RootDatabase;
  private readonly meta: Database<Uint8Array | string, string>;
  private readonly results: Database<string, string>;

  constructor(dir: string) {
    this.root = open({ path: dir, compression: false });
    this.meta = this.root.openDB({ name: 'meta', encoding: 'binary' }) as unknown as Database<Uint8Array | string, string>;
    this.results = this.root.openDB({ name: 'results', encoding: 'string' });
  }

  /** Last applied sequence number (0n when nothing was applied yet). */
  lastSeq(): bigint {
    const v = this.meta.get('lastSeq');
    return v === undefined ? 0n : BigInt(Buffer.from(v as Uint8Array).toString('utf8'));
  }

  /** The MPC party state as exported at the last completed job, if any. */
  partyState(): Uint8Array | undefined {
    const v = this.meta.get('party');
    return v === undefined ? undefined : new Uint8Array(v as Uint8Array);
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
  async commitJob(results: ResultFrame[], lastSeq: bigint, partyState: Uint8Array): Promise<void> {
    await this.root.transaction(() => {
      for (const r of results) this.results.put(seqKey(BigInt(r.seq)), JSON.stringify(r));
      this.meta.put('party', Buffer.from(partyState));
      this.meta.put('lastSeq', Buffer.from(lastSeq.toString(), 'utf8'));
    });
  }

  /** Atomically records a snapshot: party state as of the boundary after lastSeq, with that cursor. */
  async commitSnapshot(lastSeq: bigint, partyState: Uint8Array): Promise<void> {
    await this.root.transaction(() => {
      this.meta.put('party', Buffer.from(partyState));
      this.meta.put('lastSeq', Buffer.from(lastSeq.toString(), 'utf8'));
    });
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
    await this.root.transaction(() => {
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
