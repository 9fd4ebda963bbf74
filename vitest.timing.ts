// Wall time per test file as a worker spends it, hooks and imports included, and per project (first
// file queued to last file done). The JSON report's file durations count the tests only: a cluster
// file's beforeAll (starting five nodes, a sequencer and a gateway: 15-40 s) is in no figure there,
// so the seconds of vitest.sequencer.ts, which must be what a worker is busy for, come from here.
// Writes .test-results/timing.json and prints one line per project.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { loadavg } from 'node:os';
import type { Reporter, TestModule } from 'vitest/node';

interface FileTiming {
  file: string;
  project: string;
  /** ms since the run started: queued (the worker starts importing it) and done */
  startMs: number;
  endMs: number;
  /** what vitest counts inside the worker (s): importing the file, the setup files, tests and hooks */
  collectS: number;
  setupS: number;
  testsS: number;
}

export default class TimingReporter implements Reporter {
  private readonly t0 = Date.now();
  private readonly queued = new Map<string, number>();
  private readonly files: FileTiming[] = [];

  private readonly outputFile: string;

  /** as `new Timing()` in the config, or `--reporter=./vitest.timing.ts` (vitest passes an options object) */
  constructor(opts: { outputFile?: string } = {}) {
    this.outputFile = opts.outputFile ?? '.test-results/timing.json';
  }

  onTestModuleQueued(m: TestModule): void {
    this.queued.set(m.moduleId, Date.now() - this.t0);
  }

  onTestModuleEnd(m: TestModule): void {
    const d = m.diagnostic();
    this.files.push({
      file: relative(m.project.config.root, m.moduleId).replaceAll('\\', '/'),
      project: m.project.name,
      startMs: this.queued.get(m.moduleId) ?? 0,
      endMs: Date.now() - this.t0,
      collectS: d.collectDuration / 1000,
      setupS: d.setupDuration / 1000,
      testsS: d.duration / 1000,
    });
  }

  onTestRunEnd(): void {
    const projects = [...new Set(this.files.map((f) => f.project))].map((name) => {
      const fs = this.files.filter((f) => f.project === name);
      const wallS = (Math.max(...fs.map((f) => f.endMs)) - Math.min(...fs.map((f) => f.startMs))) / 1000;
      const busyS = fs.reduce((s, f) => s + (f.endMs - f.startMs) / 1000, 0);
      return { name, files: fs.length, wallS, busyS };
    });
    const load = loadavg().map((x) => x.toFixed(1)).join(' ');
    mkdirSync(dirname(this.outputFile), { recursive: true });
    const files = [...this.files].sort((a, b) => b.endMs - b.startMs - (a.endMs - a.startMs));
    writeFileSync(this.outputFile, `${JSON.stringify({ wallS: (Date.now() - this.t0) / 1000, loadAtEnd: load, projects, files }, null, 1)}\n`);
    for (const p of projects) console.log(`timing: ${p.name}: ${p.wallS.toFixed(0)} s wall, ${p.busyS.toFixed(0)} s of file time in ${p.files} files`);
    console.log(`timing: load average at the end ${load}; per file: ${this.outputFile}`);
  }
}
