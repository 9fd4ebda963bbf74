#!/usr/bin/env python3
# Reads a perf.data of scripts/bench/perf-nodes.sh (ADR 0048): on-CPU samples by JavaScript function,
# tier markers stripped, each sample charged to its innermost JS frame (builtins, runtime, natives to
# their JS caller), inclusive samples by function, and the tier of the innermost frame.
#   python3 scripts/bench/perf-areas.py OUT/perf.data [--tids T1,T2,...] [--top N] [--under RE]
# --tids: the main threads (the pids in OUT/pids.txt); 2,000 samples = 1 s of CPU. A JIT address V8
# frees and reuses keeps its first name in the map file, so a few samples carry a stale name (in one
# sustained run, node:internal/source_map's `peek`, compiled at start, on 5% of message handling).
import subprocess, sys, re, collections
args = sys.argv[1:]
data = args[0]
tids = None; top = 40; under = None
if '--tids' in args: tids = set(args[args.index('--tids') + 1].split(','))
if '--top' in args: top = int(args[args.index('--top') + 1])
if '--under' in args: under = re.compile(args[args.index('--under') + 1])
out = subprocess.run(['perf', 'script', '-i', data, '-F', 'tid,ip,sym'], capture_output=True, text=True).stdout
def norm(s):
    s = s.strip()
    m = re.match(r'JS:([*^~+]?)(.*)$', s)
    if not m: return None, s
    name = re.sub(r'file:///work/[^/]+/', '', m.group(2))
    name = re.sub(r':\d+:\d+$', '', name)
    return m.group(1) or '?', name
samples = []
cur = None
for line in out.split('\n'):
    if not line.strip():
        if cur: samples.append(cur); cur = None
        continue
    if re.match(r'^\s*\d+\s*$', line):
        if cur: samples.append(cur)
        cur = [line.split()[0], []]
    else:
        if cur is None: continue
        parts = line.strip().split(None, 1)
        cur[1].append(parts[1] if len(parts) > 1 else '?')
if cur: samples.append(cur)
if tids: samples = [s for s in samples if s[0] in tids]
N = len(samples)
selfjs = collections.Counter(); incl = collections.Counter(); tiers = collections.Counter(); selfsym = collections.Counter(); undr = collections.Counter(); nunder = 0
for tid, frames in samples:
    selfsym[frames[0] if frames else '?'] += 1
    first = None; seen = set(); hit = False
    for f in frames:
        t, n = norm(f)
        if t is None: continue
        if first is None: first = (t, n)
        if n not in seen: seen.add(n); incl[n] += 1
        if under and under.search(n): hit = True
    if first: selfjs[first[1]] += 1; tiers[first[0]] += 1
    else: selfjs['(no JS frame) ' + (frames[0] if frames else '?')] += 1; tiers['none'] += 1
    if hit:
        nunder += 1
        if first: undr[first[1]] += 1
print(f'{N} samples')
print('--- innermost JS frame tier (* turbofan, ^ sparkplug, ~ interpreter, none)')
for k, v in tiers.most_common(): print(f'{100*v/N:6.1f}% {k}')
print('--- self by innermost JS frame (builtins, runtime and natives charged to their JS caller)')
for k, v in selfjs.most_common(top): print(f'{100*v/N:6.1f}% {v:6d} {k[:150]}')
print('--- inclusive by JS function')
for k, v in incl.most_common(top): print(f'{100*v/N:6.1f}% {v:6d} {k[:150]}')
print('--- self by symbol')
for k, v in selfsym.most_common(top): print(f'{100*v/N:6.1f}% {v:6d} {k[:150]}')
if under:
    print(f'--- under {under.pattern}: {nunder} samples ({100*nunder/N:.1f}%), by innermost JS frame')
    for k, v in undr.most_common(top): print(f'{100*v/N:6.1f}% {v:6d} {k[:150]}')
