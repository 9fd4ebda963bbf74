// Shared by the system, chaos and privacy tests: a real cluster of OS processes on free loopback
// ports in a temporary data folder, and a small REST client that uses only the public interface.
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer } from 'node:net';
import { Cluster, ROOT, type ClusterOptions } from '../src/cluster';
import type { PortPlan } from '@tenebra/config';
import { httpRequest } from '../src/http-client';

const run = promisify(execFile);

/** Finds `count` consecutive free TCP ports on 127.0.0.1 (best effort, then the OS decides). */
export async function freePortBlock(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // below the kernel's ephemeral range (32768+) so outbound connections never take our ports;
    // each vitest worker draws from its own slice (cluster files run two at a time), so a node that
    // a restart test has killed cannot lose its ports to another file's cluster starting meanwhile
    const slices = 3;
    const slice = (Number(process.env.VITEST_POOL_ID ?? 1) - 1) % slices;
    const width = Math.floor(12_000 / slices);
    const base = 20_000 + slice * width + Math.floor(Math.random() * (width - count));
    let ok = true;
    for (let p = base; p < base + count && ok; p++) ok = await portFree(p);
    if (ok) return base;
  }
  throw new Error('no free port block found');
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * Port plan on a free block: gateway, internal, sequencer, n node ports, then n + 2 metrics ports
 * (gateway, sequencer, nodes), then `extra` ports for the test's own listeners (`extraBase`). A
 * test's own ports come from the same block: a second block drawn before the cluster binds its
 * ports may overlap them (a recording proxy once took node 2's port).
 */
export async function testPorts(n = 5, extra = 0): Promise<PortPlan & { extraBase: number }> {
  const base = await freePortBlock(3 + n + 2 + n + extra);
  return {
    gateway: base, gatewayInternal: base + 1, sequencer: base + 2, nodeBase: base + 3, metricsBase: base + 3 + n,
    extraBase: base + 3 + n + 2 + n,
  };
}

export interface TestCluster {
  cluster: Cluster;
  dataDir: string;
  baseUrl: string;
  cleanup(): Promise<void>;
}

/** Data folders of the test clusters running in this file (failure-logs.ts reads their logs). */
export const liveDataDirs = new Set<string>();

/**
 * TENEBRA_TEST_LINK_LATENCY_MS (and _JITTER_MS) run every test cluster's nodes over emulated WAN
 * links (docs/decisions/0011-link-emulation.md): the chaos and restart tests then probe the
 * protocols' timeouts at a real network's pace. Unset: loopback, as CI runs them.
 */
function linksFromEnv(): ClusterOptions['linkEmulation'] {
  const lat = process.env.TENEBRA_TEST_LINK_LATENCY_MS;
  if (lat === undefined || lat === '') return undefined;
  return { latencyMs: Number(lat), jitterMs: Number(process.env.TENEBRA_TEST_LINK_JITTER_MS ?? 0) };
}

/**
 * TENEBRA_TEST_JOB_BOUNDARIES=intake runs every test cluster's sequencer with a job per intake group
 * (docs/decisions/0008-job-boundaries.md). Unset: the default, 'progress' (jobs from the committee's progress).
 */
function jobBoundariesFromEnv(): ClusterOptions['jobBoundaries'] {
  const v = process.env.TENEBRA_TEST_JOB_BOUNDARIES;
  if (v === undefined || v === '') return undefined;
  if (v !== 'intake' && v !== 'progress') throw new Error(`TENEBRA_TEST_JOB_BOUNDARIES: intake or progress, got '${v}'`);
  return v;
}

/**
 * TENEBRA_TEST_LINKS=unix runs every test cluster's committee links over Unix domain sockets
 * (docs/decisions/0041-unix-socket-links.md). Unset: the launcher's default.
 */
function committeeLinksFromEnv(): ClusterOptions['links'] {
  const v = process.env.TENEBRA_TEST_LINKS;
  if (v === undefined || v === '') return undefined;
  if (v !== 'unix' && v !== 'tcp') throw new Error(`TENEBRA_TEST_LINKS: unix or tcp, got '${v}'`);
  return v;
}

/** Starts a fresh cluster in a temp folder; cleanup() stops it and removes the folder. */
export async function startTestCluster(opts: Partial<ClusterOptions> = {}): Promise<TestCluster> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'tenebra-test-'));
  const ports = opts.ports ?? (await testPorts(opts.n));
  const links = opts.linkEmulation ?? linksFromEnv();
  const jobBoundaries = opts.jobBoundaries ?? jobBoundariesFromEnv();
  const committeeLinks = opts.links ?? committeeLinksFromEnv();
  const cluster = await Cluster.start({
    env: 'test', ...opts, dataDir, ports, logLevel: opts.logLevel ?? process.env.TENEBRA_TEST_LOG_LEVEL ?? 'info', ...(links ? { linkEmulation: links } : {}),
    ...(jobBoundaries ? { jobBoundaries } : {}), ...(committeeLinks ? { links: committeeLinks } : {}),
  });
  liveDataDirs.add(dataDir);
  try {
    // TENEBRA_TEST_READY_MS: a longer wait for a loaded machine (processes then take minutes to start)
    await cluster.waitReady(Number(process.env.TENEBRA_TEST_READY_MS ?? 90_000));
  } catch (e) {
    await cluster.stop(2_000);
    liveDataDirs.delete(dataDir);
    throw e;
  }
  return {
    cluster, dataDir, baseUrl: cluster.baseUrl,
    async cleanup() {
      await cluster.stop(5_000);
      liveDataDirs.delete(dataDir);
      if (!process.env.TENEBRA_KEEP_DATA) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Credentials {
  user_id: string;
  api_key: string;
  api_secret: string;
  passphrase: string;
}

/** Creates an account through the accounts CLI, exactly as a user would. */
export async function createAccount(dataDir: string, tier = 'Apex', deposit = '1000000'): Promise<Credentials> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/src/accounts.ts'), '--data', dataDir, 'create', '--tier', tier, '--deposit', deposit], { cwd: ROOT });
  return JSON.parse(stdout.trim()) as Credentials;
}

export interface Envelope<T> {
  code: number | string;
  data?: T;
  message?: string;
  timestamp: string;
  request_id: string;
}

/** A REST client for one account, using only the spec's interface. */
export class Trader {
  private token = '';
  /** lean: node:http with keep-alive instead of fetch (benchmarks: see src/http-client.ts) */
  constructor(readonly baseUrl: string, readonly creds: Credentials, readonly opts: { lean?: boolean } = {}) {}

  async login(): Promise<void> {
    const creds = { grant_type: 'client_credentials', client_id: this.creds.api_key, client_secret: this.creds.api_secret, passphrase: this.creds.passphrase };
    let status: number;
    let body: { access_token?: string };
    if (this.opts.lean) {
      const r = await httpRequest(`${this.baseUrl}/auth/token`, 'POST', creds);
      status = r.status;
      body = (r.text ? JSON.parse(r.text) : {}) as { access_token?: string };
    } else {
      const r = await fetch(`${this.baseUrl}/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(creds) });
      status = r.status;
      body = (await r.json()) as { access_token?: string };
    }
    if (status !== 200 || !body.access_token) throw new Error(`login failed: ${status} ${JSON.stringify(body)}`);
    this.token = body.access_token;
  }

  async call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: Envelope<T> }> {
    if (this.opts.lean) {
      const r = await httpRequest(`${this.baseUrl}${path}`, method, body, { authorization: `Bearer ${this.token}` });
      return { status: r.status, body: (r.text ? JSON.parse(r.text) : {}) as Envelope<T> };
    }
    const r = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : {}) as Envelope<T> };
  }

  async place(order: Record<string, unknown>): Promise<{ status: number; body: Envelope<{ order_id: string; status: string }> }> {
    return this.call('POST', '/orders', order);
  }

  async order(id: string): Promise<Record<string, unknown>> {
    const r = await this.call<Record<string, unknown>>('GET', `/orders/${id}`);
    if (r.status !== 200 || !r.body.data) throw new Error(`GET /orders/${id}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.data;
  }
}

/** Polls fn until it returns a truthy value or the time runs out. */
export async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs: number, what: string | (() => string)): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface NodeStatusLine {
  time: number;
  alive: number[];
  quorum: boolean;
  reserve: { triples: number; lex4: number; prod4: number; bits: number };
  /** preprocessing batches this node has committed (`batches`) and dropped since it started */
  made?: { batches: number; dropped: number };
}

/** Node k's JSON log so far. */
export function nodeLog(dataDir: string, node: number): string {
  return readFileSync(join(dataDir, 'logs', `node-${node}.log`), 'utf8');
}

/** The last sequence number node k logged as applied ('' before its first batch). */
export function appliedBy(dataDir: string, node: number): string {
  const text = nodeLog(dataDir, node);
  const i = text.lastIndexOf('"msg":"batch applied"');
  return i < 0 ? '' : /"last":"(\d+)"/.exec(text.slice(text.lastIndexOf('\n', i) + 1, i))?.[1] ?? '';
}

/** The latest periodic status line a committee node logged, if any. */
export function nodeStatus(dataDir: string, node: number): NodeStatusLine | undefined {
  let text: string;
  try {
    text = nodeLog(dataDir, node);
  } catch {
    return undefined;
  }
  const i = text.lastIndexOf('"msg":"status"');
  if (i < 0) return undefined;
  const line = text.slice(text.lastIndexOf('\n', i) + 1, text.indexOf('\n', i) < 0 ? undefined : text.indexOf('\n', i));
  return JSON.parse(line) as NodeStatusLine;
}

/** The least reserve a test waits for, per kind (the cluster's targets: 40,000 bits, 3,400 lex4, 1,000 prod4, 2,000 triples). */
export interface ReserveNeed {
  bits: number;
  lex4: number;
  prod4: number;
  triples: number;
}

/**
 * Waits until committee preprocessing is quiet at `nodes`: each node's batch counts (committed,
 * dropped) stayed the same over status lines at least `quietMs` apart, the newest line being recent.
 * Tests that kill several nodes at once call it first: a node killed while a batch's decision is
 * on disk at some nodes and not at others comes back behind them and goes stale (by design; it
 * then needs a share recovery), which is not what those tests check.
 */
export async function waitForQuietPreprocessing(dataDir: string, nodes: number[], timeoutMs = 60_000, quietMs = 4_000): Promise<void> {
  const seen = new Map<number, { key: string; since: number }>();
  await waitFor(async () => nodes.every((k) => {
    const st = nodeStatus(dataDir, k);
    if (!st?.made) return false;
    const key = `${st.made.batches}/${st.made.dropped}`;
    const prev = seen.get(k);
    if (!prev || prev.key !== key) {
      seen.set(k, { key, since: st.time });
      return false;
    }
    return st.time - prev.since >= quietMs && Date.now() - st.time < 3_000;
  }), timeoutMs, `no preprocessing batch decided for ${quietMs} ms at nodes ${nodes.join(',')}`);
}

/** Waits until every listed node reports at least `min` of each kind in reserve. */
export async function waitForReserve(dataDir: string, nodes: number[], min: ReserveNeed, timeoutMs = 60_000): Promise<void> {
  await waitFor(async () => nodes.every((k) => {
    const st = nodeStatus(dataDir, k);
    return !!st && st.reserve.bits >= min.bits && st.reserve.lex4 >= min.lex4 && st.reserve.prod4 >= min.prod4 && st.reserve.triples >= min.triples;
  }), timeoutMs, `reserve of >= ${min.bits} bits, ${min.lex4} lex4, ${min.prod4} prod4 and ${min.triples} triples at nodes ${nodes.join(',')}`);
}
