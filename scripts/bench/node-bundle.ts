// Bundles the committee node (committee/src/main.ts and every @tenebra/* workspace package it imports)
// into one unminified ES module with a source map, for profiling: under tsx every frame of a V8
// profile is at line 1 of its transformed file, from the bundle each frame has its real line, and
// profile-areas.ts maps bundle positions back to the sources through the map (`--lines` prints self
// time by source line). npm packages stay external (imported from node_modules as usual). Built in
// about a second, so nodes start as fast as under tsx.
//
//   node --import tsx scripts/bench/node-bundle.ts [OUT] [--entry FILE.ts]
//     (default OUT node_modules/.cache/tenebra-node/main.mjs, entry committee/src/main.ts; another
//     entry, e.g. scripts/bench/online-cpu.ts, bundles that script: `node --cpu-prof OUT` profiles it)
//   TENEBRA_NODE_BUNDLE=OUT TENEBRA_CPU_PROF=DIR TENEBRA_CPU_PROF_ROLES=committee npm run bench:orders -- ...
//   node --import tsx scripts/bench/profile-areas.ts DIR --match node- --lines
//
// TENEBRA_NODE_BUNDLE (scripts/src/cluster.ts) starts the committee nodes from the bundle instead of
// `--import tsx committee/src/main.ts`; off by default. OUT must sit inside this repository (under
// node_modules/.cache by default, which git ignores) so its imports of npm packages resolve. The
// bundle is what it was when built: rebuild after changing a source.
import { build } from 'esbuild';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFlags } from '../src/flags';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEFAULT_NODE_BUNDLE = join(ROOT, 'node_modules', '.cache', 'tenebra-node', 'main.mjs');

/** Builds the committee node's bundle at `outfile` (and `outfile.map`); returns the number of source files in it. */
export async function buildNodeBundle(outfile = DEFAULT_NODE_BUNDLE, entry = join(ROOT, 'committee', 'src', 'main.ts')): Promise<number> {
  const r = await build({
    entryPoints: [entry],
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    sourcemap: 'linked',
    sourcesContent: false,
    minify: false,
    keepNames: false, // names as written are kept anyway when unminified; keepNames would add a wrapper call per function
    metafile: true,
    logLevel: 'warning',
    // a CommonJS package bundled into ESM may call require(); give it one
    banner: { js: "import { createRequire as __tenebraCreateRequire } from 'node:module'; const require = __tenebraCreateRequire(import.meta.url);" },
    plugins: [{
      name: 'npm-external',
      setup(b) {
        // workspace packages (@tenebra/*) are our sources: bundled; every other bare import stays a package import
        b.onResolve({ filter: /^[^./]/ }, (a) => (a.path.startsWith('@tenebra/') || a.path.startsWith('node:') ? undefined : { path: a.path, external: true }));
      },
    }],
  });
  return Object.keys(r.metafile.inputs).length;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flags = parseFlags(process.argv.slice(2), ['entry']);
  const out = resolve(flags.positional[0] ?? DEFAULT_NODE_BUNDLE);
  const entry = flags.str.get('entry');
  const n = await buildNodeBundle(out, entry === undefined ? undefined : resolve(entry));
  console.log(`${out}: ${n} source files`);
}
