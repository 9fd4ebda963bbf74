// The gateway's internal WebSocket listener for committee nodes: a node says hello, the gateway
// answers where to resume (its persisted cursor), and the node streams its results from there.
import { WebSocketServer, type WebSocket } from 'ws';
import { decodeNodeToGateway, encodeFrame, FrameError, WIRE_LIMITS } from '@tenebra/wire';
import type { Logger } from 'pino';
import type { ResultPipeline } from './pipeline';

const HELLO_TIMEOUT_MS = 5_000;

export class ResultServer {
  private wss: WebSocketServer | null = null;
  private readonly byNode = new Map<number, WebSocket>();

  constructor(
    private readonly n: number,
    private readonly pipeline: ResultPipeline,
    private readonly log: Logger,
  ) {}

  /** Listens on host:port; resolves with the bound port. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const wss = new WebSocketServer({ host, port, maxPayload: WIRE_LIMITS.maxFrameBytes, perMessageDeflate: false });
      this.wss = wss;
      wss.once('error', reject);
      wss.once('listening', () => {
        wss.off('error', reject);
        wss.on('error', (e) => this.log.error({ err: e.message }, 'results listener error'));
        const addr = wss.address();
        resolve(typeof addr === 'object' && addr ? addr.port : port);
      });
      wss.on('connection', (ws, req) => this.accept(ws, req.socket.remoteAddress ?? '?'));
    });
  }

  private accept(ws: WebSocket, remote: string): void {
    let node = 0;
    const helloTimer = setTimeout(() => {
      this.log.warn({ remote }, 'results connection sent no hello; closing');
      ws.terminate();
    }, HELLO_TIMEOUT_MS);
    ws.on('message', (data) => {
      let frame;
      try {
        frame = decodeNodeToGateway(data as Buffer);
      } catch (e) {
        this.log.warn({ remote, node, err: e instanceof FrameError ? e.message : String(e) }, 'malformed frame from a node; closing');
        ws.close(1002, 'malformed frame');
        return;
      }
      if (frame.t === 'hello') {
        if (node !== 0 || frame.node > this.n) {
          ws.close(1008, node !== 0 ? 'second hello' : `node index must be in 1..${this.n}`);
          return;
        }
        clearTimeout(helloTimer);
        node = frame.node;
        const prior = this.byNode.get(node);
        if (prior) {
          this.log.warn({ node }, 'node reconnected; dropping its previous connection');
          prior.terminate();
        }
        this.byNode.set(node, ws);
        this.pipeline.nodeUp(node);
        ws.send(encodeFrame({ t: 'resume', from_seq: this.pipeline.cursor.toString() }));
        this.log.info({ node, from_seq: this.pipeline.cursor.toString() }, 'committee node connected for results');
        return;
      }
      if (node === 0 || frame.node !== node) {
        ws.close(1008, node === 0 ? 'hello first' : 'result for another node');
        return;
      }
      try {
        if (!this.pipeline.onResult(frame)) {
          this.log.warn({ node, seq: frame.seq }, 'node is too far ahead of the results cursor; asking it to resume later');
          ws.close(1013, 'too far ahead');
        }
      } catch (e) {
        this.log.error({ node, seq: frame.seq, err: e instanceof Error ? e.stack : String(e) }, 'handling a result failed');
      }
    });
    ws.on('error', (e) => this.log.debug({ node, err: e.message }, 'results connection error'));
    ws.on('close', () => {
      clearTimeout(helloTimer);
      if (node !== 0 && this.byNode.get(node) === ws) {
        this.byNode.delete(node);
        this.pipeline.nodeDown(node);
        this.log.info({ node }, 'committee node disconnected from results');
      }
    });
  }

  /** Closes every node connection and the listener. */
  async close(): Promise<void> {
    for (const ws of this.byNode.values()) ws.terminate();
    this.byNode.clear();
    const wss = this.wss;
    this.wss = null;
    if (wss) {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
    }
  }
}
