// Minimal `--name value` / `--flag` parser shared by the CLI scripts; unknown flags are errors.
import { readFileSync } from 'node:fs';

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
    if (name === 'help' && !boolFlags.includes('help')) {
      // Scripts without a usage text of their own document their options in their opening comment.
      process.stdout.write(headerCommentOf(process.argv[1]) ?? `no usage text; options: ${[...valueFlags, ...boolFlags].map((f) => `--${f}`).join(' ')}\n`);
      process.exit(0);
    }
    if (boolFlags.includes(name)) {
      out.bool.add(name);
    } else if (valueFlags.includes(name)) {
      const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined || (eq < 0 && v.startsWith('--'))) throw new Error(`--${name} needs a value`);
      out.str.set(name, v);
    } else {
      throw new Error(`unknown option --${name} (--help lists the options)`);
    }
  }
  return out;
}

/** A flag's value as a positive finite number; throws naming the flag otherwise. */
export function positiveNumber(text: string, name: string): number {
  const v = Number(text);
  if (text.trim() === '' || !Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number, got '${text}'`);
  return v;
}

/** A comma-separated list of positive numbers (`--rates 200,500`); throws naming the flag otherwise. */
export function positiveList(text: string, name: string): number[] {
  const parts = text.split(',').filter((p) => p !== '');
  if (parts.length === 0) throw new Error(`--${name} needs at least one number`);
  return parts.map((p) => positiveNumber(p, name));
}

/** The `//` comment lines that open a script file, without the slashes (undefined when none). */
export function headerCommentOf(file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('//')) break;
    lines.push(line.replace(/^\/\/ ?/, ''));
  }
  return lines.length > 0 ? lines.join('\n') + '\n' : undefined;
}

/** The value flags that set emulated WAN links between the committee nodes (linkEmulationOf). */
export const LINK_FLAGS = ['link-latency-ms', 'link-jitter-ms', 'link-bandwidth-mbps'];

/** Usage lines for LINK_FLAGS. */
export const LINK_USAGE = `  --link-latency-ms MS --link-jitter-ms MS --link-bandwidth-mbps MBPS
               emulate WAN links between the committee nodes for this run: every message a node
               reads from another is held back by the one-way latency (± uniform jitter, at most the
               latency) and its transmission time at the bandwidth; off when absent`;

/** Reads LINK_FLAGS into a link emulation (undefined when none is given); throws on a bad number. */
export function linkEmulationOf(flags: Flags): { latencyMs?: number; jitterMs?: number; bandwidthMbps?: number } | undefined {
  const num = (name: string): number | undefined => {
    const text = flags.str.get(name);
    if (text === undefined) return undefined;
    const v = Number(text);
    if (text.trim() === '' || !Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a non-negative number, got '${text}'`);
    return v;
  };
  const latencyMs = num('link-latency-ms');
  const jitterMs = num('link-jitter-ms');
  const bandwidthMbps = num('link-bandwidth-mbps');
  if (latencyMs === undefined && jitterMs === undefined && bandwidthMbps === undefined) return undefined;
  if (jitterMs !== undefined && latencyMs === undefined) throw new Error('--link-jitter-ms needs --link-latency-ms (jitter varies the latency)');
  return {
    ...(latencyMs === undefined ? {} : { latencyMs }), ...(jitterMs === undefined ? {} : { jitterMs }),
    ...(bandwidthMbps === undefined ? {} : { bandwidthMbps }),
  };
}

/**
 * One line describing the committee links, for what a launcher prints: their emulation and, when
 * given, what they run over (ADR 0041: 'tcp' loopback ports or 'unix' domain sockets).
 */
export function describeLinks(e: { latencyMs?: number; jitterMs?: number; bandwidthMbps?: number } | undefined, over?: string): string {
  const head = over === undefined ? 'committee links' : `committee links over ${over}`;
  if (!e) return `${head}: loopback (no emulation)`;
  const parts = [`${e.latencyMs ?? 0} ms one way`];
  if (e.jitterMs) parts.push(`± ${e.jitterMs} ms jitter`);
  parts.push(e.bandwidthMbps === undefined ? 'unlimited bandwidth' : `${e.bandwidthMbps} Mbit/s`);
  return `${head}, emulated: ${parts.join(', ')}`;
}
