#!/usr/bin/env bash
# make bench-insns: instructions the guest executes, counted exactly by a
# QEMU TCG plugin (bench/insns/insns.c) with one TCG thread, for
# `spulse record` against perf on fixed-work workloads, in ONE VM boot
# (Debian's stock kernel, 2 vCPUs): unprofiled, spulse record, perf record
# -g, perf record (no -g), spulse with the null handler, perf record
# --call-graph dwarf, on build/workload/gt (2 frame-pointer threads) and
# Debian's python3 (bench/vm/pywork.py, no frame pointers), each at two
# work lengths, REPS interleaved repetitions (bench/insns/guest.sh); then
# the table (bench/insns/table.py): per mode the steady-state and marginal
# instructions per sample (slopes over the two lengths), the start-up +
# teardown intercept, bytes per sample, the top kernel functions per
# sample, and a verdict line per target. docs/BENCH-INSNS.md.
#
#   BENCH_INSNS_REPS       repetitions (default 3)
#   BENCH_INSNS_WORKLOADS  default "gt py"; add "pp" for the off-CPU variant
#                          (pingpong, instructions per context switch)
#   BENCH_INSNS_GT_LENS    gt -n rounds, two lengths (default "30 270": the
#                          long one 9x, so that the slopes span ~7,600
#                          samples and the reps' start-up noise, ~1M
#                          instructions, moves a slope by ~130 a sample)
#   BENCH_INSNS_PY_LENS    pywork.py rounds (default "1000 9000", likewise)
#   BENCH_INSNS_PP_LENS    pingpong round trips (default "5000 15000")
#   BENCH_INSNS_MODES      gt/py modes (default "base sp pg pn sn pd")
#   BENCH_INSNS_PP_MODES   pp modes (default "base so ps pS")
#   BENCH_INSNS_TOP        kernel functions listed per mode (default 8)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
reps=${BENCH_INSNS_REPS:-3}
wls=${BENCH_INSNS_WORKLOADS:-gt py}
gt_lens=${BENCH_INSNS_GT_LENS:-30 270}
py_lens=${BENCH_INSNS_PY_LENS:-1000 9000}
pp_lens=${BENCH_INSNS_PP_LENS:-5000 15000}
modes=${BENCH_INSNS_MODES:-base sp pg pn sn pd}
pp_modes=${BENCH_INSNS_PP_MODES:-base so ps pS}
out=$BUILD/bench-insns
m() { make --no-print-directory -C "$top" BUILD="$BUILD" "$@"; }

for v in "$gt_lens" "$py_lens" "$pp_lens"; do
	[ "$(wc -w <<<"$v")" = 2 ] || { echo "bench-insns: a workload needs exactly two lengths, got '$v'" >&2; exit 2; }
done
m module "$BUILD/spulse" "$BUILD/workload/gt" "$BUILD/workload/pingpong" >/dev/null
hdr=$("$top/bench/insns/plugin-header.sh")
rm -rf "$out"
mkdir -p "$out/bin"
case $out in *[[:space:],]*) echo "bench-insns: $out: QEMU's -plugin argument cannot hold spaces or commas" >&2; exit 2 ;; esac
${CC:-cc} -shared -fPIC -O2 -Wall -Wextra -Werror -I"$hdr" -o "$out/libinsns.so" "$top/bench/insns/insns.c"
${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$out/bin/mark" "$top/bench/insns/mark.c"
${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$out/bin/markrun" "$top/bench/insns/markrun.c"
# the marker instruction must be in the binaries: once in mark, twice in markrun
if [ "$(objdump -d "$out/bin/mark" | grep -c '66 87 db')" != 1 ] ||
	[ "$(objdump -d "$out/bin/markrun" | grep -c '66 87 db')" -lt 2 ]; then
	echo "bench-insns: mark/markrun do not hold xchg %bx,%bx" >&2
	exit 1
fi
# a private copy: the tree may be rebuilt meanwhile
cp "$top/spulse.ko" "$BUILD/spulse" "$BUILD/workload/gt" "$BUILD/workload/pingpong" \
	"$top/bench/vm/pywork.py" "$out/bin/"
dirty=$(git -C "$top" status --porcelain -- kmod Kbuild include user bench/insns 2>/dev/null | awk '{ print $2 }' | tr '\n' ' ')
{
	echo "tree $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)${dirty:+ (built with uncommitted: $dirty)}"
	echo "qemu $(qemu-system-x86_64 --version | head -n 1)"
	echo "plugin_header $(cat "$hdr/SOURCE")"
	echo "reps $reps"
	echo "lens gt=$gt_lens py=$py_lens pp=$pp_lens"
	echo "host_load_start $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/host.txt"

nruns=0
for wl in $wls; do
	if [ "$wl" = pp ]; then nruns=$((nruns + 2 * $(wc -w <<<"$pp_modes")))
	else nruns=$((nruns + 2 * $(wc -w <<<"$modes"))); fi
done
timeout=$((900 + reps * nruns * 150))
vmrc=0
t0=$(date +%s)
VM_TCG_THREAD=single \
VM_QEMU_ARGS="-plugin $out/libinsns.so,out=$out/insns.txt,kallsyms=$out/kallsyms.txt" \
	"$top/tests/vm/run-vm.sh" --mem 2G --timeout "$timeout" --out "$out" -- \
	"$top/bench/insns/guest.sh" "$out/bin" "$reps" "$wls" "$gt_lens" "$py_lens" \
	"$pp_lens" "$modes" "$pp_modes" >/dev/null || vmrc=$?
echo "vm_seconds $(( $(date +%s) - t0 ))" >> "$out/host.txt"
echo "host_load_end $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/host.txt"
if [ "$vmrc" != 0 ]; then
	echo "bench-insns: the guest failed (run-vm exit $vmrc); $out/guest.log:" >&2
	tail -n 20 "$out/guest.log" >&2 || true
	exit 1
fi
python3 "$top/bench/insns/table.py" --top "${BENCH_INSNS_TOP:-8}" "$out" | tee "$out/table.txt"
