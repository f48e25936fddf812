#!/bin/sh
# Guest script (busybox sh, tests/vm/run-vm.sh) of suite kmod-vm-target:
# the target process by its struct pid, and kernel lockdown. Raw results in
# /out (tg.*); tests/kmod/vm-target-check.sh asserts on them.
# usage: vm-target.sh BUILD_DIR [MODULE.ko]
. "$VM_LIB"
B=$1
KO=${2:-$VM_TOP/spulse.ko}
D=/sys/kernel/debug/spulse
ins() { chroot /host /sbin/insmod "$KO" "$@"; }
unload() { chroot /host /sbin/rmmod spulse; }
save() {	# PREFIX: the per-CPU streams
	for f in $D/cpu*; do cat "$f" > /out/$1.$(basename "$f"); done
}
spin_as() {	# PID: fork a busy shell that gets PID (ns_last_pid); echo its pid
	i=0
	while [ $i -lt 50 ]; do
		echo $(($1 - 1)) > /proc/sys/kernel/ns_last_pid
		(while :; do :; done) > /dev/null 2>&1 &
		s=$!
		[ "$s" -eq "$1" ] && { echo "$s"; return 0; }
		kill "$s"; wait "$s" 2>/dev/null
		i=$((i + 1))
	done
	echo "$s"
	return 1
}

# 1. the target exits: sampling stops, stats and dmesg say so, start is
#    refused, and a process that reuses the number is not sampled
/host$B/workload/gt 100 > /out/tg.exit.gt.log 2>&1 &
gt=$!
sleep 1
# (parameters refused: max_depth, offcpu_threads without offcpu, a thread id)
tid=$(ls /proc/$gt/task | grep -v "^$gt\$" | head -n 1)
for p in max_depth=600 offcpu_threads=10 target_pid=$tid; do
	ins "$p" > /dev/null 2>&1
	echo "tg badparam $p rc=$? loaded=$([ -d /sys/module/spulse ] && echo yes || echo no)"
	[ -d /sys/module/spulse ] && unload
done
ins target_pid=$gt autostart=1; echo "tg exit insmod rc=$?"
sleep 2
kill $gt; wait $gt
sleep 1
echo "tg exit control: $(cat $D/control)"
cat $D/stats > /out/tg.exit.stats
echo start > $D/control; echo "tg exit restart rc=$?"
r=$(spin_as $gt); echo "tg exit reuse pid $gt got $r"
sleep 2
cat $D/stats > /out/tg.exit.stats2
kill "$r"; wait "$r" 2>/dev/null
save tg.exit
unload; echo "tg exit rmmod rc=$?"

# 2. target_pid given inside a child pid namespace (insmod run there) names
#    that namespace's process: samples carry its global tgid
rm -f /out/tg.ns.vpid
chroot /host unshare -p --fork /bin/sh -c "
	$B/workload/gt 100 > $VM_OUT_HOST/tg.ns.gt.log 2>&1 &
	g=\$!
	echo \$g > $VM_OUT_HOST/tg.ns.vpid
	sleep 0.5
	/sbin/insmod $KO target_pid=\$g autostart=1
	echo \"tg ns insmod rc=\$?\"
	sleep 3
	echo stop > $D/control
	kill \$g
	wait \$g
" > /out/tg.ns.log 2>&1 &
ns=$!
i=0
while [ ! -s /out/tg.ns.vpid ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
v=$(cat /out/tg.ns.vpid)
G=$(awk -v v="$v" '/^Name:/ { n = $2 }
	/^NSpid:/ { if (n == "gt" && NF == 3 && $3 == v) print $2 }' \
	/proc/[0-9]*/status 2>/dev/null | head -n 1)
echo "tg ns vpid $v global $G"
wait $ns
cat /out/tg.ns.log
cat $D/stats > /out/tg.ns.stats
save tg.ns
# the stop came from inside the namespace while gt was alive: its last
# meta scan must still see gt (no deactivation of the live target)
cat $D/meta > /out/tg.ns.meta
unload; echo "tg ns rmmod rc=$?"

# 3. the target's number held by another process in a child pid namespace
#    is not the target
/host$B/workload/gt 100 > /out/tg.same.gt.log 2>&1 &
gt=$!
sleep 0.5
ins target_pid=$gt autostart=1; echo "tg same insmod rc=$?"
chroot /host unshare -p --fork /bin/sh -c "
	i=0
	while [ \$i -lt 50 ]; do
		echo $((gt - 1)) > /proc/sys/kernel/ns_last_pid
		(while :; do :; done) &
		s=\$!
		[ \$s -eq $gt ] && break
		kill \$s; wait \$s 2>/dev/null
		i=\$((i + 1))
	done
	echo \"tg same child-ns pid \$s\"
	sleep 3
	kill \$s
" > /out/tg.same.log 2>&1
cat /out/tg.same.log
echo stop > $D/control
cat $D/stats > /out/tg.same.stats
save tg.same
kill $gt; wait $gt 2>/dev/null
unload; echo "tg same rmmod rc=$?"

# 4. lockdown raised at run time (irreversible: last): debugfs refuses the
#    writable and mmap-able files, stats says why, and (unsigned module)
#    the kernel refuses a new load
ins; echo "tg lock insmod rc=$?"
L=/sys/kernel/security/lockdown
[ -e $L ] || mount -t securityfs securityfs /sys/kernel/security
echo "tg lock before: $(cat $L)"
echo integrity > $L; echo "tg lock raise rc=$?"
echo "tg lock after: $(cat $L)"
(echo start > $D/control) 2>/dev/null; echo "tg lock control rc=$?"
cat $D/cpu0 > /dev/null 2>&1; echo "tg lock cpu0 rc=$?"
cat $D/meta > /dev/null 2>&1; echo "tg lock meta rc=$?"
cat $D/stats > /out/tg.lock.stats; echo "tg lock stats rc=$?"
unload; echo "tg lock rmmod rc=$?"
ins > /dev/null 2>&1; echo "tg lock reload rc=$?"
dmesg > /out/tg.dmesg
grep -E 'spulse|Lockdown|WARN|BUG' /out/tg.dmesg
exit 0
