// Global setup of the cluster tests: the committee nodes they start run from one esbuild bundle of
// committee/src/main.ts (scripts/bench/node-bundle.ts, TENEBRA_NODE_BUNDLE of scripts/src/cluster.ts)
// built here once per run from the sources as they are, instead of `node --import tsx` per process.
// Why: the cluster group is CPU-bound (two clusters side by side keep both cores busy), and most of
// a node's start-up CPU is tsx's loader resolving and loading its module graph: 2.6-2.9 s of CPU to
// import it under tsx, 0.9-1.1 s from the bundle (quiet machine, 2026-12-04), for every node of every
// cluster and every restart. The code the nodes run is the same; npm packages stay external imports.
// TENEBRA_TEST_NODE_TSX=1 keeps tsx for every node, as `npm start` runs them; system.test.ts always
// does, so the launcher's own way stays under test. A TENEBRA_NODE_BUNDLE already set is kept.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildNodeBundle, DEFAULT_NODE_BUNDLE } from '../bench/node-bundle';

declare module 'vitest' {
  export interface ProvidedContext {
    /** the committee node bundle the cluster tests' nodes start from ('' : tsx) */
    nodeBundle: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const given = process.env.TENEBRA_NODE_BUNDLE ?? '';
  if (given || process.env.TENEBRA_TEST_NODE_TSX === '1') {
    project.provide('nodeBundle', given);
    return undefined;
  }
  // inside the repository (node_modules/.cache, ignored by git) so the bundle's package imports resolve
  const bundle = join(dirname(DEFAULT_NODE_BUNDLE), `test-${process.pid}.mjs`);
  await buildNodeBundle(bundle);
  project.provide('nodeBundle', bundle);
  return () => {
    for (const f of [bundle, `${bundle}.map`]) rmSync(f, { force: true });
  };
}
