// Pure parts of the account-side services: statistics window arithmetic (as_of, range/from/to, the
// 2-year span, hourly/daily buckets at hour and day boundaries), tier arithmetic, settlement
// commitments and Merkle paths, the simulated chain's verification, rate-limit persistence and
// the venue admission rules (spacing, mass-quote tiers, system caps).
import { describe, it, expect } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, appendFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  asOf, buckets, parseRfc3339, parseWindow, twoYearsAfter, rejectUnknownParams, DAY_MS, HOUR_MS, SLOT_MS,
} from '../src/stats/window';
import { percentChange } from '../src/stats/service';
import { effectiveTier, pipsToBps, tierForVolume, TIER_INFO, nextTier } from '../src/tiers';
import { commit, deltaJson, merkleProof, merkleRoot, verifyMerkle, newSalt } from '../src/settlement/commitment';
import { SimulatedChain } from '../src/settlement/chain';
import { RateLimiter, TradingGuard } from '../src/ratelimit';
import { ApiError } from '../src/errors';

const T = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString();

function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
}

describe('statistics window arithmetic', () => {
  it('as_of is now minus 600 s floored to a 10-minute boundary', () => {
    expect(iso(asOf(T('2026-03-10T12:34:56.789Z')))).toBe('2026-03-10T12:20:00.000Z');
    expect(iso(asOf(T('2026-03-10T12:40:00.000Z')))).toBe('2026-03-10T12:30:00.000Z');
    expect(iso(asOf(T('2026-03-10T12:39:59.999Z')))).toBe('2026-03-10T12:20:00.000Z');
    expect(iso(asOf(T('2026-03-11T00:09:59.999Z')))).toBe('2026-03-10T23:50:00.000Z');
  });

  const A = T('2026-03-10T12:30:00Z');

  it('defaults to range 1m (30 days ending at as_of, daily buckets) and reads every alias', () => {
    const w = parseWindow({}, A);
    expect([iso(w.fromMs), iso(w.toMs), w.granularity]).toEqual(['2026-02-08T12:30:00.000Z', iso(A), 'day']);
    const span = (q: Record<string, string>) => { const x = parseWindow(q, A); return (x.toMs - x.fromMs) / DAY_MS; };
    expect([span({ range: '1d' }), span({ range: 'd' })]).toEqual([1, 1]);
    expect([span({ range: '7d' }), span({ range: 'w' })]).toEqual([7, 7]);
    expect([span({ range: '1m' }), span({ range: 'm' })]).toEqual([30, 30]);
    expect(span({ range: '3m' })).toBe(90);
    expect([span({ range: '1y' }), span({ range: 'y' })]).toEqual([365, 365]);
    expect(parseWindow({ range: '1d' }, A).granularity).toBe('hour');
    expect(parseWindow({ range: '7d' }, A).granularity).toBe('day');
  });

  it('hourly up to exactly two days, daily beyond', () => {
    const to = '2026-03-10T00:00:00Z';
    expect(parseWindow({ from: '2026-03-08T00:00:00Z', to }, A).granularity).toBe('hour');
    expect(parseWindow({ from: '2026-03-07T23:59:59.999Z', to }, A).granularity).toBe('day');
  });

  it('clamps to to as_of, ignores range when from is given, and needs from before to', () => {
    const w = parseWindow({ from: '2026-03-10T00:00:00Z', to: '2027-01-01T00:00:00Z', range: '1y' }, A);
    expect([iso(w.fromMs), iso(w.toMs)]).toEqual(['2026-03-10T00:00:00.000Z', iso(A)]);
    const onlyTo = parseWindow({ to: '2026-03-01T00:00:00Z', range: '1d' }, A);
    expect(iso(onlyTo.fromMs)).toBe('2026-02-28T00:00:00.000Z');
    expect(errorOf(() => parseWindow({ from: '2026-03-10T12:30:00Z' }, A)).message).toMatch(/from must be before to/);
    expect(errorOf(() => parseWindow({ from: '2026-03-11T00:00:00Z', to: '2026-03-12T00:00:00Z' }, A)).message).toMatch(/clamped to as_of 2026-03-10T12:30/);
    expect(errorOf(() => parseWindow({ from: '2026-03-05T00:00:00Z', to: '2026-03-05T00:00:00Z' }, A)).message).toMatch(/before to/);
  });

  it('allows a span of two calendar years and not a millisecond more', () => {
    expect(iso(twoYearsAfter(T('2024-02-29T00:00:00Z')))).toBe('2026-03-01T00:00:00.000Z');
    expect(parseWindow({ from: '2024-03-10T12:30:00Z' }, A).granularity).toBe('day');
    const e = errorOf(() => parseWindow({ from: '2024-03-10T12:29:59.999Z' }, A));
    expect(e.kind.error).toBe('invalid_request');
    expect(e.message).toMatch(/at most 2 years/);
    expect(errorOf(() => parseWindow({ from: '2020-01-01T00:00:00Z', to: '2023-01-01T00:00:00Z' }, A)).message).toMatch(/2 years/);
  });

  it('refuses malformed, repeated and unknown parameters with a message naming them', () => {
    expect(errorOf(() => parseWindow({ range: '2d' }, A)).message).toMatch(/range '2d' is not one of 1d, 7d, 1m, 3m, 1y/);
    expect(errorOf(() => parseWindow({ range: '1D' }, A)).message).toMatch(/range/);
    expect(errorOf(() => parseWindow({ from: 'yesterday' }, A)).message).toMatch(/from 'yesterday' is not an RFC 3339/);
    expect(errorOf(() => parseWindow({ to: '2026-02-30T00:00:00Z' }, A)).message).toMatch(/^invalid_request: to /);
    expect(errorOf(() => parseWindow({ range: ['1d', '7d'] }, A)).message).toMatch(/'range' appears more than once/);
    expect(errorOf(() => rejectUnknownParams({ rnage: '1d' }, ['range', 'from', 'to'])).message).toMatch(/unknown query parameter 'rnage'; it accepts range, from, to/);
    expect(errorOf(() => rejectUnknownParams({ x: '1' }, [])).message).toMatch(/takes no query parameters/);
  });

  it('parses RFC 3339 with offsets, fractions, a space for an unescaped +, and bare dates', () => {
    expect(parseRfc3339('2026-03-10T12:00:00Z')).toBe(T('2026-03-10T12:00:00Z'));
    expect(parseRfc3339('2026-03-10T14:00:00+02:00')).toBe(T('2026-03-10T12:00:00Z'));
    expect(parseRfc3339('2026-03-10T14:00:00 02:00')).toBe(T('2026-03-10T12:00:00Z'));
    expect(parseRfc3339('2026-03-10T07:30:00-04:30')).toBe(T('2026-03-10T12:00:00Z'));
    expect(parseRfc3339('2026-03-10t12:00:00.123456789z')).toBe(T('2026-03-10T12:00:00.123Z'));
    expect(parseRfc3339('2026-03-10')).toBe(T('2026-03-10T00:00:00Z'));
    for (const bad of ['2026-3-10T12:00:00Z', '2026-03-10T24:00:00Z', '2026-03-10T12:00:00', '2025-02-29', '2026-13-01', '2026-03-10T12:00:00+25:00', '1710072000']) {
      expect(parseRfc3339(bad), bad).toBeNull();
    }
  });

  it('makes hourly buckets on hour boundaries; the first and last may be partial', () => {
    const w = parseWindow({ range: '1d' }, T('2026-03-10T12:50:00Z'));
    const b = buckets(w);
    expect(b).toHaveLength(25);
    expect([iso(b[0]!.t), b[0]!.toSlotExcl - b[0]!.fromSlot]).toEqual(['2026-03-09T12:00:00.000Z', 1]); // 12:50..13:00
    expect([iso(b[24]!.t), b[24]!.toSlotExcl - b[24]!.fromSlot]).toEqual(['2026-03-10T12:00:00.000Z', 5]); // 12:00..12:50
    expect(b.slice(1, 24).every((x) => x.toSlotExcl - x.fromSlot === 6)).toBe(true);
    // aligned: exactly 24 whole hours
    expect(buckets(parseWindow({ range: '1d' }, T('2026-03-10T13:00:00Z')))).toHaveLength(24);
  });

  it('makes daily buckets on UTC midnights; a to inside a slot covers that slot, one on a boundary ends there', () => {
    const w = parseWindow({ from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z' }, T('2026-03-10T00:00:00Z'));
    const b = buckets(w);
    expect(b.map((x) => iso(x.t))).toEqual(['2026-03-01T00:00:00.000Z', '2026-03-02T00:00:00.000Z', '2026-03-03T00:00:00.000Z']);
    expect(b.every((x) => x.toSlotExcl - x.fromSlot === 144)).toBe(true);
    const w2 = parseWindow({ from: '2026-03-01T23:55:00Z', to: '2026-03-04T00:00:00.001Z' }, T('2026-03-10T00:00:00Z'));
    const b2 = buckets(w2);
    expect(b2.map((x) => iso(x.t))).toEqual(['2026-03-01T00:00:00.000Z', '2026-03-02T00:00:00.000Z', '2026-03-03T00:00:00.000Z', '2026-03-04T00:00:00.000Z']);
    expect(b2.map((x) => x.toSlotExcl - x.fromSlot)).toEqual([1, 144, 144, 1]);
    expect(w2.fromSlot * SLOT_MS).toBe(T('2026-03-01T23:50:00Z'));
    expect(HOUR_MS / SLOT_MS).toBe(6);
  });

  it('reports changes in percent with two decimals, none against a zero base', () => {
    expect(percentChange(150n, 100n)).toBe('50');
    expect(percentChange(1n, 3n)).toBe('-66.67');
    expect(percentChange(5n, 0n)).toBeUndefined();
  });
});

describe('fee tiers', () => {
  it('follow 30-day volume at the spec thresholds, never below the assigned floor', () => {
    const M = 1_000_000n;
    expect(tierForVolume(0n)).toBe('Core');
    expect(tierForVolume(5_000_000n * M - 1n)).toBe('Core');
    expect(tierForVolume(5_000_000n * M)).toBe('Select');
    expect(tierForVolume(10_000_000n * M)).toBe('Advanced');
    expect(tierForVolume(25_000_000n * M)).toBe('Prime');
    expect(tierForVolume(50_000_000n * M)).toBe('Apex');
    expect(effectiveTier('Prime', 6_000_000n * M)).toBe('Prime');
    expect(effectiveTier('Core', 12_000_000n * M)).toBe('Advanced');
    expect(nextTier('Apex')).toBeNull();
    expect(nextTier('Core')!.tier).toBe('Select');
  });

  it('hold the schedule: fees in bps, minimum notional, bonuses', () => {
    expect(['Core', 'Select', 'Advanced', 'Prime', 'Apex'].map((t) => pipsToBps(TIER_INFO[t as 'Core'].makerFeePips))).toEqual(['2', '1', '0', '-0.5', '-1']);
    expect(['Core', 'Select', 'Advanced', 'Prime', 'Apex'].map((t) => pipsToBps(TIER_INFO[t as 'Core'].takerFeePips))).toEqual(['5', '4', '3', '2.5', '2']);
    expect(TIER_INFO.Apex.hourlyTakerBonusBps).toBe(2500);
    expect(TIER_INFO.Select.instantTakerBonusBps).toBe(750);
  });
});

describe('settlement commitments', () => {
  it('commit to a canonical delta; a Merkle path proves inclusion for every leaf count', () => {
    const d = { collateral: '-300150000', positions: [{ symbol: 'SOL-USDC-PERP', size_steps: '1', margin: '1', realized_pnl: '0', fees: '0' }, { symbol: 'ETH-USDC-PERP', size_steps: '1000', margin: '300000000', realized_pnl: '0', fees: '150000' }] };
    expect(deltaJson(d)).toBe('{"collateral":"-300150000","positions":[{"symbol":"ETH-USDC-PERP","size_steps":"1000","margin":"300000000","realized_pnl":"0","fees":"150000"},{"symbol":"SOL-USDC-PERP","size_steps":"1","margin":"1","realized_pnl":"0","fees":"0"}]}');
    const salt = newSalt();
    expect(commit('1', '0xab', deltaJson(d), salt)).toMatch(/^[0-9a-f]{64}$/);
    expect(commit('1', '0xab', deltaJson(d), salt)).not.toBe(commit('1', '0xab', deltaJson(d), newSalt()));
    for (let n = 1; n <= 9; n++) {
      const leaves = Array.from({ length: n }, (_, i) => commit('7', `u${i}`, '{}', salt));
      const root = merkleRoot(leaves);
      for (let i = 0; i < n; i++) {
        const p = merkleProof(leaves, i);
        expect(verifyMerkle(leaves[i]!, p, root)).toBe(true);
        expect(verifyMerkle(leaves[(i + 1) % n]!, p, root) && n > 1 && leaves[(i + 1) % n] !== leaves[i]).toBe(false);
      }
    }
  });

  it('the simulated chain links blocks, survives a torn write and refuses a tampered log', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tenebra-chain-'));
    try {
      const file = join(dir, 'chain.jsonl');
      const c = new SimulatedChain(file);
      c.open();
      const tx = (id: string) => ({ type: 'settlement_batch' as const, batch_id: id, commitments_root: 'ab'.repeat(32), commitments: ['cd'.repeat(32)], shielded_pool_total: '5' });
      const b1 = c.append(tx('1'), T('2026-01-01T00:00:00Z'));
      const b2 = c.append(tx('2'), T('2026-01-01T00:00:02Z'));
      expect([b1.height, b2.height, b2.prev_hash]).toEqual([1, 2, b1.hash]);
      expect(() => c.append(tx('2'), 0)).toThrow(/already on chain/);
      c.close();
      appendFileSync(file, '{"height":3,"tim'); // torn write
      const again = new SimulatedChain(file);
      again.open();
      expect([again.height, again.find('2')?.hash]).toEqual([2, b2.hash]);
      again.close();
      writeFileSync(file, readFileSync(file, 'utf8').replace('"shielded_pool_total":"5"', '"shielded_pool_total":"6"'));
      expect(() => new SimulatedChain(file).open()).toThrow(/does not verify/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('rate limits and venue admission', () => {
  it('minute windows persist and come back only while current', () => {
    let now = T('2026-01-05T12:00:10Z');
    const a = new RateLimiter(() => now);
    for (let i = 0; i < 7; i++) a.request('acct:x', { perMinute: 60, perSecond: 100, burst: 100 });
    a.action('acct:x', 10, 1000);
    a.massQuote('acct:x', 120);
    const saved = a.takeDirty();
    expect(a.takeDirty()).toEqual([]);
    const b = new RateLimiter(() => now);
    expect([...b.restore(saved)]).toEqual(['acct:x']);
    expect(b.request('acct:x', { perMinute: 60, perSecond: 100, burst: 100 }).remaining).toBe(52);
    expect(b.action('acct:x', 10, 1000).remaining).toBe(8);
    expect(b.massQuote('acct:x', 120).remaining).toBe(118);
    now += 60_000; // next window: nothing comes back
    expect(new RateLimiter(() => now).restore(saved).size).toBe(0);
  });

  it('spaces actions per symbol and account, offers mass quotes by tier, and caps the venue', () => {
    let ns = BigInt(T('2026-01-05T12:00:00Z')) * 1_000_000n;
    const limiter = new RateLimiter(() => Number(ns / 1_000_000n));
    const g = new TradingGuard(limiter, () => ns, { globalMilliPerSecond: 5_000, perSymbolMilliPerSecond: 3_000 });
    expect(g.admit('u1', 'Core', 'place', 'BTC-USDC-PERP').ok).toBe(true);
    ns += 999_999n;
    const spaced = g.admit('u1', 'Core', 'place', 'BTC-USDC-PERP');
    expect(spaced.ok === false && spaced.error).toBe('rate_limited');
    expect(g.admit('u1', 'Core', 'place', 'ETH-USDC-PERP').ok).toBe(true); // other symbol
    expect(g.admit('u1', 'Core', 'cancel', 'BTC-USDC-PERP').ok).toBe(true); // other kind
    ns += 200_000n;
    expect(g.admit('u1', 'Core', 'cancel', 'BTC-USDC-PERP').ok).toBe(true); // 200 µs later
    const mq = g.admit('u1', 'Advanced', 'massQuote', 'BTC-USDC-PERP');
    expect(mq.ok === false && mq.error).toBe('tier_not_eligible');
    // per symbol: 3 weighted actions per second here; BTC has 1 + 0.2 + 0.2 so far
    ns += 1_000_000n;
    expect(g.admit('u2', 'Apex', 'place', 'BTC-USDC-PERP').ok).toBe(true);
    const cap = g.admit('u3', 'Apex', 'place', 'BTC-USDC-PERP');
    expect(cap.ok === false && cap.error).toBe('VENUE_AT_CAPACITY');
    expect(cap.ok === false && cap.decision.retryAfter).toBe(1);
    // global: 5 per second; BTC 2.4 + ETH 1 = 3.4 so far
    expect(g.admit('u3', 'Apex', 'cancel', 'SOL-USDC-PERP').ok).toBe(true); // 3.6
    expect(g.admit('u3', 'Apex', 'place', 'SOL-USDC-PERP').ok).toBe(true); // 4.6
    const glob = g.admit('u4', 'Apex', 'place', 'XRP-USDC-PERP');
    expect(glob.ok ? '' : glob.detail).toMatch(/venue is at its cap of 5 weighted actions per second/);
    ns += 1_000_000_000n; // next second
    expect(g.admit('u3', 'Apex', 'place', 'BTC-USDC-PERP').ok).toBe(true);
    // mass quote batches per minute (Prime: 120)
    const wide = new TradingGuard(limiter, () => ns);
    let refused = 0;
    for (let i = 0; i < 121; i++) {
      ns += 1_000_000n;
      const r = wide.admit('u9', 'Prime', 'massQuote', null);
      if (!r.ok) refused++;
    }
    expect(refused).toBe(1);
  });
});
