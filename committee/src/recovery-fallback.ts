// When a node restarted after a crash stops waiting for share recovery and resumes from its own
// persisted state (docs/decisions/0002-committee-restarts.md). Checked once a second by the node.

/** What the recovering party reports of its helpers (`status().recovery`). */
export interface HelperView {
  /** helpers connected */
  alive: number;
  /** connected helpers not busy themselves */
  ready: number;
  /** t + 1 */
  needed: number;
  /** what each busy helper said (a recovering one names its persisted seq) */
  busy: Record<number, string>;
}

/** Too few ready helpers with enough of them connected: a third death, resume after this long. */
export const NO_HELPERS_FALLBACK_MS = 15_000;
/**
 * Too few helpers even connected: on a loaded host the survivors' links to a restarted node take
 * tens of seconds to come up (chaos:real at a load of 45-55 on two cores: both nodes of a killed pair
 * gave up after 15 s, resumed far behind, went stale and restarted: minutes instead of seconds).
 * Resume after this long only (45 s: a third death with the survivors all connected but too few, as
 * committee-restarts.test.ts makes it, still resumes within its 90 s).
 */
export const UNREACHABLE_FALLBACK_MS = 45_000;

/**
 * The two bounds, for a deployment that knows its links come up fast (NodeConfig.recoveryFallback):
 * a shorter unreachableMs resumes sooner after a third death, at the risk, on a slow host, of a
 * killed pair resuming before its helpers connect (then it finds itself behind, ends and recovers
 * in its next life: minutes instead of seconds, never a wrong result).
 */
export interface FallbackLimits {
  /** default NO_HELPERS_FALLBACK_MS */
  noHelpersMs?: number;
  /** default UNREACHABLE_FALLBACK_MS */
  unreachableMs?: number;
}

/** Checks configured bounds: whole milliseconds, at least one check interval, at most a day. */
export function checkFallbackLimits(l: FallbackLimits | undefined): void {
  for (const [k, v] of Object.entries(l ?? {})) {
    if (k !== 'noHelpersMs' && k !== 'unreachableMs') throw new RangeError(`recoveryFallback: unknown field '${k}' (noHelpersMs, unreachableMs)`);
    if (!Number.isInteger(v) || (v as number) < 1_000 || (v as number) > 86_400_000) throw new RangeError(`recoveryFallback.${k} must be whole milliseconds from 1000 to 86400000, not ${String(v)}`);
  }
}

/**
 * Resume from our own state (the reason), or keep waiting (null):
 *  - t+1 nodes (us included) persisted at our seq: the committee restarted together and can go on
 *    from there at once (no other t+1 can hold another seq, since 2(t+1) > n);
 *  - one of them at a later seq, or t+1 at another seq: they will resume there and then help us,
 *    so keep waiting;
 *  - otherwise once fewer than t+1 helpers have been ready, without a break, for
 *    NO_HELPERS_FALLBACK_MS with at least t+1 connected, or UNREACHABLE_FALLBACK_MS in any case
 *    (or the configured FallbackLimits).
 */
export class RecoveryFallback {
  private shortSince: number | null = null;
  private reachableShortSince: number | null = null;

  private readonly noHelpersMs: number;
  private readonly unreachableMs: number;

  constructor(private readonly t: number, private readonly own: string | null, limits: FallbackLimits = {}) {
    checkFallbackLimits(limits);
    this.noHelpersMs = limits.noHelpersMs ?? NO_HELPERS_FALLBACK_MS;
    this.unreachableMs = limits.unreachableMs ?? UNREACHABLE_FALLBACK_MS;
  }

  check(h: HelperView | undefined, now: number): string | null {
    if (!h || h.ready >= h.needed) {
      this.shortSince = null;
      this.reachableShortSince = null;
      return null;
    }
    const seqs = new Map<string, number>();
    for (const note of Object.values(h.busy)) {
      const m = /persisted-seq (\d+)/.exec(note);
      if (m) seqs.set(m[1]!, (seqs.get(m[1]!) ?? 0) + 1);
    }
    const { t, own } = this;
    if (own !== null && (seqs.get(own) ?? 0) + 1 >= t + 1) return `${t + 1} or more recovering nodes persisted at seq ${own}`;
    if ([...seqs].some(([seq, count]) => (own === null || BigInt(seq) > BigInt(own)) || (seq !== own && count >= t + 1))) {
      this.shortSince = null;
      this.reachableShortSince = null;
      return null;
    }
    this.shortSince ??= now;
    if (h.alive >= h.needed) this.reachableShortSince ??= now;
    else this.reachableShortSince = null;
    if (this.reachableShortSince !== null && now - this.reachableShortSince >= this.noHelpersMs) {
      return `fewer than ${t + 1} ready helpers for ${this.noHelpersMs} ms`;
    }
    if (now - this.shortSince >= this.unreachableMs) return `fewer than ${t + 1} ready helpers for ${this.unreachableMs} ms, fewer than ${t + 1} even connected for part of it`;
    return null;
  }
}
