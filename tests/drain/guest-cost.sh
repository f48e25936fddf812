# Guest side of tests/drain/cost-vm.sh: what spulse-drain costs while the
# real spulse.ko samples a 2-thread CPU-bound workload (gt: both threads
# burn) at FREQ Hz on the guest's 2 vCPUs.
# usage (via run-vm.sh): guest-cost.sh BUILD_DIR SECONDS FREQ MODE...
# MODE: NAME:WHERE:BIN[:ARG,ARG...] — WHERE tmp (spool in the guest's
# tmpfs, like a local disk) or out (the 9p share), BIN the drainer (path
# relative to BUILD_DIR), ARGs extra drainer options; the module is loaded
# afresh for each mode (a drainer must see the streams from their header);
# NAME perf adds `perf record -g` of the drainer, NAME strace `strace -c`
# (their CPU is then not a measurement). For each: /proc/PID/stat (and
# every thread's) at +3 s (start-up: open, kallsyms copy, start) and
# SECONDS later. Results: /out/cost.txt (key value lines).
. "$VM_LIB"
B=$1
SECS=$2
FREQ=$3
shift 3
R=/out/cost.txt
: >$R
echo "clk_tck $(hrun getconf CLK_TCK)" >>$R
"$B/workload/gt" 900 >/out/gt.out &
gt=$!
sleep 1
# ticks FILE: utime stime (fields 14, 15)
ticks() { sed 's/.*) //' "$1" | awk '{ print $12, $13 }'; }
kstat() { awk -v k="$1" '$1 == k { print $2; exit }' /sys/kernel/debug/spulse/stats; }
for m in "$@"; do
	name=$(echo "$m" | cut -d: -f1)
	where=$(echo "$m" | cut -d: -f2)
	bin=$(echo "$m" | cut -d: -f3)
	args=$(echo "$m" | cut -d: -f4- | tr , ' ')
	hrun /sbin/insmod "$VM_TOP/spulse.ko" target_pid=$gt freq=$FREQ autostart=0 ||
		{ echo "insmod failed" >>$R; exit 1; }
	if [ "$where" = tmp ]; then
		o=/tmp/cost-$name.spulse
	else
		o=$VM_OUT_HOST/cost-$name.spulse
	fi
	# shellcheck disable=SC2086
	chroot /host /usr/bin/env PATH=/usr/bin:/bin "$B/$bin" --control \
		-o "$o" --duration $((SECS + 6)) $args >/out/drain-$name.log 2>&1 &
	dp=$!
	sleep 3
	s0=$(kstat samples_written)
	t0=$(cut -d' ' -f1 /proc/uptime)
	cat /proc/$dp/stat >/out/$name.a
	for t in /proc/$dp/task/*; do
		echo "$(basename $t) $(ticks $t/stat) $(cut -d' ' -f1 $t/schedstat 2>/dev/null)"
	done >/out/$name.tasks.a
	case $name in
	perf*)	hrun timeout -s INT $SECS perf record -g -p $dp \
			-o /tmp/perf-$name.data >/dev/null 2>&1 ;;
	strace*) hrun timeout -s INT $SECS strace -c -f -p $dp \
			-o "$VM_OUT_HOST/strace-$name.txt" >/dev/null 2>&1 ;;
	*)	sleep $SECS ;;
	esac
	cat /proc/$dp/stat >/out/$name.b
	for t in /proc/$dp/task/*; do
		echo "$(basename $t) $(ticks $t/stat) $(cut -d' ' -f1 $t/schedstat 2>/dev/null)"
	done >/out/$name.tasks.b
	t1=$(cut -d' ' -f1 /proc/uptime)
	s1=$(kstat samples_written)
	wait $dp
	echo "$name.rc $?" >>$R
	echo "$name.startup $(ticks /out/$name.a)" >>$R
	echo "$name.end $(ticks /out/$name.b)" >>$R
	echo "$name.window_s $(echo "$t1 $t0" | awk '{ print $1 - $2 }')" >>$R
	echo "$name.window_samples $((s1 - s0))" >>$R
	# on-CPU ns of every thread (schedstat: the scheduler's exact runtime,
	# not tick sampling), summed; threads gone by then are not counted
	echo "$name.run_ns_a $(awk '{ s += $4 } END { print s + 0 }' /out/$name.tasks.a)" >>$R
	echo "$name.run_ns_b $(awk '{ s += $4 } END { print s + 0 }' /out/$name.tasks.b)" >>$R
	case $name in
	perf*)	hrun perf report -i /tmp/perf-$name.data --no-children --stdio \
			>/out/perf-$name.txt 2>&1
		hrun perf report -i /tmp/perf-$name.data --no-children --stdio \
			--sort dso,sym -g none >/out/perf-$name.flat.txt 2>&1 ;;
	esac
	rm -f /host/tmp/cost-$name.spulse*
	cat /sys/kernel/debug/spulse/stats >/out/kstats-$name.txt
	hrun /sbin/rmmod spulse
done
kill $gt 2>/dev/null
wait $gt
exit 0
