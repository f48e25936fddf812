# Guest side of the fault campaign, part 1 (stock Debian kernel, busybox sh;
# run by tests/vm/run-vm.sh from tests/fault/run-fault.sh).
#
# usage: guest-stock.sh BUILD_DIR
#
# /out/schedule (written by the host) holds one kill per line:
# "INDEX KIND PHASE DELAY_S", KIND drain (spulse-drain on a module loaded
# with insmod ... autostart=1) or record (`spulse record -- gt`, which loads
# the module itself). The process is killed with SIGKILL DELAY_S after it
# started (PHASE start) or after its spool first holds data (PHASE data:
# mid-recording, whatever the start-up takes on a loaded machine); the
# spool, the kernel's stats and what happened are left in
# /out/kI.* for the host. Then one clean recording (the module must still
# load and record), then the full-disk scenarios on a small tmpfs.
. "$VM_LIB"
B=$1
D=/sys/kernel/debug/spulse
KO=$VM_TOP/spulse.ko
PATHS=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# children PID: the pids whose parent is PID
children() {
	for s in /proc/[0-9]*/stat; do
		read -r p _ _ pp _ < "$s" 2>/dev/null || continue
		[ "$pp" = "$1" ] && echo "$p"
	done
}

# gone PID...: wait up to 10 s for every PID to exit (not our children)
gone() {
	for p in "$@"; do
		for _ in $(seq 100); do
			[ -d /proc/$p ] || break
			sleep 0.1
		done
	done
}

unload() {	# rmmod if loaded; "rmmod rc N" into $1
	if grep -q '^spulse ' /proc/modules; then
		/sbin/rmmod spulse 2>>"$1"
		echo "rmmod rc $?" >>"$1"
	fi
}

echo "fault: kill campaign" > /dev/kmsg
# after PHASE: start -> now; data -> once the spool is not empty (or the
# process is gone, or 30 s), then note how long that took
after() {	# PHASE PID FILE
	[ "$1" = data ] || return 0
	t=0
	while [ ! -s "$3" ] && [ -d /proc/$2 ] && [ $t -lt 300 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	echo "data after $t ticks" >> $o.notes
}

while read -r i kind phase delay; do
	o=/out/k$i
	rm -f $o.*
	echo "$kind $phase $delay" > $o.what
	if [ "$kind" = drain ]; then
		"$B/workload/gt" 30 >/dev/null & g=$!
		if ! /sbin/insmod "$KO" target_pid=$g freq=999 autostart=1 2>$o.insmod; then
			echo "insmod failed" >> $o.notes
			kill $g; wait $g
			continue
		fi
		chroot /host /usr/bin/env $PATHS "$B/spulse-drain" \
			-o "$VM_OUT_HOST/k$i.spulse" >$o.out 2>&1 & d=$!
		after $phase $d /out/k$i.spulse
		sleep "$delay"
		kill -9 $d
		wait $d
		echo $? > $o.rc
		cat $D/stats > $o.stats 2>>$o.notes
		unload $o.notes
		kill $g
		wait $g
	else
		chroot /host /usr/bin/env $PATHS "$B/spulse" record -F 999 \
			-o "$VM_OUT_HOST/k$i.spulse" -- "$B/workload/gt" 30 \
			>$o.out 2>&1 & r=$!
		after $phase $r /out/k$i.spulse
		sleep "$delay"
		kids=$(children $r)
		kill -9 $r
		wait $r
		echo $? > $o.rc
		kids="$kids $(children 1 | while read -r p; do
			grep -qs '^gt$' /proc/$p/comm && echo $p; done)"
		[ -e $D/stats ] && cat $D/stats > $o.stats 2>>$o.notes
		# the module must be unloadable once its drainer is gone
		unload $o.notes
		for p in $kids; do kill -9 $p 2>/dev/null; done
		gone $kids
	fi
	grep -q '^spulse ' /proc/modules && echo "still loaded" >> $o.notes
	echo "$i done" >> /out/kills.done
done < /out/schedule

# The module is still usable: a complete recording after the campaign.
echo "fault: after campaign" > /dev/kmsg
hrun "$B/spulse" record -F 999 -o "$VM_OUT_HOST/after.spulse" -- \
	"$B/workload/gt" 2 >/out/after.out 2>&1
echo $? > /out/after.rc
grep -q '^spulse ' /proc/modules && echo loaded > /out/after.mod || echo unloaded > /out/after.mod

# Full disk: spulse-drain, then spulse record, writing to a 64 KiB tmpfs.
# Each must stop by itself with an error; the module must stay sane.
echo "fault: full disk" > /dev/kmsg
full=/tmp/full
mkdir -p /host$full
mount -t tmpfs -o size=64k tmpfs /host$full || echo "mount failed" > /out/full.notes
"$B/workload/gt" 60 >/dev/null & g=$!
/sbin/insmod "$KO" target_pid=$g freq=999 autostart=1
chroot /host /usr/bin/env $PATHS "$B/spulse-drain" --no-kallsyms \
	-o $full/drain.spulse >/out/fd.out 2>&1 & d=$!
t=0
while [ -d /proc/$d ] && [ $t -lt 300 ]; do sleep 0.1; t=$((t + 1)); done
if [ -d /proc/$d ]; then
	echo "still running after 30 s" > /out/fd.notes
	kill -9 $d
fi
wait $d
echo $? > /out/fd.rc
cp /host$full/drain.spulse /out/fd.spulse
df -k /host$full > /out/fd.df
{
	cat $D/stats > /out/fd.stats && echo "stats ok"
	echo stop > $D/control && echo "stop ok"
	echo "state $(cat $D/control)"
	echo start > $D/control && echo "start ok"
	echo "state $(cat $D/control)"
	sleep 0.5
	echo stop > $D/control && echo "stop ok"
	echo "state $(cat $D/control)"
	/sbin/rmmod spulse && echo "rmmod ok"
	[ -e $D ] && echo "debugfs left" || echo "debugfs gone"
} > /out/fd.sanity 2>&1
kill $g
wait $g
rm -f /host$full/*

# spulse record (loads the module itself, kallsyms copy on the same disk)
chroot /host /usr/bin/env $PATHS "$B/spulse" record -F 999 \
	-o $full/rec.spulse -- "$B/workload/gt" 60 >/out/fr.out 2>&1 & r=$!
t=0
while [ -d /proc/$r ] && [ $t -lt 300 ]; do sleep 0.1; t=$((t + 1)); done
kids=
if [ -d /proc/$r ]; then
	echo "still running after 30 s" > /out/fr.notes
	kids=$(children $r)
	kill -9 $r
fi
wait $r
echo $? > /out/fr.rc
cp /host$full/rec.spulse /out/fr.spulse 2>/dev/null
ls -l /host$full > /out/fr.ls
grep -q '^spulse ' /proc/modules && echo loaded > /out/fr.mod || echo unloaded > /out/fr.mod
left=$(children 1 | while read -r p; do grep -qs '^gt$' /proc/$p/comm && echo $p; done)
echo "$left" | grep -q . && echo "gt left running: $left" >> /out/fr.notes
for p in $kids $left; do kill -9 $p 2>/dev/null; done
unload /out/fr.notes
umount /host$full
dmesg > /out/dmesg.fault
exit 0
