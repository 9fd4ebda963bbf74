// Summarizes V8 .cpuprofile files (node --cpu-prof, bench:acks --prof, TENEBRA_CPU_PROF, hot.ts
// --prof): busy time (idle left out) by area (gateway/committee/package module, npm package, node
// internals, GC), self and inclusive time by function (a function counted once per sample however
// often it recurs on the stack), and optionally who calls a function or what runs below it. Shares
// are of the busy time over all the files given, in the window.
//
//   node --import tsx scripts/bench/profile-areas.ts DIR|FILE... [--top 40] [--match RE] [--exclude RE]
//        [--from S] [--to S] [--callers RE] [--under RE] [--timeline]
//
// DIR: every .cpuprofile in it. --match RE: only files whose name matches (e.g. 'node-[1-5]').
// --exclude RE: leave out the samples with a function matching RE on their stack. --from/--to: only
// the samples from S to S seconds after each profile's start (use --timeline, busy ms per second, to
// find a bench's load and catch-up phases). --callers RE: the inclusive time of the outermost function
// matching RE by its nearest two callers in this repository's sources. --under RE: the functions below
// a function matching RE, by inclusive time. Under tsx, source lines are those of the transformed
// file, so functions are named by file and name only. Profiles of processes started from a bundle
// with a source map beside it (scripts/bench/node-bundle.ts, TENEBRA_NODE_BUNDLE) are mapped back to
// the sources, and --lines adds self time by source line (V8's line ticks) with the line's text.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseFlags, positiveNumber } from '../src/flags';

interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber?: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[]; positionTicks?: { line: number; ticks: number }[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number }

const FLAGS = parseFlags(process.argv.slice(2), ['top', 'match', 'exclude', 'from', 'to', 'callers', 'under', 'windows'], ['timeline', 'lines']);
if (FLAGS.positional.length === 0) throw new Error('usage: profile-areas.ts DIR|FILE... [--top N] [--match RE] [--exclude RE] [--from S] [--to S] [--callers RE] [--under RE] [--timeline] [--lines]');
const TOP = positiveNumber(FLAGS.str.get('top') ?? '40', 'top');
const seconds = (name: string): number | null => {
  const v = FLAGS.str.get(name);
  if (v === undefined) return null;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number of seconds >= 0, got '${v}'`);
  return n;
};
const regex = (name: string): RegExp | undefined => {
  const v = FLAGS.str.get(name);
  return v === undefined ? undefined : new RegExp(v);
};
const FROM = seconds('from');
const TO = seconds('to');
const MATCH = regex('match');
const EXCLUDE = regex('exclude');
const CALLERS = regex('callers');
const UNDER = regex('under');
process.stdout.on('error', () => process.exit(0)); // piped into head
/**
 * --windows FILE (bench:trace --windows-out): only the samples inside the ops' windows, epoch ms
 * [from, to], mapped to each process's monotonic clock by its pid's offset (epoch µs - mono µs, from
 * the trace lines' `at` and `mono`); a profile whose pid the file does not name is left out. With
 * `byPid` a process's own windows replace the common ones.
 */
interface Windows { windows: [number, number][]; offsets: Record<string, number>; byPid?: Record<string, [number, number][]> }
const WINDOWS = FLAGS.str.has('windows') ? JSON.parse(readFileSync(FLAGS.str.get('windows')!, 'utf8')) as Windows : null;
/** pid of a V8 profile from its file name (CPU.<date>.<time>.<pid>.<tid>.<n>.cpuprofile) */
const pidOf = (f: string): string | undefined => /^CPU\.\d+\.\d+\.(\d+)\./.exec(basename(f))?.[1];

const files: string[] = [];
for (const p of FLAGS.positional) {
  if (statSync(p).isDirectory()) {
    for (const f of readdirSync(p).sort()) if (f.endsWith('.cpuprofile')) files.push(join(p, f));
  } else files.push(p);
}
const chosen = files.filter((f) => !MATCH || MATCH.test(basename(f)));

const shortUrl = (u: string): string => u.replace(/^.*?\/((?:packages\/[^/]+|gateway|committee|sequencer-enclave|scripts)\/src\/|node_modules\/)/, '$1');
const keyOf = (n: ProfileNode): string => `${n.callFrame.functionName || '(anon)'} ${shortUrl(n.callFrame.url)}`;
const isIdle = (n: ProfileNode): boolean => n.callFrame.functionName === '(idle)';
const ours = (n: ProfileNode): boolean => /\/(packages\/[^/]+|gateway|committee|sequencer-enclave|scripts)\/src\//.test(n.callFrame.url);
function areaOf(n: ProfileNode): string {
  const { url, functionName } = n.callFrame;
  if (functionName === '(garbage collector)') return 'gc';
  if (functionName === '(program)') return 'program';
  let m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return `npm:${m[1]}`;
  m = /\/(packages\/[^/]+|gateway|committee|sequencer-enclave|scripts)\/src\/([^/.]+)/.exec(url);
  if (m) return `${m[1]}/${m[2]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return url === '' ? `native:${functionName}` : `other:${url.split('/').pop()}`;
}


// --- source maps of bundles (only the line mapping is needed: V8's line ticks are per line)
const B64 = new Map([...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].map((c, i) => [c, i]));
/** per generated line (0-based), its segments as [generated column, source index, source line (0-based)] */
type LineMap = [number, number, number][][];
interface SourceMap { sources: string[]; lines: LineMap }
function decodeMap(file: string): SourceMap {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as { sources: string[]; sourceRoot?: string; mappings: string };
  const base = resolve(dirname(file), raw.sourceRoot ?? '');
  const lines: LineMap = [];
  let src = 0, srcLine = 0;
  for (const text of raw.mappings.split(';')) {
    const segs: [number, number, number][] = [];
    let col = 0;
    for (const seg of text.split(',')) {
      if (seg === '') continue;
      const v: number[] = [];
      let shift = 0, acc = 0;
      for (const ch of seg) { // base64 VLQ
        const d = B64.get(ch)!;
        acc += (d & 31) << shift;
        if (d & 32) { shift += 5; continue; }
        v.push(acc & 1 ? -(acc >>> 1) : acc >>> 1);
        acc = 0; shift = 0;
      }
      col += v[0]!;
      if (v.length >= 4) { src += v[1]!; srcLine += v[2]!; segs.push([col, src, srcLine]); }
    }
    lines.push(segs);
  }
  return { sources: raw.sources.map((s) => resolve(base, s)), lines };
}
const maps = new Map<string, SourceMap | null>();
function mapOf(url: string): SourceMap | null {
  if (!url.startsWith('file://')) return null;
  let m = maps.get(url);
  if (m === undefined) {
    const f = `${fileURLToPath(url)}.map`;
    m = existsSync(f) ? decodeMap(f) : null;
    maps.set(url, m);
  }
  return m;
}
/** a bundle position (0-based line and column) as [source file, 0-based line], or null */
function original(m: SourceMap, line: number, col: number): [string, number] | null {
  const segs = m.lines[line];
  if (!segs || segs.length === 0) return null;
  let best = segs[0]!;
  for (const s of segs) if (s[0] <= col) best = s; else break;
  return [m.sources[best[1]]!, best[2]];
}
/** rewrites a profile's frames from a bundle to its sources (url and line); line ticks keep bundle lines, mapped by lineOf */
function unbundle(prof: Profile): void {
  for (const n of prof.nodes) {
    const cf = n.callFrame;
    const m = mapOf(cf.url);
    if (!m) continue;
    const at = original(m, cf.lineNumber, cf.columnNumber ?? 0);
    if (!at) continue;
    for (const t of n.positionTicks ?? []) {
      const o = original(m, t.line - 1, 0); // a line's first mapped segment
      if (o) lineTicks.set(t, o);
    }
    cf.url = pathToFileURL(at[0]).href;
    cf.lineNumber = at[1];
  }
}
const lineTicks = new WeakMap<object, [string, number]>();
const lineBy = new Map<string, number>();
const sourceText = new Map<string, string[]>();
function textOf(file: string, line: number): string {
  let t = sourceText.get(file);
  if (!t) { t = existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []; sourceText.set(file, t); }
  const s = (t[line] ?? '').trim();
  return s.length > 90 ? `${s.slice(0, 87)}...` : s;
}

let busy = 0;
let excluded = 0;
const selfBy = new Map<string, number>();
const areaBy = new Map<string, number>();
const inclBy = new Map<string, number>();
const callersBy = new Map<string, number>();
const underBy = new Map<string, number>();
let underTotal = 0;
const perSecond = new Map<number, number>();
const add = <K>(m: Map<K, number>, k: K, v: number): void => {
  m.set(k, (m.get(k) ?? 0) + v);
};

for (const file of chosen) {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  unbundle(prof);
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Self time per profile node inside the window. A sample's time is the delta to the next sample.
  const selfUs = new Map<number, number>();
  let at = 0;
  // the windows on this profile's clock (µs since its start), sorted
  let wins: [number, number][] | null = null;
  if (WINDOWS) {
    const pid = pidOf(file) ?? '';
    const off = WINDOWS.offsets[pid];
    // byPid: windows of that process only (e.g. each node's own job windows), else the common ones
    wins = off === undefined ? [] : (WINDOWS.byPid?.[pid] ?? WINDOWS.windows).map(([a, b]): [number, number] => [a * 1000 - off - prof.startTime, b * 1000 - off - prof.startTime]).sort((x, y) => x[0] - y[0]);
  }
  let w = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    at += prof.timeDeltas[i] ?? 0;
    const dt = prof.timeDeltas[i + 1] ?? 0;
    const id = prof.samples[i]!;
    if (!isIdle(byId.get(id)!)) add(perSecond, Math.floor(at / 1e6), dt);
    if (FROM !== null && at / 1e6 < FROM) continue;
    if (TO !== null && at / 1e6 >= TO) continue;
    if (wins) {
      while (w < wins.length && wins[w]![1] < at) w++;
      if (w >= wins.length || wins[w]![0] > at) continue;
    }
    add(selfUs, id, dt);
  }
  /** the node and its ancestors, leaf first, without the root */
  const stack = (id: number): ProfileNode[] => {
    const out: ProfileNode[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      if (n.callFrame.functionName !== '(root)') out.push(n);
    }
    return out;
  };
  for (const [id, t] of selfUs) {
    const n = byId.get(id)!;
    if (isIdle(n)) continue;
    const s = stack(id);
    if (EXCLUDE && s.some((x) => EXCLUDE.test(keyOf(x)))) {
      excluded += t;
      continue;
    }
    busy += t;
    add(selfBy, keyOf(n), t);
    if (FLAGS.bool.has('lines')) {
      // the node's self time split over its lines by V8's line ticks (counted over the whole profile)
      const ticks = n.positionTicks ?? [];
      const total = ticks.reduce((a, x) => a + x.ticks, 0);
      for (const x of ticks) {
        const o = lineTicks.get(x);
        if (o) add(lineBy, `${shortUrl(pathToFileURL(o[0]).href)}:${o[1] + 1}\t${n.callFrame.functionName || '(anon)'}\t${textOf(o[0], o[1])}`, (t * x.ticks) / total);
      }
    }
    add(areaBy, areaOf(n), t);
    for (const k of new Set(s.map(keyOf))) add(inclBy, k, t);
    if (CALLERS) {
      // the outermost frame matching, split by the nearest two of our frames above it
      let k = -1;
      for (let j = s.length - 1; j >= 0; j--) if (CALLERS.test(keyOf(s[j]!))) { k = j; break; }
      if (k >= 0) add(callersBy, `${keyOf(s[k]!)}  <=  ${s.slice(k + 1).filter(ours).slice(0, 2).map(keyOf).join(' <- ') || '(none of ours)'}`, t);
    }
    if (UNDER) {
      const k = s.findIndex((x) => UNDER.test(keyOf(x)));
      if (k >= 0) {
        underTotal += t;
        for (const key of new Set(s.slice(0, k).map(keyOf))) add(underBy, key, t);
      }
    }
  }
}

const pct = (t: number): string => `${((100 * t) / (busy || 1)).toFixed(1).padStart(5)}%`;
const ms = (t: number): string => `${(t / 1000).toFixed(0).padStart(7)} ms`;
const top = (m: Map<string, number>, n: number): [string, number][] => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
const window = FROM !== null || TO !== null ? ` in ${FROM ?? 0}-${TO ?? 'end'} s` : '';
console.log(`${chosen.length} profile(s): busy ${ms(busy)}${window}${EXCLUDE ? `; ${ms(excluded)} left out by --exclude` : ''}`);
console.log('--- self time by area');
for (const [k, t] of top(areaBy, 30)) console.log(pct(t), ms(t), k);
console.log('--- self time by function');
for (const [k, t] of top(selfBy, TOP)) console.log(pct(t), ms(t), k);
console.log('--- inclusive time by function');
for (const [k, t] of top(inclBy, TOP)) console.log(pct(t), ms(t), k);
if (FLAGS.bool.has('lines')) {
  console.log('--- self time by source line (bundled processes only)');
  for (const [k, t] of top(lineBy, TOP)) console.log(pct(t), ms(t), k);
}
if (CALLERS) {
  console.log(`--- callers of /${CALLERS.source}/ (outermost match)`);
  for (const [k, t] of top(callersBy, 25)) console.log(pct(t), ms(t), k);
}
if (UNDER) {
  console.log(`--- below /${UNDER.source}/: ${ms(underTotal)}`);
  for (const [k, t] of top(underBy, 25)) console.log(pct(t), ms(t), k);
}
if (FLAGS.bool.has('timeline')) {
  console.log('--- busy ms per second of the profile(s)');
  console.log([...perSecond].sort((a, b) => a[0] - b[0]).map(([s, t]) => `${s}:${(t / 1000).toFixed(0)}`).join(' '));
}
