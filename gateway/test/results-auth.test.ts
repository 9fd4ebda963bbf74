// The results listener admits a committee node only with its link key's signature over the
// connection's fresh nonce for the 'results' link: a local process cannot pose as node k and feed
// results (three forged connections could otherwise make a t+1 quorum).
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import WebSocket from 'ws';
import { generateEd25519, toHex } from '@tenebra/seal';
import {
  checkGatewayResultsProof, encodeFrame, LinkAuthError, RESULTS_SERVER, resultsHello, signLinkAuth, type ResultFrame,
} from '@tenebra/wire';
import { nodeLinkKeys, ResultServer } from '../src/results/server';
import type { ResultPipeline } from '../src/results/pipeline';

type Msg = Record<string, unknown>;

const nodeKeys = Array.from({ length: 5 }, () => generateEd25519());
const gatewayKey = generateEd25519();
let server: ResultServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** A ResultServer over a recording stand-in of the pipeline, with its log lines kept. */
async function startServer() {
  const seen = { up: [] as number[], down: [] as number[], results: [] as ResultFrame[] };
  const pipeline = {
    cursor: 1n,
    nodeUp: (n: number) => void seen.up.push(n),
    nodeDown: (n: number) => void seen.down.push(n),
    onResult: (r: ResultFrame) => (seen.results.push(r), true),
  } as unknown as ResultPipeline;
  const logs: string[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void logs.push(l) });
  server = new ResultServer(5, pipeline, log, nodeLinkKeys(nodeKeys.map((k, i) => ({ index: i + 1, linkPublicKey: toHex(k.publicKey) }))), gatewayKey.privateKey);
  const port = await server.listen('127.0.0.1', 0);
  return { url: `ws://127.0.0.1:${port}`, seen, logs };
}

/** A raw connection, once the gateway's auth_challenge is in. */
async function connect(url: string) {
  const ws = new WebSocket(url);
  const inbox: Msg[] = [];
  ws.on('message', (d) => inbox.push(JSON.parse(d.toString()) as Msg));
  const closed = new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
  await waitFor(() => inbox.length >= 1);
  expect(inbox[0]!.t).toBe('auth_challenge');
  const nonce = inbox[0]!.nonce as string;
  const send = async (frame: unknown): Promise<Msg> => {
    const before = inbox.length;
    ws.send(JSON.stringify(frame));
    await waitFor(() => inbox.length > before);
    return inbox[before]!;
  };
  return { ws, inbox, nonce, closed, send };
}

async function waitFor(cond: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const result = (node: number, seq: number): ResultFrame => ({ t: 'result', node, seq: String(seq), pub: { kind: 'cancel', order_id: 'x', found: false }, sealed: '', job: `batch:${seq}-${seq}:0` });

describe('results listener authentication', () => {
  it('admits a node that signs its challenge, proves itself back, and takes its results', async () => {
    const { url, seen, logs } = await startServer();
    const c = await connect(url);
    const challenge = 'ee'.repeat(32);
    const resume = await c.send(resultsHello(2, nodeKeys[1]!.privateKey, c.nonce, challenge)) as { t: string; from_seq: string; key: string; sig: string };
    expect(resume).toMatchObject({ t: 'resume', from_seq: '1', key: toHex(gatewayKey.publicKey) });
    // The resume is the gateway's signature over node 2's challenge: not valid for another node,
    // another challenge or another key.
    expect(() => checkGatewayResultsProof(gatewayKey.publicKey, 2, challenge, resume)).not.toThrow();
    expect(() => checkGatewayResultsProof(gatewayKey.publicKey, 3, challenge, resume)).toThrow(LinkAuthError);
    expect(() => checkGatewayResultsProof(gatewayKey.publicKey, 2, 'ef'.repeat(32), resume)).toThrow(/BAD_SIGNATURE/);
    expect(() => checkGatewayResultsProof(nodeKeys[0]!.publicKey, 2, challenge, resume)).toThrow(/UNKNOWN_KEY/);
    c.ws.send(encodeFrame(result(2, 1)));
    await waitFor(() => seen.results.length === 1);
    expect(seen.up).toEqual([2]);
    expect(logs.some((l) => l.includes('committee node authenticated for results'))).toBe(true);
    c.ws.close();
  });

  it('refuses forged hellos: unknown key, another node\'s key, bad signature, replayed challenge, wrong purpose, no proof', async () => {
    const { url, seen, logs } = await startServer();
    const refused = async (c: Awaited<ReturnType<typeof connect>>, frame: unknown, code: string) => {
      expect(await c.send(frame)).toMatchObject({ t: 'auth_refused', code });
      expect((await c.closed).code).toBe(1008);
    };
    let c = await connect(url);
    await refused(c, resultsHello(3, generateEd25519().privateKey, c.nonce), 'UNKNOWN_KEY');
    c = await connect(url);
    await refused(c, resultsHello(3, nodeKeys[0]!.privateKey, c.nonce), 'UNKNOWN_KEY');
    c = await connect(url);
    const genuine = resultsHello(3, nodeKeys[2]!.privateKey, c.nonce);
    await refused(c, { ...genuine, sig: (genuine.sig[0] === 'a' ? 'b' : 'a') + genuine.sig.slice(1) }, 'BAD_SIGNATURE');
    const ch = 'cc'.repeat(32);
    // A genuine hello captured on one connection and replayed on another.
    const victim = await connect(url);
    const captured = resultsHello(3, nodeKeys[2]!.privateKey, victim.nonce);
    expect(await victim.send(captured)).toMatchObject({ t: 'resume' });
    c = await connect(url);
    await refused(c, captured, 'REPLAYED_CHALLENGE');
    // Node 3's own key, but signed for the sequencer feed.
    c = await connect(url);
    const feedProof = signLinkAuth({ role: 'node', id: 3, privateKey: nodeKeys[2]!.privateKey }, 'feed', c.nonce, RESULTS_SERVER);
    await refused(c, { t: 'hello', node: 3, purpose: 'feed', key: feedProof.key, nonce: c.nonce, sig: feedProof.sig, challenge: ch }, 'WRONG_PURPOSE');
    // ...or claiming 'results' over that feed signature.
    c = await connect(url);
    const feedSig = signLinkAuth({ role: 'node', id: 3, privateKey: nodeKeys[2]!.privateKey }, 'feed', c.nonce, RESULTS_SERVER);
    await refused(c, { t: 'hello', node: 3, purpose: 'results', key: feedSig.key, nonce: c.nonce, sig: feedSig.sig, challenge: ch }, 'BAD_SIGNATURE');
    // The hello of old (no proof), and a result with no hello at all.
    c = await connect(url);
    await refused(c, { t: 'hello', node: 4 }, 'MALFORMED_AUTH');
    c = await connect(url);
    await refused(c, result(4, 1), 'AUTH_REQUIRED');

    expect(seen.up).toEqual([3]); // only the genuine victim
    expect(seen.results).toEqual([]);
    const lines = logs.filter((l) => l.includes('results link refused')).map((l) => JSON.parse(l) as Msg);
    expect(lines.map((l) => l.code)).toEqual([
      'UNKNOWN_KEY', 'UNKNOWN_KEY', 'BAD_SIGNATURE', 'REPLAYED_CHALLENGE', 'WRONG_PURPOSE', 'BAD_SIGNATURE', 'MALFORMED_AUTH', 'AUTH_REQUIRED',
    ]);
    for (const l of lines) {
      expect(l.remote).toMatch(/^(::ffff:)?127\.0\.0\.1:\d+$/);
      expect(typeof l.reason).toBe('string');
    }
    victim.ws.close();
  });

  it('a newer authenticated session of a node replaces the older one; a forger cannot displace it', async () => {
    const { url, seen } = await startServer();
    const old = await connect(url);
    await old.send(resultsHello(1, nodeKeys[0]!.privateKey, old.nonce));
    // A forger claiming node 1 is refused and the live session stays.
    const forger = await connect(url);
    expect(await forger.send(resultsHello(1, generateEd25519().privateKey, forger.nonce))).toMatchObject({ code: 'UNKNOWN_KEY' });
    expect(old.ws.readyState).toBe(WebSocket.OPEN);
    // The node itself, back with a new connection, wins.
    const fresh = await connect(url);
    expect(await fresh.send(resultsHello(1, nodeKeys[0]!.privateKey, fresh.nonce))).toMatchObject({ t: 'resume' });
    expect(await old.closed).toEqual({ code: 4001, reason: 'superseded by a newer authenticated session' });
    fresh.ws.send(encodeFrame(result(1, 1)));
    await waitFor(() => seen.results.length === 1);
    expect(seen.up).toEqual([1, 1]);
    expect(seen.down).toEqual([]);
    fresh.ws.close();
  });
});
