#!/usr/bin/env bash
# The kernel matrix over tests/kernels/kernels.list (docs/KERNELS.md).
#
# usage: matrix.sh build [ID...]       build spulse.ko for every listed kernel
#        matrix.sh boot check|all [ID...]  build, boot and run the essentials
#
# build: one "PASS|FAIL kernel-build ID (release) ..." line per kernel with
#   the seconds of each part (fetch, chroot, build); a failed build is a
#   failed test. boot check: the kernels whose boot column is "check"
#   (suite kernel-boot); boot all: every kernel not marked "no" (make
#   check-kernels). Each booted kernel is one matrix row:
#   build/load/sample/off-CPU/unwind/flight/rmmod (tests/kernels/
#   guest-essentials.sh in the VM, essentials-check.sh on the host); a
#   column that could not run (the build failed, the VM died) is "skip" and
#   counts as failed. Outputs under $BUILD/kernels/<ID>/ (build) and
#   $BUILD/kernels/<ID>/vm/ (boot). RESULT=FILE writes "passed failed".
# Needs $BUILD/spulse, $BUILD/spulse-drain, $BUILD/workload/{gt,pingpong}
# for boot (mk/kernels.mk makes them).
set -uo pipefail
kl_prog=matrix
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/kernels/lib.sh
. "$here/lib.sh"
BUILD=${BUILD:-$top/build}
mode=${1:-}
shift || true
passed=0
failed=0
result() {
	echo "$mode: $passed passed, $failed failed"
	if [ -n "${RESULT:-}" ]; then
		mkdir -p "$(dirname "$RESULT")"
		echo "$passed $failed" > "$RESULT"
	fi
	[ "$failed" -eq 0 ]
	exit
}

# build_one ID: build-module.sh into $BUILD/kernels/ID; sets B_OK B_REL B_TIMES B_ERR
build_one() {
	local id=$1 o=$BUILD/kernels/$1 t
	mkdir -p "$o"
	B_ERR=
	if "$here/build-module.sh" "$id" "$o" > "$o/build-module.out" 2>&1; then
		B_OK=0
	else
		B_OK=1
		B_ERR=$(grep -m1 -E 'error:|ERROR:|FAIL|No such|not found' "$o/build-module.out" | sed 's/^ *//' | cut -c1-160)
	fi
	B_REL=$(. "$o/kernel.env" 2>/dev/null && echo "$REL")
	B_TIMES=
	for t in fetch chroot build; do
		B_TIMES="$B_TIMES $t $(awk -v k=$t '$1 == k { printf "%.1fs", $2 }' "$o/times" 2>/dev/null)"
	done
}

case $mode in
build)
	[ $# -gt 0 ] || set -- $(kl_ids)
	for id in "$@"; do
		kl_entry "$id"
		build_one "$id"
		if [ "$B_OK" = 0 ]; then
			echo "PASS kernel-build $id (${B_REL:-?}, $K_BUILD):$B_TIMES"
			passed=$((passed + 1))
		else
			echo "FAIL kernel-build $id (${B_REL:-unresolved}, $K_BUILD):$B_TIMES: ${B_ERR:-see $BUILD/kernels/$id/build.log}"
			echo "     log: $BUILD/kernels/$id/build.log"
			failed=$((failed + 1))
		fi
	done
	result ;;
boot)
	which=${1:-}
	shift || true
	case $which in
	check) [ $# -gt 0 ] || set -- $(kl_ids check) ;;
	all) [ $# -gt 0 ] || set -- $(kl_ids check full) ;;
	*) sed -n '5,6p' "$0" | sed 's/^# //' >&2; exit 2 ;;
	esac
	for f in "$BUILD/spulse" "$BUILD/spulse-drain" "$BUILD/workload/gt" "$BUILD/workload/pingpong"; do
		[ -x "$f" ] || kl_die "no $f (make $f)"
	done
	cols=(build load sample off-CPU unwind flight rmmod)
	rows=()
	for id in "$@"; do
		kl_entry "$id"
		declare -A cell=()
		for c in "${cols[@]}"; do cell[$c]=skip; done
		t0=$(kl_now)
		build_one "$id"
		t_build=$(kl_since "$t0")
		times="build$B_TIMES"
		o=$BUILD/kernels/$id
		if [ "$B_OK" = 0 ]; then
			cell[build]=ok
			echo "ok $id build: ${B_REL}:$B_TIMES"
			run=$o/vm
			rm -rf "$run"
			mkdir -p "$run/bin/workload"
			cp "$o/spulse.ko" "$BUILD/spulse" "$BUILD/spulse-drain" "$run/bin/"
			cp "$BUILD/workload/gt" "$BUILD/workload/pingpong" "$run/bin/workload/"
			t0=$(kl_now)
			"$top/tests/vm/run-vm.sh" --kernel-id "$id" --timeout "${KERNEL_BOOT_TIMEOUT:-300}" \
				--append no_timer_check --out "$run" -- \
				"$here/guest-essentials.sh" "$run/bin" > "$o/run-vm.log" 2>&1
			vrc=$?
			t_vm=$(kl_since "$t0")
			times="$times, boot+guest $(kl_fmt_secs "$t_vm")"
			if [ "$vrc" -ne 0 ]; then
				echo "FAIL $id vm: run-vm exit $vrc ($run/console.log)"
				tail -n 5 "$o/run-vm.log" | sed 's/^/     /'
			else
				t0=$(kl_now)
				"$here/essentials-check.sh" "$run" "$BUILD/spulse" > "$o/check.txt" 2>&1
				sed "s/^\\(ok\\|FAIL\\) /\\1 $id /" "$o/check.txt"
				for c in load sample off-CPU unwind flight rmmod; do
					if grep -q "^FAIL $c:" "$o/check.txt"; then cell[$c]=FAIL
					elif grep -q "^ok $c:" "$o/check.txt"; then cell[$c]=ok
					fi
				done
			fi
		else
			cell[build]=FAIL
			echo "FAIL $id build: ${B_REL:-unresolved}:$B_TIMES: ${B_ERR:-see $o/build.log}"
		fi
		row=$(printf '%-9s %-26s' "$id" "${B_REL:-?}")
		for c in "${cols[@]}"; do
			row="$row $(printf "%-${#c}s" "${cell[$c]}")"
			if [ "${cell[$c]}" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
		done
		rows+=("$row  ($times)")
		unset cell
	done
	echo "kernel matrix ($which):"
	printf '  %-9s %-26s' kernel release
	for c in "${cols[@]}"; do printf ' %s' "$c"; done
	echo
	for r in "${rows[@]}"; do echo "  $r"; done
	result ;;
*)
	sed -n '5,6p' "$0" | sed 's/^# //' >&2
	exit 2 ;;
esac
