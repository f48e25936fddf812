#!/bin/sh
# Guest script: io_uring's io-wq workers under spulse.ko. For each module
# given (e.g. before/after a change), runs build/workload/iouring for 3 s
# with target_pid = its pid (the workers are threads of that process),
# stops, flushes and copies the cpuN streams to /out/NAME.cpuN.
# usage: vm-iouring.sh BUILD_DIR NAME=KO_PATH...
# (build the workload first: make $PWD/build/workload/iouring; check on the
# host with tests/kmod/vm-iouring-check.sh OUTDIR build/spulse NAME...)
. "$VM_LIB"
B=$1
shift
D=/sys/kernel/debug/spulse
IOU=/host$B/workload/iouring
for nk in "$@"; do
	name=${nk%%=*}
	ko=${nk#*=}
	$IOU 5 > /tmp/iou.out 2>&1 &
	g=$!
	sleep 0.5
	chroot /host /sbin/insmod "$ko" target_pid=$g subbuf_size=1048576 \
		n_subbufs=16 autostart=1
	wait $g
	echo stop > $D/control
	echo flush > $D/control
	for f in $D/cpu[0-9]*; do
		cat "$f" > "/out/$name.$(basename "$f")"
	done
	echo "$name: $(tail -n 1 /tmp/iou.out)"
	grep -E '^(samples_taken|samples_written|ustack_fp_steps|ustack_truncated|kstack_truncated)' $D/stats | tr '\n' ' '
	echo
	chroot /host /sbin/rmmod spulse
done
