// What the console watches and acts on: the launcher's cluster (scripts/src/cluster.ts satisfies it),
// kept as an interface so this package needs nothing of the launcher.
export type ProcRole = 'committee' | 'sequencer' | 'gateway';

export interface ProcEvent {
  time: number;
  role: ProcRole;
  index: number;
  kind: 'started' | 'exited' | 'killed' | 'frozen' | 'thawed';
  detail?: string;
}

export interface ChaosTarget {
  processes(): { role: ProcRole; index: number; pid: number | null }[];
  metricsUrls(): { role: ProcRole; index: number; url: string }[];
  isRunning(role: ProcRole, index: number): boolean;
  isFrozen(role: ProcRole, index: number): boolean;
  kill(role: ProcRole, index: number, signal?: NodeJS.Signals): Promise<void>;
  /** kills it if it runs, then starts it */
  restart(role: ProcRole, index: number): Promise<void>;
  freeze(role: ProcRole, index: number): boolean;
  thaw(role: ProcRole, index: number): boolean;
  onEvent(fn: (e: ProcEvent) => void): () => void;
}
