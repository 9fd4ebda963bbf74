// The operator token (the launcher makes it at each start: scripts/src/operator-token.ts). A
// browser presents it once in the address (?token=), which sets a same-site, script-proof cookie;
// tools send it as a bearer token. Anything else is 401.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const COOKIE = 'tenebra_console';

export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The token a request presents: bearer header first, then the cookie. */
export function presented(req: IncomingMessage): string | null {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice(7).trim();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === COOKIE) return v.join('=');
  }
  return null;
}

/**
 * A request whose Host is not this loopback address is refused (a DNS-rebinding page would name
 * its own host): the console answers only to the address it printed.
 */
export function hostAllowed(req: IncomingMessage, port: number): boolean {
  const host = req.headers.host ?? '';
  return host === `127.0.0.1:${port}` || host === `localhost:${port}` || host === `[::1]:${port}`;
}
