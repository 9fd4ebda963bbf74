// The console's HTTP server (loopback only): the page and its assets, the state as JSON, a stream
// of snapshots and timeline entries (server-sent events), and the chaos controls. Runs inside the
// launcher, so kill / restart / freeze act on the launcher's own children.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COOKIE, hostAllowed, presented, sameToken } from './auth';
import { sendError, sendJson, sendOk } from './errors';
import { Sampler, whoOf, type SamplerOptions } from './sampler';
import type { ChaosTarget, ProcRole } from './target';
import { checkLinkSettings, describeLinkSettings, type LinkControl } from './links';

const PUBLIC = join(dirname(fileURLToPath(import.meta.url)), '..', 'public');
const UPLOT = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');

/** Files the page loads: nothing else is served, so no path from a request reaches the disk. */
const ASSETS: Record<string, { file: string; type: string }> = {
  '/': { file: join(PUBLIC, 'index.html'), type: 'text/html; charset=utf-8' },
  '/report': { file: join(PUBLIC, 'report.html'), type: 'text/html; charset=utf-8' },
  '/assets/app.js': { file: join(PUBLIC, 'app.js'), type: 'text/javascript; charset=utf-8' },
  '/assets/charts.js': { file: join(PUBLIC, 'charts.js'), type: 'text/javascript; charset=utf-8' },
  '/assets/report.js': { file: join(PUBLIC, 'report.js'), type: 'text/javascript; charset=utf-8' },
  '/assets/console.css': { file: join(PUBLIC, 'console.css'), type: 'text/css; charset=utf-8' },
  '/vendor/uPlot.iife.min.js': { file: join(UPLOT, 'uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  '/vendor/uPlot.min.css': { file: join(UPLOT, 'uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

const ACTIONS = ['kill', 'restart', 'freeze', 'thaw'] as const;
type Action = (typeof ACTIONS)[number];
const MAX_BODY = 16 * 1024;

export interface ConsoleOptions {
  target: ChaosTarget;
  /** committee size */
  n: number;
  /** loopback only: 127.0.0.1 unless told (::1) */
  host?: string;
  /** 0: any free port */
  port: number;
  token: string;
  /** the nodes' runtime link control; absent: the page says it is not available */
  links?: LinkControl;
  sampler?: SamplerOptions;
}

export interface ConsoleServer {
  readonly url: string;
  readonly port: number;
  readonly sampler: Sampler;
  /** open event streams (pages) */
  readonly clients: () => number;
  close(): Promise<void>;
}

export async function startConsole(opts: ConsoleOptions): Promise<ConsoleServer> {
  const host = opts.host ?? '127.0.0.1';
  if (host !== '127.0.0.1' && host !== '::1') throw new Error(`the console listens on loopback only, not '${host}'`);
  const sampler = new Sampler(opts.target, opts.n, opts.sampler);
  const streams = new Set<ServerResponse>();
  let port = opts.port;

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendError(res, 'internal_error', (e as Error).message);
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://console');
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    if (!hostAllowed(req, port)) return sendError(res, 'forbidden', `the console answers at 127.0.0.1:${port} only`);
    // A browser's first visit carries the token in the address: set the cookie, drop the token from the address.
    const inAddress = url.searchParams.get('token');
    if (req.method === 'GET' && inAddress !== null && (url.pathname === '/' || url.pathname === '/report')) {
      if (!sameToken(inAddress, opts.token)) return unauthorized(res, url.pathname);
      res.writeHead(303, {
        location: url.pathname,
        'set-cookie': `${COOKIE}=${opts.token}; HttpOnly; SameSite=Strict; Path=/`,
        'cache-control': 'no-store',
      }).end();
      return;
    }
    const token = presented(req);
    if (token === null || !sameToken(token, opts.token)) return unauthorized(res, url.pathname);

    if (req.method === 'GET') {
      const asset = ASSETS[url.pathname];
      if (asset) {
        const body = await readFile(asset.file);
        res.writeHead(200, {
          'content-type': asset.type, 'cache-control': 'no-store',
          // the page runs only its own scripts and talks only to this server
          'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
        }).end(body);
        return;
      }
      if (url.pathname === '/api/state') return sendOk(res, state());
      if (url.pathname === '/api/events') return stream(req, res);
      return sendError(res, 'not_found', `no ${url.pathname} here`);
    }
    if (req.method === 'POST') {
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return sendError(res, 'unsupported_media_type', 'send application/json');
      const body = await readBody(req, res);
      if (body === undefined) return;
      if (url.pathname === '/api/control') return control(res, body);
      if (url.pathname === '/api/links') return links(res, body);
      return sendError(res, 'not_found', `no ${url.pathname} here`);
    }
    return sendError(res, 'not_found', `no ${req.method} ${url.pathname} here`);
  }

  function unauthorized(res: ServerResponse, path: string): void {
    const hint = path.startsWith('/api/') ? '' : ` (open the console_url that npm start printed with ?token=..., or read it from the data folder's console-token)`;
    sendError(res, 'invalid_token', `an operator token is needed${hint}`, { 'www-authenticate': 'Bearer realm="tenebra-console"' });
  }

  function state() {
    return {
      n: opts.n,
      intervalMs: sampler.intervalMs,
      links: opts.links ? { available: true, current: opts.links.current() } : { available: false, why: 'the nodes have no runtime link control in this build' },
      snapshot: sampler.latest,
      history: sampler.history(),
      events: sampler.events(),
    };
  }

  function stream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write(`retry: 1000\nevent: state\ndata: ${JSON.stringify(state())}\n\n`);
    streams.add(res);
    const unsubscribe = sampler.subscribe((m) => {
      if (m.snapshot) res.write(`event: snapshot\ndata: ${JSON.stringify(m.snapshot)}\n\n`);
      if (m.event) res.write(`event: timeline\ndata: ${JSON.stringify(m.event)}\n\n`);
    });
    req.on('close', () => {
      unsubscribe();
      streams.delete(res);
    });
  }

  async function readBody(req: IncomingMessage, res: ServerResponse): Promise<Record<string, unknown> | undefined> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY) {
        sendError(res, 'payload_too_large', `at most ${MAX_BODY} bytes`);
        return undefined;
      }
      chunks.push(c as Buffer);
    }
    try {
      const v: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
      return v as Record<string, unknown>;
    } catch {
      sendError(res, 'invalid_request', 'the body must be a JSON object');
      return undefined;
    }
  }

  async function control(res: ServerResponse, body: Record<string, unknown>): Promise<void> {
    const { action, role, index } = body;
    if (!ACTIONS.includes(action as Action)) return sendError(res, 'invalid_request', `action must be one of ${ACTIONS.join(', ')}`);
    const procs = opts.target.processes();
    const p = procs.find((x) => x.role === role && x.index === index);
    if (!p) return sendError(res, 'invalid_request', `no process ${JSON.stringify(role)} ${JSON.stringify(index)}: role is committee (index 1..${opts.n}), sequencer or gateway (index 0)`);
    const r = p.role as ProcRole;
    const who = whoOf(r, p.index);
    const t = opts.target;
    const act = action as Action;
    if (act === 'freeze' && (!t.isRunning(r, p.index) || t.isFrozen(r, p.index))) return sendError(res, 'conflict', `${who} is not running unfrozen`);
    if (act === 'thaw' && !t.isFrozen(r, p.index)) return sendError(res, 'conflict', `${who} is not frozen`);
    if (act === 'kill' && !t.isRunning(r, p.index)) return sendError(res, 'conflict', `${who} is not running`);
    sampler.record({ time: Date.now(), who, what: act === 'kill' ? 'kill -9 (console)' : `${act} (console)`, source: 'console' });
    if (act === 'kill') await t.kill(r, p.index, 'SIGKILL');
    else if (act === 'restart') await t.restart(r, p.index);
    else if (act === 'freeze') t.freeze(r, p.index);
    else t.thaw(r, p.index);
    sendOk(res, { action: act, role: r, index: p.index, running: t.isRunning(r, p.index), frozen: t.isFrozen(r, p.index) });
  }

  async function links(res: ServerResponse, body: Record<string, unknown>): Promise<void> {
    if (!opts.links) return sendError(res, 'conflict', 'the nodes have no runtime link control in this build');
    const bad = checkLinkSettings(body, opts.n);
    if (bad) return sendError(res, 'invalid_request', bad);
    sampler.record({ time: Date.now(), who: 'links', what: `${describeLinkSettings(body)} (console)`, source: 'console' });
    const results = await opts.links.set(body);
    // what the nodes that did not apply it have now (the others just answered theirs)
    if (results.some((r) => !r.ok)) await opts.links.refresh();
    for (const r of results.filter((x) => !x.ok)) sampler.record({ time: Date.now(), who: `node ${r.node}`, what: `link setting refused: ${r.error}`, source: 'state' });
    sendOk(res, { results });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  sampler.start();
  // the settings the nodes started with (npm start's --link-* flags), for the tiles
  if (opts.links) await opts.links.refresh();
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/`,
    port,
    sampler,
    clients: () => streams.size,
    async close() {
      await sampler.stop();
      for (const s of streams) s.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

export { sendJson };
