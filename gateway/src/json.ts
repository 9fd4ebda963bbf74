// A JSON writer that emits exact numbers: bigints as integer literals (nanosecond times exceed 2^53)
// and RawNumber as its decimal text verbatim (prices and sizes converted at the edge from integer
// ticks/steps, never through a float).

/** A JSON number written exactly as the given decimal text. */
export class RawNumber {
  constructor(readonly text: string) {
    if (!/^-?\d+(\.\d+)?$/.test(text)) throw new TypeError(`RawNumber: '${text}' is not a plain decimal`);
  }
}

/** A RawNumber for decimal text, or null for null. */
export function num(text: string | null): RawNumber | null {
  return text === null ? null : new RawNumber(text);
}

/** JSON text of value; bigints become integers, RawNumbers their text, undefined members are dropped. */
export function stringify(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('stringify: non-finite number');
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object': {
      if (value instanceof RawNumber) return value.text;
      if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : stringify(v))).join(',')}]`;
      const parts: string[] = [];
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (v === undefined) continue;
        parts.push(`${JSON.stringify(k)}:${stringify(v)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw new TypeError(`stringify: cannot encode ${typeof value}`);
  }
}
