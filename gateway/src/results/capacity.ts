// What the committee's preprocessing reserve still covers, from the capacity reports its nodes send
// on their results links (docs/decisions/0016-outage-capacity.md). Only reports of nodes whose link
// is up count. Matching is paused once t+1 of them say their job ran out: every node runs the same
// jobs on the same reserve, so they run out together, and t+1 is what any outcome needs anyway.
import type { CapacityFrame } from '@tenebra/wire';

export type CommitteePreprocessing = 'running' | 'idle' | 'stopped' | 'exhausted';

export interface CommitteeCapacity {
  /** undefined: no connected node has reported yet */
  preprocessing: CommitteePreprocessing | undefined;
  /** ops the reserve covers (the least any connected node reports); null while unknown */
  ordersLeft: bigint | null;
}

export class CapacityBoard {
  private readonly latest = new Map<number, CapacityFrame>();

  constructor(private readonly t: number) {}

  report(frame: CapacityFrame): void {
    this.latest.set(frame.node, frame);
  }

  /** The committee's capacity as the connected nodes last reported it. */
  read(connected: ReadonlySet<number>): CommitteeCapacity {
    const frames = [...this.latest.values()].filter((f) => connected.has(f.node));
    if (frames.length === 0) return { preprocessing: undefined, ordersLeft: null };
    let left: bigint | null = null;
    for (const f of frames) {
      if (f.orders_left === '') continue;
      const v = BigInt(f.orders_left);
      if (left === null || v < left) left = v;
    }
    const exhausted = frames.filter((f) => f.exhausted).length >= this.t + 1;
    const preprocessing: CommitteePreprocessing = exhausted ? 'exhausted'
      : frames.some((f) => f.production === 'stopped') ? 'stopped'
      : frames.some((f) => f.production === 'running') ? 'running' : 'idle';
    return { preprocessing, ordersLeft: left };
  }
}
