import { defineConfig } from 'vitest/config';

// One vitest run over every workspace: `npm test` at the root.
// Two groups: the unit and package tests run in parallel first; then the tests that start a whole
// cluster of real processes (five nodes, sequencer, gateway) run one file at a time, alone on the
// machine, because on two cores they starve each other's preprocessing and their timings mean nothing.
const shared = {
  setupFiles: ['./packages/transport/src/polyfill.ts'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
};
const clusterTests = 'scripts/test/**/*.test.ts';

export default defineConfig({
  test: {
    // The JSON report lets .ci/run print its own 'N passed, N failed' line.
    reporters: ['default', ['json', { outputFile: '.test-results/vitest.json' }]],
    projects: [
      {
        test: {
          ...shared,
          name: 'packages',
          include: ['{packages,committee,sequencer-enclave,gateway}/**/test/**/*.test.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'cluster',
          include: [clusterTests],
          // on a failure, print what the cluster's processes logged last (CI keeps no data folder)
          setupFiles: [...shared.setupFiles, './scripts/test/failure-logs.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
