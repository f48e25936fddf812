#!/bin/sh
# Guest script (busybox sh, tests/vm/run-vm.sh): exercise spulse.ko on the
# stock kernel and leave raw results in /out for the host to check.
#   make kmod-vm-smoke   (runs it and validates the streams on the host)
# usage: vm-smoke.sh BUILD_DIR [MODULE.ko]
. "$VM_LIB"
B=$1
KO=${2:-$VM_TOP/spulse.ko}
D=/sys/kernel/debug/spulse
ins() { chroot /host /sbin/insmod "$KO" "$@"; }
unload() { chroot /host /sbin/rmmod spulse; }

# 1. bad parameters and control garbage
for p in target_pid=999999 freq=0 event=bogus max_user_depth=2000 \
	subbuf_size=100 n_subbufs=1; do
	ins "$p" > /dev/null 2>&1
	echo "badparam $p rc=$? loaded=$([ -d /sys/module/spulse ] && echo yes || echo no)"
	[ -d /sys/module/spulse ] && unload
done

# relay buffers for every possible CPU over half the RAM (1 GiB VM, 2 CPUs:
# 4 x 64 MiB + the guard per CPU = 640 MiB) are refused at load
ins subbuf_size=67108864 n_subbufs=4 > /dev/null 2>&1
echo "badparam relay-total rc=$? loaded=$([ -d /sys/module/spulse ] && echo yes || echo no) cpus=$(grep -c '^processor' /proc/cpuinfo)"
[ -d /sys/module/spulse ] && unload

# 2. record the ground-truth workload
/host$B/workload/gt 90 > /out/gt.log 2>&1 &
gt=$!
sleep 1
ins target_pid=$gt freq=999
echo "insmod rc=$?"
ls -l $D
echo "control: $(cat $D/control)"
echo bogus > $D/control 2>/dev/null; echo "control bogus rc=$?"
echo "control after bogus: $(cat $D/control)"
echo start > $D/control; echo "start rc=$?"
echo "control: $(cat $D/control)"
sleep 5
echo flush > $D/control; echo "flush rc=$?"
sleep 1
echo stop > $D/control; echo "stop rc=$?"
cat $D/stats > /out/stats
cat /out/stats
for f in $D/cpu* $D/meta; do cat "$f" > /out/$(basename "$f"); done
ls -l /out
cat /proc/kallsyms > /out/kallsyms
unload; echo "rmmod rc=$?"

# 2b. the same through spulse-drain (and rmmod right after it stops)
ins target_pid=$gt; echo "insmod drain rc=$?"
chroot /host $B/spulse-drain -o "$VM_OUT_HOST/gt.spulse" --control \
	--duration 4 2> /out/drain.log; echo "drain rc=$?"
tail -n 2 /out/drain.log
head -n 14 $D/stats
unload; echo "rmmod drain rc=$?"

# 3. whole system, rmmod while recording with readers attached
ins freq=499 autostart=1; echo "insmod whole-system rc=$?"
(while :; do cat $D/cpu0 > /dev/null 2>&1 || break; sleep 0.2; done) &
r=$!
exec 3< $D/meta
sleep 3
head -n 14 $D/stats
unload; echo "rmmod while recording rc=$?"
cat <&3 > /dev/null 2>&1; echo "read meta after rmmod rc=$?"
exec 3<&-
kill $r 2>/dev/null
# 4. tiny buffer, nobody draining: drops are counted
ins target_pid=$gt max_user_depth=8 max_kernel_depth=8 subbuf_size=2048 \
	n_subbufs=2 autostart=1; echo "insmod tiny rc=$?"
sleep 3
echo stop > $D/control
cat $D/stats > /out/stats.tiny
head -n 14 /out/stats.tiny
cat $D/cpu0 > /out/tiny.cpu0
cat $D/cpu1 > /out/tiny.cpu1
unload; echo "rmmod tiny rc=$?"
kill $gt

# 5. exec: module records before, process deactivation, records after
/host$B/workload/execself 4 > /out/execself.log 2>&1 &
ex=$!
ins target_pid=$ex autostart=1; echo "insmod execself rc=$?"
wait $ex
sleep 1
echo stop > $D/control
cat $D/meta > /out/exec.meta
for f in $D/cpu*; do cat "$f" > /out/exec.$(basename "$f"); done
head -n 14 $D/stats
unload; echo "rmmod execself rc=$?"

# 6. python: a CPython interpreter (host's, dynamic) gets python enter/leave
chroot /host /usr/bin/python3 -c 'import time
t = time.time()
while time.time() - t < 3:
    pass' &
py=$!
sleep 0.5
ins target_pid=$py autostart=1; echo "insmod python rc=$?"
wait $py
sleep 1
echo stop > $D/control
cat $D/meta > /out/py.meta
for f in $D/cpu*; do cat "$f" > /out/py.$(basename "$f"); done
unload; echo "rmmod python rc=$?"

# 7. cycles without a PMU falls back to cpu-clock
ins event=cycles; echo "insmod cycles rc=$?"
grep '^event' $D/stats
unload; echo "rmmod cycles rc=$?"

# 8. CPU hotplug while recording (whole system)
C1=/sys/devices/system/cpu/cpu1/online
ins autostart=1; echo "insmod hotplug rc=$?"
sleep 1
echo 0 > $C1; echo "cpu1 offline rc=$?"
sleep 1
echo 1 > $C1; echo "cpu1 online rc=$?"
sleep 1
echo stop > $D/control
grep -E '^(samples_|cpu)' $D/stats
for f in $D/cpu*; do cat "$f" > /out/hp.$(basename "$f"); done
unload; echo "rmmod hotplug rc=$?"
dmesg > /out/guest-dmesg.txt
grep -E 'WARN|BUG|sleeping function|spulse' /out/guest-dmesg.txt

# 9. off-CPU (offcpu=1) scenarios: tests/kmod/vm-offcpu.sh, results in /out/oc.*
(set -- "$B" "$KO"; . "$VM_SCRIPT_DIR/vm-offcpu.sh")
exit 0
