import { describe, expect, it } from 'vitest';
import { SimNetwork, type Transport, Prng } from '../src/index';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Starts every party and records every delivery and peer event as one text line. */
async function startAll(net: SimNetwork, trace: string[]): Promise<void> {
  for (let i = 1; i <= net.n; i++) attach(net, net.transport(i), trace);
  for (let i = 1; i <= net.n; i++) await net.transport(i).start();
}

function attach(net: SimNetwork, t: Transport, trace: string[]): void {
  t.onMessage((from, data) => trace.push(`${net.clock.now().toFixed(6)} ${from}->${t.self} ${dec.decode(data)}`));
  t.onPeer((peer, up) => trace.push(`${net.clock.now().toFixed(6)} ${t.self} sees ${peer} ${up ? 'up' : 'down'}`));
}

/** A chatty scenario: every party answers each message until a hop limit, with jitter and loss. */
async function chatter(seed: number | bigint): Promise<string[]> {
  const net = new SimNetwork({ n: 4, seed, link: { latencyMs: 2, jitterMs: 3, loss: 0.1 } });
  const trace: string[] = [];
  await startAll(net, trace);
  for (let i = 1; i <= 4; i++) {
    const t = net.transport(i);
    t.onMessage((from, data) => {
      const hop = Number(dec.decode(data).split(':')[1]);
      // Reply asynchronously: the loop must let this microtask chain finish before the next event.
      void Promise.resolve().then(() => {
        if (hop < 6) t.send(((from + hop) % 4) + 1, enc.encode(`m${t.self}:${hop + 1}`));
      });
    });
  }
  for (let i = 1; i <= 4; i++) for (let j = 1; j <= 4; j++) if (i !== j) net.transport(i).send(j, enc.encode(`s${i}:0`));
  await net.run();
  trace.push(`end ${net.clock.now()} msgs=${net.stats.messages} bytes=${net.stats.bytes} dropped=${net.stats.dropped}`);
  return trace;
}

describe('Prng', () => {
  it('is deterministic per seed and roughly uniform', () => {
    const a = new Prng(42);
    const b = new Prng(42n);
    const c = new Prng(43);
    const xa = Array.from({ length: 1000 }, () => a.nextU32());
    const xb = Array.from({ length: 1000 }, () => b.nextU32());
    const xc = Array.from({ length: 1000 }, () => c.nextU32());
    expect(xa).toEqual(xb);
    expect(xa).not.toEqual(xc);
    const p = new Prng(7);
    let sum = 0;
    for (let i = 0; i < 10000; i++) sum += p.nextFloat();
    expect(sum / 10000).toBeGreaterThan(0.47);
    expect(sum / 10000).toBeLessThan(0.53);
  });
});

describe('SimNetwork', () => {
  it('replays byte-identical traces from the same seed; different seeds differ', async () => {
    const t1 = await chatter(12345);
    const t2 = await chatter(12345);
    const t3 = await chatter(54321);
    expect(t1.length).toBeGreaterThan(20);
    expect(t1.join('\n')).toBe(t2.join('\n'));
    expect(t1.join('\n')).not.toBe(t3.join('\n'));
  });

  it('delivers in latency order and advances the virtual clock', async () => {
    const net = new SimNetwork({ n: 3, seed: 1 });
    net.setLink(1, 2, { latencyMs: 10 });
    net.setLink(1, 3, { latencyMs: 3 });
    const got: string[] = [];
    net.transport(2).onMessage((from, d) => got.push(`${net.clock.now()}:${from}->2:${dec.decode(d)}`));
    net.transport(3).onMessage((from, d) => got.push(`${net.clock.now()}:${from}->3:${dec.decode(d)}`));
    for (let i = 1; i <= 3; i++) await net.transport(i).start();
    await net.run(); // deliver onPeer events
    const t0 = net.clock.now();
    net.transport(1).send(2, enc.encode('slow'));
    net.transport(1).send(3, enc.encode('fast'));
    await net.run();
    expect(got).toEqual([`${t0 + 3}:1->3:fast`, `${t0 + 10}:1->2:slow`]);
    expect(net.stats.perLink(1, 2)).toEqual({ messages: 1, bytes: 4 });
    expect(net.stats.perLink(2, 1)).toEqual({ messages: 0, bytes: 0 });
  });

  it('copies message bytes at send time', async () => {
    const net = new SimNetwork({ n: 2, seed: 1 });
    let seen = '';
    net.transport(2).onMessage((_f, d) => { seen = dec.decode(d); });
    await net.transport(1).start();
    await net.transport(2).start();
    const buf = enc.encode('abc');
    net.transport(1).send(2, buf);
    buf[0] = 'x'.charCodeAt(0);
    await net.run();
    expect(seen).toBe('abc');
  });

  it('runs defer after microtasks and in scheduling order; timers at now+ms; cancel works', async () => {
    const net = new SimNetwork({ n: 1, seed: 1 });
    const log: string[] = [];
    const c = net.transport(1).clock;
    c.setTimeout(() => log.push(`t5@${c.now()}`), 5);
    const cancel = c.setTimeout(() => log.push('cancelled'), 2);
    c.defer(() => {
      log.push(`d1@${c.now()}`);
      void Promise.resolve().then(() => log.push('micro-after-d1'));
      c.defer(() => log.push('d3'));
    });
    c.defer(() => log.push('d2'));
    cancel();
    await net.run();
    expect(log).toEqual(['d1@0', 'micro-after-d1', 'd2', 'd3', 't5@5']);
  });

  it('crash drops in-flight messages and timers; restart gives a new incarnation and peers see up', async () => {
    const net = new SimNetwork({ n: 3, seed: 9, link: { latencyMs: 5 } });
    const trace: string[] = [];
    await startAll(net, trace);
    await net.run();
    expect(net.transport(1).isUp(2)).toBe(true);
    let fired = false;
    net.transport(2).clock.setTimeout(() => { fired = true; }, 1);
    net.transport(1).send(2, enc.encode('to-2'));
    net.transport(2).send(3, enc.encode('from-2'));
    net.transport(1).send(3, enc.encode('to-3'));
    net.crash(2);
    expect(net.isCrashed(2)).toBe(true);
    await net.run();
    expect(fired).toBe(false);
    const deliveries = trace.filter((l) => l.includes('->'));
    expect(deliveries.map((l) => l.split(' ').slice(1).join(' '))).toEqual(['1->3 to-3']);
    expect(trace.some((l) => l.endsWith('1 sees 2 down'))).toBe(true);
    expect(trace.some((l) => l.endsWith('3 sees 2 down'))).toBe(true);
    expect(net.transport(1).isUp(2)).toBe(false);
    expect(net.stats.dropped).toBe(2);
    // Sending to a crashed party never throws.
    net.transport(1).send(2, enc.encode('lost'));
    const old = net.transport(2);
    const t2 = net.restart(2);
    expect(t2).not.toBe(old);
    expect(net.transport(2)).toBe(t2);
    expect(net.isCrashed(2)).toBe(false);
    await expect(old.start()).rejects.toThrow(/restart/);
    trace.length = 0;
    attach(net, t2, trace);
    await t2.start();
    await net.run();
    expect(trace.map((l) => l.split(' ').slice(1).join(' ')).sort()).toEqual(
      ['1 sees 2 up', '2 sees 1 up', '2 sees 3 up', '3 sees 2 up'],
    );
    // The old incarnation's handlers are gone; the new one receives.
    trace.length = 0;
    net.transport(1).send(2, enc.encode('hello-again'));
    await net.run();
    expect(trace.map((l) => l.split(' ').slice(1).join(' '))).toEqual(['1->2 hello-again']);
  });

  it('stop() behaves like crash for that incarnation', async () => {
    const net = new SimNetwork({ n: 2, seed: 3 });
    const trace: string[] = [];
    await startAll(net, trace);
    await net.run();
    net.transport(1).send(2, enc.encode('x'));
    await net.transport(2).stop();
    await net.run();
    expect(trace.filter((l) => l.includes('->'))).toEqual([]);
    expect(trace.some((l) => l.endsWith('1 sees 2 down'))).toBe(true);
    expect(net.isCrashed(2)).toBe(true);
  });

  it('partition drops cross-group messages (also in flight) and heal restores', async () => {
    const net = new SimNetwork({ n: 5, seed: 5, link: { latencyMs: 4 } });
    const trace: string[] = [];
    await startAll(net, trace);
    await net.run();
    trace.length = 0;
    net.transport(1).send(4, enc.encode('inflight'));
    net.partition([[1, 2, 3], [4, 5]]);
    net.transport(1).send(2, enc.encode('same'));
    net.transport(5).send(3, enc.encode('cross'));
    await net.run();
    const lines = trace.map((l) => l.split(' ').slice(1).join(' '));
    expect(lines.filter((l) => l.includes('->'))).toEqual(['1->2 same']);
    expect(lines.filter((l) => l.includes('down')).length).toBe(12); // 6 cross pairs, both ends
    expect(net.transport(1).isUp(4)).toBe(false);
    expect(net.transport(1).isUp(2)).toBe(true);
    trace.length = 0;
    net.heal();
    await net.run();
    expect(trace.filter((l) => l.includes(' up')).length).toBe(12);
    net.transport(5).send(3, enc.encode('cross'));
    await net.run();
    expect(trace.filter((l) => l.includes('->')).map((l) => l.split(' ').slice(1).join(' '))).toEqual(['5->3 cross']);
  });

  it('freeze holds a party\'s timers and incoming messages (peers still see it up) until thaw; crash ends a freeze', async () => {
    const net = new SimNetwork({ n: 3, seed: 4, link: { latencyMs: 1 } });
    const trace: string[] = [];
    await startAll(net, trace);
    await net.run();
    trace.length = 0;
    net.freeze(2);
    expect(net.isFrozen(2)).toBe(true);
    net.transport(1).send(2, enc.encode('a'));
    net.transport(1).send(2, enc.encode('b'));
    net.transport(2).clock.setTimeout(() => trace.push(`${net.clock.now()} timer of 2`), 5);
    net.transport(3).clock.setTimeout(() => trace.push(`${net.clock.now()} timer of 3`), 5);
    await net.run();
    expect(trace).toEqual(['5 timer of 3']); // nothing reached or ran at 2, and no peer saw it down
    expect(net.transport(1).isUp(2)).toBe(true);
    net.clock.setTimeout(() => net.thaw(2), 95); // at 100
    await net.run();
    expect(trace).toEqual(['5 timer of 3', '100.000000 1->2 a', '100.000000 1->2 b', '100 timer of 2']);
    // a crash while frozen drops what was held; the restarted incarnation is not frozen
    net.freeze(3);
    net.transport(1).send(3, enc.encode('lost'));
    await net.run({ maxTimeMs: 10 });
    net.crash(3);
    expect(net.isFrozen(3)).toBe(false);
    const t3 = net.restart(3);
    attach(net, t3, trace);
    await t3.start();
    net.transport(1).send(3, enc.encode('new'));
    await net.run();
    expect(trace.filter((l) => l.includes('->3'))).toEqual(['102.000000 1->3 new']);
  });

  it('loss drops about the configured fraction', async () => {
    const net = new SimNetwork({ n: 2, seed: 77, link: { loss: 0.3 } });
    let got = 0;
    net.transport(2).onMessage(() => { got++; });
    await net.transport(1).start();
    await net.transport(2).start();
    for (let i = 0; i < 2000; i++) net.transport(1).send(2, new Uint8Array(1));
    await net.run();
    expect(got + net.stats.dropped).toBe(2000);
    expect(got).toBeGreaterThan(1300);
    expect(got).toBeLessThan(1500);
    net.setLink(1, 2, { loss: 1 });
    net.transport(1).send(2, new Uint8Array(1));
    await net.run();
    expect(got + net.stats.dropped).toBe(2001);
  });

  it('settle returns values, rethrows errors, and reports deadlock and time limits', async () => {
    const net = new SimNetwork({ n: 2, seed: 1 });
    const c = net.clock;
    const v = await net.settle(new Promise<number>((r) => c.setTimeout(() => r(7), 100)));
    expect(v).toBe(7);
    expect(c.now()).toBe(100);
    await expect(net.settle(new Promise((_r, rej) => c.setTimeout(() => rej(new Error('boom')), 1)))).rejects.toThrow('boom');
    await expect(net.settle(new Promise(() => undefined))).rejects.toThrow('simnet deadlock: no events left and promise unsettled');
    const tick = (): void => { c.setTimeout(tick, 10); };
    tick();
    await expect(net.settle(new Promise(() => undefined), { maxTimeMs: 1000 })).rejects.toThrow(/simnet time limit/);
  });

  it('a request/response protocol settles on the simulated network', async () => {
    const net = new SimNetwork({ n: 3, seed: 2, link: { latencyMs: 1, jitterMs: 1 } });
    for (let i = 1; i <= 3; i++) {
      const t = net.transport(i);
      t.onMessage((from, d) => { if (d[0] === 0) t.send(from, Uint8Array.of(1, t.self)); });
    }
    for (let i = 1; i <= 3; i++) await net.transport(i).start();
    const t1 = net.transport(1);
    const replies = new Promise<number[]>((resolve) => {
      const got: number[] = [];
      t1.onMessage((from, d) => { if (d[0] === 1) { got.push(from); if (got.length === 2) resolve(got.sort()); } });
    });
    t1.send(2, Uint8Array.of(0));
    t1.send(3, Uint8Array.of(0));
    expect(await net.settle(replies)).toEqual([2, 3]);
  });
});
