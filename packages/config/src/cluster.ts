// Configuration of every process of a cluster, and the data-folder layout that holds it.
// The launcher (scripts/src/start.ts) writes these files; each process reads only its own.
import { readFileSync, writeFileSync, mkdirSync, existsSync, renameSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import type { PreprocessingMode } from './dealer';

export type Env = 'production' | 'test';
export const ENVS: readonly Env[] = ['production', 'test'];

/** Loopback ports of one environment; the test environment lives on other ports so both can run. */
export interface PortPlan {
  gateway: number;
  gatewayInternal: number;
  sequencer: number;
  /** node i listens on nodeBase + i - 1 */
  nodeBase: number;
  /**
   * Prometheus `GET /metrics` ports (docs/decisions/0012-metrics.md): the gateway on metricsBase, the
   * sequencer on metricsBase + 1, node i on metricsBase + 1 + i. Absent: no metrics servers.
   */
  metricsBase?: number;
}

export const DEFAULT_PORTS: Record<Env, PortPlan> = {
  production: { gateway: 8080, gatewayInternal: 7200, sequencer: 7100, nodeBase: 7001, metricsBase: 7300 },
  test: { gateway: 9080, gatewayInternal: 9200, sequencer: 9100, nodeBase: 9001, metricsBase: 9300 },
};

/** The metrics ports of a plan (undefined: the plan has none). */
export function metricsPorts(plan: PortPlan): { gateway: number; sequencer: number; node: (i: number) => number } | undefined {
  const base = plan.metricsBase;
  if (base === undefined) return undefined;
  return { gateway: base, sequencer: base + 1, node: (i: number) => base + 1 + i };
}

/**
 * Every port a plan gives a committee of n, named (gateway, internal, sequencer, node-i, and the
 * metrics ports), for the launcher's clash check.
 */
export function plannedPorts(plan: PortPlan, n: number): { name: string; port: number }[] {
  const out = [
    { name: 'gateway', port: plan.gateway }, { name: 'gateway internal', port: plan.gatewayInternal }, { name: 'sequencer', port: plan.sequencer },
  ];
  for (let i = 1; i <= n; i++) out.push({ name: `node ${i}`, port: plan.nodeBase + i - 1 });
  const m = metricsPorts(plan);
  if (m) {
    out.push({ name: 'gateway metrics', port: m.gateway }, { name: 'sequencer metrics', port: m.sequencer });
    for (let i = 1; i <= n; i++) out.push({ name: `node ${i} metrics`, port: m.node(i) });
  }
  return out;
}

/** Throws naming the first two entries that share a port. */
export function checkPortClash(ports: readonly { name: string; port: number }[]): void {
  const seen = new Map<number, string>();
  for (const { name, port } of ports) {
    const other = seen.get(port);
    if (other !== undefined) throw new Error(`port ${port} is planned twice: for the ${other} and for the ${name}`);
    seen.set(port, name);
  }
}

/**
 * How the committee nodes of a one-host cluster reach each other (docs/decisions/0041-unix-socket-links.md):
 * 'tcp' over loopback ports (nodeBase + i - 1), 'unix' over Unix domain sockets in the data folder.
 * Noise and Yamux run on either. The launcher writes the addresses into the node configs at every
 * start (`npm start -- --links unix|tcp`), so a folder can switch between runs.
 */
export type CommitteeLinks = 'tcp' | 'unix';
export const COMMITTEE_LINKS: readonly CommitteeLinks[] = ['tcp', 'unix'];
/** The links of a start that names none. */
export const DEFAULT_COMMITTEE_LINKS: CommitteeLinks = 'tcp';

/** A `--links` flag's value (undefined: absent); throws naming the flag on anything else. */
export function committeeLinksOf(text: string | undefined, flag = '--links'): CommitteeLinks | undefined {
  if (text === undefined) return undefined;
  if (!(COMMITTEE_LINKS as readonly string[]).includes(text)) throw new Error(`${flag} must be one of ${COMMITTEE_LINKS.join(', ')}, got '${text}'`);
  return text as CommitteeLinks;
}

export interface PeerEntry {
  index: number;
  peerId: string;
  addr: string;
}

/**
 * Public Ed25519 link keys (hex) of the clients a server accepts: each internal link opens with the
 * client signing the server's fresh nonce with its link key (docs/decisions/0003-internal-authentication.md).
 */
export interface ClientLinkKeys {
  gateway: string;
  nodes: { index: number; publicKey: string }[];
}

export interface PreprocessingConfig {
  /** 'dealer': NOT private, never in production (dealer.ts) */
  mode: PreprocessingMode;
  targetTriples: number;
  targetBits: number;
  /** LEX4 closure items (each less-than uses 3 with 9 nibbles at COMPARISON_BITS = 32); default that share of targetBits / 4 */
  targetLex4?: number;
  /** PROD4 closure items (each equality test uses 3 with 9 nibbles at 32 bits); default a quarter of targetLex4 */
  targetProd4?: number;
  /** items of the largest kind per production batch: larger batches amortise the rounds (default 2048) */
  batch?: number;
  /**
   * run each phase-A step in pieces that give the event loop back in between (@tenebra/mpc
   * PreprocessingOptions.pieces; ADR 0047); absent: false
   */
  pieces?: boolean;
}

/** Emulated wide-area links between committee nodes (@tenebra/transport link-emulation.ts). */
export interface LinkEmulationConfig {
  /** one-way latency added to every message between nodes, ms */
  latencyMs?: number;
  /** ± this much uniform jitter around the latency, ms (at most latencyMs) */
  jitterMs?: number;
  /** each link's bandwidth, Mbit/s; absent: unlimited */
  bandwidthMbps?: number;
}

export interface NodeConfig {
  role: 'committee';
  env: Env;
  index: number;
  n: number;
  t: number;
  dataDir: string;
  host: string;
  port: number;
  /** libp2p listen multiaddr */
  listen: string;
  peers: PeerEntry[];
  libp2pKeyFile: string;
  x25519KeyFile: string;
  /** Ed25519 key proving this node on the sequencer feed and the gateway's results link */
  linkKeyFile: string;
  /** the gateway's public link key (hex): the results link's resume must be signed with it */
  gatewayLinkPublicKey: string;
  gatewayX25519PublicKey: string;
  sequencerUrl: string;
  gatewayInternalUrl: string;
  platformPublicKey: string;
  expectedMeasurement: string;
  preprocessing: PreprocessingConfig;
  /** sequenced ops per MPC job at most */
  maxBatch: number;
  logLevel: string;
  /** reset a libp2p stream towards a peer after this long without write progress (default 30,000 ms; see @tenebra/transport) */
  writeStallMs?: number;
  /**
   * How long a restarted node waits for share recovery before it resumes from its own persisted
   * state when too few helpers are ready (committee/src/recovery-fallback.ts): noHelpersMs with t+1
   * helpers connected but not all ready (default 15,000), unreachableMs in any case (default 45,000,
   * sized for a loaded host whose links take tens of seconds to come up; a third death always waits
   * it out). Whole ms, 1,000 to 86,400,000.
   */
  recoveryFallback?: { noHelpersMs?: number; unreachableMs?: number };
  /** emulated WAN links to the other nodes (absent: loopback as it is); `npm start -- --link-latency-ms` sets it per run */
  linkEmulation?: LinkEmulationConfig;
  /** Prometheus `GET /metrics` on host:metricsPort (absent: no metrics server) */
  metricsPort?: number;
  /**
   * Statistical security kappa of the comparisons (bits; @tenebra/mpc field.ts). Every node of a
   * committee must use the same: the launcher writes the engine's default into a new folder. Absent:
   * KAPPA_OF_OLDER_CONFIGS, the kappa every folder written before this field ran (and persisted) at.
   */
  kappa?: number;
  /**
   * Whom the node sends a job round's shares (docs/decisions/0030-share-fanout.md): absent 'all';
   * 'spare' the next t + 1 live nodes; 'minimal' the next t. Every node of a committee should use
   * the same (a mix works, it only wastes the savings).
   */
  shareFanout?: ShareFanout;
  /**
   * How long a job boundary's export and write wait, at most, after the job's results left while no
   * op is queued (committee/src/node.ts boundaryHold; docs/decisions/0045-fill-critical-window.md). Absent:
   * the node's default (0: at once, as before; the hold was measured and not made the default). Whole ms, 0 to 1,000.
   */
  boundaryHoldMs?: number;
}

/** Whom a node sends a job round's shares (NodeConfig.shareFanout; @tenebra/mpc PartyOptions.shareFanout). */
export type ShareFanout = 'all' | 'spare' | 'minimal';
export const SHARE_FANOUTS: readonly ShareFanout[] = ['all', 'spare', 'minimal'];

/** The kappa of a node config that names none: folders made before configs carried it ran at 40. */
export const KAPPA_OF_OLDER_CONFIGS = 40;

export interface SequencerConfig {
  role: 'sequencer';
  dataDir: string;
  host: string;
  port: number;
  n: number;
  platformKeyFile: string;
  /** who may submit (the gateway) and subscribe (the nodes); measured, so the quote covers it */
  clientLinkKeys: ClientLinkKeys;
  logLevel?: string;
  /** Prometheus `GET /metrics` on host:metricsPort (absent: no metrics server); not measured */
  metricsPort?: number;
  /** the committee's preprocessing mode; 'dealer' puts dealer.ts's label on every log line (absent: committee) */
  committeePreprocessing?: PreprocessingMode;
  /**
   * where the committee's MPC jobs end (docs/decisions/0008-job-boundaries.md): 'progress' (absent,
   * DEFAULT_JOB_BOUNDARIES) when the committee has taken every job closed before (jobs grow with a
   * backlog); 'intake' every intake group. Measured: it decides what the journal holds.
   */
  jobBoundaries?: JobBoundaryPolicy;
}

/** Where the sequencer ends the committee's jobs (SequencerConfig.jobBoundaries). */
export type JobBoundaryPolicy = 'intake' | 'progress';
export const JOB_BOUNDARY_POLICIES: readonly JobBoundaryPolicy[] = ['intake', 'progress'];
/**
 * The policy of a sequencer config without `jobBoundaries`: 'progress' since 2026-12-03 (ADR 0008's
 * equal-load comparison); 'intake' before, so a folder made earlier switches on its next start
 * unless it is started with `--job-boundaries intake`.
 */
export const DEFAULT_JOB_BOUNDARIES: JobBoundaryPolicy = 'progress';

export interface GatewayConfig {
  role: 'gateway';
  env: Env;
  dataDir: string;
  host: string;
  port: number;
  internalPort: number;
  n: number;
  t: number;
  sequencerUrl: string;
  platformPublicKey: string;
  expectedMeasurement: string;
  /** linkPublicKey: the node's Ed25519 link key, checked at its results hello */
  nodes: { index: number; x25519PublicKey: string; linkPublicKey: string }[];
  gatewayKeyFile: string;
  /** Ed25519 key proving the gateway to the sequencer */
  linkKeyFile: string;
  jwtSecretFile: string;
  adminSecretFile: string;
  logLevel?: string;
  /** Prometheus `GET /metrics` on host:metricsPort (absent: no metrics server) */
  metricsPort?: number;
  /** a limit price must lie within the mark ± this many basis points for every instrument (absent: each instrument's own band, gateway/src/orders/fill-loss.ts; 0 = no check) */
  priceBandBps?: number;
  /** the committee's preprocessing mode; 'dealer' puts dealer.ts's label on every log line and is refused in production (absent: committee) */
  committeePreprocessing?: PreprocessingMode;
}

export type ProcessConfig = NodeConfig | SequencerConfig | GatewayConfig;

/** One running (or last-run) process, as listed in cluster.json. */
export interface ProcessEntry {
  role: 'committee' | 'sequencer' | 'gateway';
  index: number;
  pid: number | null;
  ports: Record<string, number>;
  peerId: string | null;
  configFile: string;
  logFile: string;
}

/** DIR/cluster.json: what a user, the accounts CLI and the chaos tools need to find the cluster. */
export interface ClusterFile {
  env: Env;
  dataDir: string;
  n: number;
  t: number;
  startedAt: string;
  gateway: { baseUrl: string; wsUrl: string; adminUrl: string; adminSecretFile: string; internalUrl: string };
  sequencer: { url: string; measurement: string };
  processes: ProcessEntry[];
}

/** The environment variable that hands the operator token from the launcher to each committee node. */
export const OPERATOR_TOKEN_ENV = 'TENEBRA_OPERATOR_TOKEN';

/** Where everything of a cluster lives inside its data folder. */
export function layout(dataDir: string) {
  const root = resolve(dataDir);
  return {
    root,
    clusterFile: join(root, 'cluster.json'),
    configDir: join(root, 'config'),
    keysDir: join(root, 'keys'),
    logsDir: join(root, 'logs'),
    nodeConfig: (i: number) => join(root, 'config', `node-${i}.json`),
    sequencerConfig: join(root, 'config', 'sequencer.json'),
    gatewayConfig: join(root, 'config', 'gateway.json'),
    nodeDir: (i: number) => join(root, `node-${i}`),
    sequencerDir: join(root, 'sequencer'),
    gatewayDir: join(root, 'gateway'),
    platformKey: join(root, 'keys', 'platform.ed25519.json'),
    gatewayKey: join(root, 'keys', 'gateway.x25519.json'),
    gatewayLinkKey: join(root, 'keys', 'gateway.link.ed25519.json'),
    jwtSecret: join(root, 'keys', 'jwt.secret'),
    adminSecret: join(root, 'keys', 'admin.secret'),
    /** the operator token of the current run (committee link control), mode 0600, new at every start */
    operatorToken: join(root, 'operator-token'),
    nodeLibp2pKey: (i: number) => join(root, 'keys', `node-${i}.libp2p.key`),
    nodeX25519Key: (i: number) => join(root, 'keys', `node-${i}.x25519.json`),
    nodeLinkKey: (i: number) => join(root, 'keys', `node-${i}.link.ed25519.json`),
  };
}

/** Reads and parses a JSON config file, failing with the file name in the message. */
export function readJson<T>(file: string): T {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new Error(`${file} is not valid JSON: ${(e as Error).message}`);
  }
}

/** Writes JSON atomically (temp file + rename) so a crash never leaves half a config. */
export function writeJson(file: string, value: unknown, mode = 0o644): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n', { mode });
  renameSync(tmp, file);
}

/** Parses `--config <file>` from argv and reads it, checking the role. */
export function loadProcessConfig<T extends ProcessConfig>(argv: string[], role: T['role']): T {
  const i = argv.indexOf('--config');
  const file = i >= 0 ? argv[i + 1] : undefined;
  if (!file) throw new Error(`usage: --config <${role} config JSON file>`);
  if (!existsSync(file)) throw new Error(`config file not found: ${file}`);
  const cfg = readJson<T>(file);
  if (cfg.role !== role) throw new Error(`${file} is a '${String(cfg.role)}' config, expected '${role}'`);
  return cfg;
}

/** Largest committee a cluster can have (the sequencer fans out to at most this many nodes). */
export const MAX_COMMITTEE = 64;

/** Validates n and t the way every process needs them (privacy t, liveness n - t >= t + 1). */
export function checkCommitteeSize(n: number, t: number): void {
  if (!Number.isInteger(n) || !Number.isInteger(t) || n < 3 || t < 1) {
    throw new Error(`committee size n=${n}, t=${t} is invalid: need integers n >= 3, t >= 1`);
  }
  if (2 * t >= n) throw new Error(`threshold t=${t} must satisfy t < n/2 (n=${n}) for Shamir multiplication`);
  if (n > MAX_COMMITTEE) throw new Error(`committee size n=${n} is above ${MAX_COMMITTEE} (the sequencer's fan-out limit)`);
}
