// Phase-A steps in pieces (PreprocessingOptions.pieces, ADR 0047): a step gives the event loop back
// between its pieces (PrepHost.defer). Checked here:
// - the reserve a committee makes is the same, byte for byte, with and without pieces (same keys,
//   same batches): a yield sits only between two computations;
// - the pieces do yield: messages reach the party while one of its steps is under way, and a job
//   that starts mid-step parks the rest of the step until it ends (then the batch still commits);
// - a peer that dies between two pieces of a step, or the party itself, is handled as before: the
//   others decide the batch, nobody goes stale, and the dead one recovers and the five go on.
import { describe, expect, it } from 'vitest';
import { SimNetwork, type Transport } from '@tenebra/transport';
import { createParty, type Party } from '../src/runtime';
import type { PreprocessingOptions } from '../src/preprocessing';
import { Msg, decode } from '../src/messages';
import { deal, productsAndComparisons, wrapTransport } from './helpers';

type Internals = { prep: { current?: { id: number; step?: { wait: string } }; parked?: unknown; reserve: { chunks: Record<string, { start: number; bytes: Uint8Array }[]> } } };
const inner = (p: Party): Internals['prep'] => (p as unknown as Internals).prep;

/** The bytes of every item a party's reserve holds, by kind. */
function reserveBytes(p: Party): string {
  const chunks = inner(p).reserve.chunks;
  return Object.keys(chunks).sort().map((k) => `${k}:${chunks[k]!.map((c) => `${c.start}/${Buffer.from(c.bytes).toString('hex')}`).join(',')}`).join(';');
}

/** A transport whose clock counts defer calls and can act on them (onDefer returns nothing). */
function watchingDefers(tr: Transport, onDefer: () => void): Transport {
  const clock = { now: () => tr.clock.now(), setTimeout: tr.clock.setTimeout.bind(tr.clock), defer: (cb: () => void) => { onDefer(); tr.clock.defer(cb); } };
  return { ...wrapTransport(tr, {}), clock };
}

/** Products and comparisons on `team`, every live share checked; returns the opened values. */
async function useReserve(net: SimNetwork, team: Party[], id: string): Promise<void> {
  const xs = [5n, 70n, 300n, 12n];
  const ys = [9n, 3n, 300n, 40n];
  await productsAndComparisons(net, team, id, xs, ys);
}

describe('phase-A steps in pieces', () => {
  it('the committee makes the same reserve, byte for byte, with and without pieces', async () => {
    // one key setup, then the same five states produce with and without pieces
    const net0 = new SimNetwork({ n: 5, seed: 3, link: { latencyMs: 1, jitterMs: 0.5 } });
    const setup = [1, 2, 3, 4, 5].map((i) => createParty({ n: 5, t: 2, transport: net0.transport(i), preprocessing: { background: false } }));
    await net0.settle(Promise.all(setup.map((p) => p.start())));
    const states = setup.map((p) => p.exportState());
    const made: string[][] = [];
    const steps: number[] = [];
    for (const pieces of [false, true]) {
      const net = new SimNetwork({ n: 5, seed: 4, link: { latencyMs: 1, jitterMs: 0.5 } });
      let stepsSeen = 0;
      const prep: PreprocessingOptions = { targetTriples: 120, targetBits: 900, targetLex4: 60, targetProd4: 20, batch: 96, background: false, pieces };
      const parties = [1, 2, 3, 4, 5].map((i) => createParty({
        n: 5, t: 2, transport: net.transport(i), preprocessing: prep, state: states[i - 1]!,
        log: (e) => { const ev = e as { ev?: string; pieces?: number }; if (ev.ev === 'prep-step' && (ev.pieces ?? 1) > 1) stepsSeen++; },
      }));
      await net.settle(Promise.all(parties.map((p) => p.start())));
      await net.run({ maxTimeMs: 100 }); // the links come up
      await net.settle(Promise.all(parties.map((p) => p.fill())), { maxTimeMs: 120_000 });
      expect(parties.map((p) => p.status().preprocessing.committedBatches)).toEqual([3, 3, 3, 3, 3].map(() => parties[0]!.status().preprocessing.committedBatches));
      expect(parties[0]!.status().preprocessing.committedBatches).toBeGreaterThan(1);
      made.push(parties.map(reserveBytes));
      steps.push(stepsSeen);
    }
    expect(steps[0]).toBe(0); // unsplit: one piece per step (no pieces field at all)
    expect(steps[1]).toBeGreaterThan(0);
    expect(made[1]).toEqual(made[0]);
  }, 60_000);

  it("a job's round messages reach a party between two pieces of its step (production urgent); unsplit, never", async () => {
    for (const pieces of [false, true]) {
      // no link latency: in the simulation a step's pieces run at one virtual instant, so only a
      // message sent at that instant can arrive between them
      const net = new SimNetwork({ n: 5, seed: 5, link: { latencyMs: 0, jitterMs: 0 } });
      let between = 0;
      const parties: Party[] = [];
      for (let i = 1; i <= 5; i++) {
        const tr = net.transport(i);
        const watched: Transport = i !== 1 ? tr : {
          ...wrapTransport(tr, {}),
          onMessage: (h) => tr.onMessage((from, data) => {
            if (decode(data).type === Msg.JobRound && inner(parties[0]!).current?.step?.wait === 'deferred') between++;
            h(from, data);
          }),
        };
        // the reserve stays below a quarter of its targets for a dozen batches: steps run during jobs
        parties.push(createParty({ n: 5, t: 2, transport: watched, preprocessing: { targetTriples: 400, targetBits: 8000, targetLex4: 400, targetProd4: 40, batch: 40, pieces } }));
      }
      await net.settle(Promise.all(parties.map((p) => p.start())));
      await net.run({ until: () => parties.every((p) => p.status().preprocessing.committedBatches >= 2), maxTimeMs: 60_000 });
      for (let k = 0; k < 3; k++) await useReserve(net, parties, `during-${k}`);
      expect(parties[0]!.status().preprocessing.committedBatches).toBeGreaterThan(2);
      if (pieces) expect(between).toBeGreaterThan(0);
      else expect(between).toBe(0);
    }
  }, 60_000);

  it('a job that starts mid-step parks the rest of it; the job completes and the batch commits after it', async () => {
    const net = new SimNetwork({ n: 5, seed: 6, link: { latencyMs: 1, jitterMs: 0.5 } });
    // after the first batch the reserve is low (a second batch starts in the background) but not
    // urgent (above a quarter of the targets), so a step may wait for a job
    const prep: PreprocessingOptions = { targetTriples: 40, targetBits: 256, targetLex4: 20, targetProd4: 4, batch: 32, pieces: true };
    let armed = false;
    let jobStarted: Promise<bigint[][]> | undefined;
    let parkedSeen = false;
    const parties: Party[] = [];
    const startJob = (): void => {
      const inputs = deal(5, 2, [6n], [7n]);
      jobStarted = Promise.all(parties.map((p) => p.runJob('mid-step', async (ctx) => {
        const [x, y] = inputs[p.id - 1]!.map((s) => ctx.fromShares(s));
        const r = await ctx.open(await ctx.mul(x!, y!));
        // the job's first rounds ran while party 1's step waited for it
        if (inner(parties[0]!).current?.step?.wait === 'parked') parkedSeen = true;
        return r;
      })));
    };
    for (let i = 1; i <= 5; i++) {
      const tr = net.transport(i);
      parties.push(createParty({
        n: 5, t: 2, preprocessing: prep,
        transport: i !== 1 ? tr : watchingDefers(tr, () => {
          // party 1's first piece of batch 1 was just deferred: the job starts before the next one
          const cur = inner(parties[0]!).current;
          if (!armed || jobStarted || cur?.id !== 1 || cur.step?.wait !== 'deferred') return;
          net.clock.setTimeout(startJob, 0);
        }),
      }));
    }
    await net.settle(Promise.all(parties.map((p) => p.start())));
    await net.run({ until: () => parties.every((p) => p.status().preprocessing.committedBatches >= 1), maxTimeMs: 60_000 });
    expect(parties[0]!.status().reserve.bits).toBeLessThan(256);
    armed = true;
    await net.run({ until: () => jobStarted !== undefined, maxTimeMs: 60_000 });
    const outs = await net.settle(jobStarted!);
    for (const o of outs) expect(o).toEqual([42n]);
    expect(parkedSeen).toBe(true);
    await net.run({ until: () => parties.every((p) => p.status().preprocessing.committedBatches >= 2), maxTimeMs: 60_000 });
    const logs = parties.map((p) => `${p.status().preprocessing.resolvedBatches}/${p.status().preprocessing.committedBatches}`);
    expect(logs.every((l) => l === logs[0])).toBe(true);
  }, 60_000);

  for (const who of ['a peer', 'the party itself'] as const) {
    it(`${who} dying between two pieces of a step: the others decide the batch, nobody is stale, and after recovery the five go on`, async () => {
      const net = new SimNetwork({ n: 5, seed: who === 'a peer' ? 7 : 8, link: { latencyMs: 1, jitterMs: 0.5 } });
      const prep: PreprocessingOptions = { targetTriples: 100, targetBits: 800, batch: 80, pieces: true };
      const dead = who === 'a peer' ? 3 : 2;
      let defers = 0;
      const mk = (i: number, tr: Transport, keys?: Uint8Array): Party => createParty({
        n: 5, t: 2, preprocessing: prep, checkOpenings: true, ...(keys ? { keys } : {}),
        // party 2's fifth deferred piece of batch 1 (mid-step): the crash comes between two pieces
        transport: i !== 2 || keys ? tr : watchingDefers(tr, () => {
          if (parties[1] && inner(parties[1]).current?.id === 1 && ++defers === 5) net.clock.setTimeout(() => net.crash(dead), 0);
        }),
      });
      const parties: Party[] = [];
      for (let i = 1; i <= 5; i++) parties.push(mk(i, net.transport(i)));
      await net.settle(Promise.all(parties.map((p) => p.start())));
      const keys = parties.map((p) => p.exportKeys());
      await net.run({ until: () => net.isCrashed(dead), maxTimeMs: 60_000 });
      expect(net.isCrashed(dead)).toBe(true);
      const live = parties.filter((p) => p.id !== dead);
      await net.run({ until: () => live.every((p) => p.status().preprocessing.inFlight === undefined || p.status().preprocessing.resolvedBatches >= 2), maxTimeMs: 60_000 });
      await net.run({ maxTimeMs: 3_000 });
      for (const p of live) expect(p.status().preprocessing.stale).toBe(false);
      const logs = live.map((p) => `${p.status().preprocessing.resolvedBatches}/${p.status().preprocessing.committedBatches}`);
      expect(logs.every((l) => l === logs[0]), logs.join(' ')).toBe(true);
      // the dead one comes back with its memory gone and recovers; the five make and use batches
      const back = mk(dead, net.restart(dead), keys[dead - 1]);
      await net.settle(back.start());
      await net.settle(back.recover(), { maxTimeMs: 120_000 });
      const all = [...live, back].sort((a, b) => a.id - b.id);
      await net.run({ until: () => all.every((p) => p.status().preprocessing.inFlight === undefined && p.status().reserve.bits >= prep.targetBits!), maxTimeMs: 300_000 });
      await useReserve(net, all, 'after');
    }, 120_000);
  }
});
