/**
 * libp2p's streams and connections (main-event's TypedEventEmitter, under @libp2p/utils'
 * AbstractMessageStream) dispatch an 'idle' event after every send() that empties their write
 * buffer, at each of the three layers a message crosses (our Yamux stream, the Noise connection, the
 * TCP connection), whether or not anyone listens: a CustomEvent built and dispatched through Node's
 * EventTarget, about 2% of a committee node's CPU in the sustained-matching profile (bench:orders,
 * TENEBRA_CPU_PROF). An event nobody listens to has no effect, so dispatching it is skipped: same
 * behaviour, minus the allocation and the dispatch. Duck-typed, as lazyWindowUpdates: on a version
 * without these methods nothing is changed.
 */
const PATCHED = Symbol.for('tenebra.quietEvents');

interface Emits {
  safeDispatchEvent?: (type: string, detail?: unknown) => boolean;
  listenerCount?: (type: string) => number;
  [PATCHED]?: boolean;
}

/**
 * Makes safeDispatchEvent of the emitter class `instance` inherits it from skip event types with no
 * listener (patched once, on the prototype that defines it). True when patched, now or before.
 */
export function quietEventsOf(instance: object): boolean {
  let proto = Object.getPrototypeOf(instance) as Emits | null;
  while (proto !== null && !Object.prototype.hasOwnProperty.call(proto, 'safeDispatchEvent')) proto = Object.getPrototypeOf(proto) as Emits | null;
  if (proto === null) return false;
  if (proto[PATCHED] === true) return true;
  const original = proto.safeDispatchEvent;
  if (typeof original !== 'function' || typeof proto.listenerCount !== 'function') return false;
  proto.safeDispatchEvent = function quietSafeDispatchEvent(this: Emits, type: string, detail?: unknown): boolean {
    // dispatchEvent answers true (not cancelled) when no listener runs
    if (this.listenerCount!(type) === 0) return true;
    return original.call(this, type, detail);
  };
  proto[PATCHED] = true;
  return true;
}
