#!/usr/bin/env bash
# make fault-stops (not in make check; docs/FAULT.md, "Stops under load"):
# FAULT_STOPS rounds (default 40) of the flight recorder with off-CPU
# recording stopped and unloaded while its target switches flat out, in one
# boot of the stock kernel (tests/vm/run-vm.sh) with softlockup_panic=1 and
# every CPU's backtrace on a lockup; prints the rounds that finished and
# the lockups/stalls on the console. Before db63774 the stop unregistered
# the scheduler probes and 1 round in 15 hung the TCG guest.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
n=${FAULT_STOPS:-40}
# FAULT_STOPS_KIND=loads: insmod offcpu=1 autostart=1 + rmmod rounds of a
# whole-system recording while ping-pongs run (tests/fault/guest-loads.sh)
kind=${FAULT_STOPS_KIND:-flight}
case $kind in
flight) guest=$here/guest-stops.sh ;;
loads) guest=$here/guest-loads.sh ;;
*) echo "fault-stops: FAULT_STOPS_KIND is flight or loads, not '$kind'"; exit 2 ;;
esac
out=$BUILD/fault-stops
make --no-print-directory -C "$top" BUILD="$BUILD" module "$BUILD/spulse" \
	"$BUILD/workload/pingpong" >/dev/null || { echo "fault-stops: build failed"; exit 1; }
rm -rf "$out"
mkdir -p "$out"
"$top/tests/vm/run-vm.sh" --timeout $((200 + n * 20)) --out "$out" \
	--append "${FAULT_APPEND:-} loglevel=7 softlockup_panic=1 softlockup_all_cpu_backtrace=1 watchdog_thresh=10" \
	-- "$guest" "$BUILD" "$n" >"$out/run-vm.log" 2>&1
rc=$?
done_n=$(tr -d '\r' <"$out/console.log" | grep -c 'stops: round [0-9]* rc 0$')
hangs=$(tr -d '\r' <"$out/console.log" | grep -cE 'soft lockup|rcu_.* detected stalls|BUG:')
echo "fault-stops ($kind, tcg thread=${VM_TCG_THREAD:-multi}): $done_n of $n rounds stopped cleanly (run-vm exit $rc); lockups/stalls on the console: $hangs ($out/console.log)"
[ "$rc" -eq 0 ] && [ "$done_n" -eq "$n" ] && [ "$hangs" -eq 0 ]
