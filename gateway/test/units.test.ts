// Pure pieces: the instrument catalogue and exact decimals, margin and fee arithmetic, output
// reconstruction with bad shares, the rate limiter's windows, the exact JSON writer.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  INSTRUMENTS, checkInstrument, decimalOfNumber, fromUnits, toUnits, parseDecimal, formatDecimal, ratioToDecimal,
  usdcToMicro, microToUsdc, divRound, instrumentBySymbol, instrumentById,
} from '@tenebra/config';
import { shareSecret, encodeFieldVector } from '@tenebra/mpc';
import { generateX25519, seal, PairBox, SealError } from '@tenebra/seal';
import { resultAad, type ResultFrame } from '@tenebra/wire';
import pino from 'pino';
import { ResultCollector } from '../src/results/collector';
import { OutcomeWaiters, ResultPipeline } from '../src/results/pipeline';
import type { Clearing } from '../src/results/clearing';
import { GatewayEvents } from '../src/events';
import { decodeOutputs, ResultOpener } from '../src/sharing';
import { initialMargin, feeMicro, reservation, effectiveLeverage } from '../src/orders/margin';
import { averagePrice } from '../src/orders/view';
import { RateLimiter } from '../src/ratelimit';
import { stringify, RawNumber } from '../src/json';
import { etagMatches } from '../src/http/routes-public';

describe('instrument catalogue', () => {
  it('has the 20 spec symbols, consistent, with ids 1..20', () => {
    expect(INSTRUMENTS).toHaveLength(20);
    for (const i of INSTRUMENTS) checkInstrument(i);
    expect(INSTRUMENTS.map((i) => i.symbol_id)).toEqual(Array.from({ length: 20 }, (_, k) => k + 1));
    expect(instrumentById(instrumentBySymbol('PEPE-USDC-PERP')!.symbol_id)!.symbol).toBe('PEPE-USDC-PERP');
    expect(() => checkInstrument({ ...INSTRUMENTS[0]!, min_qty: '0.015' })).toThrow(/step grid/);
  });
});

describe('exact decimals', () => {
  it('reads JSON numbers through their shortest decimal text', () => {
    expect(decimalOfNumber(0.1)).toBe('0.1');
    expect(decimalOfNumber(1e-7)).toBe('0.0000001');
    expect(decimalOfNumber(3000)).toBe('3000');
    expect(decimalOfNumber(1.5e21)).toBe('1500000000000000000000');
    expect(decimalOfNumber(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(decimalOfNumber(-1)).toBeNull();
    expect(decimalOfNumber(Number.NaN)).toBeNull();
  });

  it('converts to grid units exactly and refuses off-grid values', () => {
    expect(toUnits('65432.1', '0.1')).toBe(654321n);
    expect(toUnits('0.00001', '0.00000001')).toBe(1000n);
    expect(toUnits('1.25', '0.5')).toBeNull();
    expect(toUnits('1.5', '0.5')).toBe(3n);
    expect(toUnits('12', '1000')).toBeNull();
    expect(toUnits('abc', '1')).toBeNull();
    expect(fromUnits(123n, '0.01')).toBe('1.23');
    expect(fromUnits(-5n, '0.5')).toBe('-2.5');
    expect(usdcToMicro('12.5')).toBe(12_500_000n);
    expect(usdcToMicro('0.0000001')).toBeNull();
    expect(microToUsdc(-1n)).toBe('-0.000001');
    expect(ratioToDecimal(2n, 3n, 4)).toBe('0.6667');
    expect(ratioToDecimal(-1n, 8n, 2)).toBe('-0.13');
    expect(divRound(-7n, 2n, 'floor')).toBe(-4n);
    expect(divRound(-7n, 2n, 'ceil')).toBe(-3n);
  });

  it('round-trips every grid value: units -> text -> units', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: (1n << 40n) - 1n }), fc.constantFrom(...INSTRUMENTS), (u, inst) => {
      expect(toUnits(fromUnits(u, inst.tick_size), inst.tick_size)).toBe(u);
      expect(toUnits(fromUnits(u, inst.step_size), inst.step_size)).toBe(u);
      const d = parseDecimal(fromUnits(u, inst.tick_size))!;
      expect(formatDecimal(d)).toBe(fromUnits(u, inst.tick_size));
    }));
  });
});

describe('margin and fees', () => {
  const eth = instrumentBySymbol('ETH-USDC-PERP')!;
  const pepe = instrumentBySymbol('PEPE-USDC-PERP')!;
  it('initial margin = ceil(notional / leverage) in micro-USDC', () => {
    // 0.5 ETH (500 steps) at 3000 (300000 ticks) = 1500 USDC; / 10 = 150 USDC
    expect(initialMargin(eth, 500n * 300000n, 10)).toBe(150_000_000n);
    // 1000 PEPE at 0.00000001 = 0.00001 USDC = 10 micro; / 3 = 3.33 -> 4
    expect(initialMargin(pepe, 1n * 1n, 3)).toBe(4n);
    expect(effectiveLeverage({ leverage: 50 }, eth)).toBe(10);
    expect(effectiveLeverage({ leverage: 3 }, eth)).toBe(3);
  });
  it('fees: charges round up, rebates round toward zero', () => {
    expect(feeMicro(eth, 500n * 300000n, 200n)).toBe(300_000n); // 2 bps of 1500
    expect(feeMicro(pepe, 1n, 500n)).toBe(1n); // 0.005 micro -> 1
    expect(feeMicro(pepe, 1n, -100n)).toBe(0n); // 0.001 micro rebate -> 0
    expect(feeMicro(eth, 500n * 300000n, -100n)).toBe(-150_000n);
    expect(reservation(eth, 0n, 300000n, 10, 500n)).toBe(0n);
    expect(reservation(eth, 1000n, 300000n, 10, 500n)).toBe(300_000_000n + 1_500_000n);
  });
  it('average price rounds the exact mean half up at four digits past the tick', () => {
    const sol = instrumentBySymbol('SOL-USDC-PERP')!;
    expect(averagePrice(100n * 10000n + 200n * 10001n, 300n, sol)).toBe('100.006667');
    expect(averagePrice(2n * 300000n, 2n, eth)).toBe('3000');
  });
});

describe('decodeOutputs', () => {
  const t = 2;
  const values = [123n, 456n, 789n, 10n];
  const shares = shareSecret(values, 5, t);
  const pts = (nodes: number[], bad: Record<number, bigint[]> = {}) => nodes.map((nd) => ({ node: nd, values: bad[nd] ?? shares[nd - 1]! }));

  it('reconstructs from t+1 or more consistent vectors', () => {
    expect(decodeOutputs(pts([2, 4, 5]), t)).toMatchObject({ ok: true, values, bad: [] });
    expect(decodeOutputs(pts([1, 2, 3, 4, 5]), t)).toMatchObject({ ok: true, values, bad: [] });
    expect(decodeOutputs(pts([1, 2]), t).ok).toBe(false);
  });
  it('corrects one bad vector among five, wherever it is, and names it', () => {
    for (let badNode = 1; badNode <= 5; badNode++) {
      const wrong = shares[badNode - 1]!.map((v, i) => (i === 2 ? v + 7n : v));
      const r = decodeOutputs(pts([1, 2, 3, 4, 5], { [badNode]: wrong }), t);
      expect(r).toMatchObject({ ok: true, values, bad: [badNode] });
    }
  });
  it('refuses to guess with one bad vector among four, and flags a wrong length', () => {
    const wrong = shares[0]!.map((v) => v + 1n);
    expect(decodeOutputs(pts([1, 2, 3, 4], { 1: wrong }), t).ok).toBe(false);
    const r = decodeOutputs(pts([1, 2, 3, 4], { 4: [1n] }), t);
    expect(r).toMatchObject({ ok: true, values, bad: [4] });
  });
});

describe('rate limiter', () => {
  it('counts a fixed minute window and a token bucket; reports the binding budget', () => {
    let now = 60_000 * 1000 + 10_000;
    const rl = new RateLimiter(() => now);
    const lim = { perMinute: 10, perSecond: 2, burst: 3 };
    const got = Array.from({ length: 4 }, () => rl.request('k', lim));
    expect(got.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(got[2]).toMatchObject({ limit: 10, remaining: 7, reset: 60_060 });
    expect(got[3]).toMatchObject({ limit: 3, remaining: 0, retryAfter: 1 });
    now += 500; // one token back
    expect(rl.request('k', lim).allowed).toBe(true);
    expect(rl.request('k', lim).allowed).toBe(false);
    for (let i = 0; i < 6; i++) {
      now += 1000;
      rl.request('k', lim);
    }
    now += 1000;
    expect(rl.request('k', lim)).toMatchObject({ allowed: false, limit: 10, retryAfter: 43 }); // window ends at 60060 s, now 60017.5 s
    now = 60_000 * 1001;
    expect(rl.request('k', lim)).toMatchObject({ allowed: true, remaining: 9 });
    expect(rl.request('other', lim)).toMatchObject({ allowed: true, remaining: 9 });
  });
  it('weighs trading actions: a placement is 1, a cancel 0.2', () => {
    const rl = new RateLimiter(() => 0);
    for (let i = 0; i < 9; i++) expect(rl.action('k', 10, 1000).allowed).toBe(true);
    for (let i = 0; i < 5; i++) expect(rl.action('k', 10, 200).allowed).toBe(true);
    expect(rl.action('k', 10, 200).allowed).toBe(false);
  });
  it('counts cancels against their own minute budget, apart from the weighted one', () => {
    const rl = new RateLimiter(() => 0);
    for (let i = 0; i < 10; i++) expect(rl.action('k', 10, 1000).allowed).toBe(true);
    expect(rl.action('k', 10, 1000).allowed).toBe(false);
    for (let i = 0; i < 50; i++) expect(rl.cancel('k', 50)).toMatchObject({ allowed: true, remaining: 49 - i });
    expect(rl.cancel('k', 50)).toMatchObject({ allowed: false, limit: 50, remaining: 0 });
    // the cancel window is persisted and restored with the others
    const saved = rl.takeDirty();
    const back = new RateLimiter(() => 1);
    back.restore(saved);
    expect(back.cancel('k', 50).allowed).toBe(false);
    expect(back.action('k', 10, 1000).allowed).toBe(false);
  });
});

describe('exact JSON', () => {
  it('writes bigints and RawNumbers verbatim', () => {
    expect(stringify({ a: 1795323670901499293n, p: new RawNumber('0.00000001'), n: null, s: 'x', u: undefined, l: [1, true] }))
      .toBe('{"a":1795323670901499293,"p":0.00000001,"n":null,"s":"x","l":[1,true]}');
    expect(() => new RawNumber('1e-8')).toThrow();
  });
  it('matches If-None-Match the way caches send it', () => {
    expect(etagMatches('"3"', '3')).toBe(true);
    expect(etagMatches('W/"3", "4"', '4')).toBe(true);
    expect(etagMatches('"33"', '3')).toBe(false);
    expect(etagMatches(undefined, '3')).toBe(false);
  });
});

describe('result collector', () => {
  const gk = generateX25519();
  const nodeKeys = Array.from({ length: 5 }, () => generateX25519());
  const opener = (): ResultOpener => new ResultOpener(nodeKeys.map((k, i) => ({ index: i + 1, publicKey: k.publicKey })), 5, gk.privateKey);
  const log = pino({ level: 'silent' });
  const frame = (seq: number, node: number, shares: bigint[][], anonymous = false, attempt = 0): ResultFrame => {
    const plain = encodeFieldVector(shares[node - 1]!);
    const aad = resultAad(String(seq), node);
    const box = anonymous ? seal(gk.publicKey, plain, aad) : new PairBox(nodeKeys[node - 1]!.privateKey, gk.publicKey).seal(plain, aad);
    return {
      t: 'result', node, seq: String(seq), pub: { kind: 'place', order_id: `o${seq}`, fills: ['m'], rested: false, cancel_reason: null, reject_reason: null },
      sealed: Buffer.from(box).toString('base64'), job: `batch:${seq}-${seq}:${attempt}`,
    };
  };

  it('never combines the shares of two attempts of a job (ADR 0023): t+1 of one attempt decide', () => {
    const c = new ResultCollector({ n: 5, t: 2, opener: opener() }, log);
    const all = new Set([1, 2, 3, 4, 5]);
    // attempt 0's shares (released by a node outside the quorum) and the retry's: other masks,
    // so mixed they would reconstruct garbage
    const first = shareSecret([41n, 42n], 5, 2);
    const retry = shareSecret([41n, 42n], 5, 2);
    c.add(frame(1, 1, first, false, 0), 1n, 0);
    c.add(frame(1, 2, retry, false, 1), 1n, 0);
    c.add(frame(1, 3, retry, false, 1), 1n, 0);
    expect(c.decide(1n, all, 0)).toBeNull(); // three results, but only two of one attempt
    c.add(frame(1, 4, retry, false, 1), 1n, 0);
    expect(c.decide(1n, all, 0)).toMatchObject({ seq: 1n, values: [41n, 42n] });
  });

  it('decides at t+1, waits a short grace only for connected nodes that keep up, never for one far behind', () => {
    const c = new ResultCollector({ n: 5, t: 2, opener: opener(), graceMs: 30 }, log);
    const connected = new Set([1, 2, 3, 4]);
    for (let seq = 1; seq <= 3; seq++) {
      const sh = shareSecret([BigInt(seq), 7n], 5, 2);
      for (const nd of [1, 2, 3]) c.add(frame(seq, nd, sh), 1n, 1000);
    }
    expect(c.decide(1n, connected, 1000)).toEqual({ retryInMs: 30 }); // node 4 could still report seq 1
    expect(c.decide(1n, connected, 1031)).toMatchObject({ seq: 1n, values: [1n, 7n] });
    expect(c.decide(2n, connected, 1031)).toMatchObject({ seq: 2n, values: [2n, 7n] }); // node 4 is behind: no wait
    expect(c.decide(4n, connected, 1031)).toBeNull();
  });

  it('by default decides with the first t+1 agreeing results, waiting for nobody', () => {
    const c = new ResultCollector({ n: 5, t: 2, opener: opener() }, log);
    const sh = shareSecret([31n, 32n], 5, 2);
    for (const nd of [2, 4]) c.add(frame(1, nd, sh), 1n, 1000);
    expect(c.decide(1n, new Set([1, 2, 3, 4, 5]), 1000)).toBeNull(); // t results: not enough
    c.add(frame(1, 5, sh), 1n, 1000);
    expect(c.decide(1n, new Set([1, 2, 3, 4, 5]), 1000)).toMatchObject({ seq: 1n, values: [31n, 32n] }); // nodes 1 and 3 keep up, not waited for
  });

  it('decides at once when t+2 agree with consistent shares; a bad share among them waits for the rest', () => {
    const c = new ResultCollector({ n: 5, t: 2, opener: opener(), graceMs: 30 }, log);
    const connected = new Set([1, 2, 3, 4, 5]);
    const sh = shareSecret([11n, 12n], 5, 2);
    for (const nd of [1, 2, 3, 4]) c.add(frame(1, nd, sh), 1n, 1000);
    expect(c.decide(1n, connected, 1000)).toMatchObject({ seq: 1n, values: [11n, 12n] }); // node 5 not waited for
    // seq 2: node 3's share of the first output is off by one; four shares detect it but cannot say whose
    const sh2 = shareSecret([21n, 22n], 5, 2);
    const bad = sh2.map((v, i) => (i === 2 ? [v[0]! + 1n, v[1]!] : v));
    for (const nd of [1, 2, 3, 4]) c.add(frame(2, nd, bad), 2n, 1000);
    expect(c.decide(2n, connected, 1000)).toBeNull();
    c.add(frame(2, 5, bad), 2n, 1001); // the fifth share corrects it and names node 3
    expect(c.decide(2n, connected, 1001)).toMatchObject({ seq: 2n, values: [21n, 22n] });
  });

  it('needs t+1 results that agree on the outcome', () => {
    const c = new ResultCollector({ n: 5, t: 2, opener: opener(), graceMs: 0 }, log);
    const sh = shareSecret([5n, 6n], 5, 2);
    c.add(frame(1, 1, sh), 1n, 0);
    c.add(frame(1, 2, sh), 1n, 0);
    const odd = { ...frame(1, 3, sh), pub: { kind: 'place', order_id: 'other' } };
    c.add(odd, 1n, 0);
    expect(c.decide(1n, new Set([1, 2, 3]), 0)).toBeNull();
    c.add(frame(1, 4, sh), 1n, 0);
    expect(c.decide(1n, new Set([1, 2, 3, 4]), 0)).toMatchObject({ values: [5n, 6n] });
  });

  it('checks a result that comes while its decided seq commits, after the batch\'s events are out (ADR 0045)', async () => {
    // Before, such a result went into a fresh slot that the commit then dropped: a bad share from
    // the 4th or 5th node of a fill was never named.
    const lines: string[] = [];
    const plog = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const o = opener();
    let opened = 0;
    const counting = { open: (...a: Parameters<ResultOpener['open']>) => { opened++; return o.open(...a); } } as unknown as ResultOpener;
    const c = new ResultCollector({ n: 5, t: 2, opener: counting }, plog);
    let commit: (() => void) | null = null;
    const order: string[] = [];
    const clearing = {
      cursor: () => 1n,
      applyBatch: () => new Promise((resolve) => {
        commit = () => resolve({ orderEvents: [{ message_type: 'filled', order: { order_id: 'o1' } }], positionEvents: [], cancels: new Map(), placed: [] });
      }),
    } as unknown as Clearing;
    const events = new GatewayEvents();
    events.on('order', () => order.push(`pushed (opened ${opened})`));
    const p = new ResultPipeline(c, clearing, new OutcomeWaiters(), events, { nowMs: () => 0, nowNs: () => 0n } as never, plog);
    for (const nd of [1, 2, 3, 4, 5]) p.nodeUp(nd);
    const sh = shareSecret([41n, 42n], 5, 2);
    const bad = sh.map((v, i) => (i === 3 ? [v[0]! + 1n, v[1]!] : v));
    for (const nd of [1, 2, 3]) p.onResult(frame(1, nd, sh));
    await new Promise((r) => setImmediate(r)); // decided: its batch commits
    expect(commit).not.toBeNull();
    p.onResult(frame(1, 4, bad)); // while the commit is in flight
    expect(opened).toBe(3); // not opened yet
    commit!();
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(['pushed (opened 3)']);
    expect(opened).toBe(4);
    expect(lines.some((l) => l.includes('inconsistent output share from node 4 (arrived after the decision)'))).toBe(true);
    expect(p.cursor).toBe(2n);
  });

  it('opens pair boxes from each node; refuses an anonymous box (anyone can make one) and a box from the wrong node', () => {
    const o = opener();
    const sh = shareSecret([9n], 5, 2);
    expect(o.open(frame(1, 2, sh).sealed, '1', 2)).toEqual(sh[1]);
    expect(() => o.open(frame(1, 3, sh, true).sealed, '1', 3)).toThrow(SealError);
    // node 4's box presented as node 5's: wrong pair key and wrong aad
    expect(() => o.open(frame(1, 4, sh).sealed, '1', 5)).toThrow(SealError);
  });

  it('agrees on an outcome whatever the order of its keys, and tells different outcomes apart, over many seqs (the canonical-text memo)', () => {
    const c = new ResultCollector({ n: 5, t: 2, opener: opener() }, log);
    const all = new Set([1, 2, 3, 4, 5]);
    for (let seq = 1; seq <= 200; seq++) {
      const sh = shareSecret([BigInt(seq)], 5, 2);
      const base = frame(seq, 1, sh);
      c.add(base, 1n, 0);
      // node 2: the same outcome with its keys in another order (a different JSON.stringify text)
      const reordered = Object.fromEntries(Object.entries(base.pub).reverse());
      c.add({ ...frame(seq, 2, sh), pub: reordered }, 1n, 0);
      // node 3: another outcome every third seq; the same text as node 1 otherwise (a memo hit)
      const other = seq % 3 === 0 ? { ...frame(seq, 3, sh), pub: { ...base.pub, rested: true } } : frame(seq, 3, sh);
      c.add(other, 1n, 0);
      if (seq % 3 === 0) {
        expect(c.decide(BigInt(seq), all, 0), `seq ${seq}`).toBeNull();
        c.add(frame(seq, 4, sh), 1n, 0);
      }
      expect(c.decide(BigInt(seq), all, 0), `seq ${seq}`).toMatchObject({ seq: BigInt(seq), values: [BigInt(seq)] });
    }
  });
});
