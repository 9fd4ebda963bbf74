// Shared fixtures for the sequencer tests: configs, keys, sealed ops, a child-process sequencer.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import type { SequencerConfig } from '@tenebra/config';
import { generateEd25519, generateX25519, seal, toHex, writeKeyFile, type KeyPair } from '@tenebra/seal';
import WebSocket from 'ws';
import {
  authFrame, sequencerServerName, signLinkAuth, type LinkIdentity, type LinkPurpose, type Quote, type SealedOp, type WireLogger,
} from '@tenebra/wire';

export const MAIN = join(__dirname, '..', 'src', 'main.ts');
export const silent: Logger = pino({ level: 'silent' });

/** Logger for the clients that keeps lines in memory, so tests can assert on them. */
export function memoryLog(): WireLogger & { lines: string[] } {
  const lines: string[] = [];
  const rec = (level: string) => (obj: object, msg: string) => lines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
  return { lines, info: rec('info'), warn: rec('warn'), error: rec('error') };
}

const dirs: string[] = [];
/** A fresh temp dir, removed by cleanupDirs(). */
export function tmp(prefix = 'seq-test-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}
export function cleanupDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export interface Fixture {
  dir: string;
  config: SequencerConfig;
  configFile: string;
  platform: KeyPair;
  nodes: KeyPair[];
  /** the gateway's link key (admitted to submit) */
  gatewayLink: KeyPair;
  /** node i's link key is nodeLinks[i-1] (admitted to read feed i) */
  nodeLinks: KeyPair[];
}

/** A data dir, platform key file, n node keys and a config (port 0 unless given). */
export function fixture(n = 5, port = 0): Fixture {
  const dir = tmp();
  const platform = generateEd25519();
  const platformKeyFile = join(dir, 'platform.ed25519.json');
  writeKeyFile(platformKeyFile, platform, 'ed25519');
  const gatewayLink = generateEd25519();
  const nodeLinks = Array.from({ length: n }, () => generateEd25519());
  const config: SequencerConfig = {
    role: 'sequencer', dataDir: join(dir, 'journal'), host: '127.0.0.1', port, n, platformKeyFile, logLevel: 'info',
    clientLinkKeys: { gateway: toHex(gatewayLink.publicKey), nodes: nodeLinks.map((k, i) => ({ index: i + 1, publicKey: toHex(k.publicKey) })) },
  };
  const configFile = join(dir, 'sequencer.json');
  writeFileSync(configFile, JSON.stringify(config));
  return { dir, config, configFile, platform, nodes: Array.from({ length: n }, () => generateX25519()), gatewayLink, nodeLinks };
}

/** An op whose node-i entry is seal(node_i, plaintext(i)). */
export function sealedOp(nodes: KeyPair[], plaintext: (node: number) => Uint8Array, kind = 'place', symbol = 'BTC-PERP'): SealedOp {
  return {
    kind, symbol, pub: { side: 'buy', tif: 'GTC' },
    sealed: nodes.map((k, i) => Buffer.from(seal(k.publicKey, plaintext(i + 1))).toString('base64')),
  };
}

/** A cheap op for load: every node's entry is the same opaque bytes (valid base64). */
export function opaqueOp(n: number, tag: number): SealedOp {
  const blob = Buffer.alloc(80, tag & 0xff).toString('base64');
  return { kind: 'place', symbol: 'ETH-PERP', pub: { i: tag }, sealed: Array.from({ length: n }, () => blob) };
}

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** The sequencer as a child process; resolves once it logged 'listening'. */
export async function spawnSequencer(configFile: string): Promise<{ child: ChildProcess; port: number; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sequencer did not start:\n${out}`)), 20_000);
    const check = () => {
      const m = /"port":(\d+),.*"msg":"listening"/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sequencer exited (${code}):\n${out}`));
    });
  });
  child.removeAllListeners('exit');
  return { child, port, output: () => out };
}

/** SIGKILLs a child and waits for it to be gone. */
export async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

/** Waits until cond() holds, polling every 10 ms (fails after timeoutMs). */
export async function until(cond: () => boolean, timeoutMs = 20_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A raw connection to the sequencer, past its quote and auth_challenge; every frame it receives is kept. */
export interface RawClient {
  ws: WebSocket;
  /** frames received, parsed */
  inbox: Record<string, unknown>[];
  /** frames received, as text */
  raw: string[];
  /** this connection's nonce (from auth_challenge) */
  nonce: string;
  /** the `server` a proof must name: the quoted enclave key */
  server: string;
  /** resolves with the close code and reason */
  closed: Promise<{ code: number; reason: string }>;
  /** Sends a proof (altered by `tamper` if given) and resolves with the sequencer's answer. */
  auth(identity: LinkIdentity, purpose: LinkPurpose, tamper?: (frame: Record<string, unknown>) => Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Sends a frame and resolves with the next frame received. */
  request(frame: unknown): Promise<Record<string, unknown>>;
}

export async function rawClient(url: string): Promise<RawClient> {
  const ws = new WebSocket(url);
  const inbox: Record<string, unknown>[] = [];
  const raw: string[] = [];
  ws.on('message', (d) => {
    raw.push(d.toString());
    inbox.push(JSON.parse(d.toString()) as Record<string, unknown>);
  });
  const closed = new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
  await until(() => inbox.length >= 2, 5_000, 'quote and auth_challenge');
  const nonce = inbox[1]!.nonce as string;
  const server = sequencerServerName((inbox[0]!.quote as Quote).enclave_pubkey);
  const request = async (frame: unknown) => {
    const before = inbox.length;
    ws.send(JSON.stringify(frame));
    await until(() => inbox.length > before, 5_000, 'a reply');
    return inbox[before]!;
  };
  return {
    ws, inbox, raw, nonce, server, closed, request,
    auth: (identity, purpose, tamper = (f) => f) =>
      request(tamper({ ...authFrame(signLinkAuth(identity, purpose, nonce, server)) })),
  };
}
