// The sequencer as a real process, killed with SIGKILL mid-stream and restarted on its data dir.
import { afterAll, describe, expect, it } from 'vitest';
import { openJournal } from '@tenebra/journal';
import { SequencerClient, SequencerFeed, type SequencedFrame, type SubmitResult } from '@tenebra/wire';
import { decodeRecord, expectedMeasurement } from '../src/index';
import { cleanupDirs, fixture, freePort, kill9, memoryLog, opaqueOp, spawnSequencer, until } from './helpers';

afterAll(cleanupDirs);

describe('sequencer process crash', () => {
  it('after SIGKILL and restart every acked op is there with its seq, retries are not sequenced twice, feeds resume without gaps', async () => {
    const port = await freePort();
    const f = fixture(5, port);
    let proc = await spawnSequencer(f.configFile);
    const url = `ws://127.0.0.1:${port}`;
    const opts = {
      url, platformPublicKey: f.platform.publicKey, expectedMeasurement: expectedMeasurement(f.config), backoffInitialMs: 20, backoffMaxMs: 200,
    };

    const gw = new SequencerClient();
    const gwLog = memoryLog();
    await gw.connect({ ...opts, authKey: f.gatewayLink.privateKey, log: gwLog });
    const feeds = [1, 4].map(() => ({ feed: new SequencerFeed(), got: [] as SequencedFrame[] }));
    await Promise.all(
      feeds.map((x, k) =>
        x.feed.connect({
          ...opts, log: memoryLog(), node: k === 0 ? 1 : 4, authKey: f.nodeLinks[k === 0 ? 0 : 3]!.privateKey, fromSeq: 1n,
          onOp: (op) => void x.got.push(op),
        }),
      ),
    );

    // Keep 64 submits in flight; stop issuing after TOTAL.
    const TOTAL = 3000;
    const acks = new Map<string, SubmitResult>();
    let issued = 0;
    const submitter = async () => {
      while (issued < TOTAL) {
        const i = issued++;
        const r = await gw.submit(opaqueOp(5, i), { rid: `op-${i}` });
        acks.set(r.rid, r);
      }
    };
    const work = Promise.all(Array.from({ length: 64 }, submitter));

    await until(() => acks.size >= 800, 30_000, '800 acks');
    await kill9(proc.child);
    const ackedBeforeKill = new Map(acks);
    expect(ackedBeforeKill.size).toBeLessThan(TOTAL); // the kill really happened mid-stream
    await until(() => !gw.connected, 5_000, 'client to notice');

    proc = await spawnSequencer(f.configFile); // same dataDir and port; a fresh enclave key
    await work; // every submit resolves: the client re-sent un-acked ops with their rids
    expect(acks.size).toBe(TOTAL);
    for (const [rid, r] of ackedBeforeKill) expect(acks.get(rid)).toEqual(r);
    await until(() => feeds.every((x) => x.got.length >= TOTAL), 30_000, 'feeds to catch up');

    await gw.close();
    await Promise.all(feeds.map((x) => x.feed.close()));
    const exited = new Promise((r) => proc.child.once('exit', r));
    proc.child.kill('SIGTERM');
    await exited;

    // Journal: exactly TOTAL ops, each rid once, at the seq its ack named.
    const j = openJournal(f.config.dataDir);
    expect(j.lastSeq).toBe(BigInt(TOTAL));
    const seen = new Set<string>();
    for await (const e of j.read(1n)) {
      const rec = decodeRecord(e.record, e.seq);
      expect(seen.has(rec.rid)).toBe(false);
      seen.add(rec.rid);
      expect(acks.get(rec.rid)!.seq).toBe(e.seq);
      expect(acks.get(rec.rid)!.tsNs).toBe(rec.tsNs);
    }
    await j.close();
    // Feeds: every seq exactly once, in order, across the crash.
    for (const x of feeds) expect(x.got.map((o) => Number(o.seq))).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1));
    expect(gwLog.lines.some((l) => /connection to the sequencer lost/.test(l))).toBe(true);
  });
});
