// Emulated link latency, jitter, bandwidth and cut links on the running committee: each node's
// metrics server takes `POST /control/links` with the operator token (docs/decisions/0011-link-emulation.md)
// and answers the settings in force. The console sends one setting to every node and shows what
// each answered.

/** The request body, as the nodes read it (blocked_peers: node indexes this node stops talking to). */
export interface LinkSettingsBody {
  latency_ms?: number;
  jitter_ms?: number;
  /** null: unlimited */
  bandwidth_mbps?: number | null;
  blocked_peers?: number[];
}

export interface NodeLinkSettings {
  node: number;
  latency_ms: number;
  jitter_ms: number;
  bandwidth_mbps: number | null;
  blocked_peers: number[];
}

export interface LinkResult {
  node: number;
  ok: boolean;
  settings?: NodeLinkSettings;
  error?: string;
}

export interface LinkControl {
  /** sends the setting to every node (in parallel; a node busy or not ready yet asked again for a while); one result per node */
  set(body: LinkSettingsBody): Promise<LinkResult[]>;
  /** what each node last answered (empty before the first answer) */
  current(): NodeLinkSettings[];
  /** asks every node for its settings now (GET) */
  refresh(): Promise<void>;
}

const NUMBERS = ['latency_ms', 'jitter_ms'] as const;

/** Why a body is refused before it is sent (null: fine); the nodes check it again. */
export function checkLinkSettings(body: Record<string, unknown>, n: number): string | null {
  const known = new Set(['latency_ms', 'jitter_ms', 'bandwidth_mbps', 'blocked_peers']);
  const extra = Object.keys(body).filter((k) => !known.has(k));
  if (extra.length > 0) return `unknown field(s) ${extra.join(', ')}: send {latency_ms?, jitter_ms?, bandwidth_mbps?, blocked_peers?}`;
  if (Object.keys(body).length === 0) return 'nothing to set: send at least one of latency_ms, jitter_ms, bandwidth_mbps, blocked_peers';
  for (const k of NUMBERS) {
    const v = body[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 60_000)) return `${k} must be a number of milliseconds in 0..60000`;
  }
  const bw = body.bandwidth_mbps;
  if (bw !== undefined && bw !== null && (typeof bw !== 'number' || !Number.isFinite(bw) || bw <= 0)) return 'bandwidth_mbps must be a positive number of megabits per second, or null for unlimited';
  const bp = body.blocked_peers;
  if (bp !== undefined && (!Array.isArray(bp) || !bp.every((p) => Number.isInteger(p) && p >= 1 && p <= n))) return `blocked_peers must be an array of node indexes in 1..${n}`;
  return null;
}

export function describeLinkSettings(body: LinkSettingsBody): string {
  const parts: string[] = [];
  if (body.latency_ms !== undefined) parts.push(`latency ${body.latency_ms} ms`);
  if (body.jitter_ms !== undefined) parts.push(`jitter ${body.jitter_ms} ms`);
  if (body.bandwidth_mbps !== undefined) parts.push(body.bandwidth_mbps === null ? 'bandwidth unlimited' : `bandwidth ${body.bandwidth_mbps} Mbit/s`);
  if (body.blocked_peers !== undefined) parts.push(body.blocked_peers.length === 0 ? 'no links cut' : `cut from nodes ${body.blocked_peers.join(', ')}`);
  return `set links: ${parts.join(', ')}`;
}

/** Why a node gave no answer, in words (fetch says only 'fetch failed'; the cause has the code). */
function noAnswer(e: unknown): string {
  const err = e as Error & { cause?: { code?: string } };
  if (err.name === 'TimeoutError') return 'no answer (timeout)';
  if (err.cause?.code === 'ECONNREFUSED') return 'no answer (connection refused: not running)';
  return `no answer (${err.cause?.code ?? err.message})`;
}

/**
 * The HTTP link control of a cluster: one URL per node and the operator token. A node that times
 * out or is not ready yet (a node recovering its shares after a restart can hold its event loop for
 * seconds on a loaded machine) is asked again until `retryMs` has passed: the settings are absolute,
 * so a repeat (or a late first request) sets the same thing. A node that refuses the connection
 * (not running) or the setting is reported at once.
 */
export function httpLinkControl(urls: () => { index: number; url: string }[], token: string, timeoutMs = 3_000, retryMs = 10_000): LinkControl {
  const known = new Map<number, NodeLinkSettings>();
  // again: a node busy (timeout) or starting (503, its links not up yet) may answer the next try
  const once = async (index: number, url: string, body?: LinkSettingsBody): Promise<{ result: LinkResult; again: boolean }> => {
    try {
      const r = await fetch(url, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const answer = (await r.json().catch(() => ({}))) as Partial<NodeLinkSettings> & { message?: string };
      if (r.status !== 200) return { result: { node: index, ok: false, error: `${r.status} ${answer.message ?? ''}`.trim() }, again: r.status === 503 };
      const settings = { ...(answer as NodeLinkSettings), node: index };
      known.set(index, settings);
      return { result: { node: index, ok: true, settings }, again: false };
    } catch (e) {
      return { result: { node: index, ok: false, error: noAnswer(e) }, again: (e as Error).name === 'TimeoutError' };
    }
  };
  const call = async (index: number, url: string, body?: LinkSettingsBody): Promise<LinkResult> => {
    const deadline = Date.now() + retryMs;
    let tries = 0;
    for (;;) {
      const { result, again } = await once(index, url, body);
      tries++;
      if (!again || Date.now() >= deadline) return tries > 1 && !result.ok ? { ...result, error: `${result.error} (${tries} tries)` } : result;
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  return {
    set: (body) => Promise.all(urls().map((u) => call(u.index, u.url, body))),
    current: () => [...known.values()].sort((a, b) => a.node - b.node),
    // one try: a read for the tiles, which the next set or refresh brings up to date
    async refresh() {
      await Promise.all(urls().map((u) => once(u.index, u.url)));
    },
  };
}
