import { defineConfig } from 'vitest/config';
import LongestFirst from './vitest.sequencer.ts';
import Timing from './vitest.timing.ts';

// One vitest run over every workspace: `npm test` at the root.
// Two groups: the unit and package tests run first, two files at a time; then the tests that start a whole
// cluster of real processes (five nodes, sequencer, gateway), two files at a time: a cluster test
// spends most of its time waiting (recovery timers, fills, restarts; the load average stays near 2
// on two cores), so two of them side by side cut CI's time by about a third. No test asserts a
// timing: CPU costs are measured by the benchmark scripts.
const shared = {
  setupFiles: ['./packages/transport/src/polyfill.ts'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
};
const clusterTests = 'scripts/test/**/*.test.ts';

export default defineConfig({
  test: {
    // The JSON report lets .ci/run print its own 'N passed, N failed' line; timing.json holds each
    // file's wall time with its hooks (vitest.timing.ts), what vitest.sequencer.ts's seconds are.
    reporters: ['default', ['json', { outputFile: '.test-results/vitest.json' }], new Timing()],
    // longest files first in each group (vitest.sequencer.ts), so its two workers end together
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          ...shared,
          name: 'packages',
          include: ['{packages,committee,sequencer-enclave,gateway}/**/test/**/*.test.ts'],
          // Two files at a time (Vitest's default on two cores is one): about 400 s down to 258 s
          // (2026-12-01). Two files side by side make each slower, so a test whose outcome follows
          // wall time fails there first: ws.test.ts's rig walked its reference price with wall
          // time until its taker met a mark that refused it (gateway/test/harness.ts pins it now),
          // and risk-monitor.test.ts read a settlement batch of the 2 s wall-clock timer as the
          // last position change. No test may depend on how long it took to get somewhere.
          maxWorkers: 2,
          // Each worker runs file after file in one process (no fresh fork and module graph per
          // file): the group's 147 files spent 83 s importing and about 50 s starting forks, and its
          // CPU went from 450 to 320 s (2026-12-04, ADR 0026). So a file may leave nothing behind
          // that another reads: the spies and fake timers are restored in their files, the process
          // listeners removed, and metrics live in registries of their own, not prom-client's global.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'cluster',
          include: [clusterTests],
          // on a failure, print what the cluster's processes logged last (CI keeps no data folder)
          setupFiles: [...shared.setupFiles, './scripts/test/failure-logs.ts', './scripts/test/node-bundle-env.ts'],
          // the committee nodes start from one bundle built for the run, not under tsx (most of a
          // node's start-up CPU was tsx loading its modules): the nodes' CPU over a suite run fell
          // from 557 to 355 s (node-bundle-setup.ts, ADR 0026)
          globalSetup: ['./scripts/test/node-bundle-setup.ts'],
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
