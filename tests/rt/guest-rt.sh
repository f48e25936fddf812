#!/bin/sh
# RT scenarios of spulse.ko on the RT debug kernel (PREEMPT_RT + lockdep +
# PROVE_RAW_LOCK_NESTING + DEBUG_ATOMIC_SLEEP + KASAN; tests/rt/rt.config),
# run by guest-kunit.sh after the KUnit suites and guest-e2e.sh in the same
# boot (`make check-rt`, tests/rt/run-rt.sh).
#
# usage: guest-rt.sh SPULSE_KO BUSY ROUNDS OUT_KTAP
#
# Each scenario prints "ok N name" or "not ok N name" into OUT_KTAP (suite
# "spulse_rt"). Kernel splats are caught on the host (tests/rt/splat-check.sh
# and ktap-verdict.sh over the console and dmesg); the last scenario
# asserts that lockdep was still on at the end (a splat turns it off, and a
# silent lockdep proves nothing).
ko=$1
busy=$2
rounds=$3
ktap=$4
D=/sys/kernel/debug/spulse
C1=/sys/devices/system/cpu/cpu1/online
n=0
results=

log() { echo "rt: $*"; }
report() {	# status name
	n=$((n + 1))
	results="$results    $1 $n $2
"
	log "$1 $2"
}
stat() {	# key -> value from the stats file
	awk -v k="$1" '$1 == k { print $2 }' $D/stats 2>/dev/null
}
loaded() { grep -q '^spulse ' /proc/modules; }

# the kernel is what the suite claims: PREEMPT_RT with lockdep on
scenario_kernel_is_rt_debug() {
	log "$(uname -r) $(uname -v)"
	case "$(uname -v)" in *PREEMPT_RT*) ;; *) log "not a PREEMPT_RT kernel"; return 1 ;; esac
	grep -q 'debug_locks: *1$' /proc/lockdep_stats ||
		{ log "lockdep is off at the start: $(grep debug_locks /proc/lockdep_stats)"; return 1; }
}

# busy.c's context-switch storm with thread churn, whole system, every
# interval (offcpu_min_us=0), triggers, flushes and stop/start cycles
scenario_offcpu_storm_churn_whole_system() {
	$busy 8 storm > /tmp/rt-storm.out & pid=$!
	insmod $ko offcpu=1 offcpu_min_us=0 freq=499 autostart=1 ||
		{ kill $pid; wait $pid; return 1; }
	for i in 1 2; do
		sleep 1
		echo trigger > $D/control || log "trigger write failed"
		echo flush > $D/control || log "flush write failed"
		echo stop > $D/control || log "stop write failed"
		echo start > $D/control || log "start write failed"
	done
	wait $pid
	log "$(cat /tmp/rt-storm.out)"
	echo stop > $D/control
	t=$(stat offcpu_taken) w=$(stat offcpu_written) wk=$(stat wakeups_taken)
	log "offcpu_taken=$t offcpu_written=$w wakeups_taken=$wk"
	rmmod spulse || return 1
	[ "${t:-0}" -gt 0 ] && [ "${w:-0}" -gt 0 ]
}

# rmmod while the probes fire at full rate during the storm, 3 times
scenario_rmmod_during_storm() {
	for i in 1 2 3; do
		$busy 3 storm > /dev/null & pid=$!
		insmod $ko offcpu=1 offcpu_min_us=0 freq=499 autostart=1 ||
			{ kill $pid; wait $pid; return 1; }
		sleep 1
		rmmod spulse || { wait $pid; return 1; }
		wait $pid
		[ ! -e $D ] || { log "debugfs left after rmmod $i"; return 1; }
	done
}

# CPU 1 offline and online again ROUNDS times while recording the storm
# whole system with the off-CPU probes live
scenario_hotplug_rounds_recording() {
	$busy $((rounds * 2 + 4)) storm > /dev/null & pid=$!
	insmod $ko offcpu=1 offcpu_min_us=0 autostart=1 ||
		{ kill $pid; wait $pid; return 1; }
	ok=0
	for i in $(seq "$rounds"); do
		echo 0 > $C1 || { log "offline $i failed"; break; }
		sleep 0.5
		echo 1 > $C1 || { log "online $i failed"; break; }
		sleep 0.5
		ok=$i
	done
	echo 1 > $C1 2>/dev/null
	echo stop > $D/control
	log "hotplug rounds: $ok of $rounds; offcpu_taken=$(stat offcpu_taken) samples=$(stat samples_written)"
	rmmod spulse || return 1
	kill $pid 2>/dev/null; wait $pid
	[ "$ok" -eq "$rounds" ]
}

# CPU 1 goes offline and online while the module loads and unloads
scenario_hotplug_during_load_unload() {
	$busy $((rounds * 3 + 4)) storm > /dev/null & pid=$!
	ok=0
	for i in $(seq "$rounds"); do
		(echo 0 > $C1; sleep 0.2; echo 1 > $C1) & hp=$!
		insmod $ko offcpu=1 autostart=1 || { wait $hp; log "insmod $i failed"; break; }
		sleep 0.3
		rmmod spulse || { wait $hp; log "rmmod $i failed"; break; }
		wait $hp
		ok=$i
	done
	echo 1 > $C1 2>/dev/null
	kill $pid 2>/dev/null; wait $pid
	log "hotplug during load/unload: $ok of $rounds"
	[ "$ok" -eq "$rounds" ]
}

scenario_lockdep_still_on() {
	l=$(grep debug_locks /proc/lockdep_stats)
	log "at the end: $l"
	echo "$l" | grep -q 'debug_locks: *1$'
}

for s in kernel_is_rt_debug offcpu_storm_churn_whole_system \
	rmmod_during_storm hotplug_rounds_recording \
	hotplug_during_load_unload lockdep_still_on; do
	log "--- $s"
	if scenario_$s; then report ok "$s"; else report "not ok" "$s"; fi
	loaded && rmmod spulse
done

{
	echo "KTAP version 1"
	echo "1..1"
	echo "    KTAP version 1"
	echo "    # Subtest: spulse_rt"
	echo "    1..$n"
	printf '%s' "$results"
	echo "ok 1 spulse_rt"
} > "$ktap"
