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
#   BENCH_OFFCPU_MODES   run only these of base spulserec spulse perfsw
#                        perfsched (default: all that are available)
#   BENCH_OFFCPU_KPARAMS extra spulse.ko parameters for the spulse mode, for
#                        A/B experiments (e.g. "max_depth=16")
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
reps=${BENCH_OFFCPU_REPS:-10}
rounds=${BENCH_OFFCPU_ROUNDS:-50000}
cpu=${BENCH_OFFCPU_CPU-1}
freq=${BENCH_OFFCPU_FREQ:-1}
kparams=${BENCH_OFFCPU_KPARAMS:-}
out=$BUILD/bench-offcpu
m() { make --no-print-directory -C "$top" BUILD="$BUILD" "$@"; }

rm -rf "$out"
mkdir -p "$out/bin"
m "$BUILD/workload/pingpong" >/dev/null
cp "$BUILD/workload/pingpong" "$out/bin/"
# The spulse modes need spulse.ko with offcpu= and offcpu_min_us=,
# spulse-drain and (spulserec) `spulse record --off-cpu`; without them the
# bench still runs the other modes and the table says why.
modes="base spulserec spulse perfsw perfsched"
why=
if ! m module "$BUILD/spulse-drain" "$BUILD/spulse" >"$out/build.log" 2>&1; then
	why="build failed (see $out/build.log)"
else
	# a private copy: the module in the tree may be rebuilt meanwhile
	cp "$top/spulse.ko" "$BUILD/spulse-drain" "$BUILD/spulse" "$out/bin/"
	parms=$(modinfo -F parm "$out/bin/spulse.ko")
	for p in offcpu offcpu_min_us; do
		grep -q "^$p:" <<<"$parms" || why="${why:+$why; }spulse.ko has no $p= parameter"
	done
fi
if [ -n "$why" ]; then
	modes="base perfsw perfsched"
	echo "bench-offcpu: spulse modes skipped: $why" >&2
elif ! "$out/bin/spulse" record --help 2>&1 | grep -q -- --off-cpu; then
	modes="base spulse perfsw perfsched"
	why="spulse record has no --off-cpu (spulserec mode)"
	echo "bench-offcpu: $why" >&2
fi
if [ -n "${BENCH_OFFCPU_MODES:-}" ]; then
	want=
	for w in $BENCH_OFFCPU_MODES; do
		case " $modes " in
		*" $w "*) want="$want $w" ;;
		*) echo "bench-offcpu: mode $w is not available (available: $modes)" >&2; exit 2 ;;
		esac
	done
	modes=${want# }
fi
echo "spulse_skipped $why" > "$out/host.txt"
# provenance: the commit, and the kmod/ files that differed from it
dirty=$(git -C "$top" status --porcelain -- kmod Kbuild include 2>/dev/null | awk '{ print $2 }' | tr '\n' ' ')
echo "tree $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)${dirty:+ (module built with uncommitted: $dirty)}" >> "$out/host.txt"
echo "kparams $kparams" >> "$out/host.txt"
echo "modes $modes" >> "$out/host.txt"

timeout=$((600 + reps * 5 * 60))
vmrc=0
"$top/tests/vm/run-vm.sh" --timeout "$timeout" --out "$out" -- \
	"$top/bench/vm/offcpu-guest.sh" "$out/bin" "$rounds" "$reps" "$cpu" \
	"$freq" "$modes" "$kparams" >/dev/null || vmrc=$?
if [ "$vmrc" != 0 ]; then
	echo "bench-offcpu: the guest failed (run-vm exit $vmrc); $out/guest.log:" >&2
	tail -n 20 "$out/guest.log" >&2 || true
	# a partial table from the runs that finished, then fail
	grep -q '^run ' "$out/offcpu.txt" 2>/dev/null || exit 1
fi

# Host-side counts on the last repetition's files: samples per event.
for f in perf.data sched.data; do
	[ -s "$out/$f" ] || continue
	perf report -i "$out/$f" --stats 2>/dev/null |
		awk -v f=$f '/^[a-z_]+:[a-z_]+ stats:$/ { ev = $1; sub(":$", "", ev); getline
			print "events", f, ev, $3 }' >> "$out/host.txt"
done
# The last spools: `spulse check`, and their off-CPU records counted by
# the e2e suite's independent reader (tests/e2e/spool.py RawSpool).
for f in rec.spulse offcpu.spulse; do
	[ -s "$out/$f" ] || continue
	if "$out/bin/spulse" check "$out/$f" > "$out/$f.check" 2>&1; then
		echo "spool_check $f ok" >> "$out/host.txt"
	else
		echo "spool_check $f FAILED: $(head -n 1 "$out/$f.check")" >> "$out/host.txt"
	fi
	python3 - "$top/tests/e2e" "$out/$f" >> "$out/host.txt" 2>&1 <<'PY' || true
import sys
sys.path.insert(0, sys.argv[1])
from spool import RawSpool, SpoolError
try:
    s = RawSpool(sys.argv[2])
except SpoolError as e:
    print('spool_raw %s ERROR %s' % (sys.argv[2].rsplit('/', 1)[-1], e))
else:
    print('spool_raw %s offcpu=%d samples=%d cpu_records=%d ext_skipped=%d truncated=%d'
          % (sys.argv[2].rsplit('/', 1)[-1], len(s.offcpu), len(s.samples),
             s.cpu_records, s.ext_skipped, s.truncated))
PY
done
python3 "$top/bench/vm/offcpu-table.py" "$out/offcpu.txt" "$out/host.txt" \
	"$rounds" "$freq" "$cpu" | tee "$out/table.txt"
[ "$vmrc" = 0 ] || { echo "bench-offcpu: INCOMPLETE (guest failed)" >&2; exit 1; }
