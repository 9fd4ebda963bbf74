import { createServer, type Server } from 'node:net';

/** Asks the OS for k distinct free TCP ports on 127.0.0.1 (bound together, then released). */
export async function freePorts(k: number): Promise<number[]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  for (let i = 0; i < k; i++) {
    const s = createServer();
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = s.address();
    if (addr === null || typeof addr === 'string') throw new Error('no port');
    ports.push(addr.port);
    servers.push(s);
  }
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

/** Resolves once cond() is true, polling every 10 ms; rejects with `what` after timeoutMs. */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Deterministic test payload: byte k of the message from a to b. */
export function pattern(a: number, b: number, len: number): Uint8Array {
  const out = new Uint8Array(len);
  for (let k = 0; k < len; k++) out[k] = (a * 31 + b * 7 + k) & 0xff;
  return out;
}
