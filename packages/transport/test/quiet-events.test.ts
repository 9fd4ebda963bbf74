// quietEventsOf: libp2p's stream events with no listener are skipped; listened ones still arrive.
import { describe, expect, it, vi } from 'vitest';
import { TypedEventEmitter } from 'main-event';
import { quietEventsOf } from '../src/quiet-events';

class Emitter extends TypedEventEmitter<{ idle: CustomEvent; message: CustomEvent<number> }> {}

describe('quietEventsOf', () => {
  it('patches the prototype that defines safeDispatchEvent, once; listeners added before or after still get every event', () => {
    const a = new Emitter();
    const b = new Emitter();
    const seen: string[] = [];
    a.addEventListener('message', (e) => seen.push(`a:${e.detail}`));
    expect(quietEventsOf(a)).toBe(true);
    expect(quietEventsOf(b)).toBe(true); // same prototype: already patched
    expect(a.safeDispatchEvent('message', { detail: 1 })).toBe(true);
    expect(a.safeDispatchEvent('idle')).toBe(true); // nobody listens: skipped, same answer
    b.addEventListener('idle', () => seen.push('b:idle'));
    b.safeDispatchEvent('idle');
    const once = (): void => {
      seen.push('b:once');
    };
    b.addEventListener('idle', once, { once: true });
    b.safeDispatchEvent('idle');
    b.safeDispatchEvent('idle');
    expect(seen).toEqual(['a:1', 'b:idle', 'b:idle', 'b:once', 'b:idle']);
  });

  it('builds and dispatches no event for a type nobody listens to', () => {
    const e = new Emitter();
    quietEventsOf(e);
    const dispatch = vi.spyOn(e, 'dispatchEvent');
    e.safeDispatchEvent('idle');
    expect(dispatch).not.toHaveBeenCalled();
    e.addEventListener('idle', () => {});
    e.safeDispatchEvent('idle');
    expect(dispatch).toHaveBeenCalledTimes(1);
  });

  it('leaves an object without the emitter methods alone', () => {
    expect(quietEventsOf({})).toBe(false);
    expect(quietEventsOf(Object.create(null) as object)).toBe(false);
  });
});
