// A strict reader of the text exposition format, for tests and tools that check what a process
// serves: every sample line must parse, so a malformed exposition fails loudly.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;
const COMMENT = /^#\s+(HELP|TYPE)\s+[a-zA-Z_:][a-zA-Z0-9_:]*(\s|$)/;

/** Every sample of an exposition; throws on the first line that is not a comment, blank or sample. */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      if (!COMMENT.test(line) && !line.startsWith('# ')) throw new Error(`line ${i + 1}: bad comment: ${line}`);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`line ${i + 1}: not a sample: ${line}`);
    const value = parseValue(m[3]!);
    if (value === null) throw new Error(`line ${i + 1}: bad value '${m[3]}': ${line}`);
    out.push({ name: m[1]!, labels: parseLabels(m[2] ?? '', i + 1), value });
  }
  return out;
}

/** Prometheus reads the special values in any case (prom-client writes `Nan` for an empty mean). */
function parseValue(v: string): number | null {
  const l = v.toLowerCase();
  if (l === '+inf' || l === 'inf') return Infinity;
  if (l === '-inf') return -Infinity;
  if (l === 'nan') return NaN;
  const x = Number(v);
  return Number.isNaN(x) ? null : x;
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const at = LABEL.lastIndex;
    const m = LABEL.exec(text);
    if (!m) throw new Error(`line ${line}: bad labels at '${text.slice(at)}'`);
    labels[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  }
  return labels;
}

/** Sum of the samples named `name` whose labels include `match` (0 when none). */
export function sumOf(samples: readonly Sample[], name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}

/** Fetches and parses http://.../metrics. */
export async function scrape(url: string): Promise<Sample[]> {
  const r = await fetch(url);
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status}`);
  return parseExposition(await r.text());
}
