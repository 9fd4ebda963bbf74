// `npm run report -- FILE...`: one self-contained HTML page drawing benchmark runs side by side
// (the console's /report page draws the same from files opened in the browser). uPlot, the charts
// and the runs are inlined, so the page opens from disk with no server and no network.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PUBLIC = join(dirname(fileURLToPath(import.meta.url)), '..', 'public');
const UPLOT = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');

export interface BenchRun {
  bench?: string;
  /** the file it came from: the run's name on the charts */
  __file?: string;
  [k: string]: unknown;
}

/** JSON inside a <script> must not close it. */
const scriptSafe = (s: string) => s.replace(/</g, '\\u003c');

export function reportHtml(runs: BenchRun[], title = 'Tenebra benchmark runs'): string {
  const css = readFileSync(join(UPLOT, 'uPlot.min.css'), 'utf8') + readFileSync(join(PUBLIC, 'console.css'), 'utf8');
  const uplot = readFileSync(join(UPLOT, 'uPlot.iife.min.js'), 'utf8');
  // one inline module: the charts without their exports, then the page's code without its import
  const charts = readFileSync(join(PUBLIC, 'charts.js'), 'utf8').replace(/^export /gm, '');
  const page = readFileSync(join(PUBLIC, 'report.js'), 'utf8').replace(/^import .*$/m, '');
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>${css}</style>
<script>${uplot}</script>
</head><body>
<header><h1>${esc(title)}</h1><span class="note">${esc(runs.map((r) => r.__file ?? r.bench ?? 'run').join(' · '))}</span></header>
<main><div id="runs"></div></main>
<script type="application/json" id="runs-data">${scriptSafe(JSON.stringify(runs))}</script>
<script type="module">${charts}\n${page}</script>
</body></html>
`;
}
