// A lean HTTP/1.1 client for the benchmarks: node:http with a keep-alive agent. Node's fetch
// (undici, web streams) costs about a millisecond of client CPU and wake-ups per request on this
// machine, which a latency figure of a few milliseconds would count as the exchange's.
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One request; resolves with the status and the body text (any status). */
export function httpRequest(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((res, rej) => {
    const req = http.request({
      host: u.hostname, port: u.port, method, path: `${u.pathname}${u.search}`, agent,
      headers: { ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}), ...headers },
    }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => res({ status: r.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      r.on('error', rej);
    });
    req.on('error', rej);
    if (payload) req.write(payload);
    req.end();
  });
}

/** Closes the agent's idle sockets (at the end of a benchmark). */
export function closeHttpClient(): void {
  agent.destroy();
}
