// The recovering side of share recovery (Recovery) with masks bound to the state answered at
// (issue 22): it combines only answers of one state, drops an answer whose state id is not the hash
// of its meta (the id picks the mask and the group), and never mixes the parts of two answers of one
// helper at two states (a helper that restarted answers the same nonce again, under another mask).

import { describe, expect, it } from 'vitest';
import type { Clock } from '@tenebra/transport';
import { Msg, bytesText, decode, encode, textBytes, type Envelope } from '../src/messages';
import { Prss, dealPrssKeys } from '../src/prss';
import { seededRng } from '../src/preprocessing';
import { RECOVERY_PART_ELEMENTS, Recovery, answerRecovery, type RecoveryResult } from '../src/recovery';
import { emptyItems, zeroCounts } from '../src/reserve';
import { shareSecret } from '../src/shamir';
import type { PartySnapshot } from '../src/state';

const n = 5;
const t = 2;
const keys = dealPrssKeys(n, t, 'recovery-combine');
const prss = [...Array(n).keys()].map((i) => new Prss(n, t, i + 1, keys[i]!));
const wire = (m: Parameters<typeof encode>[0] extends infer M ? Omit<M & object, 'prepCommitted' | 'prepNext'> : never): Uint8Array => encode({ ...m, prepCommitted: 0, prepNext: 0 });

/** Shares of `values` at each party; `filler` more zeros (the zero polynomial's shares) make an answer big. */
function snapshots(values: bigint[], finished: string[], seed: string, filler = 0): PartySnapshot[] {
  return shareSecret(values, n, t, seededRng(seed)).map((mine) => ({
    n, t, L: 0, kappa: 0, mode: 'test', keys: [],
    store: [['book/size', mine], ...(filler > 0 ? [['filler', new Array<bigint>(filler).fill(0n)] as [string, bigint[]]] : [])],
    pub: [],
    cursor: zeroCounts(),
    items: emptyItems(),
    finished,
    prep: { resolved: 0, committed: 0 },
  }));
}

/** A Recovery for party 1 whose timers never fire (the test drives every message). */
function recovering(): { rec: Recovery; nonce: () => string; logs: Record<string, unknown>[]; result: () => RecoveryResult | undefined } {
  const sent: Envelope[] = [];
  const logs: Record<string, unknown>[] = [];
  const clock: Clock = { now: () => 0, setTimeout: () => () => undefined, defer: (cb: () => void) => cb() } as unknown as Clock;
  const rec = new Recovery({
    n, t, self: 1, clock,
    aliveHelpers: () => [2, 3, 4, 5],
    send: (_to, bytes) => sent.push(decode(bytes)),
    envelope: wire,
    log: (ev) => logs.push(ev),
    emit: () => undefined,
  });
  let result: RecoveryResult | undefined;
  rec.run().then((r) => { result = r; }, () => undefined);
  return { rec, nonce: () => sent[0]!.key, logs, result: () => result };
}

const answer = (j: number, nonce: string, snap: PartySnapshot): Envelope[] => answerRecovery(prss[j - 1]!, 1, nonce, snap, undefined, wire).map(decode);
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('recovering party: combining answers bound to states', () => {
  const S1 = snapshots([100n, 250n, 7n], ['job-7'], 'c1');
  const S2 = snapshots([60n, 250n, 7n], ['job-7', 'job-8'], 'c2');

  it('combines t+1 answers of one state only, not a mix of two states', async () => {
    const { rec, nonce, result } = recovering();
    for (const [j, s] of [[2, S1], [3, S1], [4, S2]] as const) for (const e of answer(j, nonce(), s[j - 1]!)) rec.onMessage(j, e);
    await settle();
    expect(result()).toBeUndefined();
    for (const e of answer(5, nonce(), S1[4]!)) rec.onMessage(5, e);
    await settle();
    expect(result()?.helpers).toEqual([2, 3, 5]);
    expect(result()?.snapshot.store).toEqual(S1[0]!.store);
  });

  it('drops an answer whose state id is not the hash of its meta', async () => {
    const { rec, nonce, logs, result } = recovering();
    for (const j of [2, 3]) for (const e of answer(j, nonce(), S1[j - 1]!)) rec.onMessage(j, e);
    // helper 4 claims S1's id (whose mask it used) for a meta that says S2's last job
    const [forged] = answer(4, nonce(), S1[3]!);
    const meta = JSON.parse(bytesText(forged!.extra)) as { finished: string[] };
    meta.finished = ['job-7', 'job-8'];
    rec.onMessage(4, { ...forged!, extra: textBytes(JSON.stringify(meta)) });
    await settle();
    expect(result()).toBeUndefined();
    expect(logs.some((e) => e.ev === 'recovery-bad-reply' && e.from === 4 && String(e.why).includes('does not match'))).toBe(true);
    rec.stop();
  });

  it('a helper that answers again at a later state (after a restart): its parts of the two answers never mix', async () => {
    // enough values for two parts
    const B1 = snapshots([100n, 250n, 7n], ['job-7'], 'b1', RECOVERY_PART_ELEMENTS);
    const B2 = snapshots([60n, 250n, 7n], ['job-7', 'job-8'], 'b2', RECOVERY_PART_ELEMENTS);
    const { rec, nonce, logs, result } = recovering();
    const first = answer(2, nonce(), B1[1]!);
    expect(first.length).toBe(2);
    rec.onMessage(2, first[0]!); // part 1 of the S1 answer is lost; helper 2 restarts and answers again at S2
    const again = answer(2, nonce(), B2[1]!);
    rec.onMessage(2, again[1]!); // its parts arrive in either order
    rec.onMessage(2, again[0]!);
    for (const j of [3, 4]) for (const e of answer(j, nonce(), B2[j - 1]!)) rec.onMessage(j, e);
    await settle();
    expect(logs.some((e) => e.ev === 'recovery-reply-restarted' && e.from === 2)).toBe(true);
    expect(result()?.helpers).toEqual([2, 3, 4]);
    expect(result()?.snapshot.store).toEqual(B2[0]!.store);
  });

  it('asks under a fresh nonce once helpers fall silent with their answers incomplete (a part lost on the way)', async () => {
    // a clock whose timers the test fires
    let now = 0;
    const timers: { at: number; cb: () => void }[] = [];
    const clock = {
      now: () => now,
      setTimeout: (cb: () => void, ms: number) => {
        const tm = { at: now + ms, cb };
        timers.push(tm);
        return () => {
          const i = timers.indexOf(tm);
          if (i >= 0) timers.splice(i, 1);
        };
      },
      defer: (cb: () => void) => cb(),
    } as unknown as Clock;
    const sent: { to: number; env: Envelope }[] = [];
    const rec = new Recovery({
      n, t, self: 1, clock, aliveHelpers: () => [2, 3, 4, 5],
      send: (to, bytes) => sent.push({ to, env: decode(bytes) }), envelope: wire, log: () => undefined, emit: () => undefined,
    }, 2000);
    let result: RecoveryResult | undefined;
    rec.run().then((r) => { result = r; }, () => undefined);
    const big = snapshots([100n, 250n, 7n], ['job-7'], 'c3', RECOVERY_PART_ELEMENTS + 10); // two parts per answer
    const first = sent[0]!.env.key;
    // helper 2 answers whole; the last part of 3's, 4's and 5's answers is lost; a helper answers a nonce once (runtime.ts)
    const answered = new Set<string>();
    for (const j of [2, 3, 4, 5]) {
      answered.add(`${j}:${first}`);
      const parts = answer(j, first, big[j - 1]!);
      expect(parts.length).toBe(2);
      for (const e of j === 2 ? parts : parts.slice(0, -1)) rec.onMessage(j, e);
    }
    sent.length = 0;
    for (let k = 0; k < 15 && result === undefined; k++) {
      now += 2000;
      for (let due = timers.find((x) => x.at <= now); due; due = timers.find((x) => x.at <= now)) {
        timers.splice(timers.indexOf(due), 1);
        due.cb();
      }
      for (const { to, env } of sent.splice(0)) {
        if (env.type !== Msg.RecoverRequest || answered.has(`${to}:${env.key}`)) continue;
        answered.add(`${to}:${env.key}`);
        for (const e of answer(to, env.key, big[to - 1]!)) rec.onMessage(to, e);
      }
      await settle();
    }
    expect(result?.snapshot.store).toEqual(big[0]!.store);
  });
});
