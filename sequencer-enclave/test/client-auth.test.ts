// Mutual authentication at the sequencer: besides the client checking the enclave's quote, every
// client must prove its link key (the gateway to submit, node k to read feed k) before anything else.
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { generateEd25519 } from '@tenebra/seal';
import { LinkAuthError, SequencerClient, SequencerFeed } from '@tenebra/wire';
import { expectedMeasurement, startSequencer, type RunningSequencer } from '../src/index';
import { cleanupDirs, fixture, memoryLog, opaqueOp, rawClient, until, type Fixture } from './helpers';

afterAll(cleanupDirs);

/** A sequencer whose log lines are kept, so tests can check that refusals are logged with the reason. */
async function start(f: Fixture): Promise<{ s: RunningSequencer; logs: string[] }> {
  const logs: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(line) });
  return { s: await startSequencer(f.config, f.platform.privateKey, log), logs };
}

const refusals = (logs: string[]) => logs.filter((l) => l.includes('client link refused')).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('sequencer client authentication', () => {
  it('refuses forged proofs: unknown key, bad signature, replayed challenge, wrong purpose, none at all', async () => {
    const f = fixture(5);
    const { s, logs } = await start(f);
    const node2 = { role: 'node' as const, id: 2, privateKey: f.nodeLinks[1]!.privateKey };
    const expectRefused = async (reply: Record<string, unknown>, c: Awaited<ReturnType<typeof rawClient>>, code: string) => {
      expect(reply).toMatchObject({ t: 'auth_refused', code });
      expect((await c.closed).code).toBe(1008);
    };

    // An unknown key claiming to be node 2.
    let c = await rawClient(s.url);
    await expectRefused(await c.auth({ ...node2, privateKey: generateEd25519().privateKey }, 'feed'), c, 'UNKNOWN_KEY');
    // Node 3's genuine key claiming to be node 2.
    c = await rawClient(s.url);
    await expectRefused(await c.auth({ ...node2, privateKey: f.nodeLinks[2]!.privateKey }, 'feed'), c, 'UNKNOWN_KEY');
    // Node 2's public key with a signature that does not verify.
    c = await rawClient(s.url);
    const flip = (sig: string) => (sig[0] === '0' ? '1' : '0') + sig.slice(1);
    await expectRefused(await c.auth(node2, 'feed', (fr) => ({ ...fr, sig: flip(fr.sig as string) })), c, 'BAD_SIGNATURE');
    // A genuine proof captured from one connection, replayed on another.
    const victim = await rawClient(s.url);
    const captured = await (async () => {
      let frame: Record<string, unknown> = {};
      await victim.auth(node2, 'feed', (fr) => (frame = fr));
      return frame;
    })();
    c = await rawClient(s.url);
    await expectRefused(await c.request(captured), c, 'REPLAYED_CHALLENGE');
    // ...and a second proof on an already authenticated connection.
    await expectRefused(await victim.request(captured), victim, 'REPLAYED_CHALLENGE');
    // Signed for another link: node 2's results hello, or the gateway asking for a feed.
    c = await rawClient(s.url);
    await expectRefused(await c.auth(node2, 'results'), c, 'WRONG_PURPOSE');
    c = await rawClient(s.url);
    await expectRefused(await c.auth({ role: 'gateway', id: 0, privateKey: f.gatewayLink.privateKey }, 'feed'), c, 'WRONG_PURPOSE');
    // No proof at all: a submit or a feed request is refused, and nothing is journaled or sent.
    c = await rawClient(s.url);
    await expectRefused(await c.request({ t: 'submit', rid: 'forged', op: opaqueOp(5, 1) }), c, 'AUTH_REQUIRED');
    c = await rawClient(s.url);
    await expectRefused(await c.request({ t: 'feed', node: 1, from_seq: '1' }), c, 'AUTH_REQUIRED');
    expect(s.sequencer.lastSeq).toBe(0n);

    // Each refusal is logged with its reason and the remote address.
    const logged = refusals(logs);
    expect(logged.map((l) => l.code)).toEqual([
      'UNKNOWN_KEY', 'UNKNOWN_KEY', 'BAD_SIGNATURE', 'REPLAYED_CHALLENGE', 'REPLAYED_CHALLENGE', 'WRONG_PURPOSE', 'WRONG_PURPOSE',
      'AUTH_REQUIRED', 'AUTH_REQUIRED',
    ]);
    for (const l of logged) {
      expect(l.peer).toMatch(/^(::ffff:)?127\.0\.0\.1:\d+$/);
      expect(typeof l.reason).toBe('string');
    }
    expect(String(logged[1]!.reason)).toMatch(/it is node:3's/);
    await s.close();
  });

  it('lets each identity do only its own job', async () => {
    const f = fixture(5);
    const { s } = await start(f);
    // A node may not submit...
    let c = await rawClient(s.url);
    expect(await c.auth({ role: 'node', id: 2, privateKey: f.nodeLinks[1]!.privateKey }, 'feed')).toEqual({ t: 'auth_ok', role: 'node', id: 2 });
    expect(await c.request({ t: 'submit', rid: 'x', op: opaqueOp(5, 1) })).toMatchObject({ t: 'auth_refused', code: 'NOT_ALLOWED' });
    // ...nor read another node's feed...
    c = await rawClient(s.url);
    await c.auth({ role: 'node', id: 2, privateKey: f.nodeLinks[1]!.privateKey }, 'feed');
    expect(await c.request({ t: 'feed', node: 3, from_seq: '1' })).toMatchObject({ t: 'auth_refused', code: 'NOT_ALLOWED' });
    // ...and the gateway may not read any feed.
    c = await rawClient(s.url);
    await c.auth({ role: 'gateway', id: 0, privateKey: f.gatewayLink.privateKey }, 'submit');
    expect(await c.request({ t: 'feed', node: 1, from_seq: '1' })).toMatchObject({ t: 'auth_refused', code: 'NOT_ALLOWED' });
    // ...nor report the committee's progress (it decides where jobs end).
    c = await rawClient(s.url);
    await c.auth({ role: 'gateway', id: 0, privateKey: f.gatewayLink.privateKey }, 'submit');
    expect(await c.request({ t: 'progress', taken: '5' })).toMatchObject({ t: 'auth_refused', code: 'NOT_ALLOWED' });
    expect(s.sequencer.jobStats.committeeTaken).toBe(0n);
    // Once refused, nothing more is taken from the connection, not even from an authenticated one.
    c = await rawClient(s.url);
    const gatewayProof = await (async () => {
      let frame: Record<string, unknown> = {};
      await c.auth({ role: 'gateway', id: 0, privateKey: f.gatewayLink.privateKey }, 'submit', (fr) => (frame = fr));
      return frame;
    })();
    c.ws.send(JSON.stringify(gatewayProof)); // a second proof: refused...
    c.ws.send(JSON.stringify({ t: 'submit', rid: 'after-refusal', op: opaqueOp(5, 1) })); // ...so this is dropped
    expect((await c.closed).code).toBe(1008);
    expect(c.inbox.map((x) => x.t)).toEqual(['quote', 'auth_challenge', 'auth_ok', 'auth_refused']);
    expect(s.sequencer.lastSeq).toBe(0n);
    await s.close();
  });

  it('a newer authenticated session of a node replaces the older one', async () => {
    const f = fixture(5);
    const { s, logs } = await start(f);
    const node1 = { role: 'node' as const, id: 1, privateKey: f.nodeLinks[0]!.privateKey };
    const old = await rawClient(s.url);
    await old.auth(node1, 'feed');
    const fresh = await rawClient(s.url);
    expect(await fresh.auth(node1, 'feed')).toMatchObject({ t: 'auth_ok' });
    expect(await old.closed).toEqual({ code: 4001, reason: 'superseded by a newer authenticated session' });
    expect(logs.some((l) => l.includes('its older one is closed'))).toBe(true);
    fresh.ws.close();
    await s.close();
  });

  it('the real clients authenticate with the right key and are refused, typed, with a wrong one', async () => {
    const f = fixture(5);
    const { s, logs } = await start(f);
    const opts = { url: s.url, platformPublicKey: f.platform.publicKey, expectedMeasurement: expectedMeasurement(f.config), backoffMaxMs: 200 };

    const gw = new SequencerClient();
    await gw.connect({ ...opts, authKey: f.gatewayLink.privateKey, log: memoryLog() });
    const got: string[] = [];
    const feed = new SequencerFeed();
    await feed.connect({ ...opts, authKey: f.nodeLinks[4]!.privateKey, node: 5, fromSeq: 1n, log: memoryLog(), onOp: (op) => void got.push(op.seq) });
    expect((await gw.submit(opaqueOp(5, 1))).seq).toBe(1n);
    await until(() => got.length === 1, 5_000, 'the op on the feed');

    // A gateway with the wrong link key: the first connect fails with a typed error and a log line.
    const log = memoryLog();
    const impostor = new SequencerClient();
    const err = await impostor.connect({ ...opts, authKey: generateEd25519().privateKey, log }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LinkAuthError);
    expect(err).toMatchObject({ code: 'UNKNOWN_KEY' });
    expect(log.lines.some((l) => l.startsWith('error') && /REFUSED by the sequencer/.test(l))).toBe(true);
    await expect(impostor.submit(opaqueOp(5, 2))).rejects.toThrow(/not connected/);
    // A feed proving node 1's key while asking as node 2.
    const wrongFeed = new SequencerFeed();
    const ferr = await wrongFeed
      .connect({ ...opts, authKey: f.nodeLinks[0]!.privateKey, node: 2, fromSeq: 1n, log: memoryLog(), onOp: () => expect.unreachable() })
      .catch((e: unknown) => e);
    expect(ferr).toMatchObject({ name: 'LinkAuthError', code: 'UNKNOWN_KEY' });
    expect(s.sequencer.lastSeq).toBe(1n);
    expect(refusals(logs).map((l) => l.code)).toEqual(['UNKNOWN_KEY', 'UNKNOWN_KEY']);

    await Promise.all([gw.close(), feed.close()]);
    await s.close();
  });
});
