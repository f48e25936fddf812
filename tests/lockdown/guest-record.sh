#!/bin/sh
# Guest side of suite lockdown, boot 2 (tests/lockdown/run.sh): spulse.ko
# loaded, kernel lockdown raised, then a whole recording under lockdown by
# spulse record (no flags to say so): off-CPU, unwind tables and flight
# dumps (a manual trigger through /proc/spulse/control, then SIGUSR1).
# Raw results in /out for tests/lockdown/check.py.
# usage: guest-record.sh BIN   (as guest-switch.sh)
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
X=$1
KO=$X/spulse.ko
D=/sys/kernel/debug/spulse
P=/proc/spulse
L=/sys/kernel/security/lockdown
PY=/usr/bin/python3
echo "ld: kernel $(uname -r)"
hrun /sbin/insmod "$KO" offcpu=1 freq=499; echo "ld: insmod rc=$?"
[ -e $L ] || mount -t securityfs securityfs /sys/kernel/security
echo integrity > $L; echo "ld: raise rc=$?"
echo "ld: lockdown $(cat $L)"
hrun $PY "$X/probe.py" r $D/control $D/cpu0 $D/unwind > /out/debugfs.after

chroot /host /usr/bin/env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	"$X/spulse" record --no-load -v --flight 2 --post 0.5 --min-gap 1 \
	--unwind-cache "$VM_OUT_HOST/uwcache" \
	-o "$VM_OUT_HOST/fl.spulse" -- "$X/workload/pingpong" -n 1000000000 \
	> /out/record.out 2>&1 &
rec=$!
for _ in $(seq 200); do
	grep -q running $P/control 2>/dev/null && break
	sleep 0.1
done
echo "ld: control $(cat $P/control)"
sleep 1.5
echo trigger > $P/control; echo "ld: trigger rc=$?"
sleep 1.5
kill -USR1 $rec
sleep 1.5
cat $P/unwind > /out/unwind.txt
kill -INT $rec
wait $rec; echo "ld: record rc=$?"
cat $P/stats > /out/stats.final
hrun /sbin/rmmod spulse; echo "ld: rmmod rc=$?"
dmesg > /out/dmesg
exit 0
