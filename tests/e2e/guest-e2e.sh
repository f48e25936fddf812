# Guest side of the e2e suite (busybox sh in the test VM; see docs/VM.md).
# Runs every scenario in one boot and leaves raw results under /out/SCENARIO/
# for the host checker (tests/e2e/check_e2e.py). It asserts nothing itself.
#
# usage (via run-vm.sh): guest-e2e.sh BUILD_DIR
. "$VM_LIB"
B=$1
KO=$VM_TOP/spulse.ko
D=/sys/kernel/debug/spulse
DRAIN=$B/spulse-drain

ins() { chroot /host /sbin/insmod "$KO" "$@"; }
unload() { chroot /host /sbin/rmmod spulse; }
loaded() { [ -d /sys/module/spulse ]; }
ctl() { echo "$1" > $D/control; }
# Every dmesg line of the boot ends up in /out/dmesg.acc (checked for WARN/BUG).
dclear() { dmesg -c >> /out/dmesg.acc; }

# scenario gt: the ground-truth workload recorded with module + drainer,
# with a CPU-burning distractor process that must not be sampled.
scenario_gt() {
	o=/out/gt; mkdir -p $o
	$B/workload/gt 16 > $o/gt.log 2>&1 &
	gt=$!
	( while :; do :; done ) &
	busy=$!
	echo "$busy" > $o/distractor.pid
	sleep 1
	echo "$gt" > $o/gt.pid
	dclear
	ins target_pid=$gt freq=999; echo $? > $o/insmod.rc
	chroot /host "$DRAIN" -o "$VM_OUT_HOST/gt/gt.spulse" 2> $o/drain.log &
	drain=$!
	sleep 1
	ctl start; echo $? > $o/start.rc
	cat $D/control > $o/state.running
	sleep 6
	ctl stop; echo $? > $o/stop.rc
	sleep 1
	cat $D/stats > $o/stats
	kill -TERM $drain; wait $drain; echo $? > $o/drain.rc
	cat /proc/kallsyms > $o/kallsyms
	unload; echo $? > $o/rmmod.rc
	kill $busy
	wait $gt; echo $? > $o/gt.rc
	dmesg > $o/dmesg
}

# scenario badparam: each bad value fails insmod with one dmesg reason line.
scenario_badparam() {
	o=/out/badparam; mkdir -p $o
	sleep 1000 &
	s=$!
	for p in target_pid=999999 freq=0 event=bogus; do
		n=${p%%=*}
		dclear
		ins $p > $o/$n.out 2>&1; echo $? > $o/$n.rc
		if loaded; then echo loaded > $o/$n.state; unload; else echo absent > $o/$n.state; fi
		dmesg > $o/$n.dmesg
	done
	# a good load afterwards still works
	ins target_pid=$s; echo $? > $o/good.rc
	unload
	kill $s
}

# scenario control: garbage written to control is refused, state unchanged.
scenario_control() {
	o=/out/control; mkdir -p $o
	sleep 1000 &
	s=$!
	ins target_pid=$s; echo $? > $o/insmod.rc
	cat $D/control > $o/state0
	echo bogus > $D/control; echo $? > $o/bogus_stopped.rc
	cat $D/control > $o/state1
	ctl start
	cat $D/control > $o/state2
	echo startx > $D/control; echo $? > $o/bogus_running.rc
	cat $D/control > $o/state3
	ctl stop
	cat $D/control > $o/state4
	dclear
	unload
	kill $s
}

# scenario tiny: a tiny relay buffer with no drainer drops and counts; the
# spool drained afterwards is still valid.
scenario_tiny() {
	o=/out/tiny; mkdir -p $o
	$B/workload/gt 12 > $o/gt.log 2>&1 &
	gt=$!
	sleep 1
	# The smallest sub-buffer the module accepts at reduced depth limits.
	for sz in 4096 8192 16384 32768; do
		ins target_pid=$gt freq=4999 max_user_depth=32 max_kernel_depth=32 \
			subbuf_size=$sz n_subbufs=2 2>> $o/insmod.err
		rc=$?
		[ $rc -eq 0 ] && break
	done
	echo $rc > $o/insmod.rc
	echo "freq=4999 subbuf_size=$sz n_subbufs=2 max_user_depth=32 max_kernel_depth=32" > $o/params
	ctl start
	sleep 6
	ctl stop
	cat $D/stats > $o/stats
	chroot /host "$DRAIN" --once -o "$VM_OUT_HOST/tiny/tiny.spulse" 2> $o/drain.log
	echo $? > $o/drain.rc
	unload
	kill $gt; wait $gt
}

# scenario rmmod: rmmod while recording with the drainer attached is clean.
scenario_rmmod() {
	o=/out/rmmod; mkdir -p $o
	$B/workload/gt 12 > $o/gt.log 2>&1 &
	gt=$!
	sleep 1
	dclear
	ins target_pid=$gt; echo $? > $o/insmod.rc
	chroot /host "$DRAIN" -o "$VM_OUT_HOST/rmmod/rmmod.spulse" 2> $o/drain.log &
	drain=$!
	sleep 1
	ctl start
	sleep 3
	unload; echo $? > $o/rmmod.rc
	if loaded; then echo loaded > $o/state; else echo absent > $o/state; fi
	# The drainer must notice or at least stop on SIGTERM within 10 s.
	sleep 1
	kill -TERM $drain
	i=0
	while kill -0 $drain 2>/dev/null && [ $i -lt 20 ]; do sleep 0.5; i=$((i + 1)); done
	if kill -0 $drain 2>/dev/null; then
		echo hung > $o/drain.state; kill -KILL $drain
	else
		echo exited > $o/drain.state
	fi
	wait $drain; echo $? > $o/drain.rc
	kill $gt; wait $gt
	dmesg > $o/dmesg
}

rm -f /out/dmesg.acc /out/complete /out/missing
if [ ! -f "/host$KO" ]; then
	echo "e2e: no $KO" > /out/missing
fi
for s in gt badparam control tiny rmmod; do
	vm_log "scenario $s"
	loaded && unload
	scenario_$s
done
dclear
echo done > /out/complete
exit 0
