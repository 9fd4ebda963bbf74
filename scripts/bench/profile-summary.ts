// Summarises V8 .cpuprofile files (TENEBRA_CPU_PROF, bench:mpc --prof, hot.ts --prof): busy time by
// function, self and inclusive (a function counted once per sample however often it recurs on the
// stack), and, for functions matching a pattern, who calls them and what runs under them. Prints
// figures only; shares are of busy samples (idle and "(program)" excluded) over all files given.
//   node --import tsx scripts/bench/profile-summary.ts DIR|FILE... [--top 40] [--match RE] [--callers RE] [--under RE] [--exclude RE] [--depth 1]
// --match RE   only files whose name matches (e.g. 'node-[1-5]')
// --callers RE inclusive time of the functions matching RE split by their caller (--depth frames up)
// --under RE   self time of the functions that run under a function matching RE
// --exclude RE leave out the samples with a function matching RE on their stack (e.g. '^fill ')
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const argv = process.argv.slice(2);
const flags = new Map<string, string>();
const paths: string[] = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]!;
  if (a.startsWith('--')) flags.set(a, argv[++i] ?? '');
  else paths.push(a);
}
if (paths.length === 0 || flags.has('--help')) {
  console.log('usage: profile-summary DIR|FILE... [--top 40] [--match RE] [--callers RE] [--under RE] [--exclude RE] [--depth 1]');
  process.exit(paths.length === 0 ? 1 : 0);
}
const top = Number(flags.get('--top') ?? '40');
const depth = Number(flags.get('--depth') ?? '1');
const fileRe = flags.has('--match') ? new RegExp(flags.get('--match')!) : undefined;
const callersRe = flags.has('--callers') ? new RegExp(flags.get('--callers')!) : undefined;
const underRe = flags.has('--under') ? new RegExp(flags.get('--under')!) : undefined;
const excludeRe = flags.has('--exclude') ? new RegExp(flags.get('--exclude')!) : undefined;
process.stdout.on('error', () => process.exit(0)); // piped into head

const files: string[] = [];
for (const p of paths) {
  if (statSync(p).isDirectory()) for (const f of readdirSync(p).sort()) if (f.endsWith('.cpuprofile')) files.push(join(p, f));
  else files.push(p);
}
const chosen = files.filter((f) => !fileRe || fileRe.test(basename(f)));

const IDLE = new Set(['(idle)', '(program)', '(root)']);

/** A function's name as printed: name, file and line (1-based), the path shortened to the repository. */
function label(cf: CallFrame): string {
  const url = cf.url.replace(/^file:\/\//, '').replace(/^.*?\/(packages|committee|gateway|sequencer|scripts|node_modules)\//, '$1/');
  return `${cf.functionName || '(anonymous)'} ${url ? `${url}:${cf.lineNumber + 1}` : ''}`.trim();
}

const self = new Map<string, number>();
const incl = new Map<string, number>();
const callers = new Map<string, number>();
const under = new Map<string, number>();
let busy = 0;
let total = 0;
let ms = 0;

for (const f of chosen) {
  const prof = JSON.parse(readFileSync(f, 'utf8')) as Profile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of prof.nodes) byId.set(n.id, n);
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Stacks once per node id (samples repeat ids).
  const stacks = new Map<number, string[]>();
  const stackOf = (id: number): string[] => {
    let s = stacks.get(id);
    if (s) return s;
    s = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const cf = byId.get(at)!.callFrame;
      if (cf.functionName === '(root)') break;
      s.push(label(cf));
    }
    stacks.set(id, s); // innermost first
    return s;
  };
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i]!;
    const dt = (prof.timeDeltas[i + 1] ?? prof.timeDeltas[i] ?? 0) / 1000;
    total++;
    ms += dt;
    const name = byId.get(id)!.callFrame.functionName;
    if (IDLE.has(name)) continue;
    const s = stackOf(id);
    if (excludeRe && s.some((fn) => excludeRe.test(fn))) continue;
    busy++;
    self.set(s[0]!, (self.get(s[0]!) ?? 0) + 1);
    const seen = new Set(s);
    for (const fn of seen) incl.set(fn, (incl.get(fn) ?? 0) + 1);
    if (callersRe) {
      // the outermost frame matching, split by the frames above it
      let k = -1;
      for (let j = s.length - 1; j >= 0; j--) if (callersRe.test(s[j]!)) { k = j; break; }
      if (k >= 0) {
        const up = s.slice(k + 1, k + 1 + depth).join(' < ') || '(top)';
        const key = `${s[k]}  <=  ${up}`;
        callers.set(key, (callers.get(key) ?? 0) + 1);
      }
    }
    if (underRe && s.some((fn) => underRe.test(fn))) under.set(s[0]!, (under.get(s[0]!) ?? 0) + 1);
  }
}

const pct = (x: number): string => `${((100 * x) / busy).toFixed(2).padStart(6)}%`;
function print(title: string, m: Map<string, number>, n = top): void {
  console.log(`\n${title}`);
  const rows = [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  for (const [k, v] of rows) console.log(`${pct(v)} ${String(v).padStart(7)}  ${k}`);
}
console.log(`${chosen.length} profile(s), ${total} samples over ${(ms / 1000).toFixed(1)} s, ${busy} busy (${((100 * busy) / Math.max(1, total)).toFixed(1)}%)`);
print('self time by function (share of busy samples)', self);
print('inclusive time by function', incl);
if (callersRe) print(`callers of /${callersRe.source}/ (outermost match, ${depth} frame(s) up)`, callers);
if (underRe) print(`self time under /${underRe.source}/`, under);
