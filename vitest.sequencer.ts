// Longest test files first (LPT scheduling) in each project, so that the two workers of a group
// finish near the same time. Vitest's own order on a clean clone (CI: no results cache) is the
// largest file first, which left the cluster group's longest file (committee-restarts, ~230 s)
// starting halfway through and one worker idle at the end. Seconds per file as timing.json
// (vitest.timing.ts) measures them, below (a file not listed keeps Vitest's order, after the listed
// ones; those are a few seconds each). Refresh: the files of .test-results/timing.json, longest first.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SECONDS: Record<string, number> = {
  // cluster: the clean-tree run of 2026-12-04 21:20 (`--project cluster`, load 9-14, most of it the
  // two clusters' own processes), each file's wall time in its worker with its hooks
  // (.test-results/timing.json of vitest.timing.ts; the JSON report counts the tests only)
  'scripts/test/committee-restarts.test.ts': 209,
  'scripts/test/committee-size.test.ts': 115,
  'scripts/test/chaos-real.test.ts': 84,
  'scripts/test/frozen-node.test.ts': 74,
  'scripts/test/console.test.ts': 67,
  'scripts/test/chaos.test.ts': 66,
  'scripts/test/outage.test.ts': 58,
  'scripts/test/ccxt.test.ts': 52,
  'scripts/test/partial-production.test.ts': 51,
  'scripts/test/chaos-sim.test.ts': 46,
  'scripts/test/system.test.ts': 41,
  'scripts/test/orders.test.ts': 30,
  'scripts/test/client-recovery.test.ts': 28,
  'scripts/test/privacy.test.ts': 28,
  'scripts/test/unix-links.test.ts': 26,
  'scripts/test/link-persist.test.ts': 21,
  'scripts/test/dealer-mode.test.ts': 21,
  'scripts/test/environments.test.ts': 8,
  'scripts/test/flags.test.ts': 7,
  'scripts/test/operator-token.test.ts': 3,
  // packages: `--project packages` with one process per worker (isolate: false) of 2026-12-04 21:43
  // (load 5-8; about twice a quiet run's time per file: the order is what counts)
  'packages/matching/test/differential.test.ts': 84,
  'packages/matching/test/search.test.ts': 63,
  'committee/test/differential.test.ts': 38,
  'committee/test/node-store-exit.test.ts': 20,
  'gateway/test/fuzz.test.ts': 19,
  'packages/mpc/test/partial-production.test.ts': 14,
  'gateway/test/risk-monitor.test.ts': 14,
  'gateway/test/crash.test.ts': 13,
  'packages/matching/test/reference.test.ts': 12,
  'packages/matching/test/levels.test.ts': 11,
  'packages/mpc/test/libp2p.test.ts': 10,
  'packages/transport/test/multiprocess.test.ts': 10,
  'gateway/test/ws-sdk.test.ts': 8,
  'packages/transport/test/link-fuzz.test.ts': 7,
  'gateway/test/orders.test.ts': 6,
  'gateway/test/order-risk.test.ts': 6,
  'gateway/test/ws-flows.test.ts': 6,
  'packages/mpc/test/kernel.test.ts': 6,
  'sequencer-enclave/test/crash.test.ts': 5,
  'packages/transport/test/unix-links.test.ts': 5,
  'gateway/test/withdrawals.test.ts': 5,
  'gateway/test/ws-health.test.ts': 4,
};

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const at = new Map(base.map((f, i) => [f, i]));
    const seconds = (f: TestSpecification): number => SECONDS[relative(f.project.config.root, f.moduleId).replaceAll('\\', '/')] ?? 0;
    return [...base].sort((a, b) => {
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (group !== 0 || a.project.name !== b.project.name) return at.get(a)! - at.get(b)!;
      return seconds(b) - seconds(a) || at.get(a)! - at.get(b)!;
    });
  }
}
