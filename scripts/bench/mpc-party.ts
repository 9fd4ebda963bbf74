// One party of the libp2p benchmark in its own process: config over IPC, runs the plan, reports.
import '@tenebra/transport/src/polyfill';
import { createLibp2pTransport, type PeerEntry } from '@tenebra/transport';
import { createParty, type PreprocessingOptions } from '@tenebra/mpc';
import { runStep, type Step } from './mpc-plan';

interface Config { self: number; n: number; t: number; privateKeyHex: string; peers: PeerEntry[]; prep: PreprocessingOptions; plan: Step[] }

process.on('message', (m: { type: 'config'; config: Config } | { type: 'exit' }) => {
  if (m.type === 'config') run(m.config).catch((e: unknown) => { process.send?.({ type: 'error', error: String(e instanceof Error ? e.stack : e) }); process.exit(1); });
  if (m.type === 'exit') process.exit(0);
});

async function run(cfg: Config): Promise<void> {
  const me = cfg.peers.find((p) => p.index === cfg.self)!;
  const transport = await createLibp2pTransport({ self: cfg.self, n: cfg.n, privateKey: Buffer.from(cfg.privateKeyHex, 'hex'), listen: me.addr, peers: cfg.peers, log: () => {} });
  const trace = process.env.MPC_TRACE === String(cfg.self);
  const party = createParty({ n: cfg.n, t: cfg.t, transport, preprocessing: cfg.prep, traceRounds: trace, log: trace ? (e) => console.log(performance.now().toFixed(2), JSON.stringify(e)) : undefined });
  await party.start();
  const sent = (): number => {
    let b = 0;
    for (let j = 1; j <= cfg.n; j++) if (j !== cfg.self) b += transport.peerStats(j).sentBytes;
    return b;
  };
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  const eld = process.env.MPC_ELD ? monitorEventLoopDelay({ resolution: 1 }) : undefined;
  eld?.enable();
  for (const step of cfg.plan) process.send?.({ type: 'step', self: cfg.self, result: await runStep(party, step, sent) });
  if (eld) console.log(`party ${cfg.self} event-loop delay p50 ${(eld.percentile(50) / 1e6).toFixed(2)} ms p99 ${(eld.percentile(99) / 1e6).toFixed(2)} max ${(eld.max / 1e6).toFixed(1)}`);
  process.send?.({ type: 'done', self: cfg.self });
}
