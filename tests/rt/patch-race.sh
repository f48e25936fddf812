#!/usr/bin/env bash
# Does text patching race CPU hotplug into an "Oops: int3"? Boots a listed
# kernel (tests/kernels/kernels.list) BOOTS times with the guest script
# guest-patch-race.sh (ROUNDS rounds of hotplug + patching, see there) under
# QEMU TCG thread=THREAD (single or multi), one line per boot:
#   boot K: finished R/ROUNDS | OOPS int3 at SYM+OFF after round R |
#           PANIC (other) after round R | HANG after round R
# On an oops the guest stops (panic=0) and QMP records every vCPU's
# registers and guest memory at the int3's address (oops RIP - 1, from the
# guest's /proc/kallsyms) into OUT/bootK/qmp.txt, with the verdict:
#   "memory holds cc" (the int3 is really there: a kernel/patching bug) or
#   "memory holds XX, not cc" (the vCPU ran an int3 that is no longer in
#   memory: a stale translation, QEMU's multi-threaded TCG).
# A hang (no console output for HANG_S seconds, default 300: a round takes
# up to a minute on a loaded 2-core host) gets 5 samples of every vCPU's
# RIP, interrupt flag and stack (qmp-dump.py).
#
# usage: patch-race.sh ID MODE THREAD BOOTS ROUNDS OUT
#   MODE: spulse | kernel | hotplug (guest-patch-race.sh); spulse builds
#   the module for ID with tests/kernels/build-module.sh (cached in OUT).
# Last line: "patch-race ID MODE THREAD: B boots, F finished, O oops(int3),
# P other panics, H hangs".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ $# -eq 6 ] || { sed -n '18p' "$0" | sed 's/^# //' >&2; exit 2; }
id=$1 mode=$2 thread=$3 boots=$4 rounds=$5
case $thread in single|multi) ;; *) echo "patch-race: THREAD is single or multi" >&2; exit 2 ;; esac
mkdir -p "$6"
out=$(realpath "$6")
bin=$out/bin-$mode-$thread
mkdir -p "$bin"
cc -O1 -static -Wall -Wextra -Werror -o "$bin/perf-flip" "$here/perf-flip.c" ||
	{ echo "patch-race: perf-flip build failed" >&2; exit 1; }
cc -O2 -static -pthread -Wall -Wextra -Werror -o "$bin/pingpong" \
	"$top/tests/workload/pingpong.c" || { echo "patch-race: pingpong build failed" >&2; exit 1; }
if [ "$mode" = spulse ]; then
	if [ ! -f "$out/module/spulse.ko" ]; then
		"$top/tests/kernels/build-module.sh" "$id" "$out/module" >&2 ||
			{ echo "patch-race: module build failed" >&2; exit 1; }
	fi
	cp "$out/module/spulse.ko" "$bin/"
fi
qmp() { python3 "$top/tests/vm/qmp.py" "$1" "${@:2}"; }
hang_s=${HANG_S:-300}
nf=0 no=0 np=0 nh=0
for k in $(seq "$boots"); do
	d=$out/$mode-$thread-$k
	rm -rf "$d"
	mkdir -p "$d"
	# (the guest sees host /tmp hidden; the VM's out directory is visible)
	cp -a "$bin" "$d/bin"
	sock=$d/qmp.sock
	VM_TCG_THREAD=$thread VM_QMP=$sock "$top/tests/vm/run-vm.sh" --kernel-id "$id" \
		--timeout $((rounds * 30 + 300)) --append "panic=0" --out "$d" -- \
		"$here/guest-patch-race.sh" "$d/bin" "$mode" "$rounds" > "$d/run-vm.log" 2>&1 &
	vm=$!
	verdict=
	last=0 quiet=0 size=-1
	while kill -0 $vm 2>/dev/null; do
		sleep 2
		c=$(tr -d '\r' 2>/dev/null < "$d/console.log")
		r=$(grep -o 'race: round [0-9]*' <<< "$c" | tail -n1 | grep -o '[0-9]*$')
		[ -z "$r" ] || last=$r
		if grep -q 'Kernel panic' <<< "$c"; then
			sleep 2
			c=$(tr -d '\r' < "$d/console.log")
			rip=$(grep -m1 -A4 'Oops: int3' <<< "$c" | sed -n 's/.*RIP: 0010:\([^ ]*\).*/\1/p' | head -n1)
			{
				echo "== info registers -a"
				qmp "$sock" 'info registers -a'
				echo "== qmp-dump.py"
				python3 "$here/qmp-dump.py" "$sock" "$d/kallsyms" 1
			} > "$d/qmp.txt" 2>&1
			if [ -n "$rip" ]; then
				sym=${rip%%+*} off=${rip#*+}; off=${off%%/*}
				base=$(awk -v s="$sym" '$3 == s { print $1; exit }' "$d/kallsyms" 2>/dev/null)
				if [ -n "$base" ]; then
					a=$(printf '0x%x' $((0x$base + off - 1)))
					mem=$(qmp "$sock" "x/8xb $a" 2>&1 | tr -d '\r')
					{ echo "== x/8xb $a ($sym+$(printf '0x%x' $((off - 1))), the int3's byte)"; echo "$mem"; } >> "$d/qmp.txt"
					b=$(sed -n 's/^[0-9a-f]*: *0x\([0-9a-f][0-9a-f]\).*/\1/p' <<< "$mem" | head -n1)
					if [ "$b" = cc ]; then held="memory holds cc"
					else held="memory holds ${b:-??}, not cc"; fi
				else
					held="no kallsyms for $sym"
				fi
				verdict="OOPS int3 at $rip after round $last; $held"
				no=$((no + 1))
			else
				verdict="PANIC after round $last: $(grep -m1 -E 'Oops|BUG:|Kernel panic' <<< "$c")"
				np=$((np + 1))
			fi
			qmp "$sock" quit > /dev/null 2>&1
			break
		fi
		s=$(stat -c %s "$d/console.log" 2>/dev/null || echo 0)
		if [ "$s" = "$size" ]; then
			quiet=$((quiet + 2))
			if [ $quiet -ge "$hang_s" ]; then
				{
					echo "== info registers -a"
					qmp "$sock" 'info registers -a'
					echo "== qmp-dump.py, 5 samples"
					python3 "$here/qmp-dump.py" "$sock" "$d/kallsyms" 5
				} > "$d/qmp.txt" 2>&1
				verdict="HANG after round $last (no console output for ${hang_s}s)"
				nh=$((nh + 1))
				qmp "$sock" quit > /dev/null 2>&1
				break
			fi
		else
			quiet=0 size=$s
		fi
	done
	wait $vm
	vrc=$?
	if [ -z "$verdict" ]; then
		c=$(tr -d '\r' 2>/dev/null < "$d/console.log")
		if grep -q "race: finished $rounds" <<< "$c" && [ "$vrc" -eq 0 ]; then
			verdict="finished $rounds/$rounds"
			nf=$((nf + 1))
		else
			verdict="VM exit $vrc after round $last: $(grep -m1 -E 'Oops|BUG:|WARNING:|race: .*failed|TIMEOUT' <<< "$c$(cat "$d/run-vm.log")")"
			np=$((np + 1))
		fi
	fi
	echo "boot $k ($id $mode thread=$thread): $verdict"
done
echo "patch-race $id $mode $thread: $boots boots, $nf finished, $no oops(int3), $np other failures, $nh hangs"
