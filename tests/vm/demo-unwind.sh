#!/usr/bin/env bash
# `make demo-unwind`: whole user stacks through Debian's python3 (built
# without frame pointers). Pre-builds the unwind tables of python3 and its
# libraries into a cache (`spulse unwind build`), boots the VM, records
# tests/e2e/unwind_work.py under `spulse record` (tables) and once with
# `spulse record --unwind fp` (frame pointers, as before tables), copies
# them as $DEMO_DIR/python-unwind.spulse and $DEMO_DIR/python-fp.spulse
# (the names the printed commands use; DEMO_DIR defaults to the
# repository's top) with their sidecars, and prints one whole stack from
# the kernel through python3 to _start, the coverage of both recordings
# and `spulse report`.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
secs=${DEMO_SECONDS:-4}
dd=${DEMO_DIR:-$top}
m() { make --no-print-directory -C "$top" "$@"; }
# shellcheck source=tests/demos/demo-lib.sh
. "$top/tests/demos/demo-lib.sh"

"$top/tests/vm/deps.sh"
if m -n deps >/dev/null 2>&1; then m deps; fi
flock /tmp/spulse-kmod.lock make --no-print-directory -C "$top" module
m BUILD="$BUILD" "$BUILD/spulse-drain" "$BUILD/spulse"
"$top/tests/vm/fetch-kernel.sh" >/dev/null

out=$BUILD/demo-unwind
rm -rf "$out"
mkdir -p "$out/bin" "$out/cache"
# the guest hides the host's /tmp: give it copies under the output dir
cp -p "$top/spulse.ko" "$BUILD/spulse" "$BUILD/spulse-drain" \
	"$top/tests/e2e/unwind_work.py" "$out/bin/"
py=$(readlink -f /usr/bin/python3)
libs=$(ldd "$py" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | xargs -r readlink -f)
# the extension module unwind_work.py imports
libs="$libs $(ls /usr/lib/python3.11/lib-dynload/_json.*.so 2>/dev/null)"
echo "\$ spulse unwind build $py <its libraries, _json> -o CACHE"
# shellcheck disable=SC2086
"$BUILD/spulse" unwind build "$py" $libs -o "$out/cache"
echo
echo "demo-unwind: booting the VM (TCG), recording python3 for ${secs}s twice"
# no_timer_check: the kernel's IO-APIC timer check panics the boot ("IO-APIC
# + timer doesn't work!") when a loaded host starves the TCG vCPUs
"$top/tests/vm/run-vm.sh" --timeout 300 --append no_timer_check --out "$out" -- \
	"$top/tests/vm/guest-demo-unwind.sh" "$out/bin" "$secs" ||
	{ echo "demo-unwind: FAILED; see $out/console.log, $out/guest.log" >&2; exit 1; }
echo "\$ spulse record -F 999 -o python-unwind.spulse -- python3 unwind_work.py $secs"
cat "$out/tables.log"
echo "\$ spulse record -F 999 --unwind fp -o python-fp.spulse -- python3 unwind_work.py $secs"
cat "$out/fp.log"
mkdir -p "$dd"
copy_spool "$out/tables.spulse" "$dd/python-unwind.spulse"
copy_spool "$out/fp.spulse" "$dd/python-fp.spulse"
cd "$dd"
echo
python3 "$top/tests/e2e/unwind_show.py" python-unwind.spulse python-fp.spulse
S=$BUILD/spulse
echo
echo "\$ spulse report python-unwind.spulse --top 12"
"$S" report python-unwind.spulse --top 12
