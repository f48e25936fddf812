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
only=$(sed -n 's/.*spulse_e2e=\([a-z0-9_,]*\).*/\1/p' /proc/cmdline)

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

# Background reader: appends every cpuN relay file to $W/cpuN until stopped,
# reading as spulse-drain does (docs/DRAIN.md, "Reading"): only published
# sub-buffers (the file's size less where reading began, the stats' "read",
# less what was read since), never the one being written, where relay's
# read() races the writer. Partial ones are left to save_streams (after
# stop). The loop opens neither control nor stats: rmmod while reading.
reader_start() {
	rm -f $W/cpu* $W/reader.stop
	awk '$1 ~ /^cpu[0-9]+$/ && $12 == "read" { print $1, $13 }' $D/stats \
		> $W/reader.start 2>/dev/null
	(
		while [ ! -e $W/reader.stop ]; do
			for f in $D/cpu*; do
				[ -e "$f" ] || continue
				o=$W/${f##*/}
				s=$(awk -v c="${f##*/}" '$1 == c { print $2 }' $W/reader.start)
				h=0
				[ -e "$o" ] && h=$(command stat -c %s "$o")
				p=$(command stat -c %s "$f" 2>/dev/null) || continue
				k=$((p - ${s:-0} - h))
				[ "$k" -gt 0 ] && head -c "$k" "$f" >> "$o" 2>/dev/null
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

# save_meta NAME: the meta stream too (after save_streams NAME), for the
# host's resolution check (tests/kunit/e2e-resolve.py): it drains the
# directory into a spool and checks the samples of the pids listed in
# /out/e2e/NAME/resolve (first line: the check, then one pid a line)
save_meta() {
	cat $D/meta > "/out/e2e/$1/meta" 2>/dev/null
}

# meta_stats: the meta_* stats keys on one line
meta_stats() {
	grep '^meta_' $D/stats | tr '\n' ' '
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

# offcpu_ok: the off-CPU accounting adds up (key names from kmod/stats.c):
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

# the target outlives the load (insmod of the KASAN build is slow on a
# loaded host) and is killed once spulse.ko is gone
scenario_rmmod_while_recording_and_reading() {
	$busy 120 & pid=$!
	insmod $ko target_pid=$pid freq=999 autostart=1 || { kill $pid; wait $pid; return 1; }
	reader_start
	sleep 1
	[ "$(cat $D/control)" = running ] ||
		{ reader_stop; rmmod spulse; kill $pid; wait $pid; return 1; }
	rmmod spulse; rc=$?
	reader_stop
	kill $pid; wait $pid
	[ $rc -eq 0 ] && [ ! -e $D ]
}

scenario_target_exec_and_exit() {
	$busy 2 exec & pid=$!
	insmod $ko target_pid=$pid freq=499 autostart=1 || return 1
	reader_start
	wait $pid
	sleep 0.5	# target gone: the module stopped by itself
	ex=$(stat target_exited) st=$(stat state)
	log "after exit: state $st target_exited $ex"
	echo start > $D/control 2>/dev/null && { log "start accepted"; ex=0; }
	echo stop > $D/control
	reader_stop
	invariant_ok && [ "$ex" = 1 ] && [ "$st" = stopped ] ||
		{ rmmod spulse; return 1; }
	rmmod spulse
}

# the main thread pthread_exit()s, a worker spins until told to stop: once
# the leader is a zombie, the process must stay tracked (meta_processes 1)
# and the meta read meanwhile (meta.mid, the worker still running) must hold
# its modules and no process deactivation (checked on the host with every
# sample's user IP resolving)
scenario_zombie_leader() {
	z=/out/e2e/zombie_leader
	mkdir -p $z
	rm -f $W/zombie.stop
	$busy 120 zombie $W/zombie.stop & pid=$!
	insmod $ko target_pid=$pid freq=499 autostart=1 || { wait $pid; return 1; }
	reader_start
	st= i=0
	while [ $i -lt 50 ]; do	# startup is slow under TCG
		st=$(awk '$1 == "State:" { print $2 }' /proc/$pid/status 2>/dev/null)
		[ "$st" = Z ] && break
		i=$((i + 1))
		sleep 0.2
	done
	sleep 1	# full passes (every 200 ms) with the leader a zombie
	np=$(stat meta_processes)
	cat $D/meta > $z/meta.mid
	th=$(ls /proc/$pid/task 2>/dev/null | wc -l)	# zombie leader + worker
	log "leader state $st, threads $th, meta_processes $np"
	touch $W/zombie.stop
	wait $pid
	sleep 0.3
	echo stop > $D/control
	reader_stop
	save_streams zombie_leader
	{ cat $z/meta.mid; cat $D/meta; } > $z/meta
	printf 'alive\n%s\n' $pid > $z/resolve
	log "$(meta_stats)"
	invariant_ok && [ "$st" = Z ] && [ "$np" = 1 ] && [ "$th" -ge 2 ] ||
		{ rmmod spulse; return 1; }
	rmmod spulse
}

# a target spinning in anonymous executable code (JIT-like): every sample
# misses the module table and kicks the worker, but the mmap is walked again
# only when exec_vm/map_count change or every 2 s (meta_walks small,
# meta_walks_skipped growing); the misses were taken (meta_missed_taken)
scenario_jit_rescans_rate_limited() {
	$busy 4 jit & pid=$!
	insmod $ko target_pid=$pid freq=499 autostart=1 || { wait $pid; return 1; }
	reader_start
	wait $pid
	echo stop > $D/control
	reader_stop
	log "$(meta_stats)"
	# (invariant_ok sets t, w and d)
	wk=$(stat meta_walks); sk=$(stat meta_walks_skipped); mt=$(stat meta_missed_taken)
	invariant_ok && [ "$wk" -le 10 ] && [ "$sk" -ge 10 ] && [ "$mt" -ge 5 ] ||
		{ rmmod spulse; return 1; }
	rmmod spulse
}

# whole system: a loop of processes living ~20 ms each (fork + exec); the
# samples of every child resolve to its modules (checked on the host)
scenario_short_lived_whole_system() {
	insmod $ko target_pid=0 freq=499 autostart=1 || return 1
	reader_start
	$busy 4 short > $W/short.out
	rc=$?
	sleep 0.5
	echo stop > $D/control
	reader_stop
	save_streams short_lived
	save_meta short_lived
	{ echo resolved; awk '$1 == "child" { print $2 }' $W/short.out; } \
		> /out/e2e/short_lived/resolve
	log "$(tail -n1 $W/short.out); $(meta_stats)"
	invariant_ok && [ $rc -eq 0 ] || { rmmod spulse; return 1; }
	[ "$(stat meta_missed_taken)" -gt 0 ] || { log "no missed mm taken"; rmmod spulse; return 1; }
	rmmod spulse
}

# whole system: 300 live processes (each sampled for ~10 ms, then asleep),
# more than the 256 the meta worker tracks: idle ones are evicted (LRU) or
# the overflow is counted, never silently lost; the tables stay in bounds
scenario_meta_table_full() {
	insmod $ko target_pid=0 freq=499 autostart=1 || return 1
	reader_start
	$busy 300 many > $W/many.out
	rc=$?
	echo stop > $D/control
	reader_stop
	log "$(cat $W/many.out); $(meta_stats)"
	np=$(stat meta_processes); nm=$(stat meta_modules)
	ev=$(stat meta_processes_evicted); fu=$(stat meta_processes_full)
	invariant_ok && [ $rc -eq 0 ] && [ "$np" -le 256 ] && [ "$nm" -le 4096 ] &&
		[ $((ev + fu)) -gt 0 ] || { rmmod spulse; return 1; }
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
	# the target's exit stops recording by itself (its task events released)
	st=$(cat $D/control); te=$(stat target_exited)
	[ "$st" = stopped ] && [ "$te" = 1 ] ||
		{ log "after exit: state $st target_exited $te"; reader_stop; rmmod spulse; return 1; }
	echo flush > $D/control
	reader_stop
	invariant_ok || { rmmod spulse; return 1; }
	# a new start finds no target: refused, still stopped
	echo start > $D/control 2>/dev/null && { log "start after exit accepted"; rmmod spulse; return 1; }
	[ "$(cat $D/control)" = stopped ] || { rmmod spulse; return 1; }
	rmmod spulse
}

# events=task against a target that creates one thread after another and
# switches straight to each (pinned to one CPU) while start creates its
# events: every start must keep sampling. With the events created off and
# enabled afterwards, a thread created in between inherited an off copy and
# perf's context swap (parent <-> clone child) handed it to the creator:
# samples stopped for good (kmod/sample.c, spulse_event_create()).
scenario_task_events_fan_starts() {
	taskset 1 $busy 600 fan & pid=$!	# killed after the 8th start
	sleep 1
	insmod $ko target_pid=$pid freq=499 || { kill $pid; wait $pid; return 1; }
	ok=0 k=0 msg=
	while [ $k -lt 8 ]; do
		k=$((k + 1))
		echo start > $D/control || { ok=1; msg="$msg start#$k refused"; break; }
		sleep 0.5
		t1=$(stat samples_taken)
		sleep 0.5
		t2=$(stat samples_taken)
		echo stop > $D/control
		msg="$msg #$k:+$((t2 - t1))"
		[ $((t2 - t1)) -gt 0 ] || ok=1
	done
	log "samples in the second half second of each start:$msg"
	rmmod spulse
	kill $pid; wait $pid
	return $ok
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

# tests/kunit/relay_race.c: trigger batches written on CPU 0 into a tiny
# buffer (3 sub-buffers of 512 bytes) for 8 s while CPU 1 reads cpu0 with
# non-blocking reads and random pauses (caught up / full / switching): every
# accepted trigger is read exactly once (relay lost or replayed nothing)
scenario_relay_reader_races_writer() {
	race=${busy%/*}/relay_race
	[ -x "$race" ] || { log "no $race"; return 1; }
	sleep 60 & sl=$!
	insmod $ko target_pid=$sl max_user_depth=1 max_kernel_depth=1 \
		subbuf_size=512 n_subbufs=3 autostart=1 || { kill $sl; wait $sl; return 1; }
	echo stop > $D/control
	out=$($race $D/control $D/cpu0 8 $W/race-cpu0); rc=$?
	kill $sl; wait $sl
	tw=$(stat triggers_written); td=$(stat triggers_dropped)
	cpu0=$(grep '^cpu0 ' $D/stats)
	log "$out; kernel triggers_written=$tw triggers_dropped=$td; $cpu0"
	mkdir -p /out/e2e/relay_reader_races_writer
	cp $W/race-cpu0 /out/e2e/relay_reader_races_writer/cpu0 2>/dev/null
	rmmod spulse
	[ $rc -eq 0 ] || return 1
	# cpu0 taken T written W dropped D bytes B published P read R
	set -- $cpu0; kb=$9; kp=${11}; kr=${13}
	set -- $out	# relay_race: accepted A refused R found F bytes B end E
	[ "$3" -gt 0 ] && [ "$7" -eq "$3" ] && [ "$tw" -eq "$3" ] && [ "$td" -eq "$5" ] &&
		[ "${11}" = "$kb" ] && [ "$kp" = "$kb" ] && [ "$kr" = "$kb" ]
}

# CPU 1 goes offline and online continuously while spulse.ko is loaded
# (autostart) and unloaded 5 times: relay opens under cpus_read_lock, so
# every CPU online after insmod has its cpuN buffer (relay_no_buffer 0); no
# splat (lockdep checks the cpu_hotplug_lock -> relay_channels_mutex order)
scenario_cpu_hotplug_during_insmod() {
	c=/sys/devices/system/cpu/cpu1/online
	[ -w $c ] || { log "no $c"; return 1; }
	$busy 600 & pid=$!	# outlives the 5 loads (slow under KASAN)
	rm -f $W/hp.stop
	( while [ ! -e $W/hp.stop ]; do echo 0 > $c; echo 1 > $c; done ) & hp=$!
	ok=0
	for i in 1 2 3 4 5; do
		insmod $ko target_pid=$pid freq=999 autostart=1 || break
		sleep 0.3
		nb=$(stat relay_no_buffer)
		[ "$(cat $c)" = 1 ] && [ ! -e $D/cpu1 ] && { log "cpu1 online without cpu1 file"; nb=x; }
		rmmod spulse || break
		[ "$nb" = 0 ] || { log "load $i: relay_no_buffer=$nb"; break; }
		ok=$((ok + 1))
	done
	touch $W/hp.stop; wait $hp
	echo 1 > $c
	kill $pid; wait $pid
	log "hotplug during insmod: $ok of 5 loads clean"
	[ $ok -eq 5 ]
}

# relay memory per CPU above 256 MiB (subbuf_size * n_subbufs) is refused
# at insmod with -EINVAL and one dmesg line; nothing stays loaded
scenario_relay_memory_bound_refused() {
	insmod $ko subbuf_size=33554432 n_subbufs=9 2>/dev/null && { rmmod spulse; return 1; }
	grep -q '^spulse ' /proc/modules && return 1
	dmesg | tail -n 3 | grep -q 'spulse: invalid parameters: subbuf_size \* n_subbufs must be <= 256 MiB' ||
		{ log "no dmesg line: $(dmesg | tail -n 3)"; return 1; }
}

for s in relay_reader_races_writer relay_memory_bound_refused cpu_hotplug_during_insmod record_target cpu_hotplug rmmod_while_recording_and_reading \
	 target_exec_and_exit whole_system_thread_churn zombie_leader \
	 short_lived_whole_system meta_table_full jit_rescans_rate_limited \
	 task_events_threads task_events_idle_cpu task_events_target_exits \
	 task_events_fan_starts events_param_refused \
	 offcpu_storm_target offcpu_storm_whole_system offcpu_storm_tiny_buffer \
	 offcpu_rmmod_during_storm; do
	# KUNIT_APPEND=spulse_e2e=a,b runs only scenarios a and b
	case ,$only, in ,,|*,$s,*) ;; *) continue ;; esac
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
