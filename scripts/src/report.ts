// `npm run report -- FILE... [--out report.html]`: draws benchmark runs (bench:orders / bench:mpc
// with --json FILE) side by side in one self-contained HTML page (uPlot inlined: opens from disk).
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { reportHtml, type BenchRun } from '@tenebra/console';

const USAGE = 'usage: npm run report -- FILE... [--out report.html]   (FILEs written by bench:orders or bench:mpc with --json FILE)';

function main(argv: string[]): void {
  const files: string[] = [];
  let out = 'bench-report.html';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') return void console.log(USAGE);
    if (a === '--out') {
      const v = argv[++i];
      if (!v) throw new Error('--out needs a file name');
      out = v;
    } else if (a.startsWith('--')) {
      throw new Error(`unknown flag ${a}\n${USAGE}`);
    } else {
      files.push(a);
    }
  }
  if (files.length === 0) throw new Error(USAGE);
  const runs: BenchRun[] = files.map((f) => {
    let run: unknown;
    try {
      run = JSON.parse(readFileSync(f, 'utf8'));
    } catch (e) {
      throw new Error(`${f}: not a JSON run file (${(e as Error).message})`);
    }
    if (typeof run !== 'object' || run === null || !['orders', 'mpc'].includes(String((run as BenchRun).bench))) {
      throw new Error(`${f}: not a run of bench:orders or bench:mpc (its "bench" field says ${JSON.stringify((run as BenchRun | null)?.bench)})`);
    }
    return { ...(run as BenchRun), __file: basename(f) };
  });
  writeFileSync(out, reportHtml(runs));
  console.log(`${runs.length} run${runs.length === 1 ? '' : 's'} drawn in ${resolve(out)}`);
}

try {
  main(process.argv.slice(2));
} catch (e) {
  console.error(`npm run report failed: ${(e as Error).message}`);
  process.exit(1);
}
