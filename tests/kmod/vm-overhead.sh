#!/bin/sh
# Guest script: gt -n ROUNDS unprofiled vs under spulse.ko (target, 999 Hz,
# handler_ns = time spent in the sample handler;
# no drainer so only the in-kernel cost counts; the buffer is sized to hold
# the whole run). Prints the times; `make kmod-vm-overhead` runs it.
# usage: vm-overhead.sh BUILD_DIR [ROUNDS]
. "$VM_LIB"
B=$1
N=${2:-60}
KO=$VM_TOP/spulse.ko
D=/sys/kernel/debug/spulse
GT=/host$B/workload/gt
for i in 1 2 3; do
	$GT -n "$N" > /tmp/base.$i 2>&1
	echo "base $i: $(tail -n 1 /tmp/base.$i)"
	$GT -s 1 -n "$N" > /tmp/prof.$i 2>&1 &
	g=$!
	sleep 0.3
	chroot /host /sbin/insmod "$KO" target_pid=$g subbuf_size=1048576 \
		n_subbufs=16 autostart=1
	wait $g
	echo "spulse $i: $(tail -n 1 /tmp/prof.$i)"
	grep -E '^(samples_taken|samples_dropped|bytes_written|records_written|handler_ns)' $D/stats | tr '\n' ' '
	echo
	chroot /host /sbin/rmmod spulse
done
