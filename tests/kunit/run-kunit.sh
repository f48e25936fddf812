#!/usr/bin/env bash
# `make kunit`: run the spulse KUnit suites on the debug test kernel.
#
#   tests/kunit/run-kunit.sh
#
# 1. builds or reuses the debug kernel (build-kernel.sh);
# 2. builds spulse.ko and spulse_kunit.ko against it in a scratch copy
#    ($BUILD/kunit-build: kbuild's M= writes objects next to the sources);
# 3. boots it in QEMU (TCG, 2 vCPUs) with tests/vm/run-vm.sh, the guest
#    script guest-kunit.sh loads both modules and copies the KTAP;
# 4. ktap-verdict.sh prints one line per case and kernel splat, and
#    "N passed, N failed"; the pair goes to $BUILD/check/kunit.result.
# 5. unless KUNIT_E2E=0, the same boot then runs guest-e2e.sh: spulse.ko
#    recording busy.c (static) with hotplug, rmmod mid-recording, exec/exit
#    and thread churn; its results count as suite "spulse_e2e".
#    Scenarios that leave a `resolve` list have their samples checked on
#    the host to resolve to the modules in their meta (e2e-resolve.py).
# Environment: BUILD (default <repo>/build), KUNIT_VM_TIMEOUT (s, 900: a hang guard; the guest takes ~200 s on a quiet 2-core host, ~600 s on a loaded one),
# KUNIT_APPEND (extra kernel command line; spulse_e2e=a,b runs only those
# e2e scenarios), KUNIT_E2E (1).
# Another debug kernel (tests/rt/run-rt.sh, `make check-rt`): KUNIT_KSRC
# (source series for build-kernel.sh --source), KUNIT_KCONFIG (config
# fragments, space separated, for --config), KUNIT_NAME (default kunit: the
# output directory $BUILD/NAME and the result file check/NAME.result),
# KUNIT_RT_ROUNDS (N: after the e2e scenarios the same boot runs
# tests/rt/guest-rt.sh with N hotplug rounds, suite "spulse_rt").
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$top/build}
name=${KUNIT_NAME:-kunit}
scratch=$build/$name-build
out=$build/$name
result=$build/check/$name.result
rt_rounds=${KUNIT_RT_ROUNDS:-}
mkdir -p "$build/check" "$out"
rm -f "$result"

verdict() {	# passed failed
	echo "$1 $2" > "$result"
}
die() {
	echo "$name: $*" >&2
	verdict 0 1
	echo "0 passed, 1 failed"
	exit 1
}

t0=$(date +%s)
kargs=()
[ -z "${KUNIT_KSRC:-}" ] || kargs+=(--source "$KUNIT_KSRC")
for f in ${KUNIT_KCONFIG:-}; do kargs+=(--config "$f"); done
kdir=$("$here/build-kernel.sh" "${kargs[@]}" | tail -n1) || die "test kernel build failed"
[ -f "$kdir/arch/x86/boot/bzImage" ] || die "no bzImage in $kdir"
t1=$(date +%s)
echo "$name: kernel $kdir ($((t1 - t0)) s)"

# Scratch copy laid out like the repository.
mkdir -p "$scratch/tests"
rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
	"$top/kmod" "$top/include" "$scratch/" || die "rsync failed"
rsync -a --delete "$top/tests/kunit" "$top/tests/vectors" "$scratch/tests/" ||
	die "rsync failed"
[ -f "$top/Kbuild" ] || die "no Kbuild at the repository root (spulse.ko)"
rsync -a "$top/Kbuild" "$scratch/Kbuild" || die "rsync failed"

kmake() {
	nice -n 10 make -s -C "$kdir" ARCH=x86_64 -j2 "$@"
}
kmake M="$scratch" modules >"$out/build-spulse.log" 2>&1 ||
	{ tail -n 30 "$out/build-spulse.log" >&2; die "spulse.ko build failed"; }
kmake M="$scratch/tests/kunit" KBUILD_EXTRA_SYMBOLS="$scratch/Module.symvers" \
	modules >"$out/build-kunit.log" 2>&1 ||
	{ tail -n 30 "$out/build-kunit.log" >&2; die "spulse_kunit.ko build failed"; }
busy=
if [ "${KUNIT_E2E:-1}" = 1 ]; then
	${CC:-cc} -O1 -g -fno-omit-frame-pointer -static -pthread -Wall -Wextra \
		-Werror -o "$scratch/busy" "$here/busy.c" || die "busy.c build failed"
	busy=$scratch/busy
	${CC:-cc} -O1 -g -static -Wall -Wextra -Werror -o "$scratch/relay_race" \
		"$here/relay_race.c" || die "relay_race.c build failed"
fi
t2=$(date +%s)
echo "$name: modules built ($((t2 - t1)) s)"

# Suites the module should report (a missing one is a failure).
grep -ho '^\s*\.name = "[a-z0-9_]*"' "$here"/*_test.c |
	sed 's/.*"\(.*\)"/\1/' | sort > "$out/expected-suites"
[ -z "$busy" ] || echo spulse_e2e >> "$out/expected-suites"
if [ -n "$rt_rounds" ]; then
	[ -n "$busy" ] || die "KUNIT_RT_ROUNDS needs the e2e workload (KUNIT_E2E=1)"
	echo spulse_rt >> "$out/expected-suites"
fi

rm -rf "$out/vm"
# The guest hides the host's /tmp: run copies from the VM output directory
# (mounted at its host path in the guest), wherever BUILD is.
mkdir -p "$out/vm/bin"
cp "$scratch/spulse.ko" "$scratch/tests/kunit/spulse_kunit.ko" "$out/vm/bin/" ||
	die "copying the modules failed"
[ -z "$busy" ] || { cp "$busy" "$scratch/relay_race" "$out/vm/bin/" &&
	busy=$out/vm/bin/busy; } ||
	die "copying busy failed"
append="oops=panic panic_on_oops=1 kfence.sample_interval=10 ${KUNIT_APPEND:-}"
"$top/tests/vm/run-vm.sh" --kernel "$kdir/arch/x86/boot/bzImage" --kmods "" \
	--cpus 2 --mem 2G --timeout "${KUNIT_VM_TIMEOUT:-900}" \
	--append "$append" --out "$out/vm" -- "$here/guest-kunit.sh" \
	"$out/vm/bin/spulse.ko" "$out/vm/bin/spulse_kunit.ko" $busy $rt_rounds
vmrc=$?
t3=$(date +%s)
echo "$name: VM exit $vmrc ($((t3 - t2)) s)"

summary=$("$here/ktap-verdict.sh" "$out/vm/ktap" "$out/expected-suites" \
	"$out/vm/console.log" "$out/vm/dmesg.txt")
vrc=$?
sed '$d' <<< "$summary"
read -r p _ f _ <<< "$(tail -n1 <<< "$summary")"
# The per-CPU streams the e2e scenarios recorded must pass libspulse's
# validator (`spulse check`), one case per stream.
if [ -d "$out/vm/e2e" ]; then
	if make --no-print-directory -s -C "$top" "$build/spulse" >/dev/null 2>&1 &&
		[ -x "$build/spulse" ]; then
		for s in "$out"/vm/e2e/*/cpu*; do
			[ -f "$s" ] || continue
			name=spulse_e2e_streams.$(basename "$(dirname "$s")")/$(basename "$s")
			if "$build/spulse" check "$s" > "$s.check" 2>&1; then
				echo "PASS $name ($(stat -c %s "$s") bytes)"
				p=$((p + 1))
			else
				echo "FAIL $name: $(tail -n1 "$s.check")"
				f=$((f + 1))
			fi
		done
		# scenarios that left a `resolve` list: their samples must resolve
		# to their modules in meta (e2e-resolve.py)
		for r in "$out"/vm/e2e/*/resolve; do
			[ -f "$r" ] || continue
			if line=$(python3 "$here/e2e-resolve.py" "$(dirname "$r")" \
				"$build/spulse" 2>&1); then
				p=$((p + 1))
			else
				f=$((f + 1))
				case $line in FAIL*) ;; *) line="FAIL e2e-resolve $r: $line" ;; esac
			fi
			echo "$line" | tail -n1
		done
	else
		echo "FAIL spulse_e2e_streams (cannot build $build/spulse)"
		f=$((f + 1))
	fi
fi
if [ "$vmrc" -ne 0 ]; then
	echo "FAIL guest script/VM exit code $vmrc (see $out/vm/console.log)"
	f=$((f + 1))
fi
verdict "$p" "$f"
echo "$name: total $(( $(date +%s) - t0 )) s; logs in $out/vm"
echo "$p passed, $f failed"
[ "$vrc" -eq 0 ] && [ "$vmrc" -eq 0 ]
