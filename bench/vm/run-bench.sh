#!/usr/bin/env bash
# make bench-vm (issue 11 Deliver 1): in ONE VM boot (Debian's stock
# kernel, TCG, 2 vCPUs, no PMU), fixed-work workloads -- build/workload/gt
# -n ROUNDS (2 frame-pointer threads) and Debian's /usr/bin/python3 running
# bench/vm/pywork.py -- unprofiled, under `spulse record` and under
# `perf record -g` (same event cpu-clock, same frequency) at 999 and 4999 Hz,
# plus start-up runs (/bin/true under each profiler), REPS repetitions of
# every run interleaved in rotating order (bench/vm/guest-bench.sh); then
# the table with bootstrap intervals and verdicts (bench/vm/table.py).
#
#   BENCH_VM_REPS       repetitions per mode (default 15)
#   BENCH_VM_ROUNDS     gt -n rounds (default 600: ~3 s of work under TCG)
#   BENCH_VM_PY_ROUNDS  pywork.py rounds (default 8000: ~3 s)
#   BENCH_VM_FREQS      frequencies (default "999 4999")
#   BENCH_VM_START_EVERY the start-up runs in every k-th rep (default 3)
#   BENCH_VM_FLOOR      frequencies of `perf record` without -g, the floor:
#                       the sampling interrupt, no stack (default 999; "" for none)
#   BENCH_VM_NULL       frequencies of `spulse record --module-params
#                       sample_null=1`: spulse's own events with a handler
#                       that returns at once (default 999; "" for none)
#   BENCH_VM_WORKLOADS  which workloads (default "gt py")
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
reps=${BENCH_VM_REPS:-15}
rounds=${BENCH_VM_ROUNDS:-600}
py_rounds=${BENCH_VM_PY_ROUNDS:-8000}
freqs=${BENCH_VM_FREQS:-999 4999}
start_every=${BENCH_VM_START_EVERY:-3}
floor=${BENCH_VM_FLOOR-999}
nullf=${BENCH_VM_NULL-999}
wls=${BENCH_VM_WORKLOADS:-gt py}
out=$BUILD/bench-vm
m() { make --no-print-directory -C "$top" BUILD="$BUILD" "$@"; }

m module "$BUILD/spulse" "$BUILD/workload/gt" >/dev/null
rm -rf "$out"
mkdir -p "$out/bin"
${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$out/bin/runstat" "$top/bench/vm/runstat.c"
# a private copy: the tree may be rebuilt meanwhile
cp "$top/spulse.ko" "$BUILD/spulse" "$BUILD/workload/gt" "$top/bench/vm/pywork.py" "$out/bin/"
dirty=$(git -C "$top" status --porcelain -- kmod Kbuild include user 2>/dev/null | awk '{ print $2 }' | tr '\n' ' ')
echo "tree $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)${dirty:+ (built with uncommitted: $dirty)}" > "$out/host.txt"
echo "host_load_start $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/host.txt"

nruns=$(( (1 + 2 * $(wc -w <<<"$freqs") + $(wc -w <<<"$floor") + $(wc -w <<<"$nullf")) * $(wc -w <<<"$wls") + 3 ))
timeout=$((600 + reps * nruns * 40))
vmrc=0
t0=$(date +%s)
"$top/tests/vm/run-vm.sh" --timeout "$timeout" --out "$out" -- \
	"$top/bench/vm/guest-bench.sh" "$out/bin" "$rounds" "$py_rounds" "$reps" \
	"$freqs" "$start_every" "$floor" "$nullf" "$wls" >/dev/null || vmrc=$?
echo "vm_seconds $(( $(date +%s) - t0 ))" >> "$out/host.txt"
echo "host_load_end $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/host.txt"
if [ "$vmrc" != 0 ]; then
	echo "bench-vm: the guest failed (run-vm exit $vmrc); $out/guest.log:" >&2
	tail -n 20 "$out/guest.log" >&2 || true
	grep -q '^run ' "$out/bench.txt" 2>/dev/null || exit 1
fi
# the last spools pass `spulse check`
for f in "$out"/*.spulse; do
	[ -s "$f" ] || continue
	if "$BUILD/spulse" check "$f" > "$f.check" 2>&1; then
		echo "spool_check ${f##*/} ok" >> "$out/host.txt"
	else
		echo "spool_check ${f##*/} FAILED: $(head -n 1 "$f.check")" >> "$out/host.txt"
	fi
done
python3 "$top/bench/vm/table.py" "$out/bench.txt" "$out/host.txt" | tee "$out/table.txt"
[ "$vmrc" = 0 ] || { echo "bench-vm: INCOMPLETE (guest failed)" >&2; exit 1; }
