#!/usr/bin/env bash
# Suite unwind-vm (make check-unwind-vm): table-driven user unwinding end to
# end in the stock-kernel VM, against `perf record --call-graph dwarf` in
# the same boot. Builds spulse.ko (make module, under the kmod lock),
# spulse, spulse-drain and the tools of mk/unwind-vm.mk, copies them into
# the VM output directory (the guest hides the host's /tmp; the output
# directory is visible at its host path), pre-builds the unwind tables of
# every file the workloads map into a cache there (so the first samples are
# covered too), boots once (tests/e2e/unwind_guest.sh), and checks on the
# host (tests/e2e/unwind_check.py: perf script runs here, on the same
# files). Writes $BUILD/check/unwind-vm.result.
#
# Environment: BUILD (default <repo>/build), UNWIND_KO (spulse.ko to test,
# default <repo>/spulse.ko), UNWIND_VM_TIMEOUT (s, default 600),
# UNWIND_FREQ (Hz, 499), UNWIND_PY_SECS (8), UNWIND_NOFP_SECS (8),
# UNWIND_XZ_MB (3), UNWIND_GZ_MB (24): long enough that the first ~0.3 s of
# a process (before its libraries' tables are mapped) stay under 5 %.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/unwind-vm
result=$BUILD/check/unwind-vm.result
mkdir -p "$BUILD/check"
rm -f "$result"

ko=${UNWIND_KO:-$top/spulse.ko}
if [ -z "${UNWIND_KO:-}" ]; then
	flock /tmp/spulse-kmod.lock make --no-print-directory -C "$top" module >/dev/null ||
		echo "unwind-vm: building spulse.ko (make module) failed"
fi
bin_src=$BUILD/unwind-vm-bin
for t in "$BUILD/spulse-drain" "$BUILD/spulse" unwind-vm-tools; do
	make --no-print-directory -C "$top" BUILD="$BUILD" "$t" >/dev/null ||
		echo "unwind-vm: building $t failed"
done

rm -rf "$out"
mkdir -p "$out/bin" "$out/cache"
for f in "$ko" "$BUILD/spulse" "$BUILD/spulse-drain" "$bin_src/nofp" \
	"$bin_src/libnofp.so" "$bin_src/nofp-b" "$bin_src/unwind_poke" \
	"$top/tests/e2e/unwind_work.py"; do
	[ -f "$f" ] && cp -p "$f" "$out/bin/" || echo "unwind-vm: missing $f"
done

# every file the workloads map: the programs, what ldd says they load, and
# python3's extension modules (unwind_work.py imports _json and others)
files=$(ls /usr/lib/python3.11/lib-dynload/*.so 2>/dev/null | tr '\n' ' ')
for p in /usr/bin/python3 /usr/bin/xz /usr/bin/gzip "$out/bin/nofp" "$out/bin/nofp-b"; do
	files="$files $(readlink -f "$p")"
	files="$files $(ldd "$p" 2>/dev/null | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		xargs -r readlink -f)"
done
# shellcheck disable=SC2086
"$out/bin/unwind_poke" cache "$out/cache" $(tr ' ' '\n' <<<"$files" | sort -u) \
	> "$out/cache.log" 2>&1 || echo "unwind-vm: pre-building tables: $(cat "$out/cache.log")"

# text for xz and gzip: words, so the compressors do real matching work
python3 - "$out/data.txt" <<'PY'
import random, sys
random.seed(8)
w = [''.join(random.choice('abcdefghijklmnop') for _ in range(random.randint(2, 10)))
     for _ in range(5000)]
with open(sys.argv[1], 'w') as f:
    n = 0
    while n < 3 << 20:
        s = ' '.join(random.choice(w) for _ in range(1000)) + '\n'
        f.write(s)
        n += len(s)
PY
cat > "$out/params" <<P
FREQ=${UNWIND_FREQ:-499}
PY_SECS=${UNWIND_PY_SECS:-8}
NOFP_SECS=${UNWIND_NOFP_SECS:-8}
XZ_MB=${UNWIND_XZ_MB:-3}
GZ_MB=${UNWIND_GZ_MB:-24}
P
t0=$(date +%s)
"$top/tests/vm/run-vm.sh" --timeout "${UNWIND_VM_TIMEOUT:-600}" --mem 2G --out "$out" -- \
	"$top/tests/e2e/unwind_guest.sh" "$out/bin"
echo "unwind-vm: vm exit $? after $(( $(date +%s) - t0 )) s (console: $out/console.log)"
python3 "$top/tests/e2e/unwind_check.py" "$out" "$result"
read -r p f < "$result" || { p=0; f=1; }
echo "unwind-vm: $p passed, $f failed"
[ "$f" -eq 0 ]
