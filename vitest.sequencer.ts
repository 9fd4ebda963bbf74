// Longest test files first (LPT scheduling) in each project, so that the two workers of a group
// finish near the same time. Vitest's own order on a clean clone (CI: no results cache) is the
// largest file first, which left the cluster group's longest file (committee-restarts, ~230 s)
// starting halfway through and one worker idle at the end. Seconds per file from the clean-clone
// run of 2026-12-01 (a file not listed keeps Vitest's order, after the listed ones).
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SECONDS: Record<string, number> = {
  'scripts/test/committee-restarts.test.ts': 230,
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
  'packages/matching/test/search.test.ts': 32,
  'committee/test/differential.test.ts': 25,
  'packages/matching/test/differential.test.ts': 22,
  'committee/test/node-store-exit.test.ts': 14,
  'packages/mpc/test/libp2p.test.ts': 10,
  'packages/transport/test/multiprocess.test.ts': 8,
  'packages/mpc/test/partial-production.test.ts': 8,
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
