// Fuzzing the committee's libp2p links from an unauthenticated peer (issue 25, part 3): a real
// two-party committee on loopback, and seeded fast-check hostile inputs from outside it:
//  - raw TCP to a party's listen port: random bytes; multistream-select headers and protocol
//    choices, garbled or truncated; oversized varint length prefixes; a Noise XX handshake begun
//    with a valid or garbled first message, then a forged third message or an oversized or short
//    Noise length prefix; sent in one to three chunks, then FIN, reset, or held open a while;
//  - a real libp2p node (TCP + Noise + Yamux) with an identity outside the committee, dialling our
//    protocol (and others), and writing frames if it ever got a stream;
//  - the frame decoder every inbound stream runs, with random, oversized and truncated frames in
//    random chunk splits (an inbound stream itself needs a committee key: nobody else can get one).
// Properties: no uncaught exception or unhandled rejection in the process; nothing reaches the
// parties' message handlers but the legitimate messages they send each other (which go on both
// ways throughout); the committee's own link never drops; after the campaign both still exchange.
// TENEBRA_LINK_FUZZ_INPUTS (default 300) and TENEBRA_LINK_FUZZ_SEED (default 25) set the campaign.
// docs/reliability.md, "Fuzzing".
import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { Libp2p } from '@libp2p/interface';
import { tcp } from '@libp2p/tcp';
import { multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import {
  createLibp2pTransport, generateIdentity, TENEBRA_PROTOCOL, type Libp2pTransport, type PeerEntry,
} from '../src/index';
import { FrameDecoder, FrameError, FrameKind, frameHeader, FRAME_HEADER_BYTES } from '../src/framing';
import { freePorts, pattern, waitFor } from './helpers';

const INPUTS = Number(process.env.TENEBRA_LINK_FUZZ_INPUTS ?? 300);
const SEED = Number(process.env.TENEBRA_LINK_FUZZ_SEED ?? 25);
if (!Number.isInteger(INPUTS) || INPUTS < 1) throw new Error('TENEBRA_LINK_FUZZ_INPUTS must be a positive integer');
/** Hostile inputs in flight at once (libp2p admits 10 pending inbound upgrades by default). */
const CONCURRENCY = 4;
/** How long a raw connection that the party did not close is held before we drop it. */
const HOLD_MS = 120;

const started: Libp2pTransport[] = [];
const intruders: Libp2p[] = [];
afterAll(async () => {
  await Promise.all([...started.splice(0).map((t) => t.stop()), ...intruders.splice(0).map((n) => n.stop())]);
});

// ---- inputs ----

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
function varint(n: number): Uint8Array {
  const out: number[] = [];
  let v = n;
  do {
    let b = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) b |= 0x80;
    out.push(b);
  } while (v > 0);
  return Uint8Array.from(out);
}
const concat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(Buffer.concat(parts));
/** A multistream-select message: varint length, text, newline. */
const mss = (s: string): Uint8Array => concat(varint(enc(s).byteLength + 1), enc(s + '\n'));
const u16 = (n: number): Uint8Array => Uint8Array.of((n >> 8) & 0xff, n & 0xff);
// size 'max': lengths spread over 0..max (fast-check's default size keeps arrays to about 10)
const bytes = (max: number, min = 0) => fc.uint8Array({ minLength: min, maxLength: max, size: 'max' });

const protocolChoice = fc.oneof(
  fc.constantFrom('/noise', '/tls/1.0.0', '/yamux/1.0.0', TENEBRA_PROTOCOL, '/multistream/1.0.0', 'ls', 'na', ''),
  fc.string({ maxLength: 40 }),
);
/** The opening a dialler sends: the multistream header (sometimes garbled) and a protocol. */
const opening = fc.oneof(
  { weight: 3, arbitrary: protocolChoice.map((p) => concat(mss('/multistream/1.0.0'), mss(p))) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 30 }), protocolChoice).map(([h, p]) => concat(mss(h), mss(p))) },
  // a length prefix announcing more than will ever come, or an overlong varint
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 64, max: 2 ** 31 }), bytes(32)).map(([n, b]) => concat(varint(n), b)) },
  { weight: 1, arbitrary: bytes(16).map((b) => concat(Uint8Array.from(Array(12).fill(0xff)), b)) },
);
/** After `/noise` is accepted: Noise handshake messages, 2-byte big-endian length then body. */
const noiseMessages = fc.oneof(
  // a well-formed first message (the initiator's ephemeral key), then a forged third
  { weight: 3, arbitrary: fc.tuple(bytes(64, 32), bytes(200)).map(([e, m3]) => concat(u16(e.byteLength), e, u16(m3.byteLength), m3)) },
  // a length prefix and a body that does not match it (short, long or oversized)
  { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 0, max: 0xffff }), bytes(300)).map(([n, b]) => concat(u16(n), b)) },
  { weight: 1, arbitrary: bytes(300) },
);
type RawInput = { bytes: Uint8Array; cuts: number[]; end: 'fin' | 'reset' | 'hold'; what: string };
const rawInput: fc.Arbitrary<RawInput> = fc.tuple(
  fc.oneof(
    { weight: 1, arbitrary: bytes(512).map((b) => ({ b, what: 'random bytes' })) },
    { weight: 2, arbitrary: opening.map((b) => ({ b, what: 'multistream opening' })) },
    { weight: 3, arbitrary: noiseMessages.map((m) => ({ b: concat(mss('/multistream/1.0.0'), mss('/noise'), m), what: 'noise handshake' })) },
  ),
  fc.double({ min: 0, max: 1, noNaN: true }), // truncate to this fraction (1: whole) ...
  fc.boolean(), // ... or not at all
  fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 2 }),
  fc.constantFrom<'fin' | 'reset' | 'hold'>('fin', 'reset', 'hold'),
).map(([{ b, what }, frac, whole, cutAt, end]) => {
  const kept = whole ? b : b.subarray(0, Math.floor(b.byteLength * frac));
  const cuts = [...new Set(cutAt.map((c) => Math.floor(kept.byteLength * c)))].sort((x, y) => x - y);
  return { bytes: kept, cuts, end, what: whole ? what : `${what}, truncated` };
});

type IntruderInput = { who: number; kind: 'protocol' | 'dial-then-stream' | 'wrong-peer-id'; protocol: string; frames: Uint8Array };
const framesBytes = fc.oneof(
  bytes(200).map((p) => concat(frameHeader(FrameKind.DATA, p.byteLength), p)),
  fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 255 }), bytes(64)).map(([n, k, p]) => {
    const h = frameHeader(FrameKind.DATA, n);
    h[4] = k;
    return concat(h, p);
  }),
  bytes(64),
);
const intruderInput: fc.Arbitrary<IntruderInput> = fc.record({
  who: fc.integer({ min: 0, max: 2 }),
  kind: fc.constantFrom<IntruderInput['kind']>('protocol', 'protocol', 'dial-then-stream', 'wrong-peer-id'),
  protocol: fc.oneof({ weight: 3, arbitrary: fc.constant(TENEBRA_PROTOCOL) }, { weight: 1, arbitrary: fc.constantFrom('/ipfs/id/1.0.0', '/ipfs/ping/1.0.0', '/tenebra/mpc/0.9.0') }),
  frames: framesBytes,
});

type Input = { target: 0 | 1 } & ({ raw: RawInput } | { intruder: IntruderInput });
const input: fc.Arbitrary<Input> = fc.tuple(
  fc.constantFrom<0 | 1>(0, 1),
  fc.oneof({ weight: 3, arbitrary: rawInput.map((raw) => ({ raw })) }, { weight: 1, arbitrary: intruderInput.map((intruder) => ({ intruder })) }),
).map(([target, x]) => ({ target, ...x }));

// ---- drivers ----

/** Sends one raw input to 127.0.0.1:port; resolves whether the party answered anything (a
 *  multistream-select reply, Noise's second message) and closed the connection itself. */
function sendRaw(port: number, x: RawInput): Promise<string> {
  return new Promise((resolve) => {
    const sock: Socket = connect(port, '127.0.0.1');
    let done = false;
    let answered = 0;
    const finish = (how: 'closed by party' | 'held'): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(`${answered > 0 ? 'answered, ' : ''}${how}`);
    };
    const timer = setTimeout(() => finish('held'), HOLD_MS + 2_000);
    sock.on('error', () => finish('closed by party'));
    sock.on('data', (d: Buffer) => { answered += d.byteLength; });
    sock.on('end', () => finish('closed by party'));
    sock.on('close', () => finish('closed by party'));
    sock.on('connect', () => {
      void (async () => {
        let off = 0;
        for (const c of [...x.cuts, x.bytes.byteLength]) {
          if (done) return;
          if (c > off) sock.write(x.bytes.subarray(off, c));
          off = Math.max(off, c);
          await new Promise((r) => setTimeout(r, 2));
        }
        if (done) return;
        if (x.end === 'fin') sock.end();
        else if (x.end === 'reset') {
          await new Promise((r) => setTimeout(r, 5));
          finish('held');
          return;
        }
        setTimeout(() => finish('held'), HOLD_MS);
      })();
    });
  });
}

async function makeIntruder(): Promise<Libp2p> {
  const node = await createLibp2p({
    privateKey: await generateKeyPair('Ed25519'),
    addresses: { listen: [] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionGater: { denyDialMultiaddr: () => false },
  });
  await node.start();
  intruders.push(node);
  return node;
}

describe('committee libp2p links: fuzzed input from an unauthenticated peer', () => {
  it(`${INPUTS} seeded hostile inputs (seed ${SEED}) reach no handler, crash nothing, and the committee keeps talking`, async () => {
    const problems: string[] = [];
    const onUnhandled = (err: unknown): void => { problems.push(`unhandled rejection: ${String(err)}`); };
    const onUncaught = (err: unknown): void => { problems.push(`uncaught exception: ${String(err)}`); };
    process.on('unhandledRejection', onUnhandled);
    process.on('uncaughtException', onUncaught);
    try {
      // the committee: two parties on loopback
      const ids = await Promise.all([generateIdentity(), generateIdentity()]);
      const ports = await freePorts(2);
      const peers: PeerEntry[] = ids.map((id, k) => ({ index: k + 1, peerId: id.peerId, addr: `/ip4/127.0.0.1/tcp/${ports[k]}` }));
      const got: Array<Array<{ from: number; data: Uint8Array }>> = [[], []];
      const logs: string[] = [];
      const ts: Libp2pTransport[] = [];
      for (const i of [1, 2]) {
        const t = await createLibp2pTransport({
          self: i, n: 2, privateKey: ids[i - 1]!.privateKey, listen: peers[i - 1]!.addr, peers,
          log: (m, err) => logs.push(`[${i}] ${m} ${err instanceof Error ? err.message : ''}`),
        });
        t.onMessage((from, data) => got[i - 1]!.push({ from, data }));
        started.push(t);
        ts.push(t);
      }
      await Promise.all(ts.map((t) => t.start()));
      await waitFor(() => ts[0]!.isUp(2) && ts[1]!.isUp(1), 'committee links up');
      const connectsBefore = [ts[0]!.peerStats(2).connects, ts[1]!.peerStats(1).connects];

      const others = await Promise.all([makeIntruder(), makeIntruder(), makeIntruder()]);
      const strangerId = (await generateIdentity()).peerId;
      const sent = [0, 0]; // legitimate messages sent to party 1, to party 2
      const outcomes = new Map<string, number>();
      const count = (k: string): void => { outcomes.set(k, (outcomes.get(k) ?? 0) + 1); };
      let streamsOpened = 0;

      const runOne = async (x: Input): Promise<void> => {
        const port = ports[x.target]!;
        if ('raw' in x) {
          count(`raw ${x.raw.what}: ${await sendRaw(port, x.raw)}`);
          return;
        }
        const it = x.intruder;
        const node = others[it.who]!;
        const target = multiaddr(`/ip4/127.0.0.1/tcp/${port}/p2p/${it.kind === 'wrong-peer-id' ? strangerId : peers[x.target]!.peerId}`);
        const signal = AbortSignal.timeout(3_000);
        try {
          const stream = it.kind === 'dial-then-stream'
            ? await (await node.dial(target, { signal })).newStream(it.protocol, { signal })
            : await node.dialProtocol(target, it.protocol, { signal });
          streamsOpened++;
          problems.push(`an intruder opened a ${it.protocol} stream to party ${x.target + 1}`);
          stream.send(it.frames);
          await stream.close().catch(() => {});
          count('intruder: stream opened');
        } catch (err) {
          count(`intruder ${it.kind}: refused (${err instanceof Error ? err.name : 'non-error'})`);
        }
      };

      const inputs = fc.sample(input, { numRuns: INPUTS, seed: SEED });
      const t0 = Date.now();
      for (let k = 0; k < inputs.length; k += CONCURRENCY) {
        // legitimate traffic goes on during the campaign, both ways
        ts[0]!.send(2, pattern(1, 2, 64 + (k % 200)));
        ts[1]!.send(1, pattern(2, 1, 64 + (k % 200)));
        sent[1]!++;
        sent[0]!++;
        await Promise.all(inputs.slice(k, k + CONCURRENCY).map(runOne));
      }
      const seconds = (Date.now() - t0) / 1000;

      // liveness after the campaign: both ways, a small and a large message
      for (const [a, b] of [[1, 2], [2, 1]] as const) {
        ts[a - 1]!.send(b, pattern(a, b, 10));
        ts[a - 1]!.send(b, pattern(a, b, 300_000));
        sent[b - 1]! += 2;
      }
      await waitFor(() => got[0]!.length >= sent[0]! && got[1]!.length >= sent[1]!, 'legitimate traffic after the campaign', 15_000);
      await new Promise((r) => setTimeout(r, 200)); // anything late from an outsider would land here

      // nothing but the legitimate messages reached the handlers
      for (const i of [1, 2]) {
        const other = 3 - i;
        expect(got[i - 1]!.length).toBe(sent[i - 1]);
        for (const m of got[i - 1]!) {
          expect(m.from).toBe(other);
          expect(Buffer.from(m.data).equals(Buffer.from(pattern(other, i, m.data.byteLength)))).toBe(true);
        }
        expect(ts[i - 1]!.peerStats(other).receivedMessages).toBe(sent[i - 1]);
      }
      // the committee's link never dropped under the campaign
      expect([ts[0]!.peerStats(2).connects, ts[1]!.peerStats(1).connects]).toEqual(connectsBefore);
      expect(ts[0]!.isUp(2) && ts[1]!.isUp(1)).toBe(true);
      expect(streamsOpened).toBe(0);
      expect(logs.filter((l) => /bad frame|handler threw/.test(l))).toEqual([]);
      expect(problems).toEqual([]);
      console.log(`link fuzz: ${inputs.length} inputs (seed ${SEED}) in ${seconds.toFixed(1)} s; ` +
        `${sent[0]! + sent[1]!} legitimate messages delivered; outcomes:\n  ` +
        [...outcomes].sort().map(([k, v]) => `${k}: ${v}`).join('\n  '));
    } finally {
      process.off('unhandledRejection', onUnhandled);
      process.off('uncaughtException', onUncaught);
    }
  }, 60_000 + INPUTS * 100);

  it('the frame decoder takes random, oversized and truncated frames in any chunking: frames or a FrameError, bounded buffer', () => {
    const MAX = 1024;
    let frames = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.array(framesBytes, { maxLength: 6 }), fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 8 }), (parts, splits) => {
        const all = concat(...parts);
        const d = new FrameDecoder(MAX);
        let off = 0;
        let s = 0;
        try {
          while (off < all.byteLength) {
            const n = splits[s++ % splits.length]!;
            for (const f of d.push(all.subarray(off, off + n))) {
              expect(f.payload.byteLength).toBeLessThanOrEqual(MAX);
              expect(f.kind === FrameKind.DATA || f.kind === FrameKind.PING).toBe(true);
              frames++;
            }
            off += n;
            expect(d.bufferedBytes).toBeLessThanOrEqual(MAX + FRAME_HEADER_BYTES + 300);
          }
        } catch (err) {
          if (!(err instanceof FrameError)) throw err;
          refused++;
        }
      }),
      { numRuns: Math.max(1000, INPUTS * 4), seed: SEED },
    );
    expect(frames).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});
