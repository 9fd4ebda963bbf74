// Longest test files first (LPT scheduling) in each project, so that the two workers of a group
// finish near the same time. Vitest's own order on a clean clone (CI: no results cache) is the
// largest file first, which left the cluster group's longest file (committee-restarts, ~230 s)
// starting halfway through and one worker idle at the end. Seconds per file: the cluster group's
// from the clean-clone run of 2026-12-01, the packages group's below (a file not listed keeps
// Vitest's order, after the listed ones).
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SECONDS: Record<string, number> = {
  'scripts/test/committee-restarts.test.ts': 205, // 230 on 2026-12-01; its third death now waits 20 s, not 45 (ADR 0026)
  'scripts/test/chaos.test.ts': 105,
  'scripts/test/committee-size.test.ts': 97,
  'scripts/test/console.test.ts': 68,
  'scripts/test/system.test.ts': 60,
  'scripts/test/chaos-real.test.ts': 58,
  'scripts/test/partial-production.test.ts': 56,
  'scripts/test/outage.test.ts': 49,
  'scripts/test/client-recovery.test.ts': 43,
  'scripts/test/frozen-node.test.ts': 43,
  'scripts/test/ccxt.test.ts': 35,
  'scripts/test/dealer-mode.test.ts': 26,
  'scripts/test/orders.test.ts': 23,
  'scripts/test/privacy.test.ts': 20,
  'scripts/test/chaos-sim.test.ts': 12,
  // packages: the first two-worker run of 2026-12-02 (load average 7-13 from other work: every
  // file took about twice its quiet time, the order is what counts)
  'packages/matching/test/search.test.ts': 59,
  'packages/matching/test/differential.test.ts': 57,
  'committee/test/differential.test.ts': 53,
  'packages/mpc/test/partial-production.test.ts': 30,
  'committee/test/node-store-exit.test.ts': 23,
  'packages/journal/test/journal.test.ts': 22,
  'gateway/test/crash.test.ts': 20,
  'packages/transport/test/multiprocess.test.ts': 20,
  'gateway/test/fuzz.test.ts': 19,
  'packages/mpc/test/composition.test.ts': 18,
  'packages/matching/test/reference.test.ts': 16,
  'gateway/test/risk-monitor.test.ts': 16,
  'packages/mpc/test/libp2p.test.ts': 15,
  'packages/transport/test/link-fuzz.test.ts': 14,
  'gateway/test/ws-flows.test.ts': 13,
  'gateway/test/withdrawals.test.ts': 12,
  'packages/mpc/test/chaos.test.ts': 12,
  'packages/mpc/test/recovery-combine.test.ts': 11,
  'gateway/test/ws-sdk.test.ts': 11,
  'packages/mpc/test/prep-chaos.test.ts': 11,
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
