// The contract between the MPC engine and any network. Parties are numbered 1..n.

/** Cancels a scheduled callback. */
export type Cancel = () => void;

/** Time source. Real processes use wall time; the simulated network a seeded virtual clock. */
export interface Clock {
  /** Milliseconds (virtual in simulation). */
  now(): number;
  /** Runs cb after ms milliseconds of this clock. */
  setTimeout(cb: () => void, ms: number): Cancel;
  /**
   * Runs cb once everything already triggered has settled (all microtasks of the current event).
   * Real: setImmediate. Simulated: an event at the current virtual time, after pending microtasks.
   * The MPC runtime flushes a round's batch from here, so this must be deterministic in simulation.
   */
  defer(cb: () => void): void;
}

/**
 * Best-effort datagram-style links between committee parties.
 * - send() never throws for a down or unknown-state peer; the message may be lost. Callers that need
 *   delivery re-send on onPeer(up) (the MPC runtime does).
 * - Messages between two live, connected parties are delivered at most once each, in any order.
 * - One send() should carry a whole round's batch for that peer; implementations may chunk internally.
 */
export interface Transport {
  readonly self: number;
  readonly n: number;
  readonly clock: Clock;
  send(to: number, data: Uint8Array): void;
  onMessage(handler: (from: number, data: Uint8Array) => void): void;
  /** Called when a peer becomes reachable (up=true) or is lost (up=false). */
  onPeer(handler: (peer: number, up: boolean) => void): void;
  isUp(peer: number): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}
