// `npm start [-- --data DIR] [--env production|test] [--dealer]`: runs the whole local cluster.
import { DEALER_LABEL, DEFAULT_COMMITTEE_LINKS, layout } from '@tenebra/config';
import { httpLinkControl, startConsole, type ConsoleServer } from '@tenebra/console';
import { Cluster } from './cluster';
import { describeLinks, LINK_USAGE } from './flags';
import { describeReserve, measuredBitsPerSecond, OUTAGE_USAGE } from './outage';
import { startOptions } from './start-options';

const USAGE = `usage: npm start -- [--data DIR] [--env production|test] [--nodes N --threshold T] [--dealer] [--node-nice N] [--log-level info|debug] [--job-boundaries intake|progress] [--share-fanout all|spare|minimal] [--links tcp|unix]
                    [--link-latency-ms MS [--link-jitter-ms MS]] [--link-bandwidth-mbps MBPS] [--outage-minutes M --outage-rate R]
  --data DIR   data folder (default ./data, or ./data-test with --env test); a second start resumes it
  --nodes N --threshold T
               committee size n and Shamir degree t of a new data folder (default 5 and 2; need
               t < n/2: privacy against any t nodes, trading with any n - t alive; e.g. 3 1 or 7 3;
               7 2 for long outages: matching with any 2 down, and preprocessing too once it runs on
               2t+1 = 5 parties; with 5 2 it needs all five, so an outage lasts as long as the reserve).
               A resumed folder keeps its own size; naming another one is an error
  --env        production (ports 8080, 7100, 7001-7005, 7200; metrics 7300-7306) or test (9080, 9100, 9001-9005, 9200; metrics 9300-9306)
  --dealer     NOT PRIVATE, experiments only (new data folders, never with --env production): every
               node derives all preprocessing from a fixed public seed, so any node (or anyone) can
               unmask every opened value; every log line of every process says so
  --console-port P
               the committee console's port on 127.0.0.1 (default 8090, or 9090 with --env test; 0: any free
               one); --no-console: none. It needs the operator token npm start prints (also in DIR/operator-token)
  --node-nice  CPU niceness of the committee nodes (default 19, 0 to disable): on one host their
               preprocessing would otherwise starve the sequencer and gateway's acknowledgements
  --job-boundaries intake|progress
               where the sequencer ends the committee's MPC jobs (default progress: ops gather while
               the committee is busy, jobs grow with a backlog, at most 256 ops; intake: every intake
               group, the ops of one event-loop turn; docs/decisions/0008-job-boundaries.md). Applies
               to new and resumed folders (a folder made before 2026-12-03 ran intake)
  --share-fanout all|spare|minimal
               whom each node sends a job round's shares (default all; spare: the next t + 1 live nodes;
               minimal: the next t, 42% fewer messages, no late-share check; a node a sender left out
               asks for them; docs/decisions/0030-share-fanout.md). Applies to new and resumed folders
  --links tcp|unix
               how the committee nodes reach each other on this host (default ${DEFAULT_COMMITTEE_LINKS}): tcp on their loopback
               ports, unix on Unix domain sockets under DIR/sockets; Noise and Yamux on either, and
               the emulation below applies to both (docs/decisions/0041-unix-socket-links.md). The
               gateway and sequencer links stay on TCP. Applies to new and resumed folders
${LINK_USAGE}
${OUTAGE_USAGE}`;

async function main(): Promise<void> {
  const parsed = startOptions(process.argv.slice(2));
  if (parsed.help) {
    console.log(USAGE);
    return;
  }
  const { options, outage, consolePort } = parsed;
  const { env, dataDir } = options;
  const links = options.linkEmulation;
  // read before the nodes start writing their new logs: the production rate of the folder's last run
  const bitsPerSecond = measuredBitsPerSecond(dataDir);
  const cluster = await Cluster.start(options);
  let consoleServer: ConsoleServer | null = null;
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\nstopping cluster (${why}) ...`);
    await consoleServer?.close();
    await cluster.stop();
    console.log('all processes stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  console.log(`starting ${env} cluster in ${dataDir} ...`);
  await cluster.waitReady(120_000);
  for (const p of cluster.processes()) {
    console.log(`  ${p.role.padEnd(9)} ${String(p.index || '').padEnd(2)} pid ${p.pid}  ports ${JSON.stringify(p.ports)}${p.peerId ? `  peer ${p.peerId}` : ''}`);
  }
  console.log(`  ${describeLinks(links, options.links ?? DEFAULT_COMMITTEE_LINKS)}`);
  for (const line of describeReserve(cluster.configs.nodes[0]!, outage, bitsPerSecond)) console.log(`  ${line}`);
  if (cluster.configs.nodes[0]?.preprocessing.mode === 'dealer') {
    console.log(`  WARNING: ${DEALER_LABEL}`);
  }
  if (consolePort !== null) {
    // the console runs in this process: its kill / restart / freeze act on this launcher's children;
    // the operator token (new each start) guards it and the nodes' link control alike
    const token = cluster.operatorToken;
    consoleServer = await startConsole({
      target: cluster, n: cluster.configs.gateway.n, port: consolePort, token,
      links: httpLinkControl(() => cluster.linkControlUrls(), token),
    });
  }
  console.log(`\nbase_url ${cluster.baseUrl}\nws_url   ${cluster.wsUrl}`);
  if (consoleServer) {
    console.log(`console_url ${consoleServer.url}`);
    console.log(`operator_token ${cluster.operatorToken}`);
    console.log('  in a browser on this machine open console_url?token=<operator_token> (it sets a cookie and drops the token from the address)');
  }
  const metrics = cluster.metricsUrls();
  if (metrics.length > 0) {
    console.log('metrics (Prometheus, GET):');
    for (const m of metrics) console.log(`  ${`${m.role} ${m.index || ''}`.trim().padEnd(12)} ${m.url}`);
  }
  console.log(`operator token in ${layout(dataDir).operatorToken} (new each start): the console's, and POST /control/links on a node's metrics port changes its committee links (docs/decisions/0011-link-emulation.md)`);
  console.log(`cluster file ${dataDir}/cluster.json, logs in ${dataDir}/logs/`);
  console.log(`create an account: npm run accounts -- --data ${dataDir} create --tier Core --deposit 10000`);
  console.log('Ctrl-C stops every process.');
  console.log('A process that dies on its own is restarted (committee nodes then recover their shares).');
}

main().catch((e: unknown) => {
  console.error(`npm start failed: ${(e as Error).message}`);
  process.exit(1);
});
