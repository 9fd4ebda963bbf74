// Fill times as a trading client learns them: pushed on the private orders channel of an encrypted
// WebSocket session (@tenebra/client), not polled. One socket per account; a fill's time is the
// moment its FILLED update arrives here (performance.now()).
import { TenebraSocket } from '@tenebra/client';
import { httpRequest } from '../src/http-client';
import type { Credentials } from '../test/harness';

export class FillWatch {
  /** orders waited on: resolve with the arrival time */
  private readonly waiting = new Map<string, (at: number) => void>();
  /** FILLED updates that arrived before anyone waited on them (the push can beat the REST answer) */
  private readonly early = new Map<string, number>();

  private constructor(private readonly socket: TenebraSocket) {
    socket.on('order', (ev) => {
      if (ev.status !== 'FILLED') return;
      const at = performance.now();
      const w = this.waiting.get(ev.order_id);
      if (w) {
        this.waiting.delete(ev.order_id);
        w(at);
      } else if (this.early.size < 10_000) {
        this.early.set(ev.order_id, at);
      }
    });
  }

  /** Logs in (a fresh token whenever the socket asks), sets up the session and subscribes to orders. */
  static async open(baseUrl: string, wsUrl: string, creds: Credentials): Promise<FillWatch> {
    const token = async (): Promise<string> => {
      const r = await httpRequest(`${baseUrl}/auth/token`, 'POST', { grant_type: 'client_credentials', client_id: creds.api_key, client_secret: creds.api_secret, passphrase: creds.passphrase });
      const body = JSON.parse(r.text) as { access_token?: string };
      if (r.status !== 200 || !body.access_token) throw new Error(`fill watch login: ${r.status} ${r.text.slice(0, 200)}`);
      return body.access_token;
    };
    // symbol ids go into the headers of trading frames only, and this socket places no orders
    const socket = new TenebraSocket({ url: wsUrl, token, resolveSymbolId: () => 0, heartbeat: false });
    await socket.connect();
    await socket.subscribe('orders');
    return new FillWatch(socket);
  }

  /** When the order's FILLED update arrived (performance.now()), or NaN if none within timeoutMs. */
  filled(orderId: string, timeoutMs: number): Promise<number> {
    const seen = this.early.get(orderId);
    if (seen !== undefined) {
      this.early.delete(orderId);
      return Promise.resolve(seen);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(orderId);
        resolve(NaN);
      }, timeoutMs);
      this.waiting.set(orderId, (at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }

  async close(): Promise<void> {
    await this.socket.close();
  }
}
