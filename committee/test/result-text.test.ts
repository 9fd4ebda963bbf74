// A result frame's JSON, made once for the send at commit and the boundary write (result-text.ts).
import { describe, expect, it } from 'vitest';
import type { ResultFrame } from '@tenebra/wire';
import { resultText } from '../src/result-text';

describe('resultText', () => {
  it('is JSON.stringify of the frame, the same text for the same frame, its own for another', () => {
    const a: ResultFrame = { t: 'result', node: 2, seq: '17', pub: { kind: 'cancel' }, sealed: 'ab', job: 'batch:17-17:0' };
    const b: ResultFrame = { ...a, seq: '18' };
    expect(resultText(a)).toBe(JSON.stringify(a));
    expect(resultText(a)).toBe(resultText(a));
    expect(resultText(b)).toBe(JSON.stringify(b));
    expect(JSON.parse(resultText(b))).toEqual(b);
  });
});
