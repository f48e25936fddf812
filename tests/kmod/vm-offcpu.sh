#!/bin/sh
# Guest script (busybox sh): spulse.ko offcpu=1 scenarios on the stock
# kernel; raw results under /out/oc.* for tests/kmod/vm-offcpu-check.sh.
# Run at the end of tests/kmod/vm-smoke.sh (suite kmod-vm), or alone:
#   make kmod-vm-offcpu
# usage: vm-offcpu.sh BUILD_DIR [MODULE.ko]
. "$VM_LIB"
B=$1
KO=${2:-$VM_TOP/spulse.ko}
D=/sys/kernel/debug/spulse
ins() { chroot /host /sbin/insmod "$KO" "$@"; }
unload() { chroot /host /sbin/rmmod spulse; }
running() {	# wait (<= 20 s) until recording runs
	i=0
	while [ "$(cat $D/control 2>/dev/null)" != running ] && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
# A ping-pong that switches flat out runs only while the module's probes
# stay registered: adding the first or removing the last probe of the
# scheduler's tracepoints (at the first start, at rmmod) patches
# __schedule(), and a TCG vCPU translating it in that window can keep a
# stale int3 for good, a QEMU bug that hangs both vCPUs (docs/VM.md,
# "Text patching under TCG"; make fault-stops FAULT_STOPS_KIND=loads).
hot_start() {
	/host$B/workload/pingpong -n 1000000 > /dev/null 2>&1 &
	pp=$!
}
hot_stop() {
	kill $pp 2>/dev/null
	wait $pp 2>/dev/null
}
save() {	# PREFIX: stats and every cpuN stream
	cat $D/stats > /out/$1.stats
	for f in $D/cpu*; do cat "$f" > /out/$1.$(basename "$f"); done
}

# 1. bad off-CPU parameters are refused with one reason line
for p in "offcpu=1 offcpu_threads=10" "offcpu=1 offcpu_threads=100000" \
	"offcpu=1 offcpu_min_us=60000001" "offcpu=1 subbuf_size=20000"; do
	ins $p > /dev/null 2>&1
	echo "oc-badparam $p rc=$? loaded=$([ -d /sys/module/spulse ] && echo yes || echo no)"
	[ -d /sys/module/spulse ] && unload
done

# 2. a target that sleeps: python3 time.sleep(0.01) x 300 (S, woken by the
#    hrtimer interrupt), traced with offcpu_min_us=0, plus a trigger mark
chroot /host /usr/bin/python3 -c 'import time
time.sleep(1)
for i in range(300):
    time.sleep(0.01)' &
py=$!
sleep 0.5
ins target_pid=$py offcpu=1 offcpu_min_us=0 freq=199 autostart=1
echo "oc-insmod sleeper rc=$?"
echo "oc-control: $(cat $D/control)"
sleep 1
echo trigger > $D/control; echo "oc-trigger rc=$?"
echo trig > $D/control 2>/dev/null; echo "oc-trigger garbage rc=$?"
wait $py
echo stop > $D/control
save oc.sleep
cat /proc/kallsyms > /out/oc.kallsyms
unload; echo "oc-rmmod sleeper rc=$?"

# 3. pingpong: two threads waking each other through pipes (wakers are
#    the other thread, in process context), default offcpu_min_us
#    (pingpong -g waits for SIGUSR1, sent once recording runs)
/host$B/workload/pingpong -n 5000 -g > /out/oc.pp.log 2>&1 &
pp=$!
sleep 0.3
ins target_pid=$pp offcpu=1 autostart=1; echo "oc-insmod pingpong rc=$?"
running
kill -USR1 $pp
wait $pp
echo stop > $D/control
save oc.pp
unload; echo "oc-rmmod pingpong rc=$?"

# 4. the same through spulse-drain (tag 9 records merged into one spool)
/host$B/workload/pingpong -n 5000 -g > /out/oc.ppd.log 2>&1 &
pp=$!
sleep 0.3
ins target_pid=$pp offcpu=1; echo "oc-insmod drain rc=$?"
(chroot /host $B/spulse-drain -o "$VM_OUT_HOST/oc.pp.spulse" --control \
	--duration 6 2> /out/oc.drain.log; echo "oc-drain rc=$?") &
dr=$!
running
kill -USR1 $pp
wait $pp
wait $dr
cat $D/stats > /out/oc.ppd.stats
unload; echo "oc-rmmod drain rc=$?"

# 5. whole system, tiny table and tiny buffer: no-slot and buffer-full
#    drops are counted, the identity still holds, streams stay valid
ins offcpu=1 offcpu_threads=64 offcpu_min_us=0 max_depth=16 \
	subbuf_size=8192 n_subbufs=2 autostart=1
echo "oc-insmod tiny rc=$?"
hot_start
sleep 3
echo stop > $D/control
save oc.tiny
hot_stop
unload; echo "oc-rmmod tiny rc=$?"

# 6. whole system, rmmod while recording (probes live, readers attached)
ins offcpu=1 autostart=1; echo "oc-insmod whole rc=$?"
hot_start
(while :; do cat $D/cpu0 > /dev/null 2>&1 || break; sleep 0.2; done) &
r=$!
sleep 2
echo flush > $D/control; echo "oc-flush rc=$?"
sleep 1
grep -E '^(offcpu|wakeups)_taken' $D/stats
hot_stop
unload; echo "oc-rmmod while recording rc=$?"
kill $r 2>/dev/null

# 6b. CPU hotplug while the off-CPU probes are live (whole system)
C1=/sys/devices/system/cpu/cpu1/online
ins offcpu=1 autostart=1; echo "oc-insmod hotplug rc=$?"
hot_start
sleep 1
echo 0 > $C1; echo "oc-cpu1 offline rc=$?"
sleep 1
echo 1 > $C1; echo "oc-cpu1 online rc=$?"
sleep 1
echo stop > $D/control
save oc.hp
hot_stop
unload; echo "oc-rmmod hotplug rc=$?"

# 7. offcpu=0 (default): no probes, nothing off-CPU counted
ins target_pid=$$ autostart=1; echo "oc-insmod off rc=$?"
sleep 1
echo stop > $D/control
cat $D/stats > /out/oc.off.stats
unload; echo "oc-rmmod off rc=$?"
dmesg > /out/oc.dmesg
exit 0
