// Setup file of the cluster tests: the launcher (scripts/src/cluster.ts) reads TENEBRA_NODE_BUNDLE
// when it spawns a committee node, so every node of this file starts from the bundle that
// node-bundle-setup.ts built for the run ('' : under tsx).
import { inject } from 'vitest';

const bundle = inject('nodeBundle');
if (bundle) process.env.TENEBRA_NODE_BUNDLE = bundle;
else delete process.env.TENEBRA_NODE_BUNDLE;
