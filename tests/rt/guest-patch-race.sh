#!/bin/sh
# Guest side of tests/rt/patch-race.sh: ROUNDS times, while two pipe
# ping-pongs switch flat out on both vCPUs, take CPU 1 offline and online
# again, then patch the context-switch path's text:
#   spulse   insmod spulse.ko target_pid=<pingpong> offcpu=1 autostart=1,
#            0.3 s, rmmod (task-mode perf events flip perf_sched_events;
#            the sched_switch/wakeup probes patch __schedule's tracepoint
#            sites; exec/exit tracepoints at load and rmmod)
#   kernel   no spulse.ko anywhere: perf-flip (a per-task perf event held
#            0.3 s: perf_sched_events on, off about 1 s later) and 3 times
#            tracefs sched_switch + sched_wakeup enable, 0.1 s, disable
#            (the same sites, patched by the kernel alone)
#   hotplug  hotplug only, nothing patched (control)
# Prints "race: round N" per round (guest.log and /dev/kmsg) and
# "race: finished N" at the end.
# usage (via run-vm.sh): guest-patch-race.sh BIN MODE ROUNDS
#   BIN: host path holding spulse.ko (mode spulse), perf-flip, pingpong
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
X=$1
MODE=$2
N=$3
C1=/sys/devices/system/cpu/cpu1/online
T=/sys/kernel/tracing
case $MODE in
spulse|kernel|hotplug) ;;
*) echo "race: unknown mode $MODE"; exit 2 ;;
esac
if [ "$MODE" = kernel ]; then
	[ -d $T/events ] || mount -t tracefs nodev $T || { echo "race: no tracefs"; exit 2; }
	[ -f $T/events/sched/sched_switch/enable ] || { echo "race: no sched_switch event"; exit 2; }
fi
cat /proc/kallsyms > /out/kallsyms
echo "race: kernel $(uname -r) mode $MODE rounds $N"
/host$X/pingpong -n 1000000000 > /dev/null 2>&1 &
p1=$!
/host$X/pingpong -n 1000000000 > /dev/null 2>&1 &
p2=$!
i=0
while [ $i -lt "$N" ]; do
	i=$((i + 1))
	echo 0 > $C1 || echo "race: round $i offline failed"
	echo 1 > $C1 || echo "race: round $i online failed"
	case $MODE in
	spulse)
		hrun /sbin/insmod "$X/spulse.ko" target_pid=$p1 offcpu=1 autostart=1 ||
			echo "race: round $i insmod failed"
		sleep 0.3
		hrun /sbin/rmmod spulse || echo "race: round $i rmmod failed" ;;
	kernel)
		/host$X/perf-flip 300 &
		f=$!
		for _ in 1 2 3; do
			echo 1 > $T/events/sched/sched_switch/enable
			echo 1 > $T/events/sched/sched_wakeup/enable
			sleep 0.1
			echo 0 > $T/events/sched/sched_switch/enable
			echo 0 > $T/events/sched/sched_wakeup/enable
		done
		wait $f || echo "race: round $i perf-flip failed" ;;
	hotplug)
		sleep 0.3 ;;
	esac
	echo "race: round $i" > /dev/kmsg
	echo "race: round $i"
done
kill $p1 $p2
echo "race: finished $i"
exit 0
