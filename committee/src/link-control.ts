// The operator's run-time control of a node's committee links (docs/decisions/0011-link-emulation.md):
// `POST /control/links` on the node's metrics port, with `Authorization: Bearer <operator token>`
// and JSON {latency_ms?, jitter_ms?, bandwidth_mbps?, blocked_peers?}, answers the settings now in
// force; `GET /control/links` reads them. Researchers (and the chaos campaign) add WAN latency or cut
// a node off from some of its peers on a running cluster, and heal it, with no restart.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExtraRoute } from '@tenebra/metrics';
import type { LinkSettings, LinkUpdate } from '@tenebra/transport';

export const LINK_CONTROL_PATH = '/control/links';
/** A settings body is a few dozen bytes; anything near this is not one. */
const MAX_BODY_BYTES = 4_096;
/** A client that opened a request must finish sending it by then (no slow-body hold on the socket). */
const BODY_TIMEOUT_MS = 5_000;

/** What the control changes: the node's transport (absent until its party has started). */
export interface LinkTarget {
  linkSettings(): LinkSettings;
  setLinks(update: LinkUpdate): LinkSettings;
}

/** The answer body: the settings in force, in the request's snake_case; bandwidth null: unlimited. */
export interface LinkSettingsJson {
  node: number;
  latency_ms: number;
  jitter_ms: number;
  bandwidth_mbps: number | null;
  blocked_peers: number[];
}

export interface LinkControlOptions {
  node: number;
  /** the operator token; absent or empty: every request is refused (401) */
  token: string | undefined;
  target: () => LinkTarget | null;
  /** one line per change (who cut what matters when reading a run's logs) */
  onChange: (settings: LinkSettingsJson) => void;
}

const FIELDS: Record<string, keyof LinkUpdate> = {
  latency_ms: 'latencyMs', jitter_ms: 'jitterMs', bandwidth_mbps: 'bandwidthMbps', blocked_peers: 'blockedPeers',
};

class BadRequest extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The route for serveMetrics: takes /control/links (and only it). */
export function linkControlRoute(opts: LinkControlOptions): ExtraRoute {
  const want = opts.token ? digest(opts.token) : null;
  return (req, res) => {
    const [path, query] = (req.url ?? '').split('?', 2);
    if (path !== LINK_CONTROL_PATH) return false;
    // a browser console on another origin may call it: the bearer token, not the origin, is the credential
    res.setHeader('access-control-allow-origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'authorization, content-type', 'access-control-max-age': '600',
      }).end();
      return true;
    }
    handle(req, opts, want, query).then(
      (settings) => answer(res, 200, settings),
      (e: unknown) => {
        if (e instanceof BadRequest) {
          if (e.status === 405) res.setHeader('allow', 'GET, POST, OPTIONS');
          answer(res, e.status, null, e.message);
        } else {
          answer(res, 500, null, `link control failed: ${String(e)}`);
        }
      },
    );
    return true;
  };
}

async function handle(req: IncomingMessage, opts: LinkControlOptions, want: Buffer | null, query: string | undefined): Promise<LinkSettingsJson> {
  if (req.method !== 'GET' && req.method !== 'POST') throw new BadRequest(405, `${req.method ?? ''} is not allowed here: GET or POST ${LINK_CONTROL_PATH}`);
  if (want === null) throw new BadRequest(401, 'link control is off: this node was started without an operator token');
  const auth = req.headers.authorization ?? '';
  const m = /^Bearer (\S+)$/.exec(auth);
  // equal-length digests: the comparison takes the same time whatever the guess
  if (!m || !timingSafeEqual(digest(m[1]!), want)) throw new BadRequest(401, 'a valid operator token is required (Authorization: Bearer <token>; the launcher writes it to <data>/operator-token)');
  if (query !== undefined) throw new BadRequest(400, `${LINK_CONTROL_PATH} takes no query parameters`);
  const target = opts.target();
  if (target === null) throw new BadRequest(503, 'the node\'s committee links are not up yet: try again once it is ready');
  if (req.method === 'GET') return toJson(opts.node, target.linkSettings());
  const update = parseUpdate(await readBody(req));
  let settings: LinkSettings;
  try {
    settings = target.setLinks(update);
  } catch (e) {
    if (e instanceof RangeError) throw new BadRequest(400, snakeCase(e.message));
    throw e;
  }
  const json = toJson(opts.node, settings);
  opts.onChange(json);
  return json;
}

/** Checks the body's shape (types, known fields); the ranges are the transport's to check. */
export function parseUpdate(body: string): LinkUpdate {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    throw new BadRequest(400, 'the body must be a JSON object: {latency_ms?, jitter_ms?, bandwidth_mbps?, blocked_peers?}');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new BadRequest(400, 'the body must be a JSON object: {latency_ms?, jitter_ms?, bandwidth_mbps?, blocked_peers?}');
  const update: LinkUpdate = {};
  for (const [k, x] of Object.entries(v)) {
    const field = FIELDS[k];
    if (field === undefined) throw new BadRequest(400, `unknown field ${JSON.stringify(k)}: the fields are ${Object.keys(FIELDS).join(', ')}`);
    if (field === 'blockedPeers') {
      if (!Array.isArray(x) || !x.every((p) => typeof p === 'number')) throw new BadRequest(400, 'blocked_peers must be an array of node indexes');
      update.blockedPeers = x as number[];
    } else if (field === 'bandwidthMbps' && x === null) {
      update.bandwidthMbps = null; // unlimited
    } else {
      if (typeof x !== 'number') throw new BadRequest(400, `${k} must be a number${field === 'bandwidthMbps' ? ' or null (unlimited)' : ''}`);
      update[field] = x;
    }
  }
  return update;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => fail(new BadRequest(408, `the body did not arrive within ${BODY_TIMEOUT_MS} ms`)), BODY_TIMEOUT_MS);
    function fail(e: Error): void {
      clearTimeout(timer);
      req.removeAllListeners('data');
      req.resume(); // drain what is left so the answer can go out
      reject(e);
    }
    req.on('data', (c: Buffer) => {
      size += c.byteLength;
      if (size > MAX_BODY_BYTES) fail(new BadRequest(413, `the body exceeds ${MAX_BODY_BYTES} bytes`));
      else chunks.push(c);
    });
    req.once('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.once('error', (e) => fail(e));
  });
}

function toJson(node: number, s: LinkSettings): LinkSettingsJson {
  return { node, latency_ms: s.latencyMs, jitter_ms: s.jitterMs, bandwidth_mbps: s.bandwidthMbps ?? null, blocked_peers: s.blockedPeers };
}

/** The transport names its fields in camelCase; the operator wrote snake_case. */
function snakeCase(msg: string): string {
  return msg.replace(/latencyMs|jitterMs|bandwidthMbps/g, (f) => Object.keys(FIELDS).find((k) => FIELDS[k] === f)!);
}

/** Success: the settings; refusal: the spec's error envelope (code, message, timestamp, request_id). */
function answer(res: ServerResponse, status: number, settings: LinkSettingsJson | null, message?: string): void {
  const id = randomUUID();
  const body = settings ?? { code: status, message, timestamp: new Date().toISOString(), request_id: id };
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': id, 'cache-control': 'no-store' }).end(JSON.stringify(body));
}
