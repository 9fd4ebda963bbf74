// Polls every process's own metrics endpoint once a second (none of them does extra work for it:
// prom-client reads what they keep), turns the scrapes into a Snapshot, keeps the last minutes of
// flow for the plots and the timeline of what happened to the processes.
import { parseExposition, type Sample } from '@tenebra/metrics';
import { snapshot, type FlowPoint, type ProcView, type Scrapes, type Snapshot } from './snapshot';
import type { ChaosTarget, ProcRole } from './target';

/** One entry of the timeline: a process event, a console action, or a state the sampler saw change. */
export interface TimelineEvent {
  time: number;
  /** 'committee 3', 'sequencer', 'gateway', 'links' */
  who: string;
  what: string;
  /** console: an operator's action; process: the launcher's; state: the sampler's reading */
  source: 'console' | 'process' | 'state';
}

export interface SamplerOptions {
  intervalMs?: number;
  /** scrapes kept per process for quantiles and means (the window, in polls) */
  window?: number;
  /** flow points kept for the plots */
  history?: number;
  /** a scrape slower than this counts as missed (the next poll waits for it: polls never stack) */
  timeoutMs?: number;
}

/**
 * Only the lines the console reads (the project's series and the process CPU): prom-client's
 * default process metrics are most of an exposition, and parsing them every second would be the
 * console's largest cost.
 */
export function wanted(text: string): string {
  return text.split('\n').filter((l) => l.startsWith('tenebra_') || l.startsWith('process_cpu_seconds_total')).join('\n');
}

export const whoOf = (role: ProcRole, index: number) => (role === 'committee' ? `node ${index}` : role);

export class Sampler {
  private readonly scrapes = new Map<string, Scrapes & { pid: number | null }>();
  private readonly flow: FlowPoint[] = [];
  private readonly timeline: TimelineEvent[] = [];
  private readonly listeners = new Set<(m: { snapshot?: Snapshot; event?: TimelineEvent }) => void>();
  private readonly states = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private latestSnapshot: Snapshot | null = null;
  private readonly off: () => void;
  readonly intervalMs: number;
  private readonly window: number;
  private readonly historyLength: number;
  private readonly timeoutMs: number;

  constructor(private readonly target: ChaosTarget, private readonly n: number, opts: SamplerOptions = {}) {
    this.intervalMs = opts.intervalMs ?? 1_000;
    this.window = opts.window ?? 10;
    this.historyLength = opts.history ?? 600;
    this.timeoutMs = opts.timeoutMs ?? 2 * this.intervalMs;
    this.off = target.onEvent((e) => this.record({
      time: e.time, who: whoOf(e.role, e.index), what: e.detail ? `${e.kind} (${e.detail})` : e.kind, source: 'process',
    }));
  }

  start(): void {
    if (this.timer) return;
    const tick = () => {
      // one poll at a time: a slow round is skipped, not stacked
      if (!this.running) this.running = this.poll().then(() => undefined, () => undefined).finally(() => { this.running = null; });
    };
    tick();
    this.timer = setInterval(tick, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.off();
    await this.running;
  }

  subscribe(fn: (m: { snapshot?: Snapshot; event?: TimelineEvent }) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  get latest(): Snapshot | null {
    return this.latestSnapshot;
  }
  history(): FlowPoint[] {
    return [...this.flow];
  }
  events(): TimelineEvent[] {
    return [...this.timeline];
  }

  /** Adds an entry to the timeline and tells the pages. */
  record(e: TimelineEvent): void {
    this.timeline.push(e);
    if (this.timeline.length > 1_000) this.timeline.splice(0, this.timeline.length - 1_000);
    for (const fn of this.listeners) fn({ event: e });
  }

  private async scrape(url: string): Promise<Sample[] | null> {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(this.timeoutMs) });
      if (r.status !== 200) return null;
      return parseExposition(wanted(await r.text()));
    } catch {
      return null;
    }
  }

  /** One round: scrape every running process, then compute and push the snapshot. */
  async poll(): Promise<Snapshot> {
    const procs = this.target.processes();
    const urls = new Map(this.target.metricsUrls().map((m) => [`${m.role}:${m.index}`, m.url]));
    const results = await Promise.all(procs.map(async (p) => {
      const key = `${p.role}:${p.index}`;
      const running = this.target.isRunning(p.role, p.index);
      const frozen = this.target.isFrozen(p.role, p.index);
      const url = urls.get(key);
      // a frozen process cannot answer: no request to wait out
      const samples = running && !frozen && url ? await this.scrape(url) : null;
      return { p, key, running, frozen, samples, time: Date.now() };
    }));
    const views: ProcView[] = results.map(({ p, key, running, frozen, samples, time }) => {
      let s = this.scrapes.get(key);
      // a new incarnation starts its counters over: its old scrapes would make false rates
      if (!s || s.pid !== p.pid || !running) {
        s = { times: [], samples: [], pid: p.pid };
        this.scrapes.set(key, s);
      }
      if (samples) {
        s.times.push(time);
        s.samples.push(samples);
        if (s.times.length > this.window + 1) {
          s.times.shift();
          s.samples.shift();
        }
      }
      return { role: p.role, index: p.index, pid: p.pid, running, frozen, scrapes: s };
    });
    const snap = snapshot(views, this.n, Date.now());
    this.latestSnapshot = snap;
    this.flow.push(snap.flow);
    if (this.flow.length > this.historyLength) this.flow.shift();
    this.noteStates(snap);
    for (const fn of this.listeners) fn({ snapshot: snap });
    return snap;
  }

  /** State changes go on the timeline too: a node that goes stale or recovers is worth a mark. */
  private noteStates(s: Snapshot): void {
    const seen: [string, string][] = [
      ...s.nodes.map((nd) => [`node ${nd.index}`, nd.state] as [string, string]),
      ['sequencer', s.sequencer.state], ['gateway', s.gateway.state],
    ];
    for (const [who, state] of seen) {
      const before = this.states.get(who);
      this.states.set(who, state);
      if (before !== undefined && before !== state) this.record({ time: s.time, who, what: `${before} → ${state}`, source: 'state' });
    }
  }
}
