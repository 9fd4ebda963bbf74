// End-to-end tests of the sequencer in-process, with the real clients as fake gateways and nodes.
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { unseal, AttestationError } from '@tenebra/seal';
import {
  JOB_END_KIND, SequencerClient, SequencerFeed, SequencerNackError, type SequencedFrame, type SubmitResult,
} from '@tenebra/wire';
import { decodeRecord, expectedMeasurement, startSequencer, type RunningSequencer } from '../src/index';
import { cleanupDirs, fixture, freePort, memoryLog, opaqueOp, rawClient, sealedOp, silent, until, type Fixture } from './helpers';

afterAll(cleanupDirs);

/** Options of a client proving the gateway's link key (feedNode swaps in the node's). */
const clientOpts = (f: Fixture, url: string) => ({
  url, platformPublicKey: f.platform.publicKey, expectedMeasurement: expectedMeasurement(f.config), log: memoryLog(),
  backoffMaxMs: 200, authKey: f.gatewayLink.privateKey,
});

async function start(f: Fixture): Promise<RunningSequencer> {
  return startSequencer(f.config, f.platform.privateKey, silent);
}

/** A fake node: collects every op it is fed, in delivery order. */
async function feedNode(
  f: Fixture, url: string, node: number,
  opts: { fromSeq?: bigint; highWater?: number; slow?: boolean; gate?: Promise<unknown> } = {},
) {
  const got: SequencedFrame[] = [];
  const feed = new SequencerFeed();
  let i = 0;
  await feed.connect({
    ...clientOpts(f, url), authKey: f.nodeLinks[node - 1]!.privateKey, node, fromSeq: opts.fromSeq ?? 1n, highWater: opts.highWater,
    onOp: async (op) => {
      if (opts.gate) await opts.gate;
      got.push(op);
      if (opts.slow && ++i % 97 === 0) await new Promise((r) => setTimeout(r, 5));
    },
  });
  return { feed, got };
}

describe('sequencer enclave', () => {
  it('acks only journaled ops; gapless order under concurrent submitters; feeds every node in order', async () => {
    const f = fixture(5);
    f.config.jobBoundaries = 'intake';
    const s = await start(f);
    const nodes = await Promise.all([1, 2, 3, 4, 5].map((i) => feedNode(f, s.url, i)));
    const clients = await Promise.all(
      [0, 1, 2, 3].map(async () => {
        const c = new SequencerClient();
        await c.connect(clientOpts(f, s.url));
        return c;
      }),
    );
    const PER = 400;
    const results: SubmitResult[][] = await Promise.all(
      clients.map((c, ci) =>
        Promise.all(
          Array.from({ length: PER }, (_, k) =>
            c.submit(opaqueOp(5, ci * PER + k)).then((r) => {
              // At the moment the ack arrives the op must already be readable as a durable record.
              const bytes = s.sequencer.journal.get(r.seq);
              expect(bytes).toBeDefined();
              expect(decodeRecord(bytes!, r.seq).rid).toBe(r.rid);
              return r;
            }),
          ),
        ),
      ),
    );
    const all = results.flat().sort((a, b) => (a.seq < b.seq ? -1 : 1));
    expect(all.map((r) => r.seq)).toEqual(Array.from({ length: 4 * PER }, (_, i) => BigInt(i + 1)));
    for (let i = 1; i < all.length; i++) expect(all[i]!.tsNs > all[i - 1]!.tsNs).toBe(true);
    // Each gateway's ops keep their submit order.
    for (const rs of results) for (let i = 1; i < rs.length; i++) expect(rs[i]!.seq > rs[i - 1]!.seq).toBe(true);

    await until(() => nodes.every((n) => n.got.length === 4 * PER), 20_000, 'feeds to catch up');
    for (const [idx, n] of nodes.entries()) {
      expect(n.got.map((o) => BigInt(o.seq))).toEqual(all.map((r) => r.seq));
      for (const o of n.got.slice(0, 50)) {
        const rec = decodeRecord(s.sequencer.journal.get(BigInt(o.seq))!, BigInt(o.seq));
        expect(o.sealed).toBe(rec.op.sealed[idx]);
        expect(o.ts_ns).toBe(rec.tsNs.toString());
        expect(o.batch_end).toBe(rec.batchEnd);
      }
      // 'intake' job boundaries: every intake group ends a job
      expect(n.got[n.got.length - 1]!.batch_end).toBe(true);
    }
    // ...and a node's progress report journals nothing
    nodes[0]!.feed.reportTaken(BigInt(4 * PER));
    await until(() => s.sequencer.jobStats.committeeTaken === BigInt(4 * PER), 5_000, 'the report');
    expect(s.sequencer.jobStats.jobEndRecords).toBe(0);
    expect(s.sequencer.lastSeq).toBe(BigInt(4 * PER));
    await Promise.all([...clients.map((c) => c.close()), ...nodes.map((n) => n.feed.close())]);
    await s.close();
  });

  it('ends jobs where the committee has caught up: ops gather while it is busy, a job-end record closes them', async () => {
    const f = fixture(3, await freePort()); // a fixed port: the node's feed reconnects after the restart
    // no jobBoundaries in the config: the default, 'progress' (DEFAULT_JOB_BOUNDARIES)
    expect(f.config.jobBoundaries).toBeUndefined();
    let s = await start(f);
    const c = new SequencerClient();
    await c.connect(clientOpts(f, s.url));
    const node = await feedNode(f, s.url, 1);
    const frameAt = async (seq: bigint): Promise<SequencedFrame> => {
      await until(() => node.got.some((o) => o.seq === String(seq)), 5_000, `seq ${seq} fed`);
      return node.got.find((o) => o.seq === String(seq))!;
    };
    const submit = async (tag: number) => (await c.submit(opaqueOp(3, tag))).seq;
    // an idle committee (nothing closed yet): the op ends its own job
    expect((await frameAt(await submit(1))).batch_end).toBe(true);
    // the committee has not taken job 1: later ops stay open however many arrive
    expect(await submit(2)).toBe(2n);
    expect(await submit(3)).toBe(3n);
    expect((await frameAt(2n)).batch_end).toBe(false);
    expect((await frameAt(3n)).batch_end).toBe(false);
    expect(s.sequencer.jobStats.jobEndRecords).toBe(0);
    // it takes job 1: the open ops 2-3 become one job, closed by a record of the sequencer's own
    node.feed.reportTaken(1n);
    expect(await frameAt(4n)).toMatchObject({ kind: JOB_END_KIND, sealed: '', batch_end: true, symbol: '', pub: {} });
    expect(s.sequencer.jobStats).toMatchObject({ lastJobEnd: 4n, committeeTaken: 1n, jobEndRecords: 1 });
    expect(await submit(5)).toBe(5n); // the ack seqs skip the record
    expect((await frameAt(5n)).batch_end).toBe(false);
    node.feed.reportTaken(4n);
    expect((await frameAt(6n)).kind).toBe(JOB_END_KIND);
    // caught up with nothing open: no record; the next op ends its own job again
    node.feed.reportTaken(6n);
    await until(() => s.sequencer.jobStats.committeeTaken === 6n, 5_000, 'report of 6');
    expect(await submit(7)).toBe(7n);
    expect((await frameAt(7n)).batch_end).toBe(true);
    expect(s.sequencer.lastSeq).toBe(7n);
    // a stale or repeated report changes nothing
    node.feed.reportTaken(3n);
    expect(s.sequencer.jobStats.jobEndRecords).toBe(2);

    // Restart: the last boundary comes back from the journal, the committee's progress from the
    // nodes' reports (a feed re-sends its last one on reconnect); job-end records are not rids.
    await c.close();
    await s.close();
    s = await start(f);
    expect(s.sequencer.jobStats).toMatchObject({ lastJobEnd: 7n, committeeTaken: 0n });
    node.feed.reportTaken(7n);
    await until(() => s.sequencer.jobStats.committeeTaken === 7n, 10_000, 'the report after the feed reconnected');
    const c2 = new SequencerClient();
    await c2.connect(clientOpts(f, s.url));
    const r8 = await c2.submit(opaqueOp(3, 8));
    expect(r8.seq).toBe(8n);
    expect((await frameAt(8n)).batch_end).toBe(true);
    expect(decodeRecord(s.sequencer.journal.get(4n)!, 4n)).toMatchObject({ rid: '', batchEnd: true, op: { kind: JOB_END_KIND } });
    await c2.close();
    await node.feed.close();
    await s.close();
  });

  it('dedupes by rid, also across a restart, and refuses a reused rid with another op', async () => {
    const f = fixture(3);
    let s = await start(f);
    let c = new SequencerClient();
    await c.connect(clientOpts(f, s.url));
    const first = await c.submit(opaqueOp(3, 1), { rid: 'order-A' });
    await c.submit(opaqueOp(3, 2), { rid: 'order-B' });
    const again = await c.submit(opaqueOp(3, 1), { rid: 'order-A' });
    expect(again).toEqual(first);
    await c.close();
    await s.close();

    s = await start(f); // same dataDir: the dedupe window is rebuilt from the journal
    c = new SequencerClient();
    await c.connect(clientOpts(f, s.url));
    expect(await c.submit(opaqueOp(3, 1), { rid: 'order-A' })).toEqual(first);
    await expect(c.submit(opaqueOp(3, 99), { rid: 'order-A' })).rejects.toThrow(/RID_CONFLICT/);
    const next = await c.submit(opaqueOp(3, 3), { rid: 'order-C' });
    expect(next.seq).toBe(3n);
    expect(next.tsNs > first.tsNs).toBe(true);
    expect(s.sequencer.lastSeq).toBe(3n);
    await c.close();
    await s.close();
  });

  it('nacks malformed or refused frames and keeps the connection usable', async () => {
    const f = fixture(5);
    const s = await start(f);
    const gw = await rawClient(s.url);
    const { ws, inbox } = gw;
    expect(inbox.map((x) => x.t)).toEqual(['quote', 'auth_challenge']);
    expect(await gw.auth({ role: 'gateway', id: 0, privateKey: f.gatewayLink.privateKey }, 'submit')).toMatchObject({ t: 'auth_ok' });
    const send = async (data: string | Buffer, expectCode: string, rid = '') => {
      const before = inbox.length;
      ws.send(data);
      await until(() => inbox.length > before, 5_000, `reply to ${String(data).slice(0, 40)}`);
      expect(inbox[before]).toMatchObject({ t: 'nack', code: expectCode, rid });
    };
    const op = opaqueOp(5, 1);
    await send('not json', 'BAD_FRAME');
    await send(Buffer.from([1, 2, 3]), 'BAD_FRAME');
    await send(JSON.stringify({ t: 'submit', rid: 'r1', op: { ...op, sealed: op.sealed.slice(1) } }), 'WRONG_SHARE_COUNT', 'r1');
    await send(JSON.stringify({ t: 'submit', rid: 'r2', op: { ...op, kind: 'teleport' } }), 'UNKNOWN_KIND', 'r2');
    await send(JSON.stringify({ t: 'submit', rid: 'r3', op: { ...op, sealed: ['!!', ...op.sealed.slice(1)] } }), 'BAD_FRAME', 'r3');
    await send(JSON.stringify({ t: 'submit', rid: 'r4', op: { ...op, symbol: '' } }), 'BAD_FRAME', 'r4');
    const big = 'A'.repeat(20_000);
    await send(JSON.stringify({ t: 'submit', rid: 'r5', op: { ...op, sealed: [big, ...op.sealed.slice(1)] } }), 'SEALED_TOO_LARGE', 'r5');
    await send(JSON.stringify({ t: 'submit', rid: 'r6', op: { ...op, sealed: Array(5).fill('A'.repeat(60_000)) } }), 'FRAME_TOO_LARGE', 'r6');
    await send(JSON.stringify({ t: 'ack', rid: 'r7', seq: '1', ts_ns: '1' }), 'BAD_FRAME', 'r7');
    // Still usable: a valid submit is acked, and nothing refused was journaled.
    const before = inbox.length;
    ws.send(JSON.stringify({ t: 'submit', rid: 'ok', op }));
    await until(() => inbox.length > before, 5_000, 'ack');
    expect(inbox[before]).toMatchObject({ t: 'ack', rid: 'ok', seq: '1' });
    expect(s.sequencer.lastSeq).toBe(1n);
    ws.close();
    // A node's feed request beyond the journal is nacked too, and its connection stays usable.
    const node = await rawClient(s.url);
    await node.auth({ role: 'node', id: 1, privateKey: f.nodeLinks[0]!.privateKey }, 'feed');
    const before2 = node.inbox.length;
    node.ws.send(JSON.stringify({ t: 'feed', node: 1, from_seq: '5' }));
    await until(() => node.inbox.length > before2, 5_000, 'nack');
    expect(node.inbox[before2]).toMatchObject({ t: 'nack', code: 'FROM_SEQ_AHEAD' });
    node.ws.send(JSON.stringify({ t: 'feed', node: 1, from_seq: '1' }));
    await until(() => node.inbox.some((x) => x.t === 'op'), 5_000, 'op');
    node.ws.close();
    await s.close();
  });

  it('serves a slow node from the journal without skipping or reordering', async () => {
    const f = fixture(5);
    const s = await start(f);
    const c = new SequencerClient();
    await c.connect(clientOpts(f, s.url));
    // Big entries so the sequencer's socket buffer passes its high-water mark while the node is slow.
    const blob = Buffer.alloc(3000, 7).toString('base64');
    const N = 1500;
    // This node stalls on its first op until every op is acked: ~6 MB pile up towards it.
    let openGate!: () => void;
    const gate = new Promise<void>((r) => (openGate = r));
    const live = await feedNode(f, s.url, 2, { highWater: 8, slow: true, gate });
    await Promise.all(
      Array.from({ length: N }, (_, i) => c.submit({ kind: 'place', symbol: 'S', pub: { i }, sealed: Array(5).fill(blob) })),
    );
    await until(() => s.feedStats().some((x) => x.node === 2 && x.drainWaits > 0), 10_000, 'the sequencer to hit the high-water mark');
    openGate();
    // A node that joins late starts from the middle: pure journal replay, then live.
    const late = await feedNode(f, s.url, 4, { fromSeq: 700n });
    await c.submit(opaqueOp(5, 1));
    await until(() => live.got.length === N + 1 && late.got.length === N + 1 - 699, 30_000, 'slow feeds');
    expect(live.got.map((o) => Number(o.seq))).toEqual(Array.from({ length: N + 1 }, (_, i) => i + 1));
    expect(late.got.map((o) => Number(o.seq))).toEqual(Array.from({ length: N + 1 - 699 }, (_, i) => i + 700));
    expect(live.got.map((o) => o.pub.i).slice(0, 3)).toEqual([0, 1, 2].map((i) => live.got[i]!.pub.i));
    await Promise.all([c.close(), live.feed.close(), late.feed.close()]);
    await s.close();
  });

  it('keeps privacy: known numbers never appear in the journal files or in frames it sends', async () => {
    const f = fixture(5);
    const s = await start(f);
    const { readdirSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    // Distinctive secrets: prices and quantities a gateway would seal as shares for the nodes.
    const secrets = [987654321987n, 123456789123n, 555444333222111n, 31415926535n];
    const be16 = (v: bigint) => Buffer.from(v.toString(16).padStart(32, '0'), 'hex');
    const plaintext = (node: number, v: bigint) =>
      Buffer.concat([be16(v), be16(v * 3n + BigInt(node)), Buffer.from(`price=${v};qty=${v + 1n};node=${node}`)]);

    // Record every raw frame the sequencer sends to a gateway and to a node.
    const tapClient = await rawClient(s.url);
    const raw = tapClient.raw;
    const tap = tapClient.ws;
    expect(await tapClient.auth({ role: 'node', id: 3, privateKey: f.nodeLinks[2]!.privateKey }, 'feed')).toMatchObject({ t: 'auth_ok' });
    tap.send(JSON.stringify({ t: 'feed', node: 3, from_seq: '1' }));
    const c = new SequencerClient();
    await c.connect(clientOpts(f, s.url));
    const nodes = await Promise.all([1, 5].map((i) => feedNode(f, s.url, i)));
    for (const v of secrets) {
      const r = await c.submit(sealedOp(f.nodes, (node) => plaintext(node, v)));
      raw.push(JSON.stringify({ t: 'ack', rid: r.rid, seq: String(r.seq), ts_ns: String(r.tsNs) }));
    }
    // quote, auth_challenge, auth_ok, one op per secret, and the acks pushed above
    await until(() => nodes.every((n) => n.got.length === secrets.length) && raw.length >= 2 * secrets.length + 3, 10_000, 'feeds');
    // The nodes can read their own entry (so the test really sealed the secrets)...
    for (const [k, n] of [1, 5].entries()) {
      const pt = Buffer.from(unseal(f.nodes[n - 1]!.privateKey, Buffer.from(nodes[k]!.got[0]!.sealed, 'base64')));
      expect(pt.toString()).toContain(`price=${secrets[0]};`);
      expect(pt.toString()).toContain(`node=${n}`);
    }
    await c.close();
    await Promise.all(nodes.map((n) => n.feed.close()));
    tap.close();
    await s.close();
    // ...but the sequencer's storage and its outgoing frames hold none of them.
    const hay = [
      ...readdirSync(f.config.dataDir).map((file) => readFileSync(join(f.config.dataDir, file))),
      Buffer.from(raw.join('\n')),
      Buffer.from(nodes.flatMap((n) => n.got.map((o) => JSON.stringify(o))).join('\n')),
    ];
    expect(hay[0]!.length).toBeGreaterThan(0);
    for (const v of secrets) {
      for (const h of hay) {
        expect(h.includes(Buffer.from(v.toString()))).toBe(false);
        expect(h.includes(be16(v))).toBe(false);
        expect(h.includes(be16(v).subarray(8))).toBe(false); // the low 8 bytes alone
      }
    }
    // Positive control: the same search does find a value that the journal does hold in plaintext.
    expect(hay[0]!.includes(Buffer.from('ETH-PERP')) || hay[0]!.includes(Buffer.from('BTC-PERP'))).toBe(true);
  });
});

describe('attestation', () => {
  it('both clients refuse a quote signed by the wrong platform key or with a changed measurement', async () => {
    const f = fixture(5);
    const s = await start(f);
    const impostorPlatform = fixture(5).platform;
    const cases = [
      { platformPublicKey: impostorPlatform.publicKey, expectedMeasurement: expectedMeasurement(f.config), msg: /signature does not verify/ },
      { platformPublicKey: f.platform.publicKey, expectedMeasurement: expectedMeasurement({ ...f.config, n: 4 }), msg: /measurement mismatch/ },
    ];
    for (const k of cases) {
      const log = memoryLog();
      const c = new SequencerClient();
      const err = await c.connect({ url: s.url, ...k, authKey: f.gatewayLink.privateKey, log }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AttestationError);
      expect(String(err)).toMatch(k.msg);
      expect(log.lines.some((l) => l.startsWith('error') && /REFUSING the sequencer/.test(l))).toBe(true);
      await expect(c.submit(opaqueOp(5, 1))).rejects.toThrow(/not connected/);

      const feedLog = memoryLog();
      const feed = new SequencerFeed();
      const ferr = await feed
        .connect({ url: s.url, ...k, authKey: f.nodeLinks[0]!.privateKey, log: feedLog, node: 1, fromSeq: 1n, onOp: () => expect.unreachable() })
        .catch((e: unknown) => e);
      expect(ferr).toBeInstanceOf(AttestationError);
      expect(String(ferr)).toMatch(k.msg);
      expect(feedLog.lines.some((l) => /REFUSING the sequencer/.test(l))).toBe(true);
    }
    expect(s.sequencer.lastSeq).toBe(0n);
    await s.close();
  });

  it('refuses an impostor that replays a genuine quote without the enclave key', async () => {
    const f = fixture(5);
    const s = await start(f);
    const { WebSocketServer } = await import('ws');
    const { generateEd25519, proveEnclaveKey } = await import('@tenebra/seal');
    const fake = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((r) => fake.once('listening', r));
    const impostorKey = generateEd25519().privateKey;
    fake.on('connection', (ws) => {
      ws.send(JSON.stringify({ t: 'quote', quote: s.quote })); // copied from the real enclave
      ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as { t: string; nonce: string };
        if (m.t === 'challenge') ws.send(JSON.stringify({ t: 'proof', nonce: m.nonce, sig: proveEnclaveKey(impostorKey, m.nonce) }));
      });
    });
    const port = (fake.address() as { port: number }).port;
    const c = new SequencerClient();
    const err = await c
      .connect({ ...clientOpts(f, `ws://127.0.0.1:${port}`) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AttestationError);
    expect(String(err)).toMatch(/does not hold the quoted enclave key/);
    await new Promise((r) => fake.close(r));
    await s.close();
  });

  it('a nack rejects only its own submit', async () => {
    const f = fixture(2);
    const s = await start(f);
    const c = new SequencerClient();
    await c.connect(clientOpts(f, s.url));
    const bad = c.submit({ ...opaqueOp(2, 1), kind: 'teleport' });
    const good = c.submit(opaqueOp(2, 2));
    await expect(bad).rejects.toBeInstanceOf(SequencerNackError);
    await expect(bad).rejects.toMatchObject({ code: 'UNKNOWN_KIND' });
    expect((await good).seq).toBe(1n);
    await c.close();
    await s.close();
  });
});


