#!/usr/bin/env bash
# make bench-unwind: the cost of table-driven user unwinding, in ONE boot
# of the stock-kernel VM (bench/vm/unwind_guest.sh), printed as a table by
# bench/vm/unwind_table.py (kept in $BUILD/bench-unwind/table.txt):
#   * handler_ns per sample (stats: handler_ns / samples_taken, differenced
#     over a 2.5 s window once gt's table is mapped) on the FP-built workload
#     build/workload/gt under unwind=fp vs unwind=tables (its table loaded
#     by spulse-drain), interleaved, BENCH_UNWIND_REPS (5) each;
#   * spool bytes/sample of `spulse record` vs perf.data bytes/sample of
#     `perf record --call-graph dwarf` on the FP-less nofp workload,
#     interleaved, BENCH_UNWIND_REPS each;
#   * table memory of one process (Debian's python3: stats unwind_bytes /
#     unwind_processes while it runs), and rows/bytes per file.
# Targets (issue 8): tables <= 2x the FP walk's handler time; spool <= 1/500
# of perf dwarf's bytes per sample. Not part of make check.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/bench-unwind
flock /tmp/spulse-kmod.lock make --no-print-directory -C "$top" module >/dev/null ||
	echo "bench-unwind: building spulse.ko failed"
make --no-print-directory -C "$top" BUILD="$BUILD" "$BUILD/spulse-drain" "$BUILD/spulse" \
	"$BUILD/workload/gt" unwind-vm-tools >/dev/null || echo "bench-unwind: build failed"
rm -rf "$out"
mkdir -p "$out/bin" "$out/cache" "$out/runs"
for f in "$top/spulse.ko" "$BUILD/spulse" "$BUILD/spulse-drain" "$BUILD/workload/gt" \
	"$BUILD/unwind-vm-bin/nofp" "$BUILD/unwind-vm-bin/libnofp.so" \
	"$BUILD/unwind-vm-bin/unwind_poke" "$top/tests/e2e/unwind_work.py"; do
	cp -p "$f" "$out/bin/" || echo "bench-unwind: missing $f"
done
files="$out/bin/gt $out/bin/nofp $out/bin/libnofp.so $(readlink -f /usr/bin/python3)"
for p in /usr/bin/python3 "$out/bin/nofp"; do
	files="$files $(ldd "$p" 2>/dev/null | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		xargs -r readlink -f)"
done
# shellcheck disable=SC2086
"$out/bin/unwind_poke" cache "$out/cache" $(tr ' ' '\n' <<<"$files" | sort -u) > "$out/cache.log" 2>&1
# shellcheck disable=SC2086
"$out/bin/unwind_poke" stats $(tr ' ' '\n' <<<"$files" | sort -u) > "$out/rows.txt" 2>&1
cat > "$out/params" <<P
REPS=${BENCH_UNWIND_REPS:-5}
FREQ=${BENCH_UNWIND_FREQ:-999}
P
"$top/tests/vm/run-vm.sh" --timeout "${BENCH_UNWIND_TIMEOUT:-900}" --out "$out" -- \
	"$top/bench/vm/unwind_guest.sh" "$out/bin" > "$out/vm.log" 2>&1
echo "bench-unwind: vm exit $? (console: $out/console.log)"
python3 "$top/bench/vm/unwind_table.py" "$out" | tee "$out/table.txt"
