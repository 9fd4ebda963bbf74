// Committee links over Unix domain sockets (docs/decisions/0041-unix-socket-links.md): on one host,
// @libp2p/tcp listens on and dials `/unix/<path>` multiaddrs with the same Noise and Yamux on top,
// so the links stay encrypted and authenticated (ADR 0003) and the direct path (direct-path.ts)
// applies unchanged (its socket is a net.Socket over a pipe handle instead of a TCP one). What
// changes is the kernel's work per write: an AF_UNIX write copies into the peer's receive queue
// and wakes it, where a loopback TCP write runs the whole TCP/IP send and receive path (softirq
// inline, on the sender's CPU).
import { connect } from 'node:net';
import { lstatSync, mkdirSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { multiaddr } from '@multiformats/multiaddr';

/**
 * Longest socket path in bytes: Linux's sockaddr_un.sun_path holds 108 bytes with the terminating
 * NUL (macOS 104; the launcher checks against this one and takes a short path when over it).
 */
export const MAX_UNIX_SOCKET_PATH_BYTES = 107;

/** The multiaddr of a socket path: `/unix/<path, URI-encoded>` (the form @libp2p/tcp reports). */
export function unixSocketMultiaddr(path: string): string {
  if (!path.startsWith('/')) throw new RangeError(`unix socket path must be absolute, got '${path}'`);
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_UNIX_SOCKET_PATH_BYTES) throw new RangeError(`unix socket path of ${bytes} bytes is over the ${MAX_UNIX_SOCKET_PATH_BYTES}-byte limit: ${path}`);
  return `/unix/${encodeURIComponent(path)}`;
}

/** The socket path of a `/unix/...` multiaddr (a trailing /p2p/<id> allowed); undefined for any other address. */
export function unixSocketPathOf(addr: string): string | undefined {
  if (!addr.startsWith('/unix/')) return undefined;
  return multiaddr(addr).getComponents().find((c) => c.name === 'unix')?.value;
}

/**
 * The socket's folder must be this user's own, a real directory, writable by no one else. The
 * launcher's short-path fallback puts it under the temp directory with a predictable name, where a
 * local user could have made it first (or a symlink to somewhere else) and replace or remove the
 * socket files: Noise would still refuse a stranger as a peer, but the node would not be reachable.
 * A folder that fails the check is an error naming it, not a silent listen in someone else's folder.
 */
export function checkSocketFolder(folder: string): void {
  const st = lstatSync(folder);
  const problem = !st.isDirectory()
    ? 'is not a directory (a symlink or a file)'
    : typeof process.getuid === 'function' && st.uid !== process.getuid()
      ? `belongs to uid ${st.uid}, not to this process's uid ${process.getuid()}`
      : (st.mode & 0o022) !== 0
        ? `is writable by its group or by everyone (mode ${(st.mode & 0o777).toString(8)})`
        : undefined;
  if (problem !== undefined) throw new Error(`unix socket folder ${folder} ${problem}: remove it, or use a shorter data folder or --links tcp`);
}

/**
 * Makes a socket path ready to listen on. A node killed with SIGKILL (chaos kills, a crash) leaves
 * its socket file behind, and listen() on it fails with EADDRINUSE; TCP has no such leftover. The
 * file is removed only when nothing answers on it, so a second process with the same config still
 * fails, as it would on a TCP port in use. Anything at the path that is not a socket is left alone
 * (and listen then fails with the OS's error).
 */
export async function prepareUnixListen(path: string): Promise<void> {
  // Node would truncate a longer path silently and listen on another file than its peers dial
  unixSocketMultiaddr(path);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  checkSocketFolder(dirname(path));
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (!isSocket) return;
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => {
      probe.destroy();
      resolve(false);
    });
  });
  if (live) throw new Error(`another process listens on ${path}`);
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
