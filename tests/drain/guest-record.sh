# Guest side of suite record-vm: `spulse record` with the real spulse.ko.
# usage (via run-vm.sh): guest-record.sh BUILD_DIR
. "$VM_LIB"
B=$1
# 1. -- CMD: record loads the module (target_pid = the forked child),
#    releases the child, stops when it exits, unloads the module.
[ -e /sys/module/spulse ] && echo loaded >/out/cmd.before || echo unloaded >/out/cmd.before
hrun "$B/spulse" record -F 999 -o "$VM_OUT_HOST/cmd.spulse" -- "$B/workload/gt" 3 \
	>/out/cmd.out 2>&1
echo $? >/out/cmd.rc
[ -e /sys/module/spulse ] && echo loaded >/out/cmd.after || echo unloaded >/out/cmd.after
# 2. -p PID -d 2: attach to a running process for 2 s (it runs up to 600 s,
#    killed after: the table preload before start can take tens of seconds;
#    TCG on a shared machine can take seconds to start a dynamic binary).
"$B/workload/gt" 600 >/out/pid.gt &
gt=$!
sleep 1
hrun "$B/spulse" record -p $gt -d 2 -o "$VM_OUT_HOST/pid.spulse" >/out/pid.out 2>&1
echo $? >/out/pid.rc
echo $gt >/out/pid.pid
kill $gt 2>/dev/null
wait $gt
# 3. module already loaded (by insmod): record uses it and leaves it loaded.
"$B/workload/gt" 600 >/out/pre.gt &
gt=$!
sleep 1
hrun /sbin/insmod "$VM_TOP/spulse.ko" target_pid=$gt
hrun "$B/spulse" record -d 1 -o "$VM_OUT_HOST/pre.spulse" >/out/pre.out 2>&1
echo $? >/out/pre.rc
[ -e /sys/module/spulse ] && echo loaded >/out/pre.after || echo unloaded >/out/pre.after
hrun /sbin/rmmod spulse
kill $gt 2>/dev/null
wait $gt
# 4. --off-cpu: pingpong (two threads blocking in read) recorded with
#    off-CPU intervals (module loaded with offcpu=1 offcpu_min_us=0).
hrun "$B/spulse" record --off-cpu --offcpu-min-us 0 -o "$VM_OUT_HOST/oc.spulse" \
	-- "$B/workload/pingpong" -n 3000 >/out/oc.out 2>&1
echo $? >/out/oc.rc
# 5. --off-cpu --flight 2: a manual trigger through debugfs control, then
#    SIGUSR1 to spulse record 2 s later (> --min-gap 1 s), then Ctrl-C.
flight_round "$B" fl 2 2 2
echo $? >/out/fl.rc
# 6. --module-params sample_null=1 (debug): the events fire (seen, read
#    from stats mid-run) and nothing is sampled; then a value the module
#    refuses (n_subbufs=1): the load fails, record exits 1, nothing loaded.
#    The stats are read while the session runs: polled every 0.2 s (up to
#    60 s), kept from each read that says "state running", until seen
#    passes 100. A single read 1.5 s after the start came back empty: under
#    TCG on a loaded host record had not loaded the module yet (no stats
#    file). null.tries says how many reads it took.
(
	i=0
	while [ $i -lt 300 ]; do
		i=$((i + 1))
		if cat /sys/kernel/debug/spulse/stats >/tmp/null.try 2>/dev/null &&
			grep -q '^state running' /tmp/null.try; then
			cp /tmp/null.try /out/null.stats
			s=$(sed -n 's/^seen *\([0-9]*\).*/\1/p' /tmp/null.try)
			[ "${s:-0}" -gt 100 ] && break
		fi
		sleep 0.2
	done
	echo $i >/out/null.tries
) &
st=$!
hrun "$B/spulse" record --module-params "sample_null=1" -F 999 \
	-o "$VM_OUT_HOST/null.spulse" -- "$B/workload/gt" 3 >/out/null.out 2>&1
echo $? >/out/null.rc
wait $st
hrun "$B/spulse" record --module-params "n_subbufs=1" -o "$VM_OUT_HOST/bad.spulse" \
	-- /bin/true >/out/badp.out 2>&1
echo $? >/out/badp.rc
[ -e /sys/module/spulse ] && echo loaded >/out/badp.after || echo unloaded >/out/badp.after
dmesg >/out/dmesg.record
exit 0
