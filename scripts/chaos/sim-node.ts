// One committee node on the simulated network: the start-up paths, job loop, rollback on an
// exhausted reserve, boundary and vote persistence, stale/fatal exits of committee/src/node.ts, with
// an in-memory store that survives the node's crashes and every timer on the virtual clock. The MPC
// engine (@tenebra/mpc) and the batch applier (committee/src/apply.ts) are the product's own; the
// orchestration around them mirrors node.ts (which is bound to libp2p, lmdb and the wire links), so
// a change there must be carried here (docs/reliability.md, "Seeded simulation").
import { pino } from 'pino';
import type { SimNetwork, Transport } from '@tenebra/transport';
import { COMPARISON_BITS } from '@tenebra/config';
import { createParty, productionQuorum, prepLogOf, type Party, type PrepLog, type ShareFanout } from '@tenebra/mpc';
type X25519KeyPair = { privateKey: Uint8Array; publicKey: Uint8Array };
import type { ResultFrame } from '@tenebra/wire';
import { BatchApplier, type IncomingOp } from '../../committee/src/apply';
import { jobPrecedes, lastSeqOfJob, runBatchAttempts, takeBatch, untilProductionPossible } from '../../committee/src/batch-attempts';

const silent = pino({ level: 'silent' });

/** node.ts: NO_HELPERS_FALLBACK_MS, RECOVERY_CHECK_MS (the retry waits are batch-attempts.ts's own). */
const NO_HELPERS_FALLBACK_MS = 15_000;
const RECOVERY_CHECK_MS = 1_000;

/** What a node keeps on disk (node-store.ts): keys, the state at its last boundary or vote, its seq. */
export interface SimStore {
  keys?: Uint8Array;
  state?: Uint8Array;
  lastSeq: bigint;
}

export interface SimNodeOptions {
  index: number;
  n: number;
  t: number;
  net: SimNetwork;
  store: SimStore;
  sealKey: X25519KeyPair;
  gatewayPublicKey: Uint8Array;
  maxBatch: number;
  preprocessing: { mode: 'committee' | 'dealer'; targetTriples: number; targetBits: number; batch: number };
  /** The sequencer feed: from seq on, in order; deliveries through this node's clock (held while frozen, gone once dead). */
  connectFeed: (node: SimNode, fromSeq: bigint) => void;
  /** whom a job round's shares go to (node.ts: the node config's shareFanout) */
  shareFanout?: ShareFanout;
  /** node.ts takeBatch -> feed.reportTaken: every op up to seq is in a started job (a 'progress' sequencer closes the next job on it). */
  reportTaken?: (seq: bigint) => void;
  /** The results link: frames reach the gateway once the boundary holding them is durable. */
  sendResults: (node: number, frames: ResultFrame[]) => void;
  /** A line of the run's history (virtual time is added by the caller). */
  event: (node: number, what: string) => void;
  /** The node ended itself (stale, fatal): its supervisor restarts it. */
  exited: (node: number, why: string) => void;
}

/** One incarnation of a node; a restart makes a new one over the same store. */
export class SimNode {
  party: Party | null = null;
  /** last seq whose boundary is in the store */
  appliedSeq = 0n;
  dead = false;
  phase: 'starting' | 'recovering' | 'running' = 'starting';
  readonly pending: IncomingOp[] = [];
  private applier: BatchApplier | null = null;
  private wake: (() => void) | null = null;
  private boundaryWaiters: { seq: bigint; release: () => void }[] = [];
  /** while recovering: the seq of our own persisted state, told to recovering peers */
  private persistedSeq: bigint | null = null;
  private transport: Transport | null = null;

  constructor(readonly o: SimNodeOptions) {}

  get index(): number {
    return this.o.index;
  }

  /** Starts on a transport of the network (fresh, or restarted): node.ts start(). */
  async start(transport: Transport): Promise<void> {
    this.transport = transport;
    const { store } = this.o;
    let lastSeq: bigint;
    if (!store.state && !store.keys) {
      await this.startParty({});
      store.keys = this.party!.exportKeys();
      lastSeq = 0n;
      this.o.event(this.index, 'fresh');
    } else {
      // never a clean stop here: every restart follows a crash, so recovery first
      lastSeq = await this.recoverOrResume(store.keys, store.state);
    }
    if (this.dead) return;
    this.appliedSeq = lastSeq;
    this.applier = new BatchApplier({ index: this.index, n: this.o.n, sealKey: this.o.sealKey, gatewayPublicKey: this.o.gatewayPublicKey, log: silent });
    this.phase = 'running';
    this.o.event(this.index, `ready at ${lastSeq}`);
    void this.jobLoop().catch((e: unknown) => this.fatal('job loop failed', e));
    this.o.connectFeed(this, lastSeq + 1n);
  }

  /** The network crashed this node (or it ended itself): nothing of it acts any more. */
  kill(): void {
    this.dead = true;
    this.wake?.();
  }

  /** Feed callback. */
  enqueue(op: IncomingOp): void {
    if (this.dead) return;
    this.pending.push(op);
    this.wake?.();
  }

  private async startParty(from: { state?: Uint8Array; keys?: Uint8Array; priorVotes?: PrepLog }): Promise<void> {
    const o = this.o;
    const party = createParty({
      n: o.n, t: o.t, transport: this.transport!, ...from, L: COMPARISON_BITS,
      ...(o.shareFanout ? { shareFanout: o.shareFanout } : {}),
      preprocessing: o.preprocessing,
      busyNote: () => `persisted-seq ${this.persistedSeq ?? 'none'}`,
      beforePrepVote: () => this.persistStaged(),
      jobPrecedes,
      // SIM_DEBUG=1: every engine event on stdout with its virtual time and node (debugging a failing seed)
      ...(process.env.SIM_DEBUG ? { log: (ev: object) => console.log(this.transport!.clock.now().toFixed(1), this.index, JSON.stringify(ev)) } : {}),
    });
    party.on('stale', (ev) => this.fatal('stale', new Error(String(ev.note ?? ''))));
    this.party = party;
    await party.start();
  }

  private async recoverOrResume(keys: Uint8Array | undefined, persisted: Uint8Array | undefined): Promise<bigint> {
    const store = this.o.store;
    if (keys) {
      this.phase = 'recovering';
      this.persistedSeq = persisted ? store.lastSeq : null;
      const priorVotes = persisted ? prepLogOf(persisted) : undefined;
      await this.startParty({ keys, ...(priorVotes ? { priorVotes } : {}) });
      const recovering = this.party!.recover().then(() => true);
      const recovered = await Promise.race([recovering, this.fallbackWhen(NO_HELPERS_FALLBACK_MS)]);
      if (this.dead) return 0n;
      if (recovered) {
        const last = lastSeqOfJob(this.party!.lastFinishedJob());
        store.state = this.party!.exportState();
        store.lastSeq = last;
        this.boundaryWritten(last);
        this.o.event(this.index, `recovered at ${last}`);
        return last;
      }
      this.o.event(this.index, `fallback to own state at ${store.lastSeq}`);
      await this.party!.stop();
      await recovering.catch(() => false);
      // node.ts stops its libp2p transport and makes a new one; here: a new incarnation of the link
      this.transport = this.o.net.restart(this.index);
    }
    if (!persisted) throw new Error('crashed before the first job and no helpers answered: nothing to resume from');
    await this.startParty({ state: persisted });
    return store.lastSeq;
  }

  /** node.ts fallbackWhen, on the virtual clock. */
  private fallbackWhen(ms: number): Promise<false> {
    const t = this.o.t;
    const own = this.persistedSeq === null ? null : this.persistedSeq.toString();
    const clock = this.transport!.clock;
    return new Promise((resolve) => {
      let shortSince: number | null = null;
      const tick = (): void => {
        if (this.dead) return;
        const st = this.party?.status();
        if (st?.phase !== 'recovering') return;
        const h = st.recovery;
        const again = (): void => { clock.setTimeout(tick, RECOVERY_CHECK_MS); };
        if (!h || h.ready >= h.needed) {
          shortSince = null;
          return again();
        }
        const seqs = new Map<string, number>();
        for (const note of Object.values(h.busy)) {
          const m = /persisted-seq (\d+)/.exec(note);
          if (m) seqs.set(m[1]!, (seqs.get(m[1]!) ?? 0) + 1);
        }
        if (own !== null && (seqs.get(own) ?? 0) + 1 >= t + 1) return resolve(false);
        if ([...seqs].some(([seq, count]) => (own === null || BigInt(seq) > BigInt(own)) || (seq !== own && count >= t + 1))) {
          shortSince = null;
          return again();
        }
        shortSince ??= clock.now();
        if (clock.now() - shortSince >= ms) return resolve(false);
        again();
      };
      clock.setTimeout(tick, RECOVERY_CHECK_MS);
    });
  }

  private fatal(what: string, e: unknown): void {
    if (this.dead) return;
    this.o.event(this.index, `exit: ${what}: ${e instanceof Error ? e.message.slice(0, 160) : String(e)}`);
    this.o.exited(this.index, what);
  }

  private takeBatch(): IncomingOp[] | null {
    const batch = takeBatch(this.pending, this.o.maxBatch);
    if (batch) this.o.reportTaken?.(batch[batch.length - 1]!.seq);
    return batch;
  }

  private async jobLoop(): Promise<void> {
    while (!this.dead) {
      const batch = this.takeBatch();
      if (!batch) {
        await new Promise<void>((r) => { this.wake = r; });
        this.wake = null;
        continue;
      }
      await this.runBatch(batch);
    }
  }

  private async runBatch(batch: IncomingOp[]): Promise<void> {
    const party = this.party!;
    const first = batch[0]!.seq;
    const last = batch[batch.length - 1]!.seq;
    // the attempts and retry waits of node.ts (batch-attempts.ts)
    const results = await runBatchAttempts<ResultFrame[]>(first, last, {
      party,
      attempt: (jobId) => party.runJob(jobId, (ctx) => this.applier!.apply(ctx, batch, last)),
      invalidate: () => this.applier!.invalidate(),
      exhausted: (jobId, attempt) => {
        if (attempt === 0) this.o.event(this.index, `exhausted at ${jobId}`);
      },
      waitForProduction: (committedAfter) => this.untilProductionPossible(committedAfter),
    });
    if (!results || this.dead) return;
    // the boundary is durable at once here (no write in flight to order after)
    const store = this.o.store;
    store.state = party.exportState();
    store.lastSeq = last;
    this.appliedSeq = last;
    this.boundaryWritten(last);
    this.o.sendResults(this.index, results);
  }

  /** batch-attempts.ts untilProductionPossible over the simulated node's view, on the simulated clock. */
  private untilProductionPossible(committedAfter?: number): Promise<boolean> {
    const clock = this.transport!.clock;
    const needed = this.o.preprocessing.mode === 'dealer' ? 0 : productionQuorum(this.o.n, this.o.t);
    const p = this.o.preprocessing;
    return untilProductionPossible({
      production: () => {
        const st = this.party!.status();
        if (st.alive.length < needed) return 'stopped';
        return st.reserve.triples >= p.targetTriples && st.reserve.bits >= p.targetBits ? 'idle' : 'running';
      },
      committedBatches: () => this.party!.status().preprocessing.committedBatches,
      now: () => clock.now(),
      sleep: (ms) => new Promise<void>((r) => { clock.setTimeout(r, ms); }),
      stopping: () => this.dead,
    }, committedAfter);
  }

  /** node.ts persistStaged: the state with a staged batch and votes is durable before the vote leaves. */
  private persistStaged(): Promise<void> {
    const party = this.party!;
    const store = this.o.store;
    const finished = lastSeqOfJob(party.lastFinishedJob());
    if (finished > store.lastSeq) return new Promise((release) => this.boundaryWaiters.push({ seq: finished, release }));
    store.state = party.exportState();
    store.lastSeq = finished;
    return Promise.resolve();
  }

  private boundaryWritten(seq: bigint): void {
    const still: typeof this.boundaryWaiters = [];
    for (const w of this.boundaryWaiters) (w.seq <= seq ? w.release() : still.push(w));
    this.boundaryWaiters = still;
  }

  /** One line of where this node stands (a stuck run names it). */
  describe(): string {
    const st = this.party?.status();
    return JSON.stringify({
      node: this.index, dead: this.dead, phase: this.phase, party: st?.phase, applied: this.appliedSeq.toString(), pending: this.pending.length,
      job: st?.currentJob, last: st?.lastFinishedJob, alive: st?.alive, reserve: st && { t: st.reserve.triples, b: st.reserve.bits }, prep: st && { inFlight: st.preprocessing.inFlight, stale: st.preprocessing.stale, blocked: st.preprocessing.blocked }, progress: st?.jobProgress, recovery: st?.recovery,
    });
  }
}
