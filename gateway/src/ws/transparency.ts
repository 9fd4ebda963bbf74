// The public `transparency` channel's source: the platform overview exactly as GET
// /stats/platform/overview serves it (default range), and when it changes.
//
// Why it changes only when REST would show something new: the overview is computed through the
// delayed, floored as_of (stats/window.ts) from pools the release and dominance rules let out
// (stats/ledger.ts). A pool released now lies after as_of, so the REST object stays the same until
// as_of passes it; pushing at the moment of the release would tell subscribers, in real time, that an
// asset's pool just filled up, which REST never does. So the feed republishes when the object REST
// would serve differs from the last one published: when as_of moves (every 10 minutes) or a ledger
// flush changed a slot already public (a fill reconciled after a crash). A ledger flush only marks
// the feed dirty; the comparison runs on the WebSocket sweep, on the statistics' own cache.
import type { GatewayClock } from '../clock';
import { stringify } from '../json';
import { asOf } from '../stats/window';

/** Where the overview comes from (gateway.ts: the venue's StatsService and FillLedger). */
export interface TransparencySource {
  /** the object of GET /stats/platform/overview without query parameters */
  overview(): Record<string, unknown>;
  /** calls fn after every committed flush of the fill ledger */
  onLedgerFlush(fn: () => void): void;
}

export class TransparencyFeed {
  private last: Record<string, unknown>;
  private lastText: string;
  private lastAsOfMs: number;
  private dirty = false;

  constructor(
    private readonly source: TransparencySource,
    private readonly clock: GatewayClock,
  ) {
    this.lastAsOfMs = asOf(clock.nowMs());
    this.last = source.overview();
    this.lastText = stringify(this.last);
    source.onLedgerFlush(() => (this.dirty = true));
  }

  /** The overview last published (what a new subscriber's snapshot holds). */
  get current(): Record<string, unknown> {
    return this.last;
  }

  /**
   * The overview REST would serve now if it differs from the last one published (it becomes the last
   * one), else null. Cheap when nothing moved: as_of unchanged and no ledger flush since the last look.
   */
  poll(): Record<string, unknown> | null {
    const a = asOf(this.clock.nowMs());
    if (a === this.lastAsOfMs && !this.dirty) return null;
    const next = this.source.overview(); // may throw: then the next sweep tries again
    this.lastAsOfMs = a;
    this.dirty = false;
    const text = stringify(next);
    if (text === this.lastText) return null;
    this.last = next;
    this.lastText = text;
    return next;
  }
}
