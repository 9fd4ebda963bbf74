// `npm start` flags to cluster options, checked before anything starts or is written.
import { resolve } from 'node:path';
import { checkPreprocessingMode, committeeLinksOf, ENVS, JOB_BOUNDARY_POLICIES, reserveTargetsFor, SHARE_FANOUTS, type Env, type JobBoundaryPolicy, type ShareFanout, type OutageSizing } from '@tenebra/config';
import type { ClusterOptions } from './cluster';
import { LINK_FLAGS, linkEmulationOf, parseFlags } from './flags';
import { OUTAGE_FLAGS, outageSizingOf } from './outage';

function integerFlag(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const v = Number(text);
  if (!Number.isInteger(v)) throw new Error(`--${name} must be an integer, got '${text}'`);
  return v;
}

function niceness(text: string): number {
  const v = Number(text);
  if (!Number.isInteger(v) || v < 0 || v > 19) throw new Error(`--node-nice must be an integer in 0..19, got '${text}'`);
  return v;
}

/** The committee console's port (docs/decisions/0022-console.md): 8090 in production, 9090 in test; 0 takes any free one. */
function consolePort(text: string | undefined, env: Env): number {
  if (text === undefined) return env === 'test' ? 9090 : 8090;
  const v = Number(text);
  if (!Number.isInteger(v) || v < 0 || v > 65_535) throw new Error(`--console-port must be a port number (0 for any free one), got '${text}'`);
  return v;
}

/** The options `npm start` runs with (help: print the usage instead); throws a clear error on a bad or refused flag. */
export function startOptions(argv: string[]): { help: true } | { help: false; options: ClusterOptions; outage: OutageSizing | undefined; consolePort: number | null } {
  const flags = parseFlags(argv, ['data', 'env', 'log-level', 'node-nice', 'nodes', 'threshold', 'console-port', 'job-boundaries', 'share-fanout', 'links', ...LINK_FLAGS, ...OUTAGE_FLAGS], ['dealer', 'help', 'no-console']);
  if (flags.bool.has('help')) return { help: true };
  const env = (flags.str.get('env') ?? 'production') as Env;
  if (!ENVS.includes(env)) throw new Error(`--env must be one of ${ENVS.join(', ')}`);
  const dealer = flags.bool.has('dealer');
  // --dealer is not private: refused here already, not only when ensureCluster reads the folder
  if (dealer) checkPreprocessingMode(env, 'dealer');
  const dataDir = resolve(flags.str.get('data') ?? (env === 'test' ? 'data-test' : 'data'));
  const n = integerFlag('nodes', flags.str.get('nodes'));
  const t = integerFlag('threshold', flags.str.get('threshold'));
  if ((n === undefined) !== (t === undefined)) throw new Error('--nodes and --threshold go together (e.g. --nodes 7 --threshold 3)');
  const links = linkEmulationOf(flags);
  const outage = outageSizingOf(flags);
  const reserve = outage ? reserveTargetsFor(outage) : undefined;
  const jobBoundaries = flags.str.get('job-boundaries') as JobBoundaryPolicy | undefined;
  if (jobBoundaries !== undefined && !JOB_BOUNDARY_POLICIES.includes(jobBoundaries)) throw new Error(`--job-boundaries must be one of ${JOB_BOUNDARY_POLICIES.join(', ')}, got '${jobBoundaries}'`);
  const shareFanout = flags.str.get('share-fanout') as ShareFanout | undefined;
  if (shareFanout !== undefined && !SHARE_FANOUTS.includes(shareFanout)) throw new Error(`--share-fanout must be one of ${SHARE_FANOUTS.join(', ')}, got '${shareFanout}'`);
  const committeeLinks = committeeLinksOf(flags.str.get('links'));
  return {
    help: false,
    outage,
    consolePort: flags.bool.has('no-console') ? null : consolePort(flags.str.get('console-port'), env),
    options: {
      ...(links ? { linkEmulation: links } : {}),
      ...(reserve ? { reserve } : {}),
      ...(jobBoundaries ? { jobBoundaries } : {}),
      ...(shareFanout ? { shareFanout } : {}),
      ...(committeeLinks ? { links: committeeLinks } : {}),
      dataDir, env, ...(n !== undefined && t !== undefined ? { n, t } : {}), ...(dealer ? { preprocessing: 'dealer' as const } : {}), supervise: true,
      logLevel: flags.str.get('log-level') ?? 'info', nodeNice: niceness(flags.str.get('node-nice') ?? '19'),
    },
  };
}
