// Degree reduction by resharing (Gennaro, Rabin, Rabin, PODC 1998) with seeded shares. No I/O.
//
// In GRR each party i deals a fresh degree-t sharing g_i of its degree-2t product share h_i and
// sends g_i(j) to every party j; everyone then combines what it got with the degree-2t Lagrange
// weights at 0. A degree-t polynomial with g_i(0) = h_i is fixed by its values at any t further
// points, so those t values may be pseudo-random instead of sent: party i takes g_i(s) for its t
// seeded peers s (the next t parties after i, cyclically) from a stream keyed by a key only i and s
// hold (Prss.pairStream), and sends real shares only to the other n - 1 - t parties. Each seeded
// peer computes its share from the same stream. This is the usual PRG-seed saving on share
// dealing in honest-majority MPC (e.g. Goyal, Li, Ostrovsky, Polychroniadou, Song, "ATLAS",
// CRYPTO 2021); it sends t of the n - 1 rows for free: at n = 5, t = 2 half the GRR bytes.
//
// Privacy: g_i is uniform among the degree-t polynomials with g_i(0) = h_i (the t seeded values are
// uniform and fix the other coefficients one to one), so any t evaluations at nonzero points, which
// is all that t other parties see, are uniform and independent of h_i, as in plain GRR. The pair key
// of (i, s) is pseudo-random to every coalition of t parties without i and s (prss.ts, pairKey).
//
// With a batch's participant set S (ADR 0017: |S| >= 2t+1 of n parties compute it) the dealing
// and the recombination run over S: the seeded peers are the t members after i by position in S,
// real shares go to the other |S| - 1 - t members, and non-members get nothing. The argument above
// holds as is (the points are still party ids; any t of them see uniform values).

import { inv, mod, overCommonDenominator, reduce } from './field';
import { lincombEncoded, lincombSmallEncoded, lincombSmallRowsEncoded, productsDealtEncoded, productsDealtKeeping, productsEncoded, SMALL_WEIGHT_LIMIT, type ProductsSpec } from './kernel';

/**
 * The t parties whose shares of party `dealer`'s GRR dealing are seeded, not sent: the t members
 * after the dealer in `members` (sorted party ids, cyclically; all n parties by default, then
 * dealer+1 .. dealer+t mod n). With a batch's participant set S (ADR 0017) seeded peers are members
 * of S, which all compute the batch.
 */
/** The Lagrange basis at x over `points` as integer fractions nums[k] / dens[k], dens positive (the sign on the numerator). */
function lagrangeFractions(points: readonly bigint[], x: bigint): { nums: bigint[]; dens: bigint[] } {
  const nums: bigint[] = [];
  const dens: bigint[] = [];
  points.forEach((pk, k) => {
    let num = 1n;
    let den = 1n;
    points.forEach((pm, m) => {
      if (m === k) return;
      num *= x - pm;
      den *= pk - pm;
    });
    if (den < 0n) {
      num = -num;
      den = -den;
    }
    nums.push(num);
    dens.push(den);
  });
  return { nums, dens };
}

export function seededPeers(n: number, t: number, dealer: number, members?: readonly number[]): number[] {
  if (!members) return Array.from({ length: t }, (_, d) => ((dealer - 1 + d + 1) % n) + 1);
  const pos = members.indexOf(dealer);
  if (pos < 0) throw new Error(`internal: dealer ${dealer} is not a member of ${members.join('.')}`);
  if (members.length < 2 * t + 1) throw new Error(`internal: ${members.length} members for t = ${t}`);
  return Array.from({ length: t }, (_, d) => members[(pos + d + 1) % members.length]!);
}

/** How a dealer evaluates its polynomial at a point x from [h, seed_1 .. seed_t]: small integer weights and a scale, or field weights. */
export interface DealWeights {
  x: number;
  /** c_k with g(x) = scale * sum_k c_k v_k, when every |c_k| is below the kernel's small-weight limit. */
  small?: { c: number[]; scale: bigint };
  /** The Lagrange weights themselves (field elements). */
  field: bigint[];
}

const planCache = new Map<string, DealWeights[]>();

/**
 * For every party x that is not a seeded peer of `dealer` (the dealer itself included; members
 * only when `members` is given): the weights of g(x) over the values at the points [0, s_1 .. s_t]
 * (Lagrange interpolation in small integers over one common denominator D per x: g(x) = D^-1
 * sum_k c_k v_k). Points are party ids, the Shamir evaluation points, whatever the members.
 */
export function dealPlan(n: number, t: number, dealer: number, members?: readonly number[]): DealWeights[] {
  const key = `${n}:${t}:${dealer}:${members?.join('.') ?? 'all'}`;
  const hit = planCache.get(key);
  if (hit) return hit;
  const seeded = seededPeers(n, t, dealer, members);
  const points = [0, ...seeded].map(BigInt);
  const out: DealWeights[] = [];
  for (const x of members ?? Array.from({ length: n }, (_, k) => k + 1)) {
    if (seeded.includes(x)) continue;
    const bx = BigInt(x);
    const { nums, dens } = lagrangeFractions(points, bx);
    const { c, D } = overCommonDenominator(nums, dens);
    const field = c.map((ck) => reduce(mod(ck) * inv(mod(D))));
    const lim = BigInt(SMALL_WEIGHT_LIMIT);
    const fits = c.every((ck) => (ck < 0n ? -ck : ck) < lim);
    out.push({ x, field, ...(fits ? { small: { c: c.map(Number), scale: D === 1n ? 1n : inv(mod(D)) } } : {}) });
  }
  planCache.set(key, out);
  return out;
}

/**
 * The dealer's rows of a seeded GRR dealing of the encoded secrets h: rows[x - 1] = g(x) for every
 * party x (a member, when `members` is given) that is not a seeded peer; an empty array for the
 * seeded peers (their shares are seeds[k], which they compute themselves) and for non-members.
 * seeds[k] holds the values at seededPeers(n, t, dealer, members)[k].
 */
export function dealSeeded(h: Uint8Array, seeds: readonly Uint8Array[], n: number, t: number, dealer: number, members?: readonly number[]): Uint8Array[] {
  if (seeds.length !== t) throw new Error(`internal: ${seeds.length} seed vectors for t = ${t}`);
  const rows: Uint8Array[] = Array.from({ length: n }, () => new Uint8Array(0));
  const vs = [h, ...seeds];
  const plan = dealPlan(n, t, dealer, members);
  if (plan.every((w) => w.small !== undefined)) {
    // every row in one kernel call (the usual case: small integer weights)
    const out = lincombSmallRowsEncoded(vs, plan.map((w) => w.small!.c), plan.map((w) => w.small!.scale));
    plan.forEach((w, q) => (rows[w.x - 1] = out[q]!));
  } else {
    for (const w of plan) rows[w.x - 1] = lincombEncoded(vs, w.field);
  }
  return rows;
}

// ---- scaled dealing: no field product per dealt share ----
//
// dealSeeded's g(x) = D_x^-1 sum_k c_k v_k costs a full field product per share for the D_x^-1.
// Scaled dealing reshares D h instead of h, with one denominator D for every dealer and point of the
// set (the lcm of all of them): the dealer's polynomial G has G(0) = D h and G(s) = D u_s at its
// seeded peers (u_s the pair stream), so G(x) = sum_k L_k(x) G(p_k) = sum_k c_k [h, u_1 .. u_t]_k
// with the integers c_k = D L_k(x): a small-integer combination and no product. A seeded peer's
// value D u_s is not computed either: the factor D goes into its recombination weight. Each party
// then holds sum_i lambda_i G_i(x), a degree-t sharing of D * (the product), and one product by
// D^-1 in the recombination (instead of t+1 at each dealer) gives the shares of the product.
// Privacy is GRR's of the value D h (D is invertible, so D u_s is uniform when u_s is): any t
// evaluations of G at nonzero points are uniform and independent of h.

/** A participant set's scaled dealing: the common denominator D and each dealer's integer weights per point. */
export interface ScaledPlan {
  D: bigint;
  /** dealer -> for every non-seeded point x (the dealer included): c with G(x) = sum_k c_k [h, u_1 .. u_t]_k */
  deal: Map<number, { x: number; c: number[] }[]>;
}

const scaledCache = new Map<string, ScaledPlan | null>();

/** The scaled plan of (n, t, members), or undefined when a weight is not below the kernel's small-weight limit (then dealSeeded). */
export function scaledPlan(n: number, t: number, members?: readonly number[]): ScaledPlan | undefined {
  const key = `${n}:${t}:${members?.join('.') ?? 'all'}`;
  const hit = scaledCache.get(key);
  if (hit !== undefined) return hit ?? undefined;
  const set = members ?? Array.from({ length: n }, (_, k) => k + 1);
  const terms: { dealer: number; x: number; nums: bigint[]; dens: bigint[] }[] = [];
  const allDens: bigint[] = [];
  for (const dealer of set) {
    const seeded = seededPeers(n, t, dealer, members);
    const points = [0, ...seeded].map(BigInt);
    for (const x of set) {
      if (seeded.includes(x)) continue;
      const bx = BigInt(x);
      const { nums, dens } = lagrangeFractions(points, bx);
      terms.push({ dealer, x, nums, dens });
      allDens.push(...dens);
    }
  }
  const { D } = overCommonDenominator([1n], allDens.length ? allDens : [1n]);
  const lim = BigInt(SMALL_WEIGHT_LIMIT);
  const deal = new Map<number, { x: number; c: number[] }[]>();
  let fits = true;
  for (const { dealer, x, nums, dens } of terms) {
    const c = nums.map((nu, k) => (nu * D) / dens[k]!);
    if (c.some((ck) => (ck < 0n ? -ck : ck) >= lim)) fits = false;
    if (!deal.has(dealer)) deal.set(dealer, []);
    deal.get(dealer)!.push({ x, c: c.map(Number) });
  }
  const plan = fits ? { D, deal } : undefined;
  scaledCache.set(key, plan ?? null);
  return plan;
}

/**
 * The dealer's rows of a GRR dealing of h (rows[x - 1] for every member x that is not a seeded
 * peer; empty rows for the seeded peers and non-members): scaled (scaledPlan) when the set allows
 * it, else dealSeeded. grrRecombine undoes the scaling; both ends decide it from (n, t, members).
 */
export function dealGrr(h: Uint8Array, seeds: readonly Uint8Array[], n: number, t: number, dealer: number, members?: readonly number[]): Uint8Array[] {
  const plan = scaledPlan(n, t, members);
  if (!plan) return dealSeeded(h, seeds, n, t, dealer, members);
  if (seeds.length !== t) throw new Error(`internal: ${seeds.length} seed vectors for t = ${t}`);
  const rows: Uint8Array[] = Array.from({ length: n }, () => new Uint8Array(0));
  const ws = plan.deal.get(dealer);
  if (!ws) throw new Error(`internal: dealer ${dealer} is not a member`);
  const out = lincombSmallRowsEncoded([h, ...seeds], ws.map((w) => w.c), ws.map(() => 1n));
  ws.forEach((w, q) => (rows[w.x - 1] = out[q]!));
  return rows;
}

/**
 * dealGrr(productsEncoded(spec), ...): a round's local products (kernel.ts, ProductsSpec) dealt
 * without leaving the kernel between the products and the dealing (same rows, bit for bit).
 */
export function dealGrrProducts(spec: ProductsSpec, seeds: readonly Uint8Array[], n: number, t: number, dealer: number, members?: readonly number[]): Uint8Array[] {
  const plan = scaledPlan(n, t, members);
  if (!plan) return dealSeeded(productsEncoded(spec), seeds, n, t, dealer, members);
  if (seeds.length !== t) throw new Error(`internal: ${seeds.length} seed vectors for t = ${t}`);
  const rows: Uint8Array[] = Array.from({ length: n }, () => new Uint8Array(0));
  const ws = plan.deal.get(dealer);
  if (!ws) throw new Error(`internal: dealer ${dealer} is not a member`);
  const out = productsDealtEncoded(spec, seeds, ws.map((w) => w.c));
  ws.forEach((w, q) => (rows[w.x - 1] = out[q]!));
  return rows;
}

/**
 * dealGrrProducts for a dealer that sends its rows on at once: `send` gets the rows (indexed as
 * dealGrrProducts' result) while they may still be views of the kernel's memory, valid only during
 * the call (it must copy them, e.g. encode them into messages, and call no kernel function), and
 * the dealer's own row is returned as an output. With a scaled plan the peers' rows are never
 * copied out of the kernel (ADR 0040). The same rows, bit for bit.
 */
export function dealGrrProductsSending(spec: ProductsSpec, seeds: readonly Uint8Array[], n: number, t: number, dealer: number, members: readonly number[] | undefined, send: (rows: readonly Uint8Array[]) => void): Uint8Array {
  const plan = scaledPlan(n, t, members);
  if (!plan) {
    const rows = dealGrrProducts(spec, seeds, n, t, dealer, members);
    send(rows);
    return rows[dealer - 1]!;
  }
  if (seeds.length !== t) throw new Error(`internal: ${seeds.length} seed vectors for t = ${t}`);
  const ws = plan.deal.get(dealer);
  if (!ws) throw new Error(`internal: dealer ${dealer} is not a member`);
  const keep = ws.findIndex((w) => w.x === dealer);
  return productsDealtKeeping(spec, seeds, ws.map((w) => w.c), keep, (out) => {
    const rows: Uint8Array[] = Array.from({ length: n }, () => new Uint8Array(0));
    ws.forEach((w, q) => (rows[w.x - 1] = out[q]!));
    send(rows);
  });
}

/** Recombination weights of party `self` over the set (in its order): small integers and one scale, or field weights. */
function recombineWeights(n: number, t: number, self: number, members?: readonly number[]): { small?: { c: number[]; scale: bigint }; field: bigint[] } {
  const set = members ?? Array.from({ length: n }, (_, k) => k + 1);
  const plan = scaledPlan(n, t, members);
  const D = plan?.D ?? 1n;
  const nums: bigint[] = [];
  const dens: bigint[] = [];
  for (const i of set) {
    // lambda_i = prod_{j != i} (0 - x_j) / (x_i - x_j), times D for a dealer that seeds our share
    let num = 1n;
    let den = 1n;
    for (const j of set) {
      if (j === i) continue;
      num *= BigInt(-j);
      den *= BigInt(i - j);
    }
    if (den < 0n) {
      num = -num;
      den = -den;
    }
    if (plan && seededPeers(n, t, i, members).includes(self)) num *= D;
    nums.push(num);
    dens.push(den);
  }
  const { c, D: E } = overCommonDenominator(nums, dens);
  const scale = inv(mod(E * D));
  const field = c.map((ck) => reduce(mod(ck) * scale));
  const lim = BigInt(SMALL_WEIGHT_LIMIT);
  const fits = c.every((ck) => (ck < 0n ? -ck : ck) < lim);
  return { field, ...(fits ? { small: { c: c.map(Number), scale } } : {}) };
}

const recombineCache = new Map<string, ReturnType<typeof recombineWeights>>();

/**
 * Party self's degree-t shares of the products from the GRR rows it holds, one per member of the set
 * in its order (sent rows; for the dealers that seed it, the raw pair stream u, dealGrr's scaling
 * then in the weight): sum_i lambda_i G_i(self), times D^-1 when scaled. Small integer weights and
 * one product by the scale per element in the kernel where they fit, field weights otherwise.
 */
export function grrRecombine(rows: readonly Uint8Array[], n: number, t: number, self: number, members?: readonly number[]): Uint8Array {
  const key = `${n}:${t}:${self}:${members?.join('.') ?? 'all'}`;
  let w = recombineCache.get(key);
  if (!w) recombineCache.set(key, (w = recombineWeights(n, t, self, members)));
  return w.small ? lincombSmallEncoded(rows, w.small.c, w.small.scale) : lincombEncoded(rows, w.field);
}
