// The clients against a scripted fake sequencer: reconnect, re-send with the same rid, gap
// handling, backpressure, and a clean close. (End-to-end runs against the real sequencer live in
// sequencer-enclave/test.)
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { generateEd25519, makeQuote, proveEnclaveKey } from '@tenebra/seal';
import { SequencerClient, SequencerFeed, type SequencedFrame, type WireLogger } from '../src/index';

const platform = generateEd25519();
const measurement = 'cd'.repeat(32);
const quiet: WireLogger = { info() {}, warn() {}, error() {} };

interface Fake {
  url: string;
  connections: number;
  close(): Promise<void>;
}

/** A fake attested sequencer; `onFrame` scripts its behaviour after the handshake. */
async function fakeSequencer(onFrame: (ws: WebSocket, frame: Record<string, unknown>, conn: number) => void): Promise<Fake> {
  const enclave = generateEd25519();
  const quote = makeQuote(platform.privateKey, measurement, enclave.publicKey);
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  const fake: Fake = {
    url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`,
    connections: 0,
    close: () => {
      for (const c of wss.clients) c.terminate();
      return new Promise<void>((r) => wss.close(() => r()));
    },
  };
  wss.on('connection', (ws) => {
    const conn = ++fake.connections;
    ws.send(JSON.stringify({ t: 'quote', quote }));
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as Record<string, unknown>;
      if (m.t === 'challenge') {
        ws.send(JSON.stringify({ t: 'proof', nonce: m.nonce, sig: proveEnclaveKey(enclave.privateKey, m.nonce as string) }));
      } else onFrame(ws, m, conn);
    });
  });
  return fake;
}

const linkKey = generateEd25519().privateKey;
const opts = (url: string) => ({ url, platformPublicKey: platform.publicKey, expectedMeasurement: measurement, authKey: linkKey, log: quiet, backoffInitialMs: 10, backoffMaxMs: 50 });
const op = { kind: 'place', symbol: 'X', pub: {}, sealed: ['AAAA'] };
const opFrame = (seq: number): SequencedFrame => ({ t: 'op', seq: String(seq), ts_ns: String(seq), kind: 'place', symbol: 'X', pub: {}, sealed: 'AAAA', batch_end: true });

let fake: Fake | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

describe('SequencerClient', () => {
  it('re-sends un-acked ops with the same rid after a reconnect, in order', async () => {
    const seen: { conn: number; rid: string }[] = [];
    fake = await fakeSequencer((ws, m, conn) => {
      seen.push({ conn, rid: m.rid as string });
      // First connection: swallow both submits and drop the link (the acks are "lost").
      if (conn === 1) {
        if (seen.length === 2) ws.terminate();
        return;
      }
      ws.send(JSON.stringify({ t: 'ack', rid: m.rid, seq: String(seen.length - 2), ts_ns: '5' }));
    });
    const c = new SequencerClient();
    await c.connect(opts(fake.url));
    const [a, b] = await Promise.all([c.submit(op, { rid: 'a' }), c.submit(op, { rid: 'b' })]);
    expect(seen).toEqual([{ conn: 1, rid: 'a' }, { conn: 1, rid: 'b' }, { conn: 2, rid: 'a' }, { conn: 2, rid: 'b' }]);
    expect([a.seq, b.seq]).toEqual([1n, 2n]);
    expect(c.pendingCount).toBe(0);
    await c.close();
  });

  it('bounds its pending queue and rejects pending ops on close', async () => {
    fake = await fakeSequencer(() => {}); // never acks
    const c = new SequencerClient();
    await c.connect({ ...opts(fake.url), maxPending: 2 });
    const p1 = c.submit(op);
    const p2 = c.submit(op);
    await expect(c.submit(op)).rejects.toThrow(/already await/);
    await c.close();
    await expect(p1).rejects.toThrow(/closed before the ack/);
    await expect(p2).rejects.toThrow(/closed before the ack/);
  });

  it('gives up a first connect to an unreachable sequencer after its timeout, and stops retrying', async () => {
    fake = await fakeSequencer(() => {});
    const url = fake.url;
    await fake.close();
    fake = null;
    const c = new SequencerClient();
    await expect(c.connect({ ...opts(url), firstConnectTimeoutMs: 300 })).rejects.toThrow(/cannot reach the sequencer/);
  });
});

describe('SequencerFeed', () => {
  it('drops a connection that skips a seq and re-requests from the first missing one', async () => {
    const hellos: string[] = [];
    fake = await fakeSequencer((ws, m, conn) => {
      hellos.push(m.from_seq as string);
      const from = Number(m.from_seq);
      // Connection 1 sends 1, 2, then 4 (a gap); connection 2 behaves.
      const seqs = conn === 1 ? [1, 2, 4, 5] : [from, from + 1, from + 2, from + 3].filter((s) => s <= 6);
      for (const s of seqs) ws.send(JSON.stringify(opFrame(s)));
    });
    const got: number[] = [];
    const feed = new SequencerFeed();
    await feed.connect({ ...opts(fake.url), node: 1, fromSeq: 1n, onOp: (f) => void got.push(Number(f.seq)) });
    const end = Date.now() + 5000;
    while (got.length < 6 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(got).toEqual([1, 2, 3, 4, 5, 6]);
    expect(hellos).toEqual(['1', '3']);
    expect(feed.nextSeq).toBe(7n);
    await feed.close();
  });

  it('awaits onOp before delivering the next op, and stops (never skips) when onOp fails', async () => {
    const hellos: string[] = [];
    fake = await fakeSequencer((ws, m) => {
      hellos.push(m.from_seq as string);
      for (let s = Number(m.from_seq); s <= 50; s++) ws.send(JSON.stringify(opFrame(s)));
    });
    let active = 0;
    let maxActive = 0;
    const got: number[] = [];
    let failedAt: string | null = null;
    const feed = new SequencerFeed();
    await feed.connect({
      ...opts(fake.url), node: 2, fromSeq: 1n, highWater: 4,
      onOp: async (f) => {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise((r) => setTimeout(r, 1));
        active--;
        if (f.seq === '30') throw new Error('boom');
        got.push(Number(f.seq));
      },
      onError: (_e, f) => (failedAt = f.seq),
    });
    const end = Date.now() + 5000;
    while (failedAt === null && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(maxActive).toBe(1);
    expect(got).toEqual(Array.from({ length: 29 }, (_, i) => i + 1));
    expect(failedAt).toBe('30');
    expect(feed.nextSeq).toBe(30n);
    // 50 frames at once overflow a 4-frame buffer: the tail was dropped and fetched again, in order.
    expect(hellos.length).toBeGreaterThan(1);
    await feed.close();
  });

  it('close() stops reconnecting', async () => {
    fake = await fakeSequencer((ws) => ws.terminate()); // drops every feed request
    const feed = new SequencerFeed();
    await feed.connect({ ...opts(fake.url), node: 1, fromSeq: 1n, onOp: () => {} });
    while (fake.connections < 3) await new Promise((r) => setTimeout(r, 10));
    await feed.close();
    const n = fake.connections;
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.connections).toBe(n);
  });
});
