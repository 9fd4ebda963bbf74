// Microbenchmarks of the MPC engine's arithmetic kernels (min of several runs, so a busy machine
// disturbs them less than the end-to-end figures). Prints figures only.
//   node --import tsx scripts/bench/micro.ts
import { loadavg } from 'node:os';
import * as F from '../../packages/mpc/src/field';
import { interpolate, shareSecret } from '../../packages/mpc/src/shamir';
import { Prss, dealPrssKeys } from '../../packages/mpc/src/prss';
import { nibblesFrom, seededRng } from '../../packages/mpc/src/preprocessing';
import { decode, decodeVector, encode, Msg } from '../../packages/mpc/src/messages';
import { Reserve } from '../../packages/mpc/src/reserve';

const N = 20_000;
const rng = seededRng('micro');
const xs = rng(N);
const ys = rng(N);
const zs = rng(N);
const keys = dealPrssKeys(5, 2, 'micro');
const prss = new Prss(5, 2, 3, keys[2]!);
const shares = shareSecret(xs, 5, 2, rng);
const msg = encode({ type: Msg.JobRound, prepCommitted: 0, prepNext: 0, vectors: [xs] });
const vec = decode(msg).vectors[0]!;
const reserve = new Reserve();
reserve.append({ triples: rng(3 * N * 10), lex4: [], prod4: [], nibbles: [] });
let sink = 0;
let nonce = 0;

function bench(name: string, f: () => unknown): void {
  let best = Infinity;
  for (let r = 0; r < 9; r++) {
    const t0 = performance.now();
    const out = f();
    best = Math.min(best, performance.now() - t0);
    sink += Array.isArray(out) ? out.length : 1;
  }
  console.log(`${name.padEnd(34)} ${((N / best) / 1000).toFixed(2).padStart(7)} M elements/s`);
}

console.log(`load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${N} elements per run, best of 9`);
bench('mul+reduce', () => xs.map((x, i) => F.mul(x, ys[i]!)));
bench('encode (JobRound)', () => encode({ type: Msg.JobRound, prepCommitted: 0, prepNext: 0, vectors: [xs] }));
bench('decodeVector', () => decodeVector(vec));
bench('shareSecret n=5 t=2', () => shareSecret(xs, 5, 2, rng));
bench('interpolate k=3', () => interpolate([1, 2, 3], shares.slice(0, 3), 0));
bench('interpolate k=5', () => interpolate([1, 2, 3, 4, 5], shares, 0));
bench('prss randomShares', () => prss.randomShares(`n${nonce++}`, N));
bench('prss zeroShares2t', () => prss.zeroShares2t(`n${nonce++}`, N));
bench('prss boundedShares 41 bits', () => prss.boundedShares(`n${nonce++}`, N, 41));
bench('nibblesFrom (N/4 nibbles)', () => nibblesFrom(xs, ys.concat(ys).slice(0, (6 * N) / 4), zs.concat(zs).slice(0, (5 * N) / 4), N / 4));
bench('reserve take triples (N/3)', () => reserve.range('triples', 0, N / 3));
bench('seededRng', () => rng(N));
void sink;
