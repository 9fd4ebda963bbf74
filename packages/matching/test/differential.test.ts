// The core differential test: the same stream on the plaintext backend and on the MPC backend (over
// the ideal-functionality JobContext test double) gives identical results, final books and leak
// transcripts.
import { describe, expect, it } from 'vitest';
import type { LeakRecord } from '../src/backend';
import { generateStream } from '../src/stream';
import type { Op } from '../src/types';
import { bookRows, runIdeal, runPlain } from './harness';

function perScope(recs: readonly LeakRecord[]): Map<string, LeakRecord[]> {
  const m = new Map<string, LeakRecord[]>();
  for (const r of recs) {
    const k = r.scope ?? '';
    m.set(k, [...(m.get(k) ?? []), r]);
  }
  return m;
}

async function differential(ops: Op<bigint>[], concurrent: boolean, speculate = false): Promise<number> {
  const plain = await runPlain(ops, { concurrent });
  const mpc = await runIdeal(ops, { concurrent, speculate });
  expect(mpc.results).toEqual(plain.results);
  for (const s of plain.exchange.symbols()) {
    expect(bookRows(mpc.exchange.book(s), mpc.value)).toEqual(bookRows(plain.exchange.book(s), plain.value));
  }
  const ps = plain.exchange.toSnapshot();
  const ms = mpc.exchange.toSnapshot();
  expect(ms.pub).toEqual(ps.pub);
  expect(ms.secrets.map(mpc.value)).toEqual(ps.secrets);
  // Per book the transcripts are identical whatever the interleaving; sequential runs are globally identical.
  expect(perScope(mpc.transcript.records)).toEqual(perScope(plain.transcript.records));
  if (!concurrent) expect(mpc.transcript.records).toEqual(plain.transcript.records);
  expect(plain.transcript.records.length).toBeGreaterThan(ops.length / 2);
  return mpc.ctx.stats.rounds;
}

describe('plaintext backend vs MPC backend (ideal JobContext test double)', () => {
  it('issue-3 streams: 8 seeds × 3,000 ops on 3 symbols, sequential and concurrent', async () => {
    for (let seed = 1; seed <= 8; seed += 1) {
      await differential(generateStream({ seed, orders: 3000, symbols: 3, owners: seed % 4 === 0 }), seed % 2 === 0);
    }
  });

  it('full streams: 6 seeds × 2,000 ops with every order kind', async () => {
    for (let seed = 50; seed < 56; seed += 1) {
      await differential(generateStream({ seed, orders: 2000, symbols: 2, accounts: 6, features: 'all' }), seed % 2 === 0);
    }
  });

  it('concurrent symbols share rounds: fewer rounds than sequential application', async () => {
    const ops = generateStream({ seed: 9, orders: 1200, symbols: 6 });
    const seqRounds = await differential(ops, false);
    const concRounds = await differential(ops, true);
    expect(concRounds).toBeLessThan(seqRounds * 0.6);
  });

  it('speculative mode: identical results and transcript, fewer rounds', async () => {
    const ops = generateStream({ seed: 11, orders: 1500, symbols: 1, accounts: 5, features: 'all', spreadTicks: 6 });
    const normal = await differential(ops, false, false);
    const spec = await differential(ops, false, true);
    expect(spec).toBeLessThan(normal);
  });
});
