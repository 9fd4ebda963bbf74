// Creates (or resumes) a cluster's data folder and runs its processes as children.
// Used by `npm start` and by the system and chaos tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, fstatSync, writeFileSync, readFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { setPriority, tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_COMMITTEE_LINKS, DEFAULT_JOB_BOUNDARIES, DEFAULT_PORTS, OPERATOR_TOKEN_ENV, COMPARISON_BITS, applyReserveTargets, layout, readJson, writeJson, checkCommitteeSize, checkPortClash, checkPreprocessingMode, metricsPorts, plannedPorts,
  type Env, type PreprocessingMode, type PortPlan, type NodeConfig, type SequencerConfig, type JobBoundaryPolicy, type ShareFanout, type GatewayConfig, type ClusterFile, type ProcessEntry, type LinkEmulationConfig, type CommitteeLinks,
  type ReserveCounts,
} from '@tenebra/config';
import { generateX25519, generateEd25519, writeKeyFile, readKeyFile } from '@tenebra/seal';
import { MAX_UNIX_SOCKET_PATH_BYTES, checkLinkEmulation, generateIdentity, unixSocketMultiaddr } from '@tenebra/transport';
import { assertComparisonFits, DEFAULT_KAPPA } from '@tenebra/mpc';
import { SUM_EXTRA_BITS } from '@tenebra/matching';
import { expectedMeasurement } from '@tenebra/sequencer-enclave';
import { clientLinkKeys, ensureLinkKeyFile, upgradeLinkKeys } from './link-keys';
import { upgradeMetricsPorts } from './metrics-ports';
import { writeOperatorToken } from './operator-token';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ENTRY = {
  committee: join(ROOT, 'committee', 'src', 'main.ts'),
  sequencer: join(ROOT, 'sequencer-enclave', 'src', 'main.ts'),
  gateway: join(ROOT, 'gateway', 'src', 'main.ts'),
} as const;

export interface ClusterOptions {
  dataDir: string;
  env: Env;
  n?: number;
  t?: number;
  ports?: PortPlan;
  /** a new folder's preprocessing (default committee); 'dealer' is NOT private, refused in production, and not for a resumed committee folder */
  preprocessing?: PreprocessingMode;
  host?: string;
  logLevel?: string;
  /** restart a process that exits by itself (not through kill()/stop()), with backoff: `npm start` does */
  supervise?: boolean;
  /**
   * CPU niceness of the committee nodes (0-19; default 0). On one host the five nodes' preprocessing
   * can take every core; a positive value lets the sequencer and gateway (the acknowledgement path)
   * run first. Separate hosts need nothing of the kind.
   */
  nodeNice?: number;
  /** the nodes' libp2p write-stall limit (NodeConfig.writeStallMs; default: the transport's) */
  writeStallMs?: number;
  /** the nodes' share-recovery fallback bounds (NodeConfig.recoveryFallback; default: recovery-fallback.ts's) */
  recoveryFallback?: NodeConfig['recoveryFallback'];
  /**
   * Emulated WAN links between the nodes for this run (NodeConfig.linkEmulation): written into every
   * node's config at each start, new folder or resumed; absent removes any a previous run set.
   */
  linkEmulation?: LinkEmulationConfig;
  /**
   * Preprocessing reserve targets of every node (`npm start -- --outage-minutes M --outage-rate R`,
   * docs/decisions/0016-outage-capacity.md): written into the node configs of a new or resumed
   * folder; absent keeps what the configs say (a new folder: the defaults below).
   */
  reserve?: ReserveCounts;
  /**
   * Where the sequencer ends the committee's jobs (SequencerConfig.jobBoundaries, `npm start --
   * --job-boundaries progress`): written into the sequencer's config of a new or resumed folder
   * (measured, so the gateway and nodes get the new measurement); absent: DEFAULT_JOB_BOUNDARIES
   * ('progress'), which a config says by leaving the field out.
   */
  jobBoundaries?: JobBoundaryPolicy;
  /**
   * Whom each node sends a job round's shares (NodeConfig.shareFanout, `npm start -- --share-fanout
   * spare`): written into the node configs of a new or resumed folder; absent: 'all'.
   */
  shareFanout?: ShareFanout;
  /**
   * How the committee nodes reach each other this run (docs/decisions/0041-unix-socket-links.md):
   * 'tcp' on their loopback ports, 'unix' on sockets under DIR/sockets (`npm start -- --links unix`).
   * Written into every node config at each start, new folder or resumed; absent: DEFAULT_COMMITTEE_LINKS.
   * The gateway's and the sequencer's links stay on TCP either way.
   */
  links?: CommitteeLinks;
}

/**
 * Node i's Unix socket: DIR/sockets/node-<i>.sock, outside the node's storage folder (whose files
 * the privacy test reads). A folder whose path would pass the 107-byte sun_path limit gets a short
 * folder under the system's temporary directory instead, named by a digest of the data folder's
 * path (so every start of the folder finds the same one); the socket files are made afresh by
 * each node at start, so nothing in them needs to outlive a reboot.
 */
export function nodeSocketPath(dataDir: string, index: number): string {
  const root = layout(dataDir).root;
  const inFolder = join(root, 'sockets', `node-${index}.sock`);
  if (Buffer.byteLength(inFolder) <= MAX_UNIX_SOCKET_PATH_BYTES) return inFolder;
  const digest = createHash('sha256').update(root).digest('hex').slice(0, 16);
  const short = join(tmpdir(), `tenebra-${digest}`, `node-${index}.sock`);
  if (Buffer.byteLength(short) > MAX_UNIX_SOCKET_PATH_BYTES) {
    throw new Error(`no Unix socket path within ${MAX_UNIX_SOCKET_PATH_BYTES} bytes for ${root} (tried ${inFolder} and ${short}): use --links tcp or a shorter data folder`);
  }
  return short;
}

/**
 * Writes the committee-link addresses of this run into the node configs: each node's listen
 * multiaddr and every peer entry's dial address (keeping the peer ids). Returns the indexes of the
 * configs that changed.
 */
export function applyCommitteeLinks(dataDir: string, nodes: NodeConfig[], links: CommitteeLinks): number[] {
  const addrOf = (nd: NodeConfig): string => (links === 'unix' ? unixSocketMultiaddr(nodeSocketPath(dataDir, nd.index)) : `/ip4/${nd.host}/tcp/${nd.port}`);
  const byIndex = new Map(nodes.map((nd) => [nd.index, addrOf(nd)]));
  const changed: number[] = [];
  for (const nd of nodes) {
    const listen = byIndex.get(nd.index)!;
    const peers = nd.peers.map((p) => {
      const base = byIndex.get(p.index);
      if (base === undefined) throw new Error(`node ${nd.index}'s config lists peer ${p.index}, which has no config`);
      return { ...p, addr: `${base}/p2p/${p.peerId}` };
    });
    if (nd.listen === listen && nd.peers.every((p, k) => p.addr === peers[k]!.addr)) continue;
    nd.listen = listen;
    nd.peers = peers;
    changed.push(nd.index);
  }
  return changed;
}

/** Sets (or, for 'all'/absent, removes) a node config's share fan-out; true iff it changed. */
function applyShareFanout(cfg: NodeConfig, fanout: ShareFanout | undefined): boolean {
  const want = fanout === 'all' ? undefined : fanout;
  if (cfg.shareFanout === want) return false;
  if (want) cfg.shareFanout = want;
  else delete cfg.shareFanout;
  return true;
}

/** Sets (or, for the default/absent, removes) the sequencer config's job-boundary policy; true iff it changed. */
function applyJobBoundaries(cfg: SequencerConfig, policy: JobBoundaryPolicy | undefined): boolean {
  const want = policy === DEFAULT_JOB_BOUNDARIES ? undefined : policy;
  if (cfg.jobBoundaries === want) return false;
  if (want) cfg.jobBoundaries = want;
  else delete cfg.jobBoundaries;
  return true;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** Preprocessing batch and pieces of every node (TENEBRA_PREP_BATCH, TENEBRA_PREP_PIECES=0|1 override them for experiments). */
// 1,024 in pieces since 2026-12-04 (ADR 0047's addenda): -11% CPU per random bit, half the
// messages, and a step's longest hold 1.5-2.0 ms against 2.1 ms at 512 unsplit.
const PREP_BATCH = Number(process.env.TENEBRA_PREP_BATCH ?? 1024);
const PREP_PIECES = (process.env.TENEBRA_PREP_PIECES ?? '1') === '1';
if (!Number.isInteger(PREP_BATCH) || PREP_BATCH < 1) throw new Error(`TENEBRA_PREP_BATCH must be a positive integer, got ${process.env.TENEBRA_PREP_BATCH}`);

/** Generates keys and configs into dataDir unless they exist; returns the resolved configs. */
export async function ensureCluster(opts: ClusterOptions): Promise<{ nodes: NodeConfig[]; sequencer: SequencerConfig; gateway: GatewayConfig }> {
  const L = layout(opts.dataDir);
  checkLinkEmulation(opts.linkEmulation); // a bad setting is refused before anything is written
  if (existsSync(L.gatewayConfig) && existsSync(L.sequencerConfig)) {
    const sequencer = readJson<SequencerConfig>(L.sequencerConfig);
    const gateway = readJson<GatewayConfig>(L.gatewayConfig);
    const nodes = gateway.nodes.map((nd) => readJson<NodeConfig>(L.nodeConfig(nd.index)));
    if (gateway.env !== opts.env) throw new Error(`${L.root} holds a '${gateway.env}' cluster, not '${opts.env}'`);
    if ((opts.n !== undefined && opts.n !== gateway.n) || (opts.t !== undefined && opts.t !== gateway.t)) {
      throw new Error(`${L.root} holds a committee of n=${gateway.n}, t=${gateway.t}, not n=${opts.n ?? gateway.n}, t=${opts.t ?? gateway.t}: its shares cannot be re-dealt; use a new data folder for another size`);
    }
    const mode = nodes[0]?.preprocessing.mode ?? 'committee';
    if (opts.preprocessing === 'dealer' && mode !== 'dealer') throw new Error(`${L.root} holds a committee-preprocessing cluster: --dealer applies to new data folders only`);
    checkPreprocessingMode(gateway.env, mode);
    // Dealer folders made before the sequencer and gateway labelled their logs get the label now
    // (before the measurement: it covers the sequencer's config).
    if (labelDealerConfig(sequencer, mode)) writeJson(L.sequencerConfig, sequencer);
    if (applyJobBoundaries(sequencer, opts.jobBoundaries)) writeJson(L.sequencerConfig, sequencer);
    if (labelDealerConfig(gateway, mode)) writeJson(L.gatewayConfig, gateway);
    for (const nd of nodes) if (applyLinkEmulation(nd, opts.linkEmulation)) writeJson(L.nodeConfig(nd.index), nd);
    for (const nd of nodes) if (applyShareFanout(nd, opts.shareFanout)) writeJson(L.nodeConfig(nd.index), nd);
    for (const i of applyCommitteeLinks(L.root, nodes, opts.links ?? DEFAULT_COMMITTEE_LINKS)) writeJson(L.nodeConfig(i), nodes.find((nd) => nd.index === i)!);
    if (opts.reserve) for (const nd of nodes) if (applyReserveTargets(nd.preprocessing, opts.reserve)) writeJson(L.nodeConfig(nd.index), nd);
    // Folders made before link keys existed get them now (before the measurement: it covers them).
    const upgraded = upgradeLinkKeys(L, nodes, sequencer, gateway);
    for (const nd of upgraded.nodes) writeJson(L.nodeConfig(nd.index), nd);
    if (upgraded.sequencer) writeJson(L.sequencerConfig, sequencer);
    if (upgraded.gateway) writeJson(L.gatewayConfig, gateway);
    // Folders made before metrics existed get the plan's metrics ports (not measured: no effect on the quote).
    const withMetrics = upgradeMetricsPorts(opts.ports ?? DEFAULT_PORTS[opts.env], nodes, sequencer, gateway);
    for (const nd of withMetrics.nodes) writeJson(L.nodeConfig(nd.index), nd);
    if (withMetrics.sequencer) writeJson(L.sequencerConfig, sequencer);
    if (withMetrics.gateway) writeJson(L.gatewayConfig, gateway);
    // The enclave's measurement covers its code: recompute it so a resumed folder trusts the
    // sequencer this checkout runs (a real deployment would pin it instead).
    const measurement = expectedMeasurement(sequencer);
    if (gateway.expectedMeasurement !== measurement) {
      gateway.expectedMeasurement = measurement;
      writeJson(L.gatewayConfig, gateway);
      for (const nd of nodes) {
        nd.expectedMeasurement = measurement;
        writeJson(L.nodeConfig(nd.index), nd);
      }
    }
    return { nodes, sequencer, gateway };
  }
  const n = opts.n ?? 5;
  const t = opts.t ?? 2;
  const mode = opts.preprocessing ?? 'committee';
  checkPreprocessingMode(opts.env, mode);
  checkCommitteeSize(n, t);
  // the nodes would refuse to start otherwise (the PRSS masks of a comparison grow with C(n, t)):
  // book values, and liquidity sums for FOK, aon and min_fill_size (matching's leWide)
  for (const bits of [COMPARISON_BITS, COMPARISON_BITS + SUM_EXTRA_BITS]) assertComparisonFits(bits, DEFAULT_KAPPA, n, t);
  const host = opts.host ?? '127.0.0.1';
  const ports = opts.ports ?? DEFAULT_PORTS[opts.env];
  const others = [ports.gateway, ports.gatewayInternal, ports.sequencer];
  const clash = others.find((p) => p >= ports.nodeBase && p < ports.nodeBase + n);
  if (clash !== undefined) throw new Error(`the ${n} committee nodes' ports ${ports.nodeBase}-${ports.nodeBase + n - 1} include port ${clash} of the sequencer or the gateway`);
  checkPortClash(plannedPorts(ports, n)); // every port, the metrics ones too
  const metrics = metricsPorts(ports);
  for (const d of [L.root, L.configDir, L.keysDir, L.logsDir]) mkdirSync(d, { recursive: true });

  const platform = generateEd25519();
  writeKeyFile(L.platformKey, platform);
  const gatewayKey = generateX25519();
  writeKeyFile(L.gatewayKey, gatewayKey);
  writeFileSync(L.jwtSecret, randomBytes(32).toString('hex'), { mode: 0o600 });
  writeFileSync(L.adminSecret, randomBytes(24).toString('hex'), { mode: 0o600 });
  const nodeLinkKeys = new Map<number, string>();
  for (let i = 1; i <= n; i++) nodeLinkKeys.set(i, ensureLinkKeyFile(L.nodeLinkKey(i)));
  const gatewayLinkKey = ensureLinkKeyFile(L.gatewayLinkKey);

  const sequencer: SequencerConfig = {
    role: 'sequencer', dataDir: L.sequencerDir, host, port: ports.sequencer, n,
    platformKeyFile: L.platformKey, clientLinkKeys: clientLinkKeys(gatewayLinkKey, nodeLinkKeys), logLevel: opts.logLevel ?? 'info',
    ...(metrics ? { metricsPort: metrics.sequencer } : {}),
    ...(mode === 'dealer' ? { committeePreprocessing: mode } : {}),
    ...(opts.jobBoundaries !== undefined && opts.jobBoundaries !== DEFAULT_JOB_BOUNDARIES ? { jobBoundaries: opts.jobBoundaries } : {}),
  };
  const measurement = expectedMeasurement(sequencer);
  const sequencerUrl = `ws://${host}:${ports.sequencer}`;
  const gatewayInternalUrl = `ws://${host}:${ports.gatewayInternal}`;

  const idents: { privateKey: Uint8Array; peerId: string }[] = [];
  const sealKeys: { privateKey: Uint8Array; publicKey: Uint8Array }[] = [];
  for (let i = 1; i <= n; i++) {
    const id = await generateIdentity();
    writeFileSync(L.nodeLibp2pKey(i), Buffer.from(id.privateKey).toString('hex'), { mode: 0o600 });
    idents.push(id);
    const sk = generateX25519();
    writeKeyFile(L.nodeX25519Key(i), sk);
    sealKeys.push(sk);
  }
  const peers = idents.map((id, k) => ({
    index: k + 1, peerId: id.peerId, addr: `/ip4/${host}/tcp/${ports.nodeBase + k}/p2p/${id.peerId}`,
  }));
  const nodes: NodeConfig[] = peers.map((p) => ({
    role: 'committee', env: opts.env, index: p.index, n, t,
    dataDir: L.nodeDir(p.index), host, port: ports.nodeBase + p.index - 1,
    listen: `/ip4/${host}/tcp/${ports.nodeBase + p.index - 1}`, peers,
    libp2pKeyFile: L.nodeLibp2pKey(p.index), x25519KeyFile: L.nodeX25519Key(p.index),
    linkKeyFile: L.nodeLinkKey(p.index), gatewayLinkPublicKey: gatewayLinkKey,
    gatewayX25519PublicKey: hex(gatewayKey.publicKey), sequencerUrl, gatewayInternalUrl,
    platformPublicKey: hex(platform.publicKey), expectedMeasurement: measurement,
    // batch 512: a phase-A step (run between jobs, see preprocessing.ts) stalls the next job ~4x less
    // than at 2048, and committee production measured faster too (less GC on large BigInt arrays).
    // Targets follow what matching consumes (comparisons of 9 nibbles at the committee's 32 bits,
    // mostly less-thans of 3 lex4 items, an equality of 3 prod4 items per self-trade test; about
    // 0.33 lex4 and 0.02 prod4 per nibble on bench:orders; triples only for min/select in some order kinds), with headroom
    // for an outage, when nothing can be made. A batch makes the full share of each kind below its
    // target and none of the others (preprocessing.ts, "Composition"), so nothing piles up.
    // TENEBRA_PREP_BATCH / TENEBRA_PREP_PIECES (0 or 1): other values for experiments (ADR 0047's A/B)
    preprocessing: { mode, targetTriples: 2_000, targetLex4: 3_400, targetProd4: 1_000, targetBits: 40_000, batch: PREP_BATCH, ...(PREP_PIECES ? { pieces: true } : {}) },
    maxBatch: 256, logLevel: opts.logLevel ?? 'info',
    kappa: DEFAULT_KAPPA, // the comparisons' statistical security, one for the whole committee
    ...(opts.writeStallMs === undefined ? {} : { writeStallMs: opts.writeStallMs }),
    ...(opts.recoveryFallback === undefined ? {} : { recoveryFallback: opts.recoveryFallback }),
    ...(opts.linkEmulation === undefined ? {} : { linkEmulation: opts.linkEmulation }),
    ...(opts.shareFanout === undefined || opts.shareFanout === 'all' ? {} : { shareFanout: opts.shareFanout }),
    ...(metrics ? { metricsPort: metrics.node(p.index) } : {}),
  }));
  if (opts.reserve) for (const nd of nodes) applyReserveTargets(nd.preprocessing, opts.reserve);
  applyCommitteeLinks(L.root, nodes, opts.links ?? DEFAULT_COMMITTEE_LINKS);
  const gateway: GatewayConfig = {
    role: 'gateway', env: opts.env, dataDir: L.gatewayDir, host, port: ports.gateway, internalPort: ports.gatewayInternal,
    n, t, sequencerUrl, platformPublicKey: hex(platform.publicKey), expectedMeasurement: measurement,
    nodes: nodes.map((nd, k) => ({ index: nd.index, x25519PublicKey: hex(sealKeys[k]!.publicKey), linkPublicKey: nodeLinkKeys.get(nd.index)! })),
    gatewayKeyFile: L.gatewayKey, linkKeyFile: L.gatewayLinkKey, jwtSecretFile: L.jwtSecret, adminSecretFile: L.adminSecret,
    logLevel: opts.logLevel ?? 'info',
    ...(metrics ? { metricsPort: metrics.gateway } : {}),
    ...(mode === 'dealer' ? { committeePreprocessing: mode } : {}),
  };
  writeJson(L.sequencerConfig, sequencer);
  writeJson(L.gatewayConfig, gateway);
  for (const nd of nodes) writeJson(L.nodeConfig(nd.index), nd);
  return { nodes, sequencer, gateway };
}

/** Marks a sequencer or gateway config of a dealer-mode committee (its logs carry the label); true iff it changed. */
export function labelDealerConfig(cfg: SequencerConfig | GatewayConfig, mode: PreprocessingMode): boolean {
  if (mode !== 'dealer' || cfg.committeePreprocessing === 'dealer') return false;
  cfg.committeePreprocessing = 'dealer';
  return true;
}

/** Sets (or removes) a node's link emulation to what this run asks; true iff the config changed. */
function applyLinkEmulation(nd: NodeConfig, want: LinkEmulationConfig | undefined): boolean {
  if (JSON.stringify(nd.linkEmulation) === JSON.stringify(want)) return false;
  if (want === undefined) delete nd.linkEmulation;
  else nd.linkEmulation = want;
  return true;
}

export type Role = ProcessEntry['role'];

/** What happened to one process, as the launcher saw it (the console's timeline shows these). */
export interface ProcessEvent {
  /** ms since the epoch */
  time: number;
  role: Role;
  index: number;
  kind: 'started' | 'exited' | 'killed' | 'frozen' | 'thawed';
  /** exit code or signal, restart delay */
  detail?: string;
}

interface Running {
  entry: ProcessEntry;
  /** log size when this incarnation started: readiness is searched only after it */
  logStart: number;
  /** stopped through kill(): its exit is expected */
  killed: boolean;
  /** stopped with SIGSTOP through freeze(), not yet continued */
  frozen: boolean;
  child: ChildProcess | null;
  exited: Promise<number | null>;
}

/** A running cluster: its processes, and controls for chaos (kill / restart one process). */
export class Cluster {
  private readonly procs = new Map<string, Running>();
  private readonly listeners = new Set<(e: ProcessEvent) => void>();
  private constructor(
    readonly opts: ClusterOptions,
    readonly configs: Awaited<ReturnType<typeof ensureCluster>>,
    /** this run's operator token (also in <data>/operator-token): the nodes' POST /control/links wants it */
    readonly operatorToken: string,
  ) {}

  static async start(opts: ClusterOptions): Promise<Cluster> {
    const configs = await ensureCluster(opts);
    const c = new Cluster(opts, configs, writeOperatorToken(opts.dataDir));
    c.spawnProc('sequencer', 0);
    for (const nd of configs.nodes) c.spawnProc('committee', nd.index);
    c.spawnProc('gateway', 0);
    c.writeClusterFile();
    return c;
  }

  get baseUrl(): string {
    const g = this.configs.gateway;
    return `http://${g.host}:${g.port}/api/v1`;
  }
  get wsUrl(): string {
    const g = this.configs.gateway;
    return `ws://${g.host}:${g.port}/ws/v1`;
  }

  private key(role: Role, index: number): string {
    return `${role}:${index}`;
  }

  private configFile(role: Role, index: number): string {
    const L = layout(this.opts.dataDir);
    return role === 'committee' ? L.nodeConfig(index) : role === 'sequencer' ? L.sequencerConfig : L.gatewayConfig;
  }

  /** Starts (or restarts) one process; its stdout/stderr (JSON log lines) go to DIR/logs/<role>-<index>.log. */
  spawnProc(role: Role, index: number): void {
    const L = layout(this.opts.dataDir);
    mkdirSync(L.logsDir, { recursive: true });
    const name = role === 'committee' ? `node-${index}` : role;
    const logFile = join(L.logsDir, `${name}.log`);
    const fd = openSync(logFile, 'a');
    const logStart = fstatSync(fd).size;
    const configFile = this.configFile(role, index);
    // TENEBRA_CPU_PROF=DIR: V8 CPU profiles of every process, written to DIR when it stops in order;
    // TENEBRA_CPU_PROF_ROLES=committee,gateway,sequencer limits them to those roles (a profiled gateway
    // runs several times slower under lmdb's many native calls, which changes what the nodes see)
    const profRoles = process.env.TENEBRA_CPU_PROF_ROLES?.split(',').map((r) => r.trim());
    const prof = process.env.TENEBRA_CPU_PROF && (!profRoles || profRoles.includes(role))
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.TENEBRA_CPU_PROF}`] : [];
    // TENEBRA_NODE_BUNDLE=FILE: the committee nodes run from a bundle built by scripts/bench/node-bundle.ts
    // (for profiles with real source lines); off by default
    const bundle = role === 'committee' ? process.env.TENEBRA_NODE_BUNDLE : undefined;
    const entry = bundle ? [resolve(bundle)] : ['--import', 'tsx', ENTRY[role]];
    const child = spawn(process.execPath, [...prof, ...entry, '--config', configFile], {
      cwd: ROOT, stdio: ['ignore', fd, fd], env: { ...process.env, ...(role === 'committee' ? { [OPERATOR_TOKEN_ENV]: this.operatorToken } : {}) },
    });
    closeSync(fd);
    if (role === 'committee' && this.opts.nodeNice && child.pid !== undefined) {
      try {
        setPriority(child.pid, this.opts.nodeNice);
      } catch (e) {
        console.error(`could not lower node ${index}'s CPU priority: ${String(e)}`);
      }
    }
    const exited = new Promise<number | null>((res) => child.once('exit', (code, sig) => res(code ?? (sig ? -1 : null))));
    void exited.then((code) => this.onExit(role, index, code));
    const cfg = role === 'committee' ? this.configs.nodes[index - 1]! : role === 'sequencer' ? this.configs.sequencer : this.configs.gateway;
    const ports: Record<string, number> = {
      // a node on a Unix socket (docs/decisions/0041) listens on no port: its config's listen names the socket
      ...(role === 'committee' ? (this.configs.nodes[index - 1]!.listen.startsWith('/unix/') ? {} : { libp2p: cfg.port })
        : role === 'sequencer' ? { ws: cfg.port }
        : { http: cfg.port, internal: this.configs.gateway.internalPort }),
      ...(cfg.metricsPort === undefined ? {} : { metrics: cfg.metricsPort }),
    };
    const peerId = role === 'committee' ? this.configs.nodes[index - 1]!.peers[index - 1]!.peerId : null;
    this.procs.set(this.key(role, index), {
      entry: { role, index, pid: child.pid ?? null, ports, peerId, configFile, logFile }, logStart, killed: false, frozen: false, child, exited,
    });
    this.emit(role, index, 'started', child.pid === undefined ? undefined : `pid ${child.pid}`);
  }

  /** Calls fn with every process event from now on; returns the unsubscribe. */
  onEvent(fn: (e: ProcessEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private emit(role: Role, index: number, kind: ProcessEvent['kind'], detail?: string): void {
    const e: ProcessEvent = { time: Date.now(), role, index, kind, ...(detail === undefined ? {} : { detail }) };
    for (const fn of this.listeners) fn(e);
  }

  private stopping = false;
  private readonly restarts = new Map<string, number>();

  /** Supervision: a process that died on its own is started again after a growing pause. */
  private onExit(role: Role, index: number, code: number | null): void {
    const p = this.procs.get(this.key(role, index));
    if (p) p.frozen = false;
    this.emit(role, index, 'exited', code === -1 ? 'by a signal' : `code ${code}`);
    if (!this.opts.supervise || this.stopping || !p || p.killed) return;
    const n = (this.restarts.get(this.key(role, index)) ?? 0) + 1;
    this.restarts.set(this.key(role, index), n);
    const delay = Math.min(30_000, 500 * 2 ** Math.min(n, 6));
    console.error(`${role} ${index || ''} exited (code ${code}); restarting in ${delay} ms (restart #${n}); see ${p.entry.logFile}`);
    setTimeout(() => {
      if (this.stopping) return;
      this.spawnProc(role, index);
      this.writeClusterFile();
    }, delay).unref();
  }

  /** Sends a signal to one process (SIGKILL for chaos) and waits for it to exit. */
  async kill(role: Role, index: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const p = this.procs.get(this.key(role, index));
    if (!p?.child || p.child.exitCode !== null || p.child.signalCode !== null) return;
    p.killed = true;
    this.emit(role, index, 'killed', signal);
    p.child.kill(signal);
    // a stopped process holds a catchable signal until it runs again (SIGKILL needs no SIGCONT)
    if (p.frozen && signal !== 'SIGKILL') p.child.kill('SIGCONT');
    await p.exited;
    p.entry.pid = null;
    this.writeClusterFile();
  }

  /**
   * Stops one process in place (SIGSTOP): it keeps its sockets and memory but runs nothing, like a
   * host that hangs. Its peers see silence, not a closed connection. thaw() continues it.
   */
  freeze(role: Role, index: number): boolean {
    const p = this.procs.get(this.key(role, index));
    if (!p?.child || !this.isRunning(role, index) || p.frozen) return false;
    p.child.kill('SIGSTOP');
    p.frozen = true;
    this.emit(role, index, 'frozen');
    return true;
  }

  /** Continues a process that freeze() stopped (SIGCONT). */
  thaw(role: Role, index: number): boolean {
    const p = this.procs.get(this.key(role, index));
    if (!p?.child || !p.frozen) return false;
    p.child.kill('SIGCONT');
    p.frozen = false;
    this.emit(role, index, 'thawed');
    return true;
  }

  isFrozen(role: Role, index: number): boolean {
    return this.procs.get(this.key(role, index))?.frozen ?? false;
  }

  async restart(role: Role, index: number): Promise<void> {
    await this.kill(role, index, 'SIGKILL');
    this.spawnProc(role, index);
    this.writeClusterFile();
  }

  processes(): ProcessEntry[] {
    return [...this.procs.values()].map((p) => p.entry);
  }

  /** Each process's `GET /metrics` URL (processes whose config has a metricsPort). */
  metricsUrls(): { role: Role; index: number; url: string }[] {
    const url = (host: string, port: number | undefined) => (port === undefined ? [] : [`http://${host}:${port}/metrics`]);
    const { sequencer, gateway, nodes } = this.configs;
    return [
      ...url(gateway.host, gateway.metricsPort).map((u) => ({ role: 'gateway' as const, index: 0, url: u })),
      ...url(sequencer.host, sequencer.metricsPort).map((u) => ({ role: 'sequencer' as const, index: 0, url: u })),
      ...nodes.flatMap((nd) => url(nd.host, nd.metricsPort).map((u) => ({ role: 'committee' as const, index: nd.index, url: u }))),
    ];
  }

  /** Each committee node's link control (POST /control/links with the operator token; nodes with a metricsPort). */
  linkControlUrls(): { index: number; url: string }[] {
    return this.configs.nodes.flatMap((nd) => (nd.metricsPort === undefined ? [] : [{ index: nd.index, url: `http://${nd.host}:${nd.metricsPort}/control/links` }]));
  }

  isRunning(role: Role, index: number): boolean {
    const c = this.procs.get(this.key(role, index))?.child;
    return !!c && c.exitCode === null && c.signalCode === null;
  }

  /** Resolves when `role:index` exits by itself (not through kill()). */
  exitOf(role: Role, index: number): Promise<number | null> | undefined {
    return this.procs.get(this.key(role, index))?.exited;
  }

  writeClusterFile(): void {
    const L = layout(this.opts.dataDir);
    const g = this.configs.gateway;
    const file: ClusterFile = {
      env: this.opts.env, dataDir: L.root, n: g.n, t: g.t, startedAt: new Date().toISOString(),
      gateway: {
        baseUrl: this.baseUrl, wsUrl: this.wsUrl, adminUrl: `http://${g.host}:${g.port}/admin`,
        adminSecretFile: g.adminSecretFile, internalUrl: `ws://${g.host}:${g.internalPort}`,
      },
      sequencer: { url: g.sequencerUrl, measurement: g.expectedMeasurement },
      processes: this.processes(),
    };
    writeJson(L.clusterFile, file);
  }

  /** Polls until the gateway answers and every live committee node reports ready in its log. */
  async waitReady(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await this.gatewayUp() && this.nodesReady()) return;
      // Under supervision a process that exits by itself is started again (a node that finds itself
      // stale exits on purpose and recovers in its next life): wait for that one instead.
      for (const p of this.opts.supervise ? [] : this.procs.values()) {
        if (!p.killed && p.child && (p.child.exitCode !== null || p.child.signalCode !== null)) {
          throw new Error(`${p.entry.role} ${p.entry.index} exited during start-up; see ${p.entry.logFile}:\n${tail(p.entry.logFile)}`);
        }
      }
      if (Date.now() > deadline) throw new Error(`cluster not ready after ${timeoutMs} ms; logs in ${layout(this.opts.dataDir).logsDir}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async gatewayUp(): Promise<boolean> {
    try {
      const r = await fetch(`${this.baseUrl}/instruments`);
      return r.ok;
    } catch {
      return false;
    }
  }

  private nodesReady(): boolean {
    return this.configs.nodes.every((nd) => {
      const p = this.procs.get(this.key('committee', nd.index));
      if (!p) return false;
      // killed on purpose: not waited for; exited by itself: not ready (its restart is, once it says so)
      if (!this.isRunning('committee', nd.index)) return p.killed;
      try {
        return readFileSync(p.entry.logFile).subarray(p.logStart).toString('utf8').includes('"msg":"node ready"');
      } catch {
        return false;
      }
    });
  }

  /** Stops every process: SIGTERM, then SIGKILL after graceMs. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    const running = [...this.procs.values()].filter((p) => p.child && p.child.exitCode === null && p.child.signalCode === null);
    for (const p of running) {
      p.child!.kill('SIGTERM');
      if (p.frozen) p.child!.kill('SIGCONT'); // else the SIGTERM waits until the grace ends
    }
    const timer = setTimeout(() => { for (const p of running) p.child!.kill('SIGKILL'); }, graceMs);
    await Promise.all(running.map((p) => p.exited));
    clearTimeout(timer);
    for (const p of this.procs.values()) p.entry.pid = null;
    this.writeClusterFile();
  }
}

/** The last lines of a log file, for error messages. */
export function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export { readKeyFile };
