import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJournal, JournalError, type JournalEntry } from '../src/index';

const enc = new TextEncoder();
const dec = new TextDecoder();
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'journal-test-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('journal', () => {
  it('gives gapless, ordered seqs to 10,000 concurrent appends and reads them back', async () => {
    const j = openJournal(tmp());
    expect(j.lastSeq).toBe(0n);
    const seqs = await Promise.all(Array.from({ length: 10_000 }, (_, i) => j.append(enc.encode(`r${i}`))));
    seqs.forEach((s, i) => expect(s).toBe(BigInt(i + 1)));
    expect(j.lastSeq).toBe(10_000n);
    const all: JournalEntry[] = [];
    for await (const e of j.read(1n, 777)) all.push(e);
    expect(all.length).toBe(10_000);
    all.forEach((e, i) => {
      expect(e.seq).toBe(BigInt(i + 1));
      expect(dec.decode(e.record)).toBe(`r${i}`);
    });
    expect(j.readBatch(9_999n, 10).map((e) => e.seq)).toEqual([9_999n, 10_000n]);
    expect(dec.decode(j.get(5n)!)).toBe('r4');
    expect(j.get(10_001n)).toBeUndefined();
    await j.close();
  });

  it('reopens with the same records and continues the numbering', async () => {
    const dir = tmp();
    const a = openJournal(dir);
    await Promise.all([a.append(enc.encode('one')), a.append(enc.encode('two'))]);
    await a.close();
    const b = openJournal(dir);
    expect(b.lastSeq).toBe(2n);
    expect(b.nextSeq).toBe(3n);
    expect(await b.append(enc.encode('three'))).toBe(3n);
    expect(b.readBatch(1n, 10).map((e) => dec.decode(e.record))).toEqual(['one', 'two', 'three']);
    await b.close();
  });

  it('lastSeq only counts durable records; a pending append is not readable yet', async () => {
    const j = openJournal(tmp());
    const p = j.append(enc.encode('x'));
    expect(j.nextSeq).toBe(2n);
    expect(j.lastSeq).toBe(0n);
    expect(j.readBatch(1n, 10)).toEqual([]);
    expect(await p).toBe(1n);
    expect(j.lastSeq).toBe(1n);
    await j.close();
  });

  it('enforces its limits', async () => {
    const j = openJournal(tmp(), { maxRecordBytes: 8, maxInFlight: 3 });
    await expect(j.append(new Uint8Array(9))).rejects.toThrow(/exceeds the 8-byte limit/);
    const ps = [j.append(new Uint8Array(1)), j.append(new Uint8Array(1)), j.append(new Uint8Array(1))];
    await expect(j.append(new Uint8Array(1))).rejects.toThrow(JournalError);
    expect(await Promise.all(ps)).toEqual([1n, 2n, 3n]);
    await j.close();
    await expect(j.append(new Uint8Array(1))).rejects.toThrow(/closed/);
  });

  it('keeps every acknowledged record across a SIGKILL of the writing process', async () => {
    const dir = tmp();
    const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'fixtures/append-child.ts'), dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acked: bigint[] = [];
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let buf = '';
    await new Promise<void>((resolve, reject) => {
      child.on('exit', (code) => reject(new Error(`child exited early (${code}): ${stderr}`)));
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) if (l.startsWith('ack ')) acked.push(BigInt(l.slice(4)));
        if (acked.length >= 3000) resolve();
      });
    });
    child.removeAllListeners('exit');
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;
    const j = openJournal(dir); // the constructor asserts keys are exactly 1..lastSeq
    const max = acked.reduce((a, b) => (b > a ? b : a), 0n);
    expect(j.lastSeq >= max).toBe(true);
    for (const s of acked) expect(dec.decode(j.get(s)!)).toBe(`rec-${s}`);
    // Records written but not yet acknowledged may also be there; all of them form a gapless prefix.
    let n = 0n;
    for await (const e of j.read(1n)) {
      n++;
      expect(e.seq).toBe(n);
      expect(dec.decode(e.record)).toBe(`rec-${n}`);
    }
    expect(n).toBe(j.lastSeq);
    await j.close();
  });
});
