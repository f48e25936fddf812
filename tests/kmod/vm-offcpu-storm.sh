#!/bin/sh
# Guest script: a context-switch storm with offcpu=1, meant for the KUnit
# debug kernel (KASAN, lockdep, DEBUG_ATOMIC_SLEEP; docs/KERNEL.md, "Verified
# on the debug kernel"): whole system and per target, pingpong pairs, a
# sleeper, triggers and flushes while recording, stop/start cycles, rmmod
# while the probes are live. Leaves /out/storm.* and /out/storm.dmesg.
# usage: vm-offcpu-storm.sh BUILD_DIR [MODULE.ko]
. "$VM_LIB"
B=$1
KO=${2:-$VM_TOP/spulse.ko}
D=/sys/kernel/debug/spulse
ins() { chroot /host /sbin/insmod "$KO" "$@"; }
unload() { chroot /host /sbin/rmmod spulse; }

/host$B/workload/pingpong -n 100000000 > /dev/null 2>&1 &
p1=$!
/host$B/workload/pingpong -n 100000000 > /dev/null 2>&1 &
p2=$!
(while :; do sleep 0.01; done) &
sl=$!

# whole system, all intervals, stop/start cycles, triggers and flushes
ins offcpu=1 offcpu_min_us=0 freq=499 autostart=1; echo "storm-insmod whole rc=$?"
for i in 1 2 3; do
	sleep 2
	echo trigger > $D/control; echo "storm-trigger $i rc=$?"
	echo flush > $D/control; echo "storm-flush $i rc=$?"
	echo stop > $D/control; echo "storm-stop $i rc=$?"
	echo start > $D/control; echo "storm-start $i rc=$?"
done
sleep 2
echo stop > $D/control
cat $D/stats > /out/storm.whole.stats
for f in $D/cpu*; do cat "$f" > /out/storm.whole.$(basename "$f"); done
unload; echo "storm-rmmod whole rc=$?"

# one target, tiny table and buffer (drop paths), rmmod while recording
ins target_pid=$p1 offcpu=1 offcpu_threads=64 max_depth=16 subbuf_size=8192 \
	n_subbufs=2 autostart=1; echo "storm-insmod tiny rc=$?"
sleep 3
grep -E '^(offcpu|wakeups)_' $D/stats | tr '\n' ' '; echo
unload; echo "storm-rmmod while recording rc=$?"

kill $p1 $p2 $sl 2>/dev/null
dmesg > /out/storm.dmesg
grep -E 'WARNING|BUG|sleeping function|lockdep|circular|KASAN' /out/storm.dmesg
echo "storm-done"
exit 0
