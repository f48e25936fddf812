# Guest side of bench-vm: the same fixed amount of work (gt -n ROUNDS)
# unprofiled, under spulse (module + drainer) and under perf record, REPS
# times each, in one boot. Writes key=value lines to /out/bench.txt.
# usage (via run-vm.sh): guest-bench.sh BUILD_DIR ROUNDS REPS
. "$VM_LIB"
B=$1
N=${2:-150}
R=${3:-2}
D=/sys/kernel/debug/spulse
GT=$B/workload/gt
res=/out/bench.txt
: > $res
elapsed() { sed -n 's/^gt done .* in \([0-9.]*\) s$/\1/p' "$1"; }

$GT -n 3 > /dev/null # warm the page cache
hrun perf --version > /dev/null 2>&1

i=1
while [ $i -le $R ]; do
	$GT -n $N > /tmp/base.log
	echo "base_s=$(elapsed /tmp/base.log)" >> $res

	# spulse: attach to the pid while gt sleeps before its timed work.
	$GT -n $N -s 4 > /tmp/sp.log &
	gt=$!
	sleep 0.2
	chroot /host /sbin/insmod "$VM_TOP/spulse.ko" target_pid=$gt freq=999
	# The spool goes to the guest's tmpfs, like perf.data: 9p writes would
	# charge spulse for the VM's file sharing.
	rm -f /host/tmp/bench.spulse
	chroot /host "$B/spulse-drain" -o /tmp/bench.spulse 2> /tmp/drain.log &
	drain=$!
	echo start > $D/control
	wait $gt
	echo stop > $D/control
	sleep 0.5
	# CPU time the drainer used (utime + stime, clock ticks of 10 ms)
	echo "drain_cpu_s=$(awk '{ printf "%.2f", ($14 + $15) / 100 }' /proc/$drain/stat)" >> $res
	kill -TERM $drain; wait $drain
	grep -E '^(samples_(taken|written|dropped)|handler_ns) ' $D/stats | sed 's/ /=/' | sed 's/^/spulse_/' >> $res
	chroot /host /sbin/rmmod spulse
	echo "spulse_s=$(elapsed /tmp/sp.log)" >> $res
	echo "spulse_bytes=$(wc -c < /host/tmp/bench.spulse)" >> $res
	cp /host/tmp/bench.spulse /out/bench.spulse

	# perf record -g (Debian linux-perf in the host root).
	hrun perf record -q -g -F 999 -e cpu-clock -o /tmp/perf.data -- $GT -n $N > /tmp/perf.log 2> /tmp/perf.err
	echo "perf_s=$(elapsed /tmp/perf.log)" >> $res
	echo "perf_bytes=$(wc -c < /host/tmp/perf.data)" >> $res
	echo "perf_samples=$(hrun perf script -i /tmp/perf.data -F event 2>/dev/null | grep -c cpu-clock)" >> $res
	i=$((i + 1))
done
cat $res
