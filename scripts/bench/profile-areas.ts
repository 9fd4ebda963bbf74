// Summarizes one V8 .cpuprofile (node --cpu-prof, bench:acks --prof, TENEBRA_CPU_PROF): busy time
// (idle left out) by area (gateway/committee/package module, npm package, node internals, GC),
// self and inclusive time by function, and optionally who calls a function or what runs below it.
//
//   node --import tsx scripts/bench/profile-areas.ts FILE.cpuprofile [--top 40] [--from S] [--to S]
//        [--callers NAME] [--under NAME] [--timeline]
//
// --from/--to: only the samples from S to S seconds after the profile's start (use --timeline, busy
// ms per second, to find a bench's load and catch-up phases). --callers NAME: NAME's inclusive time
// by its nearest two callers in this repository's sources. --under NAME: the functions below NAME,
// by inclusive time. Percentages are of the busy time in the window. Under tsx, source lines are
// those of the transformed file, so functions are named by file and name only.
import { readFileSync } from 'node:fs';
import { parseFlags, positiveNumber } from '../src/flags';

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

const FLAGS = parseFlags(process.argv.slice(2), ['top', 'from', 'to', 'callers', 'under'], ['timeline']);
const file = FLAGS.positional[0];
if (file === undefined) throw new Error('usage: profile-areas.ts FILE.cpuprofile [--top N] [--from S] [--to S] [--callers NAME] [--under NAME] [--timeline]');
const TOP = positiveNumber(FLAGS.str.get('top') ?? '40', 'top');
const seconds = (name: string): number | null => {
  const v = FLAGS.str.get(name);
  if (v === undefined) return null;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number of seconds >= 0, got '${v}'`);
  return n;
};
const FROM = seconds('from');
const TO = seconds('to');

const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const isIdle = (n: ProfileNode): boolean => n.callFrame.functionName === '(idle)';

// Self time per profile node inside the window. A sample's time is the delta to the next sample.
const selfUs = new Map<number, number>();
const perSecond = new Map<number, number>();
let at = 0;
for (let i = 0; i < prof.samples.length; i++) {
  at += prof.timeDeltas[i] ?? 0;
  const dt = prof.timeDeltas[i + 1] ?? 0;
  const id = prof.samples[i]!;
  if (!isIdle(byId.get(id)!)) perSecond.set(Math.floor(at / 1e6), (perSecond.get(Math.floor(at / 1e6)) ?? 0) + dt);
  if (FROM !== null && at / 1e6 < FROM) continue;
  if (TO !== null && at / 1e6 >= TO) continue;
  selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
}

const shortUrl = (u: string): string => u.replace(/^.*?\/((?:packages\/[^/]+|gateway|committee|sequencer-enclave|scripts)\/src\/|node_modules\/)/, '$1');
const keyOf = (n: ProfileNode): string => `${n.callFrame.functionName || '(anon)'} ${shortUrl(n.callFrame.url)}`;
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

let busy = 0;
const selfBy = new Map<string, number>();
const areaBy = new Map<string, number>();
const inclBy = new Map<string, number>();
const add = (m: Map<string, number>, k: string, v: number): void => {
  m.set(k, (m.get(k) ?? 0) + v);
};
/** the node and its ancestors, leaf first */
function stack(id: number): ProfileNode[] {
  const out: ProfileNode[] = [];
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) out.push(byId.get(cur)!);
  return out;
}
for (const [id, t] of selfUs) {
  const n = byId.get(id)!;
  if (isIdle(n)) continue;
  busy += t;
  add(selfBy, keyOf(n), t);
  add(areaBy, areaOf(n), t);
  for (const k of new Set(stack(id).map(keyOf))) if (!k.startsWith('(root)')) add(inclBy, k, t);
}

const pct = (t: number): string => `${((100 * t) / (busy || 1)).toFixed(1).padStart(5)}%`;
const ms = (t: number): string => `${(t / 1000).toFixed(0).padStart(7)} ms`;
const top = (m: Map<string, number>, n: number): [string, number][] => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
const window = FROM !== null || TO !== null ? ` in ${FROM ?? 0}-${TO ?? 'end'} s` : '';
console.log(`${file}: busy ${ms(busy)}${window}`);
console.log('--- self time by area');
for (const [k, t] of top(areaBy, 30)) console.log(pct(t), ms(t), k);
console.log('--- self time by function');
for (const [k, t] of top(selfBy, TOP)) console.log(pct(t), ms(t), k);
console.log('--- inclusive time by function');
for (const [k, t] of top(inclBy, TOP)) console.log(pct(t), ms(t), k);

const ours = (n: ProfileNode): boolean => /\/(packages\/[^/]+|gateway|committee|sequencer-enclave|scripts)\/src\//.test(n.callFrame.url);
const callers = FLAGS.str.get('callers');
if (callers !== undefined) {
  const by = new Map<string, number>();
  for (const [id, t] of selfUs) {
    const s = stack(id);
    const at = s.findIndex((n) => n.callFrame.functionName === callers);
    if (at < 0) continue;
    add(by, s.slice(at + 1).filter(ours).slice(0, 2).map(keyOf).join(' <- ') || '(none of ours)', t);
  }
  console.log(`--- callers of ${callers}`);
  for (const [k, t] of top(by, 25)) console.log(pct(t), ms(t), k);
}
const under = FLAGS.str.get('under');
if (under !== undefined) {
  const by = new Map<string, number>();
  let total = 0;
  for (const [id, t] of selfUs) {
    const s = stack(id);
    const at = s.findIndex((n) => n.callFrame.functionName === under);
    if (at < 0) continue;
    total += t;
    for (const k of new Set(s.slice(0, at).map(keyOf))) add(by, k, t);
  }
  console.log(`--- below ${under}: ${ms(total)}`);
  for (const [k, t] of top(by, 25)) console.log(pct(t), ms(t), k);
}
if (FLAGS.bool.has('timeline')) {
  console.log('--- busy ms per second of the profile');
  console.log([...perSecond].sort((a, b) => a[0] - b[0]).map(([s, t]) => `${s}:${(t / 1000).toFixed(0)}`).join(' '));
}
