// Preprocessing votes are made durable before they are sent (beforePrepVote -> persistStaged).
// Votes that arrive while a write for earlier votes waits its turn share that write: during a
// preprocessing ballot under load every prepare is a vote at every party, and one full state write
// per vote outgrew the writes, so promises came later than the next ballot and none completed
// (the outage test on a loaded machine, 2026-11-27).
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { NodeConfig } from '@tenebra/config';
import { CommitteeNode } from '../src/node';

/** A node whose store and party are stand-ins: each state write takes `writeMs` and is counted. */
function rig(writeMs: number, lastJob = 'batch:7-7:0') {
  const cfg = { index: 1, n: 5, t: 2, preprocessing: { mode: 'committee', targetBits: 100, targetTriples: 1 } } as unknown as NodeConfig;
  const node = new CommitteeNode(cfg, pino({ level: 'silent' }));
  let exported = 0;
  const writes: number[] = [];
  const inner = node as unknown as Record<string, unknown>;
  inner.store = {
    lastSeq: () => 7n,
    commitSnapshot: async (_seq: bigint, state: { n: number }) => {
      await new Promise((r) => setTimeout(r, writeMs));
      writes.push(state.n);
    },
  };
  inner.party = { lastFinishedJob: () => lastJob, exportStateParts: () => ({ n: ++exported }) };
  const persistStaged = (): Promise<void> => (inner.persistStaged as () => Promise<void>).call(node);
  return { persistStaged, writes, exported: () => exported };
}

describe('durable preprocessing votes', () => {
  it('votes made while a write waits its turn share it; each is released only once a write that holds it is on disk', async () => {
    const r = rig(30);
    const first = r.persistStaged();
    await new Promise((res) => setImmediate(res)); // its write has started: exported with vote 1
    const later = Array.from({ length: 9 }, () => r.persistStaged()); // votes 2..10 wait behind it
    let firstDone = false;
    void first.then(() => { firstDone = true; });
    await Promise.all([first, ...later]);
    expect(firstDone).toBe(true);
    // two writes, not ten: the second exported after votes 2..10 were made
    expect(r.writes).toEqual([1, 2]);
    expect(r.exported()).toBe(2);
  });

  it('a vote made after the waiting write started gets a write of its own', async () => {
    const r = rig(20);
    const a = r.persistStaged();
    const a2 = r.persistStaged(); // before a's write started: shares it
    await Promise.all([a, a2]);
    expect(r.writes).toEqual([1]);
    const b = r.persistStaged();
    await new Promise((res) => setImmediate(res)); // b's write started (exported)
    const c = r.persistStaged();
    await Promise.all([b, c]);
    expect(r.writes).toEqual([1, 2, 3]); // c came after b's export: a write of its own
  });

  it('a vote after an attempt that ran out is written at once (the rollback marker: the state is as of seq 7, which is on disk)', async () => {
    // Before the marker the last finished job was the failed attempt of batch 8, and the vote waited
    // for the boundary write of seq 8, which only the retry it blocked could bring: a deadlock.
    const r = rig(5, 'rollback:8-8:0');
    await r.persistStaged();
    expect(r.writes).toEqual([1]);
  });
});
