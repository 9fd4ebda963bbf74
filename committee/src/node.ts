// One committee node: an MPC party over libp2p that applies the sequencer's operations, batch by
// batch, to the order books it holds as shares, and reports each operation's outcome to the gateway.
import { readFileSync, mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { COMPARISON_BITS, crash, OP_TRACE, traceOp, KAPPA_OF_OLDER_CONFIGS, ORDER_PREP_COST, withDealerLabel, type NodeConfig } from '@tenebra/config';
import { createLibp2pTransport, type Libp2pTransport, type LinkUpdate } from '@tenebra/transport';
import { assertComparisonFits, createParty, productionQuorum, prepLogOf, type Party, type PrepLog, type SplitState } from '@tenebra/mpc';
import { jobPrecedes, lastSeqOfJob, runBatchAttempts, takeBatch, untilProductionPossible } from './batch-attempts';
import { SUM_EXTRA_BITS } from '@tenebra/matching';
import { SequencerFeed, type SequencedFrame, type ResultFrame } from '@tenebra/wire';
import { readKeyFile, fromHex } from '@tenebra/seal';
import { Registry } from 'prom-client';
import { NodeStore } from './node-store';
import { ResultsLink } from './results-link';
import { BatchApplier, realOps, type IncomingOp } from './apply';
import { NodeMetrics, PARTY_EVENTS } from './metrics';
import { schedSample, traceGc } from './sched-sample';
import { CapacityTracker, consumedAt, type Capacity, type KindCounts } from './capacity';
import { RecoveryFallback, checkFallbackLimits } from './recovery-fallback';

/** Sequenced ops waiting for their job before the feed is paused. */
const MAX_PENDING_OPS = 20_000;
/** How often the crashed node checks for ready helpers and logs its wait. */
const RECOVERY_CHECK_MS = 1_000;
/** How often a share recovery that has not finished logs its helpers' state. */
const RECOVERY_STATUS_EVERY_MS = 10_000;
/** Preprocessing batch size when the config does not set one (the engine's default of 256 is
 *  round-trip bound over libp2p: a few hundred random bits a second). */
const DEFAULT_PREP_BATCH = 2048;
/** Period of the status log line. */
const STATUS_EVERY_MS = 2_000;
/**
 * How long a job boundary's export and write wait after the job's results left, while no op is
 * queued (boundaryHold). Off by default: measured on the loaded 2-core host (docs/decisions/0045-fill-critical-window.md)
 * the t+1-th result reached the gateway 3.4 ms (p90 10 ms) after the first, and a quarter of the
 * nodes' boundary writes (2 ms of CPU each) began before it, competing with the slower nodes' last
 * round; a hold of 20 ms moved all of them out of that window, but the order-to-fill p50 did not
 * move beyond the run-to-run spread in 5 alternated pairs, as with hlat's similar hold (ADR 0023).
 */
export const DEFAULT_BOUNDARY_HOLD_MS = 0;

/** The hold in force: the config's, else TENEBRA_BOUNDARY_HOLD_MS (benches' A/B in one tree), else the default. */
export function boundaryHoldMsOf(cfg: Pick<NodeConfig, 'boundaryHoldMs'>, env: NodeJS.ProcessEnv = process.env): number {
  const raw = cfg.boundaryHoldMs ?? (env.TENEBRA_BOUNDARY_HOLD_MS === undefined || env.TENEBRA_BOUNDARY_HOLD_MS === '' ? DEFAULT_BOUNDARY_HOLD_MS : Number(env.TENEBRA_BOUNDARY_HOLD_MS));
  if (!Number.isInteger(raw) || raw < 0 || raw > 1_000) throw new Error(`boundaryHoldMs: whole ms from 0 to 1,000, got ${String(raw)}`);
  return raw;
}

/** The node's Ed25519 link key (seed); a config from before link keys fails here, by name. */
function readLinkKey(cfg: NodeConfig): Uint8Array {
  if (!cfg.linkKeyFile || !cfg.gatewayLinkPublicKey) {
    throw new Error(`node ${cfg.index} config has no link keys: start the cluster with npm start, which adds them to older data folders`);
  }
  return readKeyFile(cfg.linkKeyFile, 'ed25519').privateKey;
}

/**
 * Engine events logged at info level even without round tracing: the failure paths of
 * preprocessing and share recovery (rare, and what explains a dropped batch or a stale node).
 */
const INFO_EVENTS = new Set([
  'prep-veto', 'prep-ballot', 'prep-propose', 'prep-decided', 'prep-drop', 'prep-stale', 'prep-abstain', 'prep-no-abstain', 'prep-votes-kept', 'prep-rounds-gone',
  'prep-silent', 'prep-blocked', 'prep-error', 'prep-outsider', 'prep-member', 'recovery-busy', 'recovery-answer', 'recovery-combined', 'recovered',
  // voiding an unconsumed batch a stale survivor lacks (decision 0009): the node then stays up, its job retried
  'prep-void-start', 'prep-void-propose', 'prep-void-decided', 'prep-void-learned', 'prep-void-burn', 'job-voided',
]);

export class CommitteeNode {
  private transport: Libp2pTransport | null = null;
  private party: Party | null = null;
  private store: NodeStore | null = null;
  private feed: SequencerFeed | null = null;
  private link: ResultsLink | null = null;
  private applier: BatchApplier | null = null;
  private readonly pending: IncomingOp[] = [];
  private wake: (() => void) | null = null;
  private drained: (() => void) | null = null;
  private running = false;
  /** start() finished: shares in hand and the sequencer feed joined (the ready gauge) */
  private started = false;
  private statusTimer: NodeJS.Timeout | null = null;
  /** last seq applied by a completed job whose state is on disk (the party state persisted with it) */
  private appliedSeq = 0n;
  /** the write of the last job boundary (at most one in flight, see runBatch) */
  private persisting: Promise<void> = Promise.resolve();
  /** last seq whose boundary write is queued (runBatch) */
  private queuedSeq = 0n;
  /** no result in the store has a higher seq (ResultsLink.notify skips the store read past it) */
  private resultsStoredTo = 0n;
  /** the write for preprocessing votes that waits its turn (not started): later votes share it (persistStaged) */
  private stagedWrite: Promise<void> | null = null;
  /** staged preprocessing batches whose ready waits for the boundary write of a finished job (a failed write is fatal) */
  private boundaryWaiters: { seq: bigint; release: () => void }[] = [];
  /** while recovering after a crash: the seq of our own persisted state, told to recovering peers */
  private persistedSeq: bigint | null = null;
  private loopDone: Promise<void> = Promise.resolve();
  /** Prometheus series (served by main.ts when the config has a metricsPort) */
  readonly metrics: NodeMetrics;
  /** cost per op and what the reserve still covers (docs/decisions/0016-outage-capacity.md); made at first use */
  private tracker: CapacityTracker | null = null;
  /** the reserve targets of the config, in the tracker's kinds (an absent closure target counts as 0) */
  private targets: KindCounts | null = null;

  /** every line of the node, the engine's and the transport's too; labelled in dealer mode */
  private readonly log: Logger;
  /** ms a boundary's export and write wait after the job while nothing is queued (boundaryHold) */
  private readonly holdMs: number;
  /** ends the boundary hold in progress now (an op arrived, a vote waits for the boundary, stopping) */
  private endHold: (() => void) | null = null;

  /** registry: where the node's series go (main.ts passes the process's; default a private one) */
  constructor(private readonly cfg: NodeConfig, log: Logger, registry: Registry = new Registry()) {
    // main.ts labels its root logger already; a node made elsewhere (tests, tools) is labelled here
    this.log = withDealerLabel(log, cfg.preprocessing.mode);
    checkFallbackLimits(cfg.recoveryFallback); // a bad bound fails at start, not in the recovery it would govern
    this.holdMs = boundaryHoldMsOf(cfg);
    this.metrics = new NodeMetrics(registry, {
      index: cfg.index, n: cfg.n,
      status: () => this.party?.status(),
      peerStats: (j) => this.transport?.peerStats(j),
      reveals: () => this.applier?.reveals.counts ?? [],
      appliedSeq: () => this.appliedSeq,
      pendingOps: () => this.pending.length,
      capacity: () => this.capacity(),
      ready: () => this.started && this.party?.status().phase === 'ready',
    });
  }

  private get capacityTracker(): CapacityTracker {
    return (this.tracker ??= new CapacityTracker(productionQuorum(this.cfg.n, this.cfg.t), this.cfg.preprocessing.mode === 'dealer', ORDER_PREP_COST));
  }

  /** What the reserve covers now; the status line, the metrics and the gateway's report read it. */
  capacity(): Capacity {
    const p = this.cfg.preprocessing;
    this.targets ??= { bits: p.targetBits, lex4: p.targetLex4 ?? 0, prod4: p.targetProd4 ?? 0, triples: p.targetTriples };
    return this.capacityTracker.read(this.party?.status(), this.targets);
  }

  /** Tells the gateway (system_health, refusals of new orders while exhausted) what the reserve covers. */
  private reportCapacity(): void {
    const c = this.capacity();
    this.link?.reportCapacity({
      t: 'capacity', node: this.cfg.index, production: c.production, exhausted: c.exhausted, orders_left: c.opsLeft === null ? '' : String(c.opsLeft),
    });
  }

  async start(): Promise<void> {
    const cfg = this.cfg;
    if (OP_TRACE) traceGc(this.log);
    // One link key proves this node to the gateway (results) and to the sequencer (feed).
    const linkKey = readLinkKey(cfg);
    mkdirSync(cfg.dataDir, { recursive: true });
    const store = (this.store = new NodeStore(cfg.dataDir));
    const persisted = store.partyState();
    const keys = store.partyKeys();
    const cleanStop = store.wasCleanStop();
    await store.markRunning();

    let lastSeq: bigint;
    if (!persisted && !keys) {
      // A fresh cluster: every node sets up PRSS keys with the others (needs all n up).
      await this.startParty({});
      await store.saveKeys(this.party!.exportKeys());
      lastSeq = 0n;
      this.log.info('fresh node: PRSS keys set up');
    } else if (persisted && cleanStop) {
      // Stopped cleanly with the others (a whole-cluster restart): resume from our own state.
      await this.startParty({ state: persisted });
      lastSeq = store.lastSeq();
      this.log.info({ lastSeq: lastSeq.toString() }, 'resumed from persisted state after a clean stop');
    } else {
      // Crashed: our shares may be stale. Ask the live nodes for fresh shares of everything.
      lastSeq = await this.recoverOrResume(keys, persisted);
    }

    this.appliedSeq = lastSeq;
    this.applier = new BatchApplier({
      index: cfg.index, n: cfg.n, sealKey: readKeyFile(cfg.x25519KeyFile), gatewayPublicKey: fromHex(cfg.gatewayX25519PublicKey), log: this.log,
    });
    this.resultsStoredTo = store.lastResultSeq();
    this.link = new ResultsLink(cfg.gatewayInternalUrl, cfg.index, linkKey, fromHex(cfg.gatewayLinkPublicKey), store, this.log);
    this.link.start();

    this.running = true;
    this.loopDone = this.jobLoop().catch((e: unknown) => this.fatal('job loop failed', e));
    this.feed = new SequencerFeed();
    await this.feed.connect({
      url: cfg.sequencerUrl, node: cfg.index, authKey: linkKey, fromSeq: lastSeq + 1n,
      platformPublicKey: fromHex(cfg.platformPublicKey), expectedMeasurement: cfg.expectedMeasurement,
      onOp: (frame: SequencedFrame) => this.enqueue(frame),
      onError: (err: Error) => this.fatal('sequencer feed stopped', err),
      // the node's logger, not the feed's stderr default: its lines carry role, node (and the dealer label)
      log: this.log.child({ component: 'sequencer-feed' }),
    });
    this.feed.reportTaken(lastSeq);
    this.started = true;
    this.log.info({ lastSeq: lastSeq.toString(), status: this.party!.status() }, 'node ready');
    this.statusTimer = setInterval(() => {
      this.logStatus();
      this.reportCapacity();
    }, STATUS_EVERY_MS);
    this.statusTimer.unref();
  }

  /** A periodic status line: liveness, quorum and the preprocessing reserve (what an outage can use). */
  private logStatus(): void {
    const st = this.party?.status();
    if (!st) return;
    const c = this.capacity();
    const capacity = {
      production: c.production, exhausted: c.exhausted, opsLeft: c.opsLeft,
      costPerOp: c.costPerOp && Object.fromEntries(Object.entries(c.costPerOp).map(([k, v]) => [k, +v.toFixed(2)])),
    };
    this.log.info({
      alive: st.alive, quorum: st.quorum, phase: st.phase, reserve: st.reserve, capacity,
      made: st.preprocessing.made, ...(st.jobProgress ? { job: st.jobProgress } : {}), links: this.linkStats(), pending: this.pending.length, reveals: Object.fromEntries(this.applier?.reveals.counts ?? []),
    }, 'status');
  }

  /** The committee links, for the operator's run-time control (link-control.ts); null before the party starts. */
  links(): Libp2pTransport | null {
    return this.transport;
  }

  /** Link settings to put in force as the transport is made (before start): the operator's, kept from before a restart. */
  restoreLinks(update: LinkUpdate | undefined): void {
    this.linksAtStart = update;
  }
  private linksAtStart: LinkUpdate | undefined;

  /** Per peer: [messages queued, sent, received, dropped outbound, connects] (what a stalled round's messages did). */
  private linkStats(): Record<number, number[]> {
    const out: Record<number, number[]> = {};
    const tr = this.transport;
    if (!tr) return out;
    for (let j = 1; j <= this.cfg.n; j++) {
      if (j === this.cfg.index) continue;
      const p = tr.peerStats(j);
      out[j] = [p.queuedMessages, p.sentMessages, p.receivedMessages, p.droppedOutbound, p.connects];
    }
    return out;
  }

  private async startParty(from: { state?: Uint8Array; keys?: Uint8Array; priorVotes?: PrepLog }): Promise<void> {
    const cfg = this.cfg;
    const privateKey = fromHex(readFileSync(cfg.libp2pKeyFile, 'utf8').trim());
    if (cfg.linkEmulation) this.log.info({ link_emulation: cfg.linkEmulation }, 'committee links emulated: every message from another node is held back (latency, jitter, bandwidth)');
    this.transport = await createLibp2pTransport({
      self: cfg.index, n: cfg.n, privateKey, listen: cfg.listen, peers: cfg.peers,
      ...(cfg.writeStallMs === undefined ? {} : { writeStallMs: cfg.writeStallMs }),
      ...(cfg.linkEmulation === undefined ? {} : { linkEmulation: cfg.linkEmulation }),
      // one JSON line per event, like the rest of the node's log
      log: (msg: string, err?: unknown) => this.log.warn(err === undefined ? {} : { err: err instanceof Error ? err.message : String(err) }, `transport: ${msg}`),
    });
    if (this.linksAtStart) {
      // the operator's settings of this run, from before a restart (link-persist.ts): in force
      // before the first dial, so a cut link stays cut
      const now = this.transport.setLinks(this.linksAtStart);
      this.log.warn({ links: now }, 'committee links restored: the operator\'s settings of this run, kept across the restart');
    }
    const traceRounds = process.env.TENEBRA_TRACE_ROUNDS === '1';
    // matching compares liquidity sums wider than book values (leWide): refuse a committee size
    // whose field cannot hold them now, not in the first FOK's job
    // kappa is the folder's (one per committee; older folders persisted their state at 40)
    const kappa = cfg.kappa ?? KAPPA_OF_OLDER_CONFIGS;
    assertComparisonFits(COMPARISON_BITS + SUM_EXTRA_BITS, kappa, cfg.n, cfg.t);
    const party = createParty({
      n: cfg.n, t: cfg.t, k: kappa, transport: this.transport, ...from,
      ...(cfg.shareFanout === undefined ? {} : { shareFanout: cfg.shareFanout }),
      // the gateway keeps every book value below 2^COMPARISON_BITS (packages/config)
      L: COMPARISON_BITS,
      // a persisted state's reserve lives in the store's chunks (node-store.ts)
      ...(from.state ? { stateChunks: (key: string) => this.store!.chunk(key) } : {}),
      preprocessing: {
        mode: cfg.preprocessing.mode, targetTriples: cfg.preprocessing.targetTriples, targetBits: cfg.preprocessing.targetBits,
        ...(cfg.preprocessing.targetLex4 !== undefined ? { targetLex4: cfg.preprocessing.targetLex4 } : {}),
        ...(cfg.preprocessing.targetProd4 !== undefined ? { targetProd4: cfg.preprocessing.targetProd4 } : {}),
        batch: cfg.preprocessing.batch ?? DEFAULT_PREP_BATCH,
        ...(cfg.preprocessing.pieces !== undefined ? { pieces: cfg.preprocessing.pieces } : {}),
      },
      // TENEBRA_TRACE_ROUNDS=1: the engine's events, one per round too (times in ms of this process's
      // clock, arrivals per peer), at info level: where a job's time goes
      // (otherwise the events of failure paths only, which are rare: ballots, drops, stale, recovery)
      log: traceRounds ? (ev: object) => this.log.info({ mpc: ev }, 'mpc') : (ev: object) => (INFO_EVENTS.has(String((ev as { ev?: unknown }).ev)) ? this.log.info({ mpc: ev }, 'mpc') : this.log.debug({ mpc: ev }, 'mpc')),
      traceRounds,
      busyNote: () => `persisted-seq ${this.persistedSeq ?? 'none'}`,
      beforePrepVote: () => this.persistStaged(),
      jobPrecedes,
    });
    party.on('quorum-lost', (ev) => this.log.warn({ ev }, 'quorum lost: waiting for parties to return'));
    party.on('quorum-restored', (ev) => this.log.info({ ev }, 'quorum restored'));
    party.on('inconsistent-share', (ev) => this.log.error({ ev }, 'inconsistent share'));
    // We are behind for good: a peer committed a preprocessing batch we lack, or the shares a job of
    // ours still waits for are gone (the others finished it and no longer keep its messages). Exit
    // so the supervisor restarts us; a restart after an unclean exit runs share recovery.
    party.on('stale', (ev) => this.fatal('this node is stale (behind the others for good): restarting to recover shares', new Error(JSON.stringify(ev))));
    party.on('recovery-waiting', (ev) => this.log.warn({ ev }, 'share recovery waiting for helpers'));
    for (const ev of PARTY_EVENTS) party.on(ev, () => this.metrics.partyEvent(ev));
    this.party = party;
    await party.start();
  }

  /**
   * After a crash: share recovery from t+1 live helpers (fresh shares of the books and the reserve as
   * of their current job). If no helpers answer in time (e.g. the whole committee crashed), fall
   * back to our own last persisted state, which the others will also be resuming from.
   */
  private async recoverOrResume(keys: Uint8Array | undefined, persisted: Uint8Array | undefined): Promise<bigint> {
    if (keys) {
      this.persistedSeq = persisted ? this.store!.lastSeq() : null;
      // our shares may be stale, but our own votes on preprocessing batches are what we sent: with
      // them we need not abstain on the helpers' batch in flight (decision 0009)
      const priorVotes = persisted ? prepLogOf(persisted) : undefined;
      await this.startParty({ keys, ...(priorVotes ? { priorVotes } : {}) });
      const recovering = this.party!.recover().then(() => true);
      const recovered = await Promise.race([recovering, this.fallbackWhen()]);
      if (recovered) {
        const last = lastSeqOfJob(this.party!.lastFinishedJob());
        await this.store!.commitSnapshot(last, this.party!.exportStateParts());
        this.boundaryWritten(last);
        this.log.info({ lastSeq: last.toString(), status: this.party!.status() }, 'recovered shares from helpers');
        return last;
      }
      this.log.info({ helpers: this.party!.status().recovery }, 'no share recovery: restarting the party from persisted state');
      await this.party!.stop();
      await recovering.catch(() => false); // stop() ends the recovery with an error: expected here
      await this.transport?.stop();
    }
    if (!persisted) throw new Error('crashed before the first job and no helpers answered: nothing to resume from');
    await this.startParty({ state: persisted });
    return this.store!.lastSeq();
  }

  /** Resolves false when this node should stop waiting for share recovery and resume from its own state (recovery-fallback.ts). */
  private fallbackWhen(): Promise<false> {
    const own = this.persistedSeq === null ? null : this.persistedSeq.toString();
    const fallback = new RecoveryFallback(this.cfg.t, own, this.cfg.recoveryFallback);
    return new Promise((resolve) => {
      const since = Date.now();
      let loggedAt = since;
      const timer = setInterval(() => {
        const st = this.party?.status();
        if (st?.phase !== 'recovering') return clearInterval(timer);
        const h = st.recovery;
        // a recovery that takes long says where it stands (helpers connected, ready, busy and why)
        if (Date.now() - loggedAt >= RECOVERY_STATUS_EVERY_MS) {
          loggedAt = Date.now();
          this.log.info({ waitingMs: loggedAt - since, helpers: h }, 'share recovery still in progress');
        }
        const why = fallback.check(h, Date.now());
        if (why === null) return;
        clearInterval(timer);
        this.log.warn({ why, persistedSeq: own }, 'resuming from own persisted state');
        resolve(false);
      }, RECOVERY_CHECK_MS);
      timer.unref();
    });
  }

  /** Ends the process like kill -9 (never exit(), which can hang on a queued lmdb write: `@tenebra/config` crash.ts); its supervisor restarts it. */
  private fatal(what: string, e: unknown): void {
    crash(this.log, what, e);
  }

  /** Feed callback: queue the op; pause the feed while too many are waiting. */
  private async enqueue(frame: SequencedFrame): Promise<void> {
    if (OP_TRACE) traceOp(this.log, 'node-recv', { seq: frame.seq });
    this.pending.push(this.applier!.decode(frame));
    if (OP_TRACE) traceOp(this.log, 'node-decoded', { seq: frame.seq });
    this.endHold?.(); // the next job needs the boundary's export first: no more holding
    this.wake?.();
    if (this.pending.length >= MAX_PENDING_OPS) {
      await new Promise<void>((r) => { this.drained = r; });
    }
  }

  /** Takes the next batch (takeBatch: the same cut at every node), and lets a paused feed go on. */
  private takeBatch(): IncomingOp[] | null {
    const batch = takeBatch(this.pending, this.cfg.maxBatch);
    // lets a sequencer with 'progress' job boundaries close the next job: ops arriving meanwhile gather into it
    if (batch) this.feed?.reportTaken(batch[batch.length - 1]!.seq);
    if (batch && this.drained && this.pending.length < MAX_PENDING_OPS / 2) {
      const d = this.drained;
      this.drained = null;
      d();
    }
    return batch;
  }

  private async jobLoop(): Promise<void> {
    while (this.running) {
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
    const t0 = performance.now();
    let jobMs = 0;
    let rounds = 0;
    let tj = 0;
    let before = consumedAt(party.reserveCursor());
    let ran = { jobId: '', attempt: 0 };
    const results = await runBatchAttempts<ResultFrame[]>(first, last, {
      party,
      attempt: (jobId, attempt) => {
        ran = { jobId, attempt };
        tj = performance.now();
        before = consumedAt(party.reserveCursor());
        // The results leave once the job has committed (the callback), before the engine's
        // end-of-job work and the boundary write: a node that dies before that write re-runs the
        // job from the boundary before, with identical results (ResultsLink.sendNow, ADR 0023).
        return party.runJob(jobId, async (ctx) => {
          if (OP_TRACE) traceOp(this.log, 'job-start', { first: first.toString(), last: last.toString(), queuedMs: +(performance.now() - tj).toFixed(2), sched: schedSample() });
          const out = await this.applier!.apply(ctx, batch, last);
          if (OP_TRACE) traceOp(this.log, 'job-end', { first: first.toString(), last: last.toString(), rounds: party.jobRounds(), sched: schedSample() });
          // the engine counts a job's rounds only while it runs: read them as its last one completed
          rounds += party.jobRounds();
          return out;
        }, (out) => this.link!.sendNow(out));
      },
      invalidate: () => this.applier!.invalidate(),
      exhausted: (jobId, attempt, e) => {
        // Its ops stay acknowledged and queued here (the sequencer journaled them) and run once
        // production resumes. The gateway refuses new orders meanwhile (it hears `exhausted` at once).
        const newly = !this.capacityTracker.exhausted;
        this.capacityTracker.markExhausted();
        if (newly) this.reportCapacity();
        if (newly || attempt % 30 === 0) this.log.warn({ jobId, err: e.message, pending: this.pending.length + batch.length }, 'preprocessing exhausted: retrying the batch once production can resume (every node up)');
      },
      waitForProduction: (committedAfter) => this.untilProductionPossible(committedAfter),
    });
    if (!results) return; // stopping: the batch stays unapplied, re-fed at the next start
    const wasExhausted = this.capacityTracker.exhausted;
    // job-end records ('progress' job boundaries) are no ops: counted, they would dilute the cost
    // per op and the ops metric (10-15% of the seqs of small jobs)
    const ops = realOps(batch);
    this.capacityTracker.jobDone(before, consumedAt(party.reserveCursor()), ops);
    if (wasExhausted) {
      this.log.info({ jobId: ran.jobId, attempts: ran.attempt + 1 }, 'preprocessing available again: the batch ran');
      this.reportCapacity();
    }
    jobMs += performance.now() - tj;
    this.metrics.jobDone(ops, jobMs / 1000, rounds);
    // The write overlaps the next job's rounds: one write in flight at most (the previous one, a
    // boundary or a staged preprocessing batch, must be done before this one is queued). The
    // results left already (the runJob callback above).
    this.link!.sendNow(results); // no-op if they did; else (link down then) from the store after the write
    await this.boundaryHold();
    for (let prev = this.persisting; ; prev = this.persisting) {
      await prev;
      if (prev === this.persisting) break;
    }
    // State at every job boundary: a node that dies, even the third one, comes back at the
    // boundary the live nodes are stuck after, and nodes killed together come back at the same
    // boundary. Exported after the previous write, so it holds any batch staged meanwhile (an
    // older export written last would drop it). A snapshot: the core is encoded now; reserve
    // chunks never change.
    if (OP_TRACE) traceOp(this.log, 'write-queued', { first: first.toString(), last: last.toString(), sched: schedSample() });
    const te = performance.now();
    const state = party.exportStateParts();
    const exportMs = performance.now() - te;
    const tw = performance.now();
    this.queuedSeq = last;
    this.persisting = this.persist(results, last, state, () => ({
      first: first.toString(), last: last.toString(), ops: batch.length, ms: Math.round(performance.now() - t0),
      jobMs: Math.round(jobMs), exportMs: +exportMs.toFixed(1), writeMs: Math.round(performance.now() - tw),
    }));
    void this.persisting.catch((e: unknown) => this.fatal('persisting a job boundary failed', e));
  }

  /**
   * Waits up to holdMs before the boundary's export and write while no op is queued, so that this
   * node's CPU for them (export, lmdb's write, the fsync) does not compete with the peers still in
   * the job's last round, whose results the gateway may be waiting for (ADR 0045). Ends at once when
   * an op arrives (its job needs the export first), when a preprocessing vote waits for this
   * boundary (persistStaged), or on stop(). Durability is ADR 0023's: the results left already, the
   * state written is the same, and a node that dies before it re-runs the job from the boundary
   * before with identical results.
   */
  private boundaryHold(): Promise<void> {
    if (this.holdMs <= 0 || this.pending.length > 0 || !this.running || this.boundaryWaiters.length > 0 || this.stagedWrite) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.endHold = null;
        resolve();
      };
      const timer = setTimeout(done, this.holdMs);
      this.endHold = done;
    });
  }

  /** The retry wait after an exhausted attempt (batch-attempts.ts untilProductionPossible) over this node's view. */
  private untilProductionPossible(committedAfter?: number): Promise<boolean> {
    return untilProductionPossible({
      production: () => this.capacity().production,
      committedBatches: () => this.party!.status().preprocessing.committedBatches,
      now: () => Date.now(),
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      stopping: () => !this.running,
    }, committedAfter);
  }

  /** Writes a job boundary durably, then releases its results to the gateway. */
  private async persist(results: ResultFrame[], last: bigint, state: SplitState, fields: () => Record<string, unknown>): Promise<void> {
    await this.store!.commitJob(results, last, state);
    if (OP_TRACE) traceOp(this.log, 'write-done', { last: last.toString(), sched: schedSample() });
    this.appliedSeq = last;
    this.boundaryWritten(last);
    for (const r of results) {
      const seq = BigInt(r.seq);
      if (seq > this.resultsStoredTo) this.resultsStoredTo = seq;
    }
    this.link!.notify(this.resultsStoredTo);
    // ms: from taking the batch to its boundary on disk (the MPC job, the export, waiting for the
    // previous write, this write)
    this.log.info(fields(), 'batch applied');
  }

  /**
   * Makes the party's state with a just-staged preprocessing batch durable before the party sends
   * ready for it, and before any other vote on a batch (see PartyOptions.beforePrepVote). Queued
   * behind the write in flight, so an older export cannot land after it. A state is always written
   * with the seq of its last finished job, whose results must be on disk first: if that job's
   * boundary is not queued yet (runBatch is between the job and its write), its write, exported
   * later, carries the batch and releases it.
   */
  private persistStaged(): Promise<void> {
    // Votes that come while a write for earlier votes waits its turn share it: it exports the state
    // when it starts, so it holds them all. Without this every vote queued one full state write, and
    // during a preprocessing ballot under load (three coordinators re-balloting every 500 ms, each
    // prepare a vote at every party) the queue outgrew the writes, promises came later than the next
    // ballot, and no ballot ever completed (outage test, 2026-11-27; docs/decisions/0016).
    if (this.stagedWrite) return this.stagedWrite;
    this.endHold?.(); // a vote waits for the boundary being held (its write releases it): write it now
    const pending = new Promise<void>((release, fail) => {
      const step = this.persisting.then(async () => {
        this.stagedWrite = null; // exported below: a vote from now on needs the next write
        const party = this.party!;
        const store = this.store!;
        const finished = lastSeqOfJob(party.lastFinishedJob());
        const covered = this.queuedSeq > store.lastSeq() ? this.queuedSeq : store.lastSeq();
        if (finished > covered) {
          this.boundaryWaiters.push({ seq: finished, release });
          this.endHold?.();
          return;
        }
        await store.commitSnapshot(finished, party.exportStateParts());
        release();
      });
      this.persisting = step;
      step.catch((e: unknown) => {
        fail(e);
        this.fatal('persisting a staged preprocessing batch failed', e);
      });
    });
    this.stagedWrite = pending;
    return pending;
  }

  /** A boundary up to `seq` is on disk: release the staged batches that waited for it. */
  private boundaryWritten(seq: bigint): void {
    const still: typeof this.boundaryWaiters = [];
    for (const w of this.boundaryWaiters) (w.seq <= seq ? w.release() : still.push(w));
    this.boundaryWaiters = still;
  }

  /** Persists the party state as of now (a job boundary) with the seq it covers. */
  private async snapshot(): Promise<void> {
    await this.persisting; // the party state is then the one of appliedSeq
    await this.store!.commitSnapshot(this.appliedSeq, this.party!.exportStateParts());
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.statusTimer) clearInterval(this.statusTimer);
    this.endHold?.();
    this.wake?.();
    await this.feed?.close();
    await this.loopDone.catch(() => undefined);
    await this.persisting.catch(() => undefined);
    if (this.party && this.store && this.party.status().phase === 'ready') await this.snapshot();
    this.link?.close();
    await this.party?.stop();
    await this.transport?.stop();
    if (this.store) {
      await this.store.markCleanStop();
      await this.store.close();
    }
  }
}
