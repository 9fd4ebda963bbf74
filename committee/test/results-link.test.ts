// The node's side of the results link: it proves its link key to the gateway and sends results only
// to a listener that proves the gateway's link key over the node's own nonce.
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { WebSocketServer } from 'ws';
import { generateEd25519 } from '@tenebra/seal';
import {
  claimOfHello, ConnectionChallenge, decodeNodeToGateway, encodeFrame, gatewayResultsProof, LinkKeyDirectory, RESULTS_SERVER,
  type CapacityFrame, type ResultFrame,
} from '@tenebra/wire';
import { ResultsLink } from '../src/results-link';
import type { NodeStore } from '../src/node-store';

const nodeKey = generateEd25519();
const gatewayKey = generateEd25519();
const results: ResultFrame[] = [1, 2, 3].map((seq) => ({ t: 'result', node: 4, seq: String(seq), pub: { kind: 'cancel' }, sealed: '', job: `batch:${seq}-${seq}:0` }));
/** reads of the store's results (resultsFrom calls) */
let reads = 0;
const store = {
  *resultsFrom(from: bigint) {
    reads++;
    yield* results.filter((r) => BigInt(r.seq) >= from);
  },
  prune: async () => {},
} as unknown as NodeStore;

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

/** A results listener that checks node 4's hello and signs its resume with `signingKey`. */
async function listener(signingKey: Uint8Array) {
  const got: ResultFrame[] = [];
  const capacity: CapacityFrame[] = [];
  const admitted: number[] = [];
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  const keys = new LinkKeyDirectory([{ role: 'node', id: 4, publicKey: nodeKey.publicKey }]);
  wss.on('connection', (ws) => {
    const ch = new ConnectionChallenge(keys, { node: 'results' }, RESULTS_SERVER);
    ws.send(encodeFrame(ch.frame));
    ws.on('message', (d) => {
      const f = decodeNodeToGateway(d as Buffer);
      if (f.t === 'hello') {
        admitted.push(ch.verify(claimOfHello(f)).id);
        ws.send(encodeFrame({ t: 'resume', from_seq: '1', ...gatewayResultsProof(signingKey, f.node, f.challenge) }));
      } else if (f.t === 'capacity') capacity.push(f);
      else got.push(f);
    });
  });
  cleanup.push(() => new Promise<void>((r) => {
    for (const c of wss.clients) c.terminate();
    wss.close(() => r());
  }));
  return { url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`, got, admitted, capacity };
}

function link(url: string) {
  const logs: string[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void logs.push(l) });
  const l = new ResultsLink(url, 4, nodeKey.privateKey, gatewayKey.publicKey, store, log);
  cleanup.push(() => l.close());
  l.start();
  return { logs, link: l };
}

async function waitFor(cond: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('results link (node side)', () => {
  it('authenticates to the gateway and streams its results once the gateway proved its key', async () => {
    const gw = await listener(gatewayKey.privateKey);
    link(gw.url);
    await waitFor(() => gw.got.length === 3);
    expect(gw.admitted).toEqual([4]);
    expect(gw.got.map((r) => r.seq)).toEqual(['1', '2', '3']);
  });

  it('sends its capacity report once resumed, and the newest one on every report', async () => {
    const gw = await listener(gatewayKey.privateKey);
    const { link: l } = link(gw.url);
    const report: CapacityFrame = { t: 'capacity', node: 4, production: 'stopped', exhausted: false, orders_left: '40' };
    l.reportCapacity(report); // before the resume: kept, sent once resumed
    await waitFor(() => gw.capacity.length === 1);
    expect(gw.capacity[0]).toEqual(report);
    l.reportCapacity({ ...report, exhausted: true, orders_left: '0' });
    await waitFor(() => gw.capacity.length === 2);
    expect(gw.capacity[1]!.exhausted).toBe(true);
  });

  it('sends a job\'s results before they are in the store when they are next, once each, in order', async () => {
    const gw = await listener(gatewayKey.privateKey);
    const { link: l } = link(gw.url);
    await waitFor(() => gw.got.length === 3); // 1-3 from the store
    const job = (from: number, to: number): ResultFrame[] => Array.from({ length: to - from + 1 }, (_, i) => ({ ...results[0]!, seq: String(from + i) }));
    l.sendNow(job(6, 7)); // not next (4-5 are missing): left to the store, which lacks them
    l.sendNow(job(4, 5)); // next: sent at once, though the store does not hold them yet
    await waitFor(() => gw.got.length === 5);
    l.notify(); // the write landed: the store has nothing past 3, nothing is resent
    l.sendNow(job(6, 7));
    await waitFor(() => gw.got.length === 7);
    await new Promise((r) => setTimeout(r, 100));
    expect(gw.got.map((r) => r.seq)).toEqual(['1', '2', '3', '4', '5', '6', '7']);
  });

  it('reads the store after a write only when a stored result may not have gone out yet', async () => {
    const gw = await listener(gatewayKey.privateKey);
    const { link: l } = link(gw.url);
    await waitFor(() => gw.got.length === 3); // 1-3 from the store at the resume
    await new Promise((r) => setTimeout(r, 20));
    const before = reads;
    l.notify(3n); // nothing stored past 3, and 3 went out: no read
    expect(reads).toBe(before);
    l.notify(4n); // a result 4 may be stored and was not sent: read
    await waitFor(() => reads > before);
    l.notify(); // no bound given: read, as before
    await waitFor(() => reads > before + 1);
    expect(gw.got.map((r) => r.seq)).toEqual(['1', '2', '3']);
  });

  it('sends nothing to a listener that cannot prove the gateway\'s link key', async () => {
    const impostor = await listener(generateEd25519().privateKey);
    const { logs } = link(impostor.url);
    await waitFor(() => logs.some((l) => l.includes('REFUSING the results listener')));
    await new Promise((r) => setTimeout(r, 200));
    expect(impostor.admitted.length).toBeGreaterThan(0); // it saw the node's proof...
    expect(impostor.got).toEqual([]); // ...but no result
    expect(impostor.capacity).toEqual([]);
    expect(logs.find((l) => l.includes('REFUSING'))).toMatch(/UNKNOWN_KEY/);
  });
});
