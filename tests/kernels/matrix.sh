#!/usr/bin/env bash
# The kernel matrix over tests/kernels/kernels.list (docs/KERNELS.md).
#
# usage: matrix.sh build [ID...]       build spulse.ko for every listed kernel
#        matrix.sh boot check|all [ID...]  build, boot and run the essentials
#
# First every kernel is fetched and every chroot made, all at once (one
# "prepare: ..." line with the time of each; headers only for build).
# build: one "PASS|FAIL kernel-build ID (release) ..." line per kernel with
# the seconds of each part (fetch, chroot, build: near zero for the first
# two once prepared); a failed build is a failed test.
# boot check: the kernels whose boot column is "check" (suite kernel-boot);
# boot all: every kernel not marked "no" (make check-kernels). Each booted
# kernel is one matrix row, build/load/sample/off-CPU/unwind/flight/rmmod
# (tests/kernels/guest-essentials.sh in the VM, essentials-check.sh on the
# host), above it the ok/FAIL line of every check; a column that could not
# run (the build failed, the VM died) is "skip" and counts as failed.
# Outputs under $BUILD/kernels/<ID>/ (build) and $BUILD/kernels/<ID>/vm/
# (boot). RESULT=FILE writes "passed failed". boot needs $BUILD/spulse,
# $BUILD/spulse-drain, $BUILD/workload/{gt,pingpong} (mk/kernels.mk makes
# them).
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
		B_ERR=$(grep -m1 -E 'error:|ERROR:' "$o/build-module.out" | sed -e 's/^ *//' -e "s|$o/src/||g" | cut -c1-200)
		[ -n "$B_ERR" ] ||
			B_ERR=$(grep -m1 -E 'FAIL|No such|not found|cannot' "$o/build-module.out" | sed 's/^ *//' | cut -c1-200)
	fi
	B_REL=$(. "$o/kernel.env" 2>/dev/null && echo "$REL")
	B_TIMES=
	for t in fetch chroot build; do
		B_TIMES="$B_TIMES $t $(awk -v k=$t '$1 == k { printf "%.1fs", $2 }' "$o/times" 2>/dev/null)"
	done
}

# prepare [--headers] ID...: fetch every kernel and make every chroot they
# need at once (network and disk overlap; a cold cache costs the longest
# of them, not their sum), printing what each took. Failures are not
# judged here: the per-kernel steps redo them and report.
prepare() {
	local hdr='' id s t0 pd=$BUILD/kernels/.prepare suites='' line rc secs
	if [ "$1" = --headers ]; then hdr=--headers; shift; fi
	rm -rf "$pd"
	mkdir -p "$pd"
	t0=$(kl_now)
	for id in "$@"; do
		kl_entry "$id"
		( t=$(kl_now); "$here/fetch.sh" $hdr "$id" > /dev/null 2> "$pd/fetch-$id.log"
		  echo "$? $(kl_since "$t")" > "$pd/fetch-$id.rc" ) &
		if [ "$K_BUILD" = chroot ] && [[ " $suites " != *" $K_SUITE "* ]]; then
			suites="$suites $K_SUITE"
		fi
	done
	for s in $suites; do
		( t=$(kl_now); "$here/chroot.sh" "$s" > /dev/null 2> "$pd/chroot-$s.log"
		  echo "$? $(kl_since "$t")" > "$pd/chroot-$s.rc" ) &
	done
	wait
	line="prepare: $(kl_fmt_secs "$(kl_since "$t0")") in parallel:"
	for id in "$@"; do
		read -r rc secs < "$pd/fetch-$id.rc"
		line="$line fetch $id $(kl_fmt_secs "$secs")$([ "$rc" = 0 ] || echo ' (failed)'),"
	done
	for s in $suites; do
		read -r rc secs < "$pd/chroot-$s.rc"
		line="$line chroot $s $(kl_fmt_secs "$secs")$([ "$rc" = 0 ] || echo ' (failed)'),"
	done
	echo "${line%,}"
}

case $mode in
build)
	[ $# -gt 0 ] || mapfile -t ids < <(kl_ids)
	[ $# -eq 0 ] || ids=("$@")
	set -- "${ids[@]}"
	prepare --headers "$@"
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
	check) [ $# -gt 0 ] || mapfile -t ids < <(kl_ids check) ;;
	all) [ $# -gt 0 ] || mapfile -t ids < <(kl_ids check full) ;;
	*) sed -n '4,5p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
	[ $# -eq 0 ] || ids=("$@")
	set -- "${ids[@]}"
	for f in "$BUILD/spulse" "$BUILD/spulse-drain" "$BUILD/workload/gt" "$BUILD/workload/pingpong"; do
		[ -x "$f" ] || kl_die "no $f (make $f)"
	done
	prepare "$@"
	# One host thread for all vCPUs by default: the flight step unloads
	# the module (unpatching the scheduler tracepoints) with pingpong
	# still switching, the case where multi-threaded TCG can run a stale
	# int3 (docs/VM.md "Text patching under TCG"; seen once here as an
	# "Oops: int3" in __schedule on 7.2; reproduced without spulse.ko by
	# tests/rt/patch-race.sh, never with thread=single). About twice the
	# guest time.
	export VM_TCG_THREAD=${VM_TCG_THREAD:-single}
	cols=(build load sample off-CPU unwind flight rmmod)
	rows=()
	for id in "$@"; do
		kl_entry "$id"
		declare -A cell=()
		for c in "${cols[@]}"; do cell[$c]=skip; done
		build_one "$id"
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
				tr -d '\r' < "$run/console.log" 2>/dev/null |
					grep -m4 -E 'Oops|BUG:|RIP:|Kernel panic|WARNING:|Modules linked in' |
					sed 's/^/     /'
			fi
			# what the guest got through is judged even when the VM died
			# (a column it never reached fails: its files are missing)
			if [ -s "$run/guest.log" ]; then
				"$here/essentials-check.sh" "$run" "$BUILD/spulse" > "$o/check.txt" 2>&1
				sed "s/^\(ok\|FAIL\) /\1 $id /" "$o/check.txt"
				for c in load sample off-CPU unwind flight rmmod; do
					if grep -q "^FAIL $c:" "$o/check.txt"; then cell[$c]=FAIL
					elif grep -q "^ok $c:" "$o/check.txt"; then cell[$c]=ok
					fi
				done
				# a VM that died fails rmmod (clean unload, clean dmesg)
				[ "$vrc" -eq 0 ] || cell[rmmod]=FAIL
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
	echo "kernel matrix ($which, TCG thread=$VM_TCG_THREAD):"
	printf '  %-9s %-26s' kernel release
	for c in "${cols[@]}"; do printf ' %s' "$c"; done
	echo
	for r in "${rows[@]}"; do echo "  $r"; done
	result ;;
*)
	sed -n '4,5p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2 ;;
esac
