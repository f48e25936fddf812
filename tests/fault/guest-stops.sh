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
	flight_round "$B" fl$i 1 1.2 1
	echo "stops: round $i rc $?" > /dev/kmsg
	rm -f /out/fl$i*.spulse* /out/fl$i.out
done
exit 0
