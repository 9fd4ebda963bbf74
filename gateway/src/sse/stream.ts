// One server-sent-events response (text/event-stream, WHATWG HTML "Server-sent events"): event
// frames with id and name, comment heartbeats, and a cut-off for readers that stop reading.
import type { ServerResponse } from 'node:http';
import { stringify } from '../json';

/** Bytes a stream may hold unsent before it is closed (the client reconnects with Last-Event-ID). */
export const MAX_UNSENT_BYTES = 1 << 20;

export class SseStream {
  private ended = false;
  private readonly onEnd: (() => void)[] = [];

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string | number | string[]>,
    retryMs: number,
  ) {
    res.writeHead(200, {
      ...headers,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write(`retry: ${retryMs}\n\n`);
    res.on('close', () => this.finish());
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Runs f once when the stream ends (either side). */
  whenClosed(f: () => void): void {
    if (this.ended) f();
    else this.onEnd.push(f);
  }

  /** Writes one event; data is JSON (exact numbers). */
  event(name: string, id: string | null, data: unknown): void {
    if (this.ended) return;
    let frame = `event: ${name}\n`;
    if (id !== null) frame += `id: ${id}\n`;
    frame += `data: ${stringify(data)}\n\n`;
    this.write(frame);
  }

  /** A comment line (ignored by EventSource): the heartbeat. */
  comment(text: string): void {
    if (!this.ended) this.write(`: ${text.replace(/\n/g, ' ')}\n\n`);
  }

  private write(text: string): void {
    if (this.res.writableLength > MAX_UNSENT_BYTES) return this.close();
    this.res.write(text);
  }

  /** Ends the response. */
  close(): void {
    if (!this.ended) this.res.end();
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    for (const f of this.onEnd.splice(0)) f();
  }
}
