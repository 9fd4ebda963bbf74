// What the preprocessing reserve still covers (docs/decisions/0016-outage-capacity.md): the cost of an
// applied op in each kind of preprocessing, measured from the engine's consumption cursors around
// every completed job (a moving average), and from it how many more ops the reserve covers once
// production stops. Pure: the node feeds it the engine's status.
import type { PartyStatus } from '@tenebra/mpc';

/** The reserve kinds as the node reports them (bits = 4 x nibbles, as the config's targets). */
export const CAPACITY_KINDS = ['bits', 'lex4', 'prod4', 'triples'] as const;
export type CapacityKind = (typeof CAPACITY_KINDS)[number];
export type KindCounts = Record<CapacityKind, number>;

/** Weight of the newest job in the moving average of cost per op (per op of that job, so a job of k ops weighs k times one op). */
const EWMA_ALPHA_PER_OP = 0.02;

export type Production = 'running' | 'idle' | 'stopped';

export interface Capacity {
  /** `stopped`: fewer nodes alive than production needs, so the reserve only shrinks */
  production: Production;
  /** the last job ran out of preprocessing and waits for production (set by the node, cleared by its next completed job) */
  exhausted: boolean;
  /** moving average of items consumed per applied op, by kind (null before the first job that consumed any) */
  costPerOp: KindCounts | null;
  /** ops the reserve covers at that cost (the scarcest kind decides; null while the cost is unknown) */
  opsLeft: number | null;
}

/** Consumption cursors of a status in the node's kinds (absolute: items ever consumed). */
export function consumed(st: PartyStatus): KindCounts {
  return consumedAt(st.reserve.cursor);
}

/** Consumption cursors (Party.reserveCursor(), or a status's) in the node's kinds. */
export function consumedAt(c: PartyStatus['reserve']['cursor']): KindCounts {
  return { bits: 4 * c.nibbles, lex4: c.lex4, prod4: c.prod4, triples: c.triples };
}

/** The reserve of a status in the node's kinds. */
export function reserveOf(st: PartyStatus): KindCounts {
  const r = st.reserve;
  return { bits: r.bits, lex4: r.lex4, prod4: r.prod4, triples: r.triples };
}

/** Ops a reserve covers at a cost per op: the minimum over the kinds the ops use (Infinity when they use none). */
export function opsCovered(reserve: KindCounts, cost: KindCounts): number {
  let left = Infinity;
  for (const k of CAPACITY_KINDS) if (cost[k] > 0) left = Math.min(left, Math.floor(reserve[k] / cost[k]));
  return left;
}

export class CapacityTracker {
  private cost: KindCounts | null = null;
  private exhaustedNow = false;

  /**
   * n: committee size; production needs all n alive (GRR resharing interpolates over all n:
   * preprocessing.ts). prior: the cost per op to start from (the config's per-order estimate, an
   * upper end), which the measurements then move: a few cheap ops on a shallow book would otherwise
   * promise far more than a deeper book delivers (outage test: 140 promised, 59 delivered).
   */
  /** needed: parties that must be up to produce (productionQuorum(n, t): all n at 5/2, five at 7/2) */
  constructor(private readonly needed: number, private readonly dealer = false, prior?: KindCounts) {
    if (prior) this.cost = { ...prior };
  }

  /**
   * A job completed: `before` and `after` are the engine's consumption cursors around it, `ops` the
   * ops it applied. Retries that ran out were rolled back and consumed nothing.
   */
  jobDone(before: KindCounts, after: KindCounts, ops: number): void {
    this.exhaustedNow = false;
    if (ops <= 0) return;
    const per = {} as KindCounts;
    let any = false;
    for (const k of CAPACITY_KINDS) {
      per[k] = Math.max(0, after[k] - before[k]) / ops;
      if (per[k] > 0) any = true;
    }
    if (!any) return; // e.g. a batch of cancels: says nothing of what a placement costs
    if (!this.cost) {
      this.cost = per;
      return;
    }
    const a = 1 - (1 - EWMA_ALPHA_PER_OP) ** ops;
    for (const k of CAPACITY_KINDS) this.cost[k] += a * (per[k] - this.cost[k]);
  }

  /** A job attempt failed with PreprocessingExhaustedError. */
  markExhausted(): void {
    this.exhaustedNow = true;
  }

  get exhausted(): boolean {
    return this.exhaustedNow;
  }

  /** The capacity as of a status (undefined status: the party does not exist yet). */
  read(st: PartyStatus | undefined, targets: KindCounts): Capacity {
    const cost = this.cost ? { ...this.cost } : null;
    if (!st) return { production: 'stopped', exhausted: this.exhaustedNow, costPerOp: cost, opsLeft: null };
    const reserve = reserveOf(st);
    const below = CAPACITY_KINDS.some((k) => reserve[k] < targets[k]);
    const production: Production = !this.dealer && st.alive.length < this.needed ? 'stopped' : below ? 'running' : 'idle';
    const left = cost ? opsCovered(reserve, cost) : null;
    return { production, exhausted: this.exhaustedNow, costPerOp: cost, opsLeft: left === null || !Number.isFinite(left) ? null : left };
  }
}
