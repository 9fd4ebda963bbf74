// The `GET /metrics` endpoint: a bare node:http server on its own port, so a process's metrics
// never share a listener (or its rate limits and hooks) with the traffic they measure.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  /** the bound port (useful with port 0) */
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Another route on the same listener (a committee node's operator control, POST /control/links):
 * true iff it took the request (it then answers it).
 */
export type ExtraRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Serves `registry` at http://host:port/metrics in the text exposition format, then `extra`'s routes; anything else is 404. */
export async function serveMetrics(registry: Registry, host: string, port: number, extra?: ExtraRoute): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' && extra?.(req, res)) return;
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics here\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`collecting metrics failed: ${String(e)}\n`),
    );
  });
  // a scraper's idle keep-alive connection must not hold the process's stop
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
