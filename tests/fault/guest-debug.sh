#!/bin/sh
# Guest side of the fault campaign, part 2: the KUnit debug kernel (KASAN,
# lockdep, UBSAN, KFENCE; busybox sh, run by tests/vm/run-vm.sh from
# tests/fault/run-fault.sh).
#
# usage: guest-debug.sh SPULSE_KO BUSY PIDREUSE HOTPLUG_ROUNDS [SCENARIO...]
#
# /out/rmmod-schedule (from the host): "INDEX DELAY_S OFFCPU" per line, one
# rmmod under load each. Every scenario writes /out/res/NAME ("ok TEXT" or
# "fail TEXT") as soon as it ends, and logs "fault: --- NAME" at level 3 to
# the console first, so the host attributes each kernel splat to the
# scenario that was running (and a scenario that crashed the guest has no
# result). Streams read while recording go to /out/streams/NAME/cpuN for
# the host's `spulse check`.
rounds=$4
D=/sys/kernel/debug/spulse
W=/tmp/fault
C1=/sys/devices/system/cpu/cpu1/online
mkdir -p $W /out/res
reader=
# run the module and the workload from the guest's tmpfs, not over 9p
cp "$1" $W/spulse.ko && cp "$2" $W/busy && cp "$3" $W/pidreuse ||
	{ echo "fault: copy failed"; exit 3; }
ko=$W/spulse.ko
busy=$W/busy
pidreuse=$W/pidreuse
shift 4
rm -rf /out/streams /out/res/*

log() { echo "fault: $*"; }
mark() { echo "<3>fault: --- $1" > /dev/kmsg; log "--- $1"; }
result() { echo "$2" > "/out/res/$1"; log "$1: $2"; }
stat() { awk -v k="$1" '$1 == k { print $2 }' $D/stats 2>/dev/null; }
loaded() { grep -q '^spulse ' /proc/modules; }

reader_start() {	# append every cpuN to $W/cpuN until reader_stop
	rm -f $W/cpu* $W/reader.stop
	(
		while [ ! -e $W/reader.stop ]; do
			for f in $D/cpu*; do
				[ -e "$f" ] || continue
				cat "$f" >> "$W/${f##*/}" 2>/dev/null
			done
			sleep 0.1
		done
	) &
	reader=$!
}
reader_stop() { touch $W/reader.stop; [ -z "$reader" ] || wait $reader 2>/dev/null; }
save_streams() {	# NAME: last read (if loaded), copy to /out/streams/NAME
	for f in $D/cpu*; do [ -e "$f" ] && cat "$f" >> "$W/${f##*/}" 2>/dev/null; done
	mkdir -p "/out/streams/$1"
	for f in $W/cpu*; do [ -s "$f" ] && cp "$f" "/out/streams/$1/"; done
}
invariant() {	# taken == written + dropped, taken > 0; prints the figures
	t=$(stat samples_taken); w=$(stat samples_written); d=$(stat samples_dropped)
	echo "taken=$t written=$w dropped=$d"
	[ -n "$t" ] && [ "$t" -gt 0 ] && [ "$t" -eq $((w + d)) ]
}
finish() {	# stop, save the streams as NAME, check invariant, rmmod -> text
	echo stop > $D/control
	sleep 0.2
	reader_stop
	save_streams "$1"
	if inv=$(invariant); then ok=1; else ok=0; fi
	rmmod spulse && [ ! -e $D ] || { echo "rmmod failed; $inv"; return 1; }
	echo "$inv"
	[ $ok -eq 1 ]
}

# 1. rmmod under load: whole-system recording (odd rounds with off-CPU
#    probes too) while busy churns threads and a reader drains; rmmod at the
#    scheduled moment; the module must go away cleanly every time.
rmmod_under_load() {
	$busy 100000 churn > /dev/null & bp=$!
	n=0 bad=0 msg=
	while read -r i delay oc; do
		n=$((n + 1))
		if ! insmod $ko target_pid=0 freq=999 offcpu=$oc autostart=1; then
			bad=$((bad + 1)); msg="$msg insmod#$i"; continue
		fi
		reader_start
		sleep "$delay"
		st=$(cat $D/control)
		rmmod spulse; rc=$?
		reader_stop
		if [ $rc -ne 0 ] || [ -e $D ] || [ "$st" != running ]; then
			bad=$((bad + 1)); msg="$msg round#$i(rc=$rc,state=$st)"
			loaded && rmmod spulse
		fi
		# keep the streams of the first rounds for the host's check
		[ $n -le 5 ] && save_streams rmmod_$i
	done < /out/rmmod-schedule
	kill $bp; wait $bp
	[ $bad -eq 0 ] && result rmmod_under_load "ok $n rmmods under load" ||
		result rmmod_under_load "fail $bad of $n:$msg"
}

# 2. CPU offline/online storm while recording a churning target (and, with
#    offcpu=1, the whole system): cpu1 goes down and up ROUNDS times.
hotplug_storm() {	# NAME TARGET(self|0) OFFCPU
	[ -w $C1 ] || { result $1 "fail no writable $C1"; return; }
	$busy 100000 churn > /dev/null & bp=$!
	[ "$2" = self ] && tgt=$bp || tgt=$2
	insmod $ko target_pid=$tgt freq=999 offcpu=$3 autostart=1 ||
		{ kill $bp; wait $bp; result $1 "fail insmod"; return; }
	reader_start
	j=0 errs=0
	while [ $j -lt $rounds ]; do
		echo 0 > $C1 || errs=$((errs + 1))
		sleep 0.1
		echo 1 > $C1 || errs=$((errs + 1))
		sleep 0.1
		j=$((j + 1))
	done
	[ "$(cat $C1)" = 1 ] || { echo 1 > $C1; errs=$((errs + 1)); }
	# what a failure needs to be understood: the module's view and the
	# target's threads, before the target and the module go
	why="state $(cat $D/control); threads $(ls /proc/$bp/task 2>/dev/null | wc -l);"
	why="$why $(grep -E '^(events|task_events|task_events_failed|target_exited|samples_expected|cpus_no_event|cpus_no_state) ' \
		$D/stats | tr '\n' ' ')"
	kill $bp; wait $bp
	if txt=$(finish $1) && [ $errs -eq 0 ]; then
		result $1 "ok $rounds offline/online rounds; $txt"
	else
		result $1 "fail $errs failed cpu1 writes; $txt; $why"
		dmesg | tail -n 20 | sed 's/^/fault: dmesg: /'
	fi
}

# 3. cpu1 going down and up while the module loads and unloads (the
#    relay_open / event creation walk over online CPUs)
hotplug_during_load() {
	[ -w $C1 ] || { result hotplug_during_load "fail no writable $C1"; return; }
	rm -f $W/hp.stop
	( while [ ! -e $W/hp.stop ]; do echo 0 > $C1; echo 1 > $C1; done ) 2>/dev/null &
	hp=$!
	n=0 ok=0
	while [ $n -lt $rounds ]; do
		n=$((n + 1))
		insmod $ko target_pid=0 freq=999 autostart=1 2>/dev/null || continue
		ok=$((ok + 1))
		sleep 0.2
		rmmod spulse || { loaded && rmmod spulse; }
	done
	touch $W/hp.stop; wait $hp
	echo 1 > $C1
	# a refused load (a CPU vetoed or gone) is allowed; a crash is not,
	# nor is a module left behind
	loaded && { rmmod spulse; result hotplug_during_load "fail module left loaded"; return; }
	[ $ok -gt 0 ] && result hotplug_during_load "ok $ok of $n loads recorded and unloaded" ||
		result hotplug_during_load "fail no load succeeded in $n"
}

# 4. target churn: exec, exit while recording, thread churn (target), and
#    fork/exec/exit of short processes (whole system)
churn_target() {	# NAME MODE SECONDS
	$busy $3 $2 > /dev/null & bp=$!
	insmod $ko target_pid=$bp freq=999 autostart=1 || { kill $bp; wait $bp; result $1 "fail insmod"; return; }
	reader_start
	wait $bp
	sleep 0.5	# recording on, the target gone
	[ "$(cat $D/control)" = running ] || log "$1: not running after the exit"
	txt=$(finish $1) && result $1 "ok $txt" || result $1 "fail $txt"
}
process_churn() {
	t0=$(date +%s)
	k=0
	while [ $k -lt 10 ]; do $busy 0.01 > /dev/null; k=$((k + 1)); done
	log "process_churn: 10 processes without the module in $(($(date +%s) - t0)) s"
	insmod $ko target_pid=0 freq=999 autostart=1 || { result process_churn "fail insmod"; return; }
	reader_start
	k=0
	while [ $k -lt 100 ]; do
		$busy 0.01 > /dev/null
		k=$((k + 1))
		[ $((k % 20)) -eq 0 ] && log "process_churn: $k processes"
	done
	txt=$(finish process_churn) && result process_churn "ok $k processes; $txt" ||
		result process_churn "fail $txt"
}

# 5. pid reuse: the target exits, its pid number is handed to a new process
#    ("reuse", a copy of busy) while the module is still loaded for it.
#    The module must not record the new process (the host looks for its
#    threads in the streams); no splat, clean unload.
pid_reuse() {
	[ -x "$pidreuse" ] || { result pid_reuse "fail no pidreuse helper"; return; }
	cp $busy $W/reuse
	pm=$(cat /proc/sys/kernel/pid_max)
	echo 512 > /proc/sys/kernel/pid_max ||
		{ result pid_reuse "fail cannot lower pid_max"; return; }
	# the target under a pid in [300, 450): after a wrap the kernel hands
	# out pids from 300 (RESERVED_PIDS) up to pid_max again
	# (output to a file: busy inherits it, a $(...) pipe would wait for it)
	$pidreuse range 300 450 $busy 100000 > $W/range.out ||
		{ echo $pm > /proc/sys/kernel/pid_max; result pid_reuse "fail no pid in range"; return; }
	r=$(cat $W/range.out)
	bp=${r% *}
	log "pid_reuse: target pid $bp after ${r#* } forks"
	insmod $ko target_pid=$bp freq=999 autostart=1 ||
		{ kill $bp; echo $pm > /proc/sys/kernel/pid_max; result pid_reuse "fail insmod"; return; }
	# no reader (it would fork and race for the pid): the buffers hold
	# these few seconds, read once at the end
	rm -f $W/cpu*
	reader=
	sleep 1
	kill $bp
	while [ -d /proc/$bp ]; do sleep 0.1; done
	# the same pid number for a new process, "reuse", spinning 2 s
	$pidreuse at $bp $W/reuse 2 > $W/at.out
	rc=$?
	r=$(cat $W/at.out)
	echo $pm > /proc/sys/kernel/pid_max
	[ $rc -eq 0 ] && [ "${r% *}" = "$bp" ] ||
		{ finish pid_reuse > /dev/null; result pid_reuse "fail pid $bp not reused ($r, rc $rc)"; return; }
	echo "$bp" > /out/res/pid_reuse.pid
	log "pid_reuse: stats after the reuse: $(grep -E '^(state|target_pid|samples_taken|samples_written) ' $D/stats | tr '\n' ' ')"
	# no "invariant": samples_taken may be 0 once the target is gone
	txt=$(finish pid_reuse)
	loaded && result pid_reuse "fail module left loaded; $txt" ||
		result pid_reuse "ok pid $bp reused after ${r#* } forks; $txt"
}

all="rmmod_under_load hotplug_storm_target hotplug_storm_whole_offcpu churn_exec
churn_threads churn_exit process_churn pid_reuse hotplug_during_load"
for sc in ${*:-$all}; do
	mark $sc
	case $sc in
	hotplug_storm_target) hotplug_storm $sc self 0 ;;
	hotplug_storm_whole_offcpu) hotplug_storm $sc 0 1 ;;
	churn_exec) churn_target $sc exec 3 ;;
	churn_threads) churn_target $sc churn 3 ;;
	churn_exit) churn_target $sc "" 3 ;;
	*) $sc ;;
	esac
	# a failed scenario must not leave the module behind
	loaded && rmmod spulse
done
# (hotplug_during_load last: a defect there can take the guest down)
mark end
exit 0
