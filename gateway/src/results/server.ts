// The gateway's internal WebSocket listener for committee nodes. Each connection gets a fresh nonce
// (auth_challenge); the node's hello must carry its link key's signature over it for the 'results'
// link (@tenebra/wire link-auth). Only then does the gateway answer where to resume (its persisted
// cursor), signing the node's own nonce with the gateway's link key so the node knows whom it feeds,
// and the node streams its results from there. Anything else is refused with an
// auth_refused frame and logged with the reason and the remote address.
// One session per node: the newest authenticated connection wins and the older one is closed. Only
// the key holder can authenticate, so the newest is the node itself (typically back from a restart
// while its old connection is still half-open); refusing it would stall that node's results.
import { WebSocketServer, type WebSocket } from 'ws';
import {
  claimOfHello, CLOSE_SUPERSEDED, ConnectionChallenge, decodeNodeToGateway, encodeFrame, FrameError, gatewayResultsProof,
  LinkAuthError, LinkKeyDirectory, RESULTS_SERVER, refuseLink, WIRE_LIMITS, type CapacityFrame, type LinkPolicy, type ResumeFrame,
} from '@tenebra/wire';
import type { Logger } from 'pino';
import type { ResultPipeline } from './pipeline';

const HELLO_TIMEOUT_MS = 5_000;
/** Only committee nodes open results links. */
const RESULTS_POLICY: LinkPolicy = { node: 'results' };

/** The nodes' link keys as the gateway config lists them. */
export function nodeLinkKeys(nodes: { index: number; linkPublicKey: string }[]): LinkKeyDirectory {
  return new LinkKeyDirectory(nodes.map((nd) => ({ role: 'node' as const, id: nd.index, publicKey: nd.linkPublicKey })));
}

export class ResultServer {
  private wss: WebSocketServer | null = null;
  private readonly byNode = new Map<number, WebSocket>();

  constructor(
    private readonly n: number,
    private readonly pipeline: ResultPipeline,
    private readonly log: Logger,
    /** the link keys of nodes 1..n (nodeLinkKeys(config.nodes)) */
    private readonly linkKeys: LinkKeyDirectory,
    /** the gateway's own Ed25519 link key (seed): proves the gateway to each node */
    private readonly ownLinkKey: Uint8Array,
    /** a node's capacity report (what its preprocessing reserve covers: results/capacity.ts) */
    private readonly onCapacity: (frame: CapacityFrame) => void = () => undefined,
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
      wss.on('connection', (ws, req) => this.accept(ws, `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`));
    });
  }

  private accept(ws: WebSocket, remote: string): void {
    let node = 0;
    const challenge = new ConnectionChallenge(this.linkKeys, RESULTS_POLICY, RESULTS_SERVER);
    /** set once refused: frames still arriving while the socket closes are ignored */
    let refused = false;
    const refuse = (err: LinkAuthError, claimed: number | null) => {
      refused = true;
      this.log.warn({ remote, claimed, code: err.code, reason: err.message }, 'results link refused');
      refuseLink(ws, err);
    };
    const helloTimer = setTimeout(() => refuse(new LinkAuthError('AUTH_TIMEOUT', `no hello within ${HELLO_TIMEOUT_MS} ms`), null), HELLO_TIMEOUT_MS);
    ws.send(encodeFrame(challenge.frame));
    ws.on('message', (data) => {
      if (refused) return;
      let frame;
      try {
        frame = decodeNodeToGateway(data as Buffer);
      } catch (e) {
        const msg = e instanceof FrameError ? e.message : String(e);
        if (node === 0) return refuse(new LinkAuthError('MALFORMED_AUTH', msg), null);
        this.log.warn({ remote, node, err: msg }, 'malformed frame from a node; closing');
        ws.close(1002, 'malformed frame');
        return;
      }
      if (frame.t === 'hello') {
        if (node !== 0) return refuse(new LinkAuthError('REPLAYED_CHALLENGE', 'second hello on an authenticated connection'), frame.node);
        if (frame.node > this.n) return refuse(new LinkAuthError('NOT_ALLOWED', `node index must be in 1..${this.n}`), frame.node);
        try {
          challenge.verify(claimOfHello(frame));
        } catch (e) {
          return refuse(e instanceof LinkAuthError ? e : new LinkAuthError('MALFORMED_AUTH', String(e)), frame.node);
        }
        clearTimeout(helloTimer);
        node = frame.node;
        const prior = this.byNode.get(node);
        if (prior) {
          this.log.warn({ node, remote }, 'node opened a newer authenticated session; closing its previous one');
          prior.close(CLOSE_SUPERSEDED, 'superseded by a newer authenticated session');
        }
        this.byNode.set(node, ws);
        this.pipeline.nodeUp(node);
        const proof = gatewayResultsProof(this.ownLinkKey, node, frame.challenge);
        ws.send(encodeFrame({ t: 'resume', from_seq: this.pipeline.cursor.toString(), ...proof } satisfies ResumeFrame));
        this.log.info({ node, remote, from_seq: this.pipeline.cursor.toString() }, 'committee node authenticated for results');
        return;
      }
      if (node === 0) return refuse(new LinkAuthError('AUTH_REQUIRED', `'${frame.t}' before the hello`), frame.node);
      // A superseded connection may still have results in flight: they no longer count.
      if (this.byNode.get(node) !== ws) return;
      if (frame.node !== node) {
        ws.close(1008, 'result for another node');
        return;
      }
      if (frame.t === 'capacity') {
        this.onCapacity(frame);
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
