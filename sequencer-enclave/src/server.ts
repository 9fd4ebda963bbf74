// The enclave's WebSocket endpoint. Every connection first receives the quote and a nonce of its
// own (auth_challenge); a client may send a challenge (answered with the enclave key's signature)
// and must then prove its link key (auth, see client-auth.ts). Only then may it submit frames (the
// gateway) or request one feed (a node, for itself). Unauthenticated or forbidden frames get an
// auth_refused frame and the connection is closed; after authentication, malformed frames are
// nacked and the connection stays usable.
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import WebSocket, { WebSocketServer } from 'ws';
import { Registry } from 'prom-client';
import { generateEd25519, makeQuote, proveEnclaveKey, type Quote } from '@tenebra/seal';
import { DEFAULT_JOB_BOUNDARIES, JOB_BOUNDARY_POLICIES, MAX_COMMITTEE, withDealerLabel, type SequencerConfig } from '@tenebra/config';
import {
  sendCorked, claimOfAuth, ConnectionChallenge, decodeToSequencer, encodeFrame, FrameError, LinkAuthError, principalName, refuseLink,
  sequencerServerName, type AuthOkFrame, type LinkRole, type NackFrame, type QuoteFrame,
} from '@tenebra/wire';
import { clientKeyDirectory, NodeSessions, SEQUENCER_LINK_POLICY } from './client-auth';
import { FeedSubscriber } from './feed';
import { LIMITS, NACK } from './limits';
import { expectedMeasurement } from './measurement';
import { Sequencer } from './sequencer';
import { SequencerMetrics } from './metrics';

/** A running sequencer enclave. */
export interface RunningSequencer {
  /** The port actually bound (useful with port 0). */
  port: number;
  url: string;
  quote: Quote;
  sequencer: Sequencer;
  /** Live feed subscribers: node, next seq to send, and how often each waited for a slow socket. */
  feedStats(): { node: number; next: bigint; drainWaits: number }[];
  /** Stops accepting, closes connections, lets in-flight ops reach the journal, closes it. */
  close(): Promise<void>;
}

/** Starts the enclave: opens the journal, makes a fresh enclave key and quote, listens. Its series go to `registry` (main.ts passes the process's). */
export async function startSequencer(
  config: SequencerConfig,
  platformPrivateKey: Uint8Array,
  log: Logger,
  registry: Registry = new Registry(),
): Promise<RunningSequencer> {
  if (!Number.isInteger(config.n) || config.n < 1 || config.n > MAX_COMMITTEE) throw new Error(`config.n must be an integer in 1..${MAX_COMMITTEE}, got ${config.n}`);
  // a dealer-mode committee (not private) labels every line, a logger passed in too (config dealer.ts)
  log = withDealerLabel(log, config.committeePreprocessing);
  const measurement = expectedMeasurement(config);
  // A fresh enclave key per start: it lives only in this process's memory, like a TEE's sealed key.
  const enclave = generateEd25519();
  const quote = makeQuote(platformPrivateKey, measurement, enclave.publicKey);
  const quoteText = encodeFrame({ t: 'quote', quote } satisfies QuoteFrame);
  const clientKeys = clientKeyDirectory(config);
  const serverName = sequencerServerName(quote.enclave_pubkey);
  const nodeSessions = new NodeSessions();
  const feeds = new Set<FeedSubscriber>();
  /** authenticated connections of the gateway (the only submitter) */
  const submitters = new Set<WebSocket>();
  let sequencer: Sequencer | null = null;
  const metrics = new SequencerMetrics(registry, {
    lastSeq: () => sequencer?.journal.lastSeq ?? 0n, subscribers: () => feeds.size, submitters: () => submitters.size,
  });
  if (config.jobBoundaries !== undefined && !JOB_BOUNDARY_POLICIES.includes(config.jobBoundaries)) {
    throw new Error(`config.jobBoundaries must be one of ${JOB_BOUNDARY_POLICIES.join(', ')}, got ${JSON.stringify(config.jobBoundaries)}`);
  }
  sequencer = Sequencer.open(config.dataDir, config.n, log, metrics, config.jobBoundaries ?? DEFAULT_JOB_BOUNDARIES);

  const wss = new WebSocketServer({
    host: config.host,
    port: config.port,
    maxPayload: LIMITS.maxPayloadBytes,
    perMessageDeflate: false,
  });
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', resolve);
    wss.once('error', reject);
  });
  wss.on('error', (e) => log.error({ err: e.message }, 'server error'));
  const port = (wss.address() as AddressInfo).port;

  let connSeq = 0;
  wss.on('connection', (ws, req) => {
    const conn = ++connSeq;
    if (wss.clients.size > LIMITS.maxConnections) {
      log.warn({ conn, clients: wss.clients.size }, 'too many connections; refusing');
      ws.close(1013, 'too many connections');
      return;
    }
    const clog = log.child({ conn, peer: `${req.socket.remoteAddress}:${req.socket.remotePort}` });
    clog.debug({}, 'connection');
    ws.send(quoteText);
    const challenge = new ConnectionChallenge(clientKeys, SEQUENCER_LINK_POLICY, serverName);
    ws.send(encodeFrame(challenge.frame));
    /** who this connection proved to be; null until its auth frame verified */
    let client: { role: LinkRole; id: number } | null = null;
    let feed: FeedSubscriber | null = null;
    const nack = (rid: string, code: string, message: string) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(encodeFrame({ t: 'nack', rid, code, message } satisfies NackFrame));
    };
    /** set once refused: frames still arriving while the socket closes are ignored */
    let refused = false;
    const refuse = (err: LinkAuthError, claimed: string | null) => {
      refused = true;
      clog.warn({ code: err.code, claimed, reason: err.message }, 'client link refused');
      refuseLink(ws, err);
    };
    const authTimer = setTimeout(
      () => refuse(new LinkAuthError('AUTH_TIMEOUT', `no link-key proof within ${LIMITS.authTimeoutMs} ms`), null),
      LIMITS.authTimeoutMs,
    );
    authTimer.unref();

    ws.on('message', (data, isBinary) => {
      if (refused) return;
      const text = isBinary ? null : (data as Buffer).toString('utf8');
      // Before authentication nothing is worth a nack: the peer is refused outright.
      if (text === null) {
        if (!client) return refuse(new LinkAuthError('MALFORMED_AUTH', 'binary frame before authentication'), null);
        return nack('', NACK.BAD_FRAME, 'binary frames are not accepted; send JSON text');
      }
      if (text.length > LIMITS.maxSubmitBytes) {
        if (!client) return refuse(new LinkAuthError('MALFORMED_AUTH', 'oversized frame before authentication'), null);
        return nack(ridOf(text), NACK.FRAME_TOO_LARGE, `frame of ${text.length} bytes exceeds the ${LIMITS.maxSubmitBytes}-byte limit`);
      }
      let frame;
      try {
        frame = decodeToSequencer(text);
      } catch (e) {
        const fe = e instanceof FrameError ? e : new FrameError(String(e));
        if (!client) return refuse(new LinkAuthError('MALFORMED_AUTH', fe.message), null);
        clog.warn({ err: fe.message }, 'malformed frame nacked');
        return nack(fe.rid || ridOf(text), NACK.BAD_FRAME, fe.message);
      }
      switch (frame.t) {
        case 'challenge':
          // Allowed before authentication: the client checks the enclave before proving itself.
          ws.send(encodeFrame({ t: 'proof', nonce: frame.nonce, sig: proveEnclaveKey(enclave.privateKey, frame.nonce) }));
          return;
        case 'auth': {
          const claimed = principalName(frame.role, frame.id);
          try {
            client = challenge.verify(claimOfAuth(frame));
          } catch (e) {
            return refuse(e instanceof LinkAuthError ? e : new LinkAuthError('MALFORMED_AUTH', String(e)), claimed);
          }
          clearTimeout(authTimer);
          if (client.role === 'node' && nodeSessions.claim(client.id, ws)) {
            clog.warn({ client: claimed }, 'node opened a newer authenticated session; its older one is closed');
          }
          if (client.role === 'gateway') submitters.add(ws);
          clog.info({ client: claimed }, 'client authenticated');
          ws.send(encodeFrame({ t: 'auth_ok', role: client.role, id: client.id } satisfies AuthOkFrame));
          return;
        }
      }
      if (!client) return refuse(new LinkAuthError('AUTH_REQUIRED', `'${frame.t}' before a link-key proof`), null);
      switch (frame.t) {
        case 'submit': {
          if (client.role !== 'gateway') {
            return refuse(new LinkAuthError('NOT_ALLOWED', `${principalName(client.role, client.id)} may not submit ops`), principalName(client.role, client.id));
          }
          const rid = frame.rid;
          sequencer.submit(rid, frame.op).then(
            (out) => {
              // acks of one journal group commit resolve together: one write for all of them
              if (ws.readyState === WebSocket.OPEN) sendCorked(ws, encodeFrame(out));
            },
            (e: unknown) => clog.error({ rid, err: String(e) }, 'submit failed unexpectedly'),
          );
          return;
        }
        case 'feed': {
          if (client.role !== 'node' || client.id !== frame.node) {
            const who = principalName(client.role, client.id);
            return refuse(new LinkAuthError('NOT_ALLOWED', `${who} may not read the feed of node ${frame.node}`), who);
          }
          if (feed) return nack('', NACK.FEED_ALREADY_STARTED, 'this connection already carries a feed');
          if (frame.node > config.n) return nack('', NACK.BAD_NODE, `node ${frame.node} is not in 1..${config.n}`);
          const from = BigInt(frame.from_seq);
          const last = sequencer.lastSeq;
          if (from > last + 1n) {
            clog.error({ node: frame.node, from: frame.from_seq, last: last.toString() }, 'node asks for ops beyond the journal');
            return nack('', NACK.FROM_SEQ_AHEAD, `from_seq ${from} is beyond the journal (last seq ${last})`);
          }
          feed = new FeedSubscriber(sequencer, ws, frame.node, from);
          feeds.add(feed);
          clog.info({ node: frame.node, from: frame.from_seq, last: last.toString() }, 'feed started');
          feed.pump();
          return;
        }
        case 'progress': {
          if (client.role !== 'node') {
            const who = principalName(client.role, client.id);
            return refuse(new LinkAuthError('NOT_ALLOWED', `${who} may not report committee progress`), who);
          }
          sequencer.reportTaken(BigInt(frame.taken));
          return;
        }
      }
    });
    ws.on('error', (e) => clog.warn({ err: e.message }, 'connection error'));
    ws.on('close', () => {
      clearTimeout(authTimer);
      submitters.delete(ws);
      if (client?.role === 'node') nodeSessions.release(client.id, ws);
      if (feed) {
        feed.stop();
        feeds.delete(feed);
        clog.info({ node: feed.node, next: feed.nextSeq.toString() }, 'feed closed');
      }
    });
  });

  const jobs = () => sequencer.jobStats;
  const statsTimer = setInterval(() => {
    log.info(
      {
        lastSeq: sequencer.lastSeq.toString(), accepted: sequencer.acceptedCount, clients: wss.clients.size, feeds: feeds.size,
        lastJobEnd: jobs().lastJobEnd.toString(), committeeTaken: jobs().committeeTaken.toString(), jobEndRecords: jobs().jobEndRecords,
      },
      'stats',
    );
  }, 10_000);
  statsTimer.unref();

  log.info({ host: config.host, port, n: config.n, measurement, enclave_pubkey: quote.enclave_pubkey, lastSeq: sequencer.lastSeq.toString() }, 'listening');

  let closing: Promise<void> | null = null;
  return {
    port,
    url: `ws://${config.host}:${port}`,
    quote,
    sequencer,
    feedStats: () => [...feeds].map((fd) => ({ node: fd.node, next: fd.nextSeq, drainWaits: fd.drainWaits })),
    close() {
      closing ??= (async () => {
        clearInterval(statsTimer);
        for (const f of feeds) f.stop();
        feeds.clear();
        const closed = new Promise<void>((r) => wss.close(() => r()));
        for (const c of wss.clients) c.terminate();
        await closed;
        await sequencer.close();
        log.info({ lastSeq: sequencer.lastSeq.toString() }, 'stopped');
      })();
      return closing;
    },
  };
}

/** Best-effort rid of a frame that failed validation, so the nack can name the op. */
function ridOf(text: string): string {
  const m = /"rid"\s*:\s*"([\x21-\x7e]{1,128}?)"/.exec(text.slice(0, 4096));
  return m?.[1] && !m[1].includes('"') ? m[1] : '';
}
