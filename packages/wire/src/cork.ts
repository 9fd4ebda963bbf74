// One write per event-loop turn on a WebSocket: frames sent in the same turn (say, every op of an
// lmdb or journal group commit that resolved together) leave in one writev instead of one syscall
// each. The first send of a turn corks the TCP socket; a setImmediate (the check phase, right after
// the I/O callbacks of this turn) uncorks it. Frames are unchanged: only the syscalls are grouped.
import type WebSocket from 'ws';

interface Corkable {
  cork(): void;
  uncork(): void;
}

const corked = new WeakSet<object>();

/** ws.send(data), with the underlying socket corked until the end of this event-loop turn. */
export function sendCorked(ws: WebSocket, data: string | Buffer): void {
  const socket = (ws as unknown as { _socket?: Corkable })._socket;
  if (socket && !corked.has(socket)) {
    corked.add(socket);
    socket.cork();
    setImmediate(() => {
      corked.delete(socket);
      socket.uncork();
    });
  }
  ws.send(data);
}
