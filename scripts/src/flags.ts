// Minimal `--name value` / `--flag` parser shared by the CLI scripts; unknown flags are errors.

export interface Flags {
  str: Map<string, string>;
  bool: Set<string>;
  positional: string[];
}

/** Parses argv against the allowed value flags and boolean flags; throws on anything else. */
export function parseFlags(argv: string[], valueFlags: string[], boolFlags: string[] = []): Flags {
  const out: Flags = { str: new Map(), bool: new Set(), positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) {
      out.positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq >= 0 ? eq : undefined);
    if (boolFlags.includes(name)) {
      out.bool.add(name);
    } else if (valueFlags.includes(name)) {
      const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined || (eq < 0 && v.startsWith('--'))) throw new Error(`--${name} needs a value`);
      out.str.set(name, v);
    } else {
      throw new Error(`unknown option --${name}`);
    }
  }
  return out;
}
