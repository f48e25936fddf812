# Guest side of `make fault-stops` (tests/fault/run-stops.sh): ROUNDS times
# `spulse record --off-cpu --flight 2` on pingpong (a pipe ping-pong: the
# scheduler runs flat out), a debugfs trigger, SIGUSR1, then SIGINT: each
# round stops recording and unloads the module while the target switches.
# Every round logs "stops: round N rc R" to the kernel log (the host counts
# them and looks for soft lockups and RCU stalls on the console).
# usage (via run-vm.sh): guest-stops.sh BUILD_DIR ROUNDS
. "$VM_LIB"
B=$1
n=${2:-40}
i=0
while [ $i -lt $n ]; do
	i=$((i + 1))
	chroot /host /usr/bin/env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		"$B/spulse" record --off-cpu --flight 2 --post 0.5 --min-gap 1 \
		-o "$VM_OUT_HOST/fl$i.spulse" -- "$B/workload/pingpong" -n 1000000000 \
		>/out/fl$i.out 2>&1 &
	rp=$!
	for _ in $(seq 100); do
		hrun grep -q running /sys/kernel/debug/spulse/control 2>/dev/null && break
		sleep 0.1
	done
	sleep 1
	hrun sh -c 'echo trigger > /sys/kernel/debug/spulse/control'
	sleep 1.2
	kill -USR1 $rp
	sleep 1
	kill -INT $rp
	wait $rp
	echo "stops: round $i rc $?" > /dev/kmsg
	rm -f /out/fl$i*.spulse* /out/fl$i.out
done
exit 0
