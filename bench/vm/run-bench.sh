#!/usr/bin/env bash
# bench-vm: in ONE VM boot, run gt -n ROUNDS (fixed work) unprofiled, under
# spulse (module + drainer) and under `perf record -g -F 999 -e cpu-clock`;
# print wall time (the workload's own clock, best of REPS), slowdown and
# bytes per sample for each. Targets (issue 3): spulse slowdown <= 1/2 of
# perf's; spool bytes/sample <= 1/20 of perf.data's.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
rounds=${BENCH_VM_ROUNDS:-150}
reps=${BENCH_VM_REPS:-3}
out=$BUILD/bench-vm
m() { make --no-print-directory -C "$top" "$@"; }
m module "$BUILD/spulse-drain" "$BUILD/spulse" workloads >/dev/null
rm -rf "$out"; mkdir -p "$out"
"$top/tests/vm/run-vm.sh" --timeout 900 --out "$out" -- \
	"$top/bench/vm/guest-bench.sh" "$BUILD" "$rounds" "$reps" >/dev/null
spool_samples=$("$BUILD/spulse" dump "$out/bench.spulse" | grep -c '^sample\|[0-9] sample' || true)
python3 "$top/bench/vm/table.py" "$out/bench.txt" "$spool_samples" "$rounds"
