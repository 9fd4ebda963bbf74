// A result frame's JSON text, made once per frame: a job's results are sent at its commit
// (ResultsLink.sendNow) and written with its boundary (NodeStore.commitJob), and both wrote
// JSON.stringify of the same, never changed, frame (ADR 0048).
import type { ResultFrame } from '@tenebra/wire';

const texts = new WeakMap<ResultFrame, string>();

/** JSON.stringify(r), from the cache when this frame object was stringified before. */
export function resultText(r: ResultFrame): string {
  let s = texts.get(r);
  if (s === undefined) {
    s = JSON.stringify(r satisfies ResultFrame);
    texts.set(r, s);
  }
  return s;
}
