#!/usr/bin/env bash
# make bench-offcpu: in ONE VM boot (Debian's stock kernel, TCG, 2 vCPUs)
# run tests/workload/pingpong -n ROUNDS (two threads ping-ponging a byte
# over two pipes: >= 2 context switches per round trip) unprofiled, under
# spulse.ko offcpu=1 offcpu_min_us=0 + spulse-drain, under
# `perf record -e sched:sched_switch -g` and under `perf sched record`,
# REPS times each, interleaved in rotating order; then print the table
# (bench/vm/offcpu-table.py). Targets (issue 7): spulse's added time <= 1/2
# of perf's; spool bytes per switch <= 1/10 of perf.data's.
#
#   BENCH_OFFCPU_REPS    repetitions per mode (default 10)
#   BENCH_OFFCPU_ROUNDS  round trips per run (default 50000)
#   BENCH_OFFCPU_CPU     pin pingpong's threads to this vCPU (default 1; "" = no
#                        pin: cross-vCPU wakeups under TCG cost 10-20x and vary
#                        2.5x run to run)
#   BENCH_OFFCPU_FREQ    spulse.ko freq= in spulse mode (default 1 Hz: the
#                        on-CPU sampler idles, as perf samples only switches)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
reps=${BENCH_OFFCPU_REPS:-10}
rounds=${BENCH_OFFCPU_ROUNDS:-50000}
cpu=${BENCH_OFFCPU_CPU-1}
freq=${BENCH_OFFCPU_FREQ:-1}
out=$BUILD/bench-offcpu
m() { make --no-print-directory -C "$top" BUILD="$BUILD" "$@"; }

rm -rf "$out"
mkdir -p "$out/bin"
m "$BUILD/workload/pingpong" >/dev/null
cp "$BUILD/workload/pingpong" "$out/bin/"
# The spulse mode needs spulse.ko with offcpu= and spulse-drain; without
# them the bench still runs the other modes and the table says why.
spulse=1
why=
if ! m module "$BUILD/spulse-drain" "$BUILD/spulse" >"$out/build.log" 2>&1; then
	spulse=0
	why="build failed (see $out/build.log)"
else
	# a private copy: the module in the tree may be rebuilt meanwhile
	cp "$top/spulse.ko" "$BUILD/spulse-drain" "$BUILD/spulse" "$out/bin/"
	if ! modinfo -F parm "$out/bin/spulse.ko" | grep -q '^offcpu:'; then
		spulse=0
		why="spulse.ko has no offcpu= parameter yet"
	fi
	if ! modinfo -F parm "$out/bin/spulse.ko" | grep -q '^offcpu_min_us:'; then
		spulse=0
		why="spulse.ko has no offcpu_min_us= parameter yet"
	fi
fi
[ -z "$why" ] || echo "bench-offcpu: spulse mode skipped: $why" >&2
echo "spulse_skipped $why" > "$out/host.txt"

timeout=$((600 + reps * 4 * 60))
"$top/tests/vm/run-vm.sh" --timeout "$timeout" --out "$out" -- \
	"$top/bench/vm/offcpu-guest.sh" "$out/bin" "$rounds" "$reps" "$cpu" \
	"$freq" "$spulse" >/dev/null || {
	echo "bench-offcpu: the guest failed; $out/guest.log:" >&2
	tail -n 20 "$out/guest.log" >&2
	exit 1
}

# Host-side counts on the last repetition's files.
count_events() { # FILE -> "event count" lines
	perf script -i "$1" -F event 2>/dev/null | sed 's/:[[:space:]]*$//; s/^[[:space:]]*//' |
		sort | uniq -c | awk '{ print $2, $1 }'
}
for f in perf.data sched.data; do
	[ -s "$out/$f" ] || continue
	count_events "$out/$f" | sed "s/^/events $f /" >> "$out/host.txt"
done
if [ -s "$out/offcpu.spulse" ]; then
	if "$out/bin/spulse" check "$out/offcpu.spulse" > "$out/check.txt" 2>&1; then
		echo "spool_check ok" >> "$out/host.txt"
	else
		echo "spool_check FAILED $(head -n 1 "$out/check.txt")" >> "$out/host.txt"
	fi
fi
python3 "$top/bench/vm/offcpu-table.py" "$out/offcpu.txt" "$out/host.txt" \
	"$rounds" "$freq" "$cpu"
