// Exact JSON, shared by the gateway (writer) and the client SDK (reader and writer): the gateway writes prices, sizes and nanosecond times as exact number literals, which
// JSON.parse would round through a float (65000.1 is not a double; 1736899200123456789 > 2^53).
// parseJson keeps every number that is not a safe integer as its literal text, and stringifyJson
// writes decimals (RawNumber) and bigints as literals, so money never passes through a float.

/** A JSON number written verbatim (a plain decimal literal such as "65000.1"). */
export class RawNumber {
  constructor(readonly text: string) {
    if (!/^-?(?:0|[1-9]\d*)(?:\.\d+)?$/.test(text)) throw new TypeError(`'${text}' is not a plain decimal number`);
  }
  toJSON(): string {
    return this.text;
  }
}

/** A RawNumber for decimal text, or null for null. */
export function num(text: string | null): RawNumber | null {
  return text === null ? null : new RawNumber(text);
}

/** JSON text of value: bigints as integers, RawNumbers verbatim, undefined members dropped. */
export function stringifyJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('cannot encode a non-finite number');
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object': {
      if (value instanceof RawNumber) return value.text;
      if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : stringifyJson(v))).join(',')}]`;
      const parts: string[] = [];
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (v !== undefined) parts.push(`${JSON.stringify(k)}:${stringifyJson(v)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw new TypeError(`cannot encode a ${typeof value}`);
  }
}

/** Limit on nesting, so hostile input cannot exhaust the stack. */
const MAX_DEPTH = 64;

/**
 * Parses JSON text. Numbers that are safe integers become numbers; every other number (a fraction,
 * an exponent, an integer beyond 2^53) becomes the string of its literal, exactly as sent.
 */
export function parseJson(text: string): unknown {
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`invalid JSON at ${i}: ${what}`);
  };
  const ws = () => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };
  const value = (depth: number): unknown => {
    if (depth > MAX_DEPTH) fail('nested too deeply');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const k = str();
        ws();
        if (text[i] !== ':') fail("expected ':'");
        i++;
        // Own property even for "__proto__", never the prototype setter.
        Object.defineProperty(out, k, { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return out;
        } else fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value(depth + 1));
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return out;
        } else fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) return (i += 4), true;
    if (text.startsWith('false', i)) return (i += 5), false;
    if (text.startsWith('null', i)) return (i += 4), null;
    return num();
  };
  const str = (): string => {
    const start = i;
    i++;
    let simple = true;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') {
        simple = false;
        i += 2;
      } else i++;
    }
    if (i >= text.length) fail('unterminated string');
    i++;
    const raw = text.slice(start, i);
    return simple ? raw.slice(1, -1) : (JSON.parse(raw) as string);
  };
  const num = (): number | string => {
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) return fail('unexpected character');
    i += m[0].length;
    const literal = m[0];
    if (m[1] === undefined && m[2] === undefined) {
      const n = Number(literal);
      if (Number.isSafeInteger(n)) return n;
    }
    return literal;
  };
  const out = value(0);
  ws();
  if (i !== text.length) fail('trailing characters');
  return out;
}
