#!/bin/sh
# End-to-end scenarios of spulse.ko on the debug kernel (busybox sh in the
# guest; sourced-free, run by guest-kunit.sh after the KUnit suites).
#
# usage: guest-e2e.sh SPULSE_KO BUSY OUT_KTAP
#
# Each scenario prints "ok N name" or "not ok N name" into OUT_KTAP (KTAP,
# same shape as a KUnit suite's results, suite "spulse_e2e"); the streams
# recorded by three of them go to /out/e2e/SCENARIO/cpuN. Kernel splats
# during any of them are caught by the host's console/dmesg scan.
ko=$1
busy=$2
ktap=$3
D=/sys/kernel/debug/spulse
W=/tmp/e2e
mkdir -p $W
rm -rf /out/e2e
n=0
results=

log() { echo "e2e: $*"; }

report() {	# status name
	n=$((n + 1))
	results="$results    $1 $n $2
"
	log "$1 $2"
}

stat() {	# key -> value from the stats file
	awk -v k="$1" '$1 == k { print $2 }' $D/stats 2>/dev/null
}

# Background reader: appends every cpuN relay file to $W/cpuN until stopped.
reader_start() {
	rm -f $W/cpu* $W/reader.stop
	(
		while [ ! -e $W/reader.stop ]; do
			for f in $D/cpu*; do
				[ -e "$f" ] || continue
				cat "$f" >> "$W/${f##*/}" 2>/dev/null
			done
			sleep 0.2
		done
	) &
	reader=$!
}

reader_stop() {
	touch $W/reader.stop
	wait $reader 2>/dev/null
}

# save_streams NAME: final read of every cpuN, then copy the streams to
# /out/e2e/NAME for the host's `spulse check` (module still loaded)
save_streams() {
	for f in $D/cpu*; do cat "$f" >> "$W/${f##*/}" 2>/dev/null; done
	mkdir -p "/out/e2e/$1"
	for f in $W/cpu*; do [ -s "$f" ] && cp "$f" "/out/e2e/$1/"; done
}

# invariant_ok: the stats add up and something was sampled
invariant_ok() {
	t=$(stat samples_taken); w=$(stat samples_written)
	d=$(stat samples_dropped)
	log "taken=$t written=$w dropped=$d"
	[ -n "$t" ] && [ "$t" -gt 0 ] && [ "$t" -eq $((w + d)) ]
}

# streams_ok: every non-empty per-CPU stream starts with the magic
streams_ok() {
	any=0
	for f in $W/cpu*; do
		[ -s "$f" ] || continue
		any=1
		[ "$(head -c 7 "$f")" = "SPULSE3" ] || { log "$f: bad magic"; return 1; }
	done
	[ $any -eq 1 ]
}

# offcpu_ok: the off-CPU accounting adds up (key names from kmod/control.c):
# every switch-out taken is written, filtered, dropped, lost or open at
# stop; every wakeup taken lands in exactly one outcome; something was
# written. Prints the numbers.
offcpu_ok() {
	awk '
		{ v[$1] = $2 }
		$1 ~ /^offcpu_dropped_/ { drop += $2 }
		$1 ~ /^wakeups_/ && $1 != "wakeups_taken" { wk += $2 }
		END {
			oc = v["offcpu_written"] + v["offcpu_filtered"] + v["offcpu_lost"] + \
			     v["offcpu_open_at_stop"] + drop
			printf "e2e: offcpu taken=%d written=%d filtered=%d lost=%d open_at_stop=%d dropped=%d; wakeups taken=%d outcomes=%d; triggers written=%d dropped=%d\n", \
				v["offcpu_taken"], v["offcpu_written"], v["offcpu_filtered"], \
				v["offcpu_lost"], v["offcpu_open_at_stop"], drop, \
				v["wakeups_taken"], wk, v["triggers_written"], v["triggers_dropped"]
			exit !(v["offcpu"] == 1 && v["offcpu_taken"] > 0 && v["offcpu_written"] > 0 && \
			       v["offcpu_taken"] == oc && v["wakeups_taken"] == wk)
		}' $D/stats
}

# offcpu_storm TARGET NAME: busy.c's context-switch storm with thread churn
# recorded with offcpu=1 (every interval written: offcpu_min_us=0) while
# the streams are read; a manual trigger mark mid-run
offcpu_storm() {
	$busy 3 storm > $W/storm.out & pid=$!
	[ "$1" = self ] && tgt=$pid || tgt=$1
	insmod $ko target_pid=$tgt offcpu=1 offcpu_min_us=0 freq=499 autostart=1 ||
		{ kill $pid; wait $pid; return 1; }
	reader_start
	sleep 1
	echo trigger > $D/control || log "trigger write failed"
	wait $pid
	log "$(cat $W/storm.out)"
	echo stop > $D/control
	sleep 0.3
	reader_stop
	save_streams "$2"
	invariant_ok && offcpu_ok && streams_ok || { rmmod spulse; return 1; }
	[ "$(stat triggers_written)" -ge 1 ] || { log "no trigger written"; rmmod spulse; return 1; }
	rmmod spulse
}

scenario_offcpu_storm_target() {
	offcpu_storm self offcpu_storm_target
}

# the whole system: every thread (kworkers, the reader's shell) is a target
scenario_offcpu_storm_whole_system() {
	offcpu_storm 0 offcpu_storm_whole_system
}

# a tiny relay buffer and no reader during the storm: intervals are dropped
# whole (offcpu_dropped_buffer_full), the accounting still adds up and what
# was written is a valid stream (read once at the end)
scenario_offcpu_storm_tiny_buffer() {
	# the smallest sub-buffer the module accepts (insmod is slow under KASAN:
	# probe it first, against a sleeper, so the storm is recorded whole)
	sleep 100 & sl=$!
	for sz in 8192 16384 32768 65536; do
		insmod $ko target_pid=$sl offcpu=1 max_user_depth=32 \
			max_kernel_depth=32 subbuf_size=$sz n_subbufs=2 2>/dev/null && break
	done
	grep -q '^spulse ' /proc/modules && rmmod spulse
	kill $sl; wait $sl
	$busy 2 storm > $W/storm.out & pid=$!
	insmod $ko target_pid=$pid offcpu=1 offcpu_min_us=0 freq=499 \
		max_user_depth=32 max_kernel_depth=32 subbuf_size=$sz \
		n_subbufs=2 autostart=1 || { log "insmod subbuf_size=$sz failed"; kill $pid; wait $pid; return 1; }
	log "subbuf_size=$sz n_subbufs=2"
	wait $pid
	log "$(cat $W/storm.out)"
	echo stop > $D/control
	rm -f $W/cpu*
	save_streams offcpu_storm_tiny_buffer
	full=$(stat offcpu_dropped_buffer_full)
	log "offcpu_dropped_buffer_full=$full"
	offcpu_ok && streams_ok && [ "$full" -gt 0 ] || { rmmod spulse; return 1; }
	rmmod spulse
}

# rmmod while the probes fire at full rate: probes unregistered, no splat
scenario_offcpu_rmmod_during_storm() {
	$busy 3 storm > /dev/null & pid=$!
	insmod $ko target_pid=0 offcpu=1 offcpu_min_us=0 freq=499 autostart=1 ||
		{ kill $pid; wait $pid; return 1; }
	reader_start
	sleep 1
	rmmod spulse; rc=$?
	reader_stop
	wait $pid
	[ $rc -eq 0 ] && [ ! -e $D ]
}

scenario_record_target() {
	$busy 3 & pid=$!
	insmod $ko target_pid=$pid freq=499 autostart=1 || return 1
	reader_start
	wait $pid
	echo stop > $D/control
	sleep 0.3
	reader_stop
	save_streams record_target
	invariant_ok && streams_ok || { rmmod spulse; return 1; }
	rmmod spulse
}

scenario_cpu_hotplug() {
	c=/sys/devices/system/cpu/cpu1/online
	[ -w $c ] || { log "no $c"; return 1; }
	$busy 4 & pid=$!
	insmod $ko target_pid=$pid freq=499 autostart=1 || return 1
	reader_start
	sleep 1
	echo 0 > $c || { reader_stop; rmmod spulse; return 1; }
	sleep 1
	echo 1 > $c || { reader_stop; rmmod spulse; return 1; }
	sleep 1
	wait $pid
	echo stop > $D/control
	reader_stop
	save_streams cpu_hotplug
	invariant_ok || { rmmod spulse; return 1; }
	rmmod spulse
}

scenario_rmmod_while_recording_and_reading() {
	$busy 3 & pid=$!
	insmod $ko target_pid=$pid freq=999 autostart=1 || return 1
	reader_start
	sleep 1
	[ "$(cat $D/control)" = running ] || { reader_stop; rmmod spulse; return 1; }
	rmmod spulse; rc=$?
	reader_stop
	wait $pid
	[ $rc -eq 0 ] && [ ! -e $D ]
}

scenario_target_exec_and_exit() {
	$busy 2 exec & pid=$!
	insmod $ko target_pid=$pid freq=499 autostart=1 || return 1
	reader_start
	wait $pid
	sleep 0.5	# recording on, target gone
	echo stop > $D/control
	reader_stop
	invariant_ok || { rmmod spulse; return 1; }
	rmmod spulse
}

# events=task (the default with target_pid): threads that exist at start
# (created after insmod) and threads created after start are all sampled;
# each thread's first sample defines it with its comm, so every name is in
# a stream. Every event seen belongs to the target (seen == taken).
scenario_task_events_threads() {
	rm -f $W/late.go
	$busy 3 threads $W/late.go > $W/threads.out & pid=$!
	# the early threads must exist before start (exec over 9p is slow)
	i=0
	while ! grep -q ready $W/threads.out 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1; i=$((i + 1))
	done
	insmod $ko target_pid=$pid freq=499 || { kill $pid; wait $pid; return 1; }
	[ "$(stat events)" = task ] || { log "events=$(stat events)"; rmmod spulse; kill $pid; wait $pid; return 1; }
	echo start > $D/control
	reader_start
	sleep 0.5
	touch $W/late.go
	wait $pid
	echo stop > $D/control
	reader_stop
	save_streams task_events_threads
	te=$(stat task_events); tf=$(stat task_events_failed)
	seen=$(stat seen); t=$(stat samples_taken)
	log "task_events=$te task_events_failed=$tf seen=$seen taken=$t"
	ok=0
	invariant_ok && streams_ok || ok=1
	[ "$te" -ge 3 ] && [ "$tf" -eq 0 ] && [ "$seen" -eq "$t" ] || ok=1
	for c in early0 early1 late0 late1; do
		cat $W/cpu* | grep -q "$c" || { log "no sample of thread $c"; ok=1; }
	done
	rmmod spulse
	return $ok
}

# loc1: CPU1's local timer interrupts (/proc/interrupts LOC)
loc1() {
	awk '$1 == "LOC:" { print $3 }' /proc/interrupts
}

# idle_run EVENTS: record a target pinned to CPU0 (this shell too) for 2 s
# without a reader; prints "LOC1_DELTA SEEN TAKEN"
idle_run() {
	$busy 4 > /dev/null & pid=$!
	taskset -p 1 $pid > /dev/null
	insmod $ko target_pid=$pid freq=999 events=$1 || { kill $pid; wait $pid; return 1; }
	l0=$(loc1)
	echo start > $D/control
	sleep 2
	echo stop > $D/control
	l1=$(loc1)
	echo "$((l1 - l0)) $(stat seen) $(stat samples_taken)"
	rmmod spulse
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	return 0
}

# A target pinned to CPU0: with per-task events the idle CPU1 takes no
# sampling interrupts (its events see nothing: seen == taken, and its LOC
# count grows less than with events=cpu, whose CPU1 hrtimer fires at freq
# for nothing: seen > taken).
scenario_task_events_idle_cpu() {
	[ -e /sys/devices/system/cpu/cpu1 ] || { log "one CPU"; return 1; }
	taskset -p 1 $$ > /dev/null || { log "taskset failed"; return 1; }
	c=$(idle_run cpu) || { taskset -p 3 $$ > /dev/null; return 1; }
	t=$(idle_run task) || { taskset -p 3 $$ > /dev/null; return 1; }
	taskset -p 3 $$ > /dev/null
	set -- $c $t
	log "events=cpu: cpu1 LOC +$1 seen $2 taken $3; events=task: cpu1 LOC +$4 seen $5 taken $6"
	[ "$3" -gt 0 ] && [ "$6" -gt 0 ] && [ "$2" -gt "$3" ] &&
		[ "$5" -eq "$6" ] && [ "$4" -lt "$1" ]
}

# events=task against a target whose threads exit one by one and that
# exits while recording: events end with their tasks, stop releases them
scenario_task_events_target_exits() {
	$busy 2 churn & pid=$!
	insmod $ko target_pid=$pid freq=999 autostart=1 || return 1
	reader_start
	wait $pid
	sleep 0.5
	[ "$(cat $D/control)" = running ] || { reader_stop; rmmod spulse; return 1; }
	echo flush > $D/control
	echo stop > $D/control
	reader_stop
	invariant_ok || { rmmod spulse; return 1; }
	# a new start finds no target: refused, still stopped
	echo start > $D/control 2>/dev/null && { log "start after exit accepted"; rmmod spulse; return 1; }
	[ "$(cat $D/control)" = stopped ] || { rmmod spulse; return 1; }
	rmmod spulse
}

# events=task without target_pid and a bad events= are refused at insmod
scenario_events_param_refused() {
	insmod $ko events=task 2>/dev/null && { rmmod spulse; return 1; }
	insmod $ko events=bogus 2>/dev/null && { rmmod spulse; return 1; }
	dmesg | grep -q 'events=task needs target_pid' &&
		dmesg | grep -q 'invalid events=bogus'
}

scenario_whole_system_thread_churn() {
	$busy 3 churn & pid=$!
	insmod $ko target_pid=0 freq=499 autostart=1 || return 1
	reader_start
	wait $pid
	echo stop > $D/control
	reader_stop
	save_streams whole_system_thread_churn
	invariant_ok || { rmmod spulse; return 1; }
	rmmod spulse
}

for s in record_target cpu_hotplug rmmod_while_recording_and_reading \
	 target_exec_and_exit whole_system_thread_churn \
	 task_events_threads task_events_idle_cpu task_events_target_exits \
	 events_param_refused \
	 offcpu_storm_target offcpu_storm_whole_system offcpu_storm_tiny_buffer \
	 offcpu_rmmod_during_storm; do
	log "--- $s"
	if scenario_$s; then report ok "$s"; else report "not ok" "$s"; fi
	# a failed scenario must not leave the module behind
	grep -q '^spulse ' /proc/modules && rmmod spulse
done

{
	echo "KTAP version 1"
	echo "1..1"
	echo "    KTAP version 1"
	echo "    # Subtest: spulse_e2e"
	echo "    1..$n"
	printf '%s' "$results"
	echo "ok 1 spulse_e2e"
} > "$ktap"
