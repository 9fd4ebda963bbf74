// docs/leakage.md against the code: every label the committee opens to its nodes has a row in the
// table "Matching reveal labels", and every row names a label the code opens. Driven by the code's
// list (LEAK in packages/matching/src/leaks.ts), so a new label fails here until the doc has its row.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_LEAK_LABELS } from '@tenebra/matching';

const ROOT = join(__dirname, '..', '..');
const DOC = readFileSync(join(ROOT, 'docs', 'leakage.md'), 'utf8');

/** The rows of the first table under the heading `## title`, as cells (header and separator dropped). */
function tableRows(doc: string, title: string): string[][] {
  const start = doc.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`docs/leakage.md has no section '## ${title}'`);
  const rest = doc.slice(start + 1);
  const end = rest.indexOf('\n## ', 1);
  const lines = (end < 0 ? rest : rest.slice(0, end)).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const table: string[] = [];
  for (let i = first; i >= 0 && i < lines.length && lines[i]!.startsWith('|'); i++) table.push(lines[i]!);
  return table.slice(2).map((l) => l.slice(1, l.endsWith('|') ? -1 : undefined).split('|').map((c) => c.trim()));
}

/** The label names in backticks in a cell (kebab-case words: labels, not code or formulas). */
function backticked(cell: string): string[] {
  return [...cell.matchAll(/`([a-z][a-z0-9]*(?:-[a-z0-9]+)*)`/g)].map((m) => m[1]!);
}

/** .ts files under dir, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []);
}

describe('docs/leakage.md and the labels the code opens', () => {
  const codeLabels = new Set<string>(ALL_LEAK_LABELS);

  it('the table "Matching reveal labels" has one row per code label, each naming exactly one label in its first column', () => {
    const rows = tableRows(DOC, 'Matching reveal labels');
    expect(rows.length).toBeGreaterThan(0);
    const docLabels: string[] = [];
    for (const r of rows) {
      const names = backticked(r[0]!);
      expect(names, `first cell '${r[0]}' must hold exactly one label in backticks`).toHaveLength(1);
      docLabels.push(names[0]!);
    }
    expect(new Set(docLabels).size, 'a label has two rows').toBe(docLabels.length);
    expect([...codeLabels].filter((l) => !docLabels.includes(l)), 'labels the code opens without a row in docs/leakage.md').toEqual([]);
    expect(docLabels.filter((l) => !codeLabels.has(l)), 'rows in docs/leakage.md for labels the code does not open').toEqual([]);
  });

  it('the per-operation table names only labels the code opens', () => {
    const rows = tableRows(DOC, 'Per operation, what the nodes learn');
    expect(rows.length).toBeGreaterThan(0);
    const named = rows.flatMap((r) => backticked(r[2] ?? ''));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((l) => !codeLabels.has(l))).toEqual([]);
  });

  it('matching and the committee open to the nodes only under those labels: no reveal takes a string literal', () => {
    // A label written as a literal would bypass LEAK (and so this table); every reveal passes LEAK.x
    // or a variable holding one. Scans every call `reveal...(value, '<label>'`.
    const literal = /\breveal\w*\(\s*[^,()]*(?:\([^()]*\)[^,()]*)*,\s*['"`]([^'"`]*)['"`]/g;
    const found: string[] = [];
    for (const dir of [join(ROOT, 'packages', 'matching', 'src'), join(ROOT, 'committee', 'src')]) {
      for (const f of sources(dir)) for (const m of readFileSync(f, 'utf8').matchAll(literal)) found.push(`${f}: '${m[1]}'`);
    }
    expect(found).toEqual([]);
  });
});
