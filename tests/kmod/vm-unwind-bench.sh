#!/bin/sh
# Guest script: handler_ns per sample with unwind tables vs the
# frame-pointer walk on the same frame-pointer-built workload (gt), in one
# boot, runs interleaved. The table is hand-made (tests/kmod/vm-unwind.py
# cfa_bp): N rows of the rule a frame-pointer body has (CFA = BP + 16, BP
# at CFA - 16), mapped over gt's text, so both walks read the same frames
# and the difference is the table lookup (hash, mapping and row binary
# searches) per frame.
#   make kmod-vm-unwind-bench [UNWIND_BENCH_ROWS=N]
# usage: vm-unwind-bench.sh BUILD_DIR ROWS [RUNS]
. "$VM_LIB"
B=$1
ROWS=${2:-4096}
RUNS=${3:-3}
KO=$VM_TOP/spulse.ko
D=/sys/kernel/debug/spulse
PY="chroot /host /usr/bin/python3 $VM_TOP/tests/kmod/vm-unwind.py"
ins() { chroot /host /sbin/insmod "$KO" "$@"; }
unload() { chroot /host /sbin/rmmod spulse; }

/host$B/workload/gt 900 > /out/gt.log 2>&1 &
gt=$!
sleep 1
i=0
while [ $i -lt "$RUNS" ]; do
	for mode in fp tables; do
		if [ $mode = fp ]; then
			ins target_pid=$gt unwind=fp
		else
			ins target_pid=$gt unwind=auto
			$PY $gt cfa_bp "$ROWS" > /dev/null
		fi
		echo start > $D/control; sleep 4; echo stop > $D/control
		echo "run $i $mode $(grep -E '^(samples_taken|handler_ns|ustack_[a-z_]+|unwind_rows) ' $D/stats | tr '\n' ' ')"
		unload
	done
	i=$((i + 1))
done
kill $gt
