// CPU of a job boundary's state export alone (state.ts encodeSplit), on a synthetic party state
// shaped like the 20-instrument bench's: `--books` books of `--orders` resting orders each (their
// structure as public JSON, their shares as store vectors), 40 reserve chunk references, six PRSS
// keys; each call changes `--touched` books (a job's saves), as a boundary does. Prints CPU µs per
// call (process.cpuUsage around encodeSplit alone, median of 9 rounds) and the core's bytes. Prints figures only.
//   node --import tsx scripts/bench/state-export.ts [--books 20] [--orders 60] [--touched 1] [--calls 400]
import { loadavg } from 'node:os';
import { encodeSplit } from '../../packages/mpc/src/state';
import { parseFlags } from '../src/flags';

const flags = parseFlags(process.argv.slice(2), ['books', 'orders', 'touched', 'calls'], []);
const BOOKS = Number(flags.str.get('books') ?? 20);
const ORDERS = Number(flags.str.get('orders') ?? 60);
const TOUCHED = Number(flags.str.get('touched') ?? 1);
const CALLS = Number(flags.str.get('calls') ?? 400);

/** A book's public structure as matching/src/book.ts toSnapshot() writes it. */
function bookJson(b: number, seq: number): string {
  const orders = Array.from({ length: ORDERS }, (_, i) => ({
    id: `0b9c${b.toString(16).padStart(4, '0')}-7e1a-4c2d-9f00-${i.toString(16).padStart(12, '0')}`, seq: String(1000 + i * 7), side: i % 2 ? 'buy' : 'sell', type: 'limit', tif: 'GTC', exp: null, owner: true,
  }));
  return JSON.stringify({ v: 1, symbol: `SYM${b}-USDC-PERP`, clockNs: String(1_764_800_000_000_000_000n + BigInt(seq)), lastSeq: String(seq), maxDepth: 1000, orders });
}

const vec = (n: number, s: number): bigint[] => Array.from({ length: n }, (_, i) => BigInt(s * 1_000_003 + i) * 0x1f3d5b79n);
const store = new Map<string, bigint[]>();
const pub = new Map<string, string>();
for (let b = 0; b < BOOKS; b++) {
  store.set(`matching/book/SYM${b}`, vec(ORDERS * 3, b));
  pub.set(`matching/book/SYM${b}`, bookJson(b, 1));
}
pub.set('committee/budget', '{"bits":12345,"tsNs":"1764800000000000000"}');
pub.set('committee/cursor', '"1"');
const keys = new Map<string, Uint8Array>(['1,2,3', '1,2,4', '1,2,5', '1,3,4', '1,3,5', '1,4,5'].map((k, i) => [k, new Uint8Array(32).fill(i + 1)]));
const chunkBytes = new Uint8Array(16 * 64);
const chunks = Array.from({ length: 40 }, (_, i) => ({ key: `gdeadbeef.0/nibbles/${i * 2048}+2048`, kind: 'nibbles' as const, start: i * 2048, count: 2048, bytes: chunkBytes }));
const sortByName = <V>(m: Map<string, V>): [string, V][] => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
const cache = new Map();

let seq = 1;
let sink = 0;
let coreBytes = 0;
/** CPU µs inside encodeSplit (the saves before it are the job's, the same in every tree) */
let inExport = 0;
/** One boundary: the job's saves (new vector and JSON for `TOUCHED` books), then what exportStateParts does. */
function boundary(): void {
  seq++;
  for (let k = 0; k < TOUCHED; k++) {
    const b = (seq * 7 + k) % BOOKS;
    store.set(`matching/book/SYM${b}`, vec(ORDERS * 3, seq + k));
    pub.set(`matching/book/SYM${b}`, bookJson(b, seq));
  }
  pub.set('committee/cursor', JSON.stringify(String(seq)));
  const s = {
    n: 5, t: 2, L: 48, kappa: 40, mode: 'production',
    keys: [...keys].map(([k, v]) => [k, Buffer.from(v).toString('hex')] as [string, string]).sort(),
    store: sortByName(store), pub: sortByName(pub),
    cursor: { triples: 0, lex4: 0, prod4: 0, nibbles: 3 * 2048 + seq },
    finished: Array.from({ length: 64 }, (_, i) => `job-${seq - i}`), prep: { resolved: seq, committed: seq },
  };
  const c0 = process.cpuUsage();
  const out = encodeSplit(s, chunks, cache);
  const c = process.cpuUsage(c0);
  inExport += c.user + c.system;
  coreBytes = out.core.length;
  sink += out.chunks.size;
}

for (let i = 0; i < CALLS; i++) boundary(); // warm-up
const rounds: number[] = [];
for (let r = 0; r < 9; r++) {
  inExport = 0;
  for (let i = 0; i < CALLS; i++) boundary();
  rounds.push(inExport / CALLS);
}
rounds.sort((a, b) => a - b);
console.log(`state export: ${BOOKS} books x ${ORDERS} orders, ${TOUCHED} touched per boundary; core ${coreBytes} bytes; CPU per boundary median ${rounds[4]!.toFixed(1)} µs (min ${rounds[0]!.toFixed(1)}, max ${rounds[8]!.toFixed(1)}); load ${loadavg().map((x) => x.toFixed(2)).join(' ')} (${sink > 0 ? 'ok' : ''})`);
