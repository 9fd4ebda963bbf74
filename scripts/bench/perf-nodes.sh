#!/bin/bash
# On-CPU profile of the five committee nodes in one section of bench:orders (ADR 0048). V8's own
# profiles (--cpu-prof) time samples on the wall clock, so on a loaded host they charge preemption to
# whatever ran; perf's cpu-clock counts only time on a CPU. User time only where
# /proc/sys/kernel/perf_event_paranoid is 2 (this VM); each node's utime/stime from /proc is saved too.
# Needs perf. Prints nothing; read OUT with scripts/bench/perf-areas.py. Run it under the bench lock.
#   scripts/bench/perf-nodes.sh OUT 'MARKER' SECONDS -- BENCH ARGS...
#   e.g. scripts/bench/perf-nodes.sh /tmp/p1 'order-to-fill at ~4/s: waiting' 20 -- --only fill
set -u
out=$1; marker=$2; secs=$3; shift 4
mkdir -p "$out"
echo "# $(date -u +%T) commit=$(git rev-parse --short HEAD) load=$(cut -d' ' -f1-3 /proc/loadavg)" > "$out/bench.txt"
# --perf-basic-prof: V8 writes /tmp/perf-PID.map, which names the JIT code's addresses for perf
NODE_OPTIONS=--perf-basic-prof npm run bench:orders -- "$@" >> "$out/bench.txt" 2>&1 &
bp=$!
while ! grep -q -- "$marker" "$out/bench.txt"; do sleep 1; kill -0 $bp 2>/dev/null || exit 1; done
sleep 4
pids=$(pgrep -f "committee/src/main.ts" | tr '\n' ',' | sed 's/,$//')
echo "pids $pids" > "$out/pids.txt"
for p in ${pids//,/ }; do echo "$p $(cut -d' ' -f14,15 /proc/$p/stat)" >> "$out/cpu-before.txt"; done
perf record -F 2000 -e cpu-clock:u -g -p "$pids" -o "$out/perf.data" -- sleep "$secs" > "$out/perf-record.txt" 2>&1
for p in ${pids//,/ }; do echo "$p $(cut -d' ' -f14,15 /proc/$p/stat)" >> "$out/cpu-after.txt"; done
wait $bp
echo "# end $(date -u +%T) load=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/bench.txt"
