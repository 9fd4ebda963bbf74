// One party of the libp2p benchmark in its own process: config over IPC, runs the plan, reports.
import '@tenebra/transport/src/polyfill';
import { FRAME_HEADER_BYTES, createLibp2pTransport, type LinkEmulation, type PeerEntry } from '@tenebra/transport';
import { createParty, type PreprocessingOptions } from '@tenebra/mpc';
import { runStep, stepName, type Step } from './mpc-plan';

interface Config { self: number; n: number; t: number; privateKeyHex: string; peers: PeerEntry[]; prep: PreprocessingOptions; plan: Step[]; links?: LinkEmulation }

process.on('message', (m: { type: 'config'; config: Config } | { type: 'exit' }) => {
  if (m.type === 'config') run(m.config).catch((e: unknown) => { process.send?.({ type: 'error', error: String(e instanceof Error ? e.stack : e) }); process.exit(1); });
  if (m.type === 'exit') process.exit(0);
});

async function run(cfg: Config): Promise<void> {
  const me = cfg.peers.find((p) => p.index === cfg.self)!;
  const transport = await createLibp2pTransport({ self: cfg.self, n: cfg.n, privateKey: Buffer.from(cfg.privateKeyHex, 'hex'), listen: me.addr, peers: cfg.peers, log: (m) => { if (m.startsWith('lean noise')) console.error(m); }, lazyWindowUpdates: !process.env.MPC_EAGER_WINDOW, leanNoise: !process.env.MPC_PLAIN_NOISE, ...(cfg.links ? { linkEmulation: cfg.links } : {}) });
  // MPC_TRACE=<party>[,<party>...] or 'all': log rounds; times are wall-clock ms (timeOrigin + now), comparable across processes.
  const traced = (process.env.MPC_TRACE ?? '').split(',');
  const trace = traced.includes('all') || traced.includes(String(cfg.self));
  const t0 = performance.timeOrigin;
  const abs = (x: unknown): unknown => (typeof x === 'number' && x > 1000 ? +(t0 + x).toFixed(3) : x);
  const fix = (e: object): object => Object.fromEntries(Object.entries(e).map(([k, v]) => [k, Array.isArray(v) ? v.map((a) => (Array.isArray(a) ? [a[0], abs(a[1])] : a)) : abs(v)]));
  const party = createParty({ n: cfg.n, t: cfg.t, transport, preprocessing: cfg.prep, traceRounds: trace, log: trace ? (e) => console.log(JSON.stringify(fix(e))) : undefined });
  await party.start();
  // Bytes handed to the transport: written, plus still queued at the step's end (a party that
  // finishes a job first may not have written its last round yet; counting only written bytes made
  // the per-comparison figure vary from run to run).
  const sent = (): number => {
    let b = 0;
    for (let j = 1; j <= cfg.n; j++) {
      if (j === cfg.self) continue;
      const s = transport.peerStats(j);
      b += s.sentBytes + s.queuedBytes - s.queuedMessages * FRAME_HEADER_BYTES;
    }
    return b;
  };
  // Messages handed to the transport (written and queued), for messages per 1000 bits per node
  const messages = (): number => {
    let m = 0;
    for (let j = 1; j <= cfg.n; j++) if (j !== cfg.self) m += transport.peerStats(j).sentMessages + transport.peerStats(j).queuedMessages;
    return m;
  };
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  const eld = process.env.MPC_ELD ? monitorEventLoopDelay({ resolution: 1 }) : undefined;
  eld?.enable();
  // MPC_CPU=1: print this process's CPU time per step; MPC_PROF=<dir>: CPU profile of the latency step
  // (MPC_PROF_STEP=<name>, e.g. 'lt x10000', profiles that step instead).
  const prof = process.env.MPC_PROF;
  const profStep = process.env.MPC_PROF_STEP;
  for (const step of cfg.plan) {
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    let session: import('node:inspector').Session | undefined;
    if (prof && (profStep ? stepName(step) === profStep : step.kind === 'latency')) {
      const { Session } = await import('node:inspector');
      session = new Session();
      session.connect();
      const post = (m: string, p?: object): Promise<unknown> => new Promise((res, rej) => session!.post(m, p ?? {}, (e, r) => (e ? rej(e) : res(r))));
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 100 });
      await post('Profiler.start');
    }
    const m0 = messages();
    const result = await runStep(party, step, sent);
    const messagesSent = messages() - m0;
    if (session) {
      const s = session;
      const r = await new Promise<{ profile: object }>((res, rej) => s.post('Profiler.stop', (e, x) => (e ? rej(e) : res(x as { profile: object }))));
      const { writeFileSync, mkdirSync } = await import('node:fs');
      mkdirSync(prof!, { recursive: true });
      writeFileSync(`${prof}/party-${cfg.self}-${stepName(step).replace(' ', '-')}.cpuprofile`, JSON.stringify(r.profile));
      s.disconnect();
    }
    if (process.env.MPC_CPU) {
      const c = process.cpuUsage(c0);
      console.log(`party ${cfg.self} ${result.step}: wall ${(performance.now() - w0).toFixed(0)} ms, cpu user ${(c.user / 1000).toFixed(0)} ms sys ${(c.system / 1000).toFixed(0)} ms`);
    }
    const used = process.cpuUsage(c0);
    process.send?.({ type: 'step', self: cfg.self, result: { ...result, cpuMs: (used.user + used.system) / 1000, messagesSent } });
  }
  if (eld) console.log(`party ${cfg.self} event-loop delay p50 ${(eld.percentile(50) / 1e6).toFixed(2)} ms p99 ${(eld.percentile(99) / 1e6).toFixed(2)} max ${(eld.max / 1e6).toFixed(1)}`);
  process.send?.({ type: 'done', self: cfg.self });
}
