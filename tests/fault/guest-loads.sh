# Guest side of `make fault-stops FAULT_STOPS_KIND=loads`
# (tests/fault/run-stops.sh): ROUNDS times, while two pipe ping-pongs keep
# the scheduler busy on both CPUs, load spulse.ko whole-system with
# offcpu=1 autostart=1 (the exec/exit probes are registered at load, the
# scheduler probes at the first start), record 0.5 s, rmmod (all of them
# unregistered): each round patches the scheduler's tracepoint sites while
# they run. Logs "stops: round N rc R" to the kernel log.
# usage (via run-vm.sh): guest-loads.sh BUILD_DIR ROUNDS
. "$VM_LIB"
B=$1
n=${2:-40}
KO=$VM_TOP/spulse.ko
/host$B/workload/pingpong -n 1000000000 > /dev/null 2>&1 &
p1=$!
/host$B/workload/pingpong -n 1000000000 > /dev/null 2>&1 &
p2=$!
i=0
while [ $i -lt $n ]; do
	i=$((i + 1))
	chroot /host /sbin/insmod "$KO" offcpu=1 autostart=1
	r=$?
	sleep 0.5
	chroot /host /sbin/rmmod spulse || r=$?
	echo "stops: round $i rc $r" > /dev/kmsg
done
kill $p1 $p2
exit 0
