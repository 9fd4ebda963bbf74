// Seeded PRNG for the simulated network: splitmix64 expands the seed, xoshiro128** generates.
// Blackman & Vigna, "Scrambled linear pseudorandom number generators" (2018). Not cryptographic:
// it only drives simulated latency jitter and loss, so a run replays exactly from its seed.

const MASK64 = (1n << 64n) - 1n;

/** splitmix64 step: returns [next state, output], both 64-bit bigints. */
function splitmix64(state: bigint): [bigint, bigint] {
  const s = (state + 0x9e3779b97f4a7c15n) & MASK64;
  let z = s;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return [s, z ^ (z >> 31n)];
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** Deterministic 32-bit generator; the same seed always yields the same sequence. */
export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** Seeds from any integer (number must be a safe integer; negative values are taken mod 2^64). */
  constructor(seed: number | bigint) {
    if (typeof seed === 'number' && !Number.isSafeInteger(seed)) throw new RangeError(`prng seed must be a safe integer, got ${seed}`);
    let st = BigInt(seed) & MASK64;
    let a: bigint;
    let b: bigint;
    [st, a] = splitmix64(st);
    [st, b] = splitmix64(st);
    this.s0 = Number(a & 0xffffffffn);
    this.s1 = Number(a >> 32n);
    this.s2 = Number(b & 0xffffffffn);
    this.s3 = Number(b >> 32n);
    // xoshiro's state must not be all zero; splitmix64 makes that astronomically unlikely, but be sure.
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** Next uniform 32-bit unsigned integer (xoshiro128**). */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.s1 << 9) >>> 0;
    this.s2 = (this.s2 ^ this.s0) >>> 0;
    this.s3 = (this.s3 ^ this.s1) >>> 0;
    this.s1 = (this.s1 ^ this.s2) >>> 0;
    this.s0 = (this.s0 ^ this.s3) >>> 0;
    this.s2 = (this.s2 ^ t) >>> 0;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1) with 32 bits of resolution. */
  nextFloat(): number {
    return this.nextU32() / 4294967296;
  }
}
