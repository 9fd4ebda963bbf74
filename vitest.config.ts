import { defineConfig } from 'vitest/config';

// One vitest run over every workspace: `npm test` at the root.
export default defineConfig({
  test: {
    include: ['{packages,committee,sequencer-enclave,gateway,scripts}/**/test/**/*.test.ts'],
    setupFiles: ['./packages/transport/src/polyfill.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The JSON report lets .ci/run print its own 'N passed, N failed' line.
    reporters: ['default', ['json', { outputFile: '.test-results/vitest.json' }]],
  },
});
