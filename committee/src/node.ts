// One committee node: an MPC party over libp2p that applies the sequencer's operations, batch by
// batch, to the order books it holds as shares, and reports each operation's outcome to the gateway.
import { readFileSync, mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import type { NodeConfig } from '@tenebra/config';
import { createLibp2pTransport, type Transport } from '@tenebra/transport';
import { createParty, type Party } from '@tenebra/mpc';
import { SequencerFeed, type SequencedFrame, type ResultFrame } from '@tenebra/wire';
import { readKeyFile, fromHex } from '@tenebra/seal';
import { NodeStore } from './node-store';
import { ResultsLink } from './results-link';
import { BatchApplier, type IncomingOp } from './apply';

/** Sequenced ops waiting for their job before the feed is paused. */
const MAX_PENDING_OPS = 20_000;

export class CommitteeNode {
  private transport: Transport | null = null;
  private party: Party | null = null;
  private store: NodeStore | null = null;
  private feed: SequencerFeed | null = null;
  private link: ResultsLink | null = null;
  private applier: BatchApplier | null = null;
  private readonly pending: IncomingOp[] = [];
  private wake: (() => void) | null = null;
  private drained: (() => void) | null = null;
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();

  constructor(private readonly cfg: NodeConfig, private readonly log: Logger) {}

  async start(): Promise<void> {
    const cfg = this.cfg;
    mkdirSync(cfg.dataDir, { recursive: true });
    this.store = new NodeStore(cfg.dataDir);
    const privateKey = fromHex(readFileSync(cfg.libp2pKeyFile, 'utf8').trim());
    const sealKey = readKeyFile(cfg.x25519KeyFile);
    this.transport = await createLibp2pTransport({
      self: cfg.index, n: cfg.n, privateKey, listen: cfg.listen, peers: cfg.peers,
    });
    const state = this.store.partyState();
    this.party = createParty({
      n: cfg.n, t: cfg.t, transport: this.transport, state,
      preprocessing: { mode: cfg.preprocessing.mode, targetTriples: cfg.preprocessing.targetTriples, targetBits: cfg.preprocessing.targetBits },
      log: (ev: object) => this.log.debug({ mpc: ev }, 'mpc'),
    });
    this.party.on('quorum-lost', (ev: unknown) => this.log.warn({ ev }, 'quorum lost: waiting for parties to return'));
    this.party.on('quorum-restored', (ev: unknown) => this.log.info({ ev }, 'quorum restored'));
    this.party.on('inconsistent-share', (ev: unknown) => this.log.error({ ev }, 'inconsistent share'));
    await this.party.start();

    let lastSeq = this.store.lastSeq();
    if (state === undefined && lastSeq === 0n) {
      this.log.info('fresh node');
    } else {
      this.log.info({ lastSeq: lastSeq.toString() }, 'resuming from persisted state');
    }
    this.applier = new BatchApplier({
      index: cfg.index, n: cfg.n, sealKey, gatewayPublicKey: fromHex(cfg.gatewayX25519PublicKey), log: this.log,
    });
    this.link = new ResultsLink(cfg.gatewayInternalUrl, cfg.index, this.store, this.log);
    this.link.start();

    this.running = true;
    this.loopDone = this.jobLoop();
    this.feed = new SequencerFeed();
    await this.feed.connect({
      url: cfg.sequencerUrl, node: cfg.index, fromSeq: lastSeq + 1n,
      platformPublicKey: fromHex(cfg.platformPublicKey), expectedMeasurement: cfg.expectedMeasurement,
      onOp: (frame: SequencedFrame) => this.enqueue(frame),
    });
    this.log.info({ lastSeq: lastSeq.toString(), status: this.party.status() }, 'node ready');
  }

  /** Feed callback: queue the op; pause the feed while too many are waiting. */
  private async enqueue(frame: SequencedFrame): Promise<void> {
    this.pending.push(this.applier!.decode(frame));
    this.wake?.();
    if (this.pending.length >= MAX_PENDING_OPS) {
      await new Promise<void>((r) => { this.drained = r; });
    }
  }

  /** Takes the next batch: up to the sequencer's batch end, at most maxBatch ops (both deterministic). */
  private takeBatch(): IncomingOp[] | null {
    const end = this.pending.findIndex((op) => op.batchEnd);
    if (end < 0 && this.pending.length < this.cfg.maxBatch) return null;
    const count = end < 0 ? this.cfg.maxBatch : Math.min(end + 1, this.cfg.maxBatch);
    const batch = this.pending.splice(0, count);
    if (this.drained && this.pending.length < MAX_PENDING_OPS / 2) {
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
    const results: ResultFrame[] = await party.runJob(`batch:${first}`, (ctx) => this.applier!.apply(ctx, batch, last));
    await this.store!.commitJob(last, party.exportState(), results);
    this.link!.notify();
    this.log.info({ first: first.toString(), last: last.toString(), ops: batch.length, ms: Math.round(performance.now() - t0) }, 'batch applied');
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.feed?.close();
    await this.loopDone.catch(() => undefined);
    this.link?.close();
    await this.party?.stop();
    await this.transport?.stop();
    await this.store?.close();
  }
}
