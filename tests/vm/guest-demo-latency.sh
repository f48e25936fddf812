# Guest side of `make demo-latency`: record build/workload/stall with
# spulse record --off-cpu as a flight recorder (the options come from
# tests/vm/demo-latency.sh, which prints them), and also one whole
# recording for comparison.
# usage (via run-vm.sh): guest-demo-latency.sh BINDIR SECONDS RECORD_OPTION...
. "$VM_LIB"
BIN=$1
secs=${2:-6}
shift 2
cd /out
hrun "$BIN/spulse" record --module "$BIN/spulse.ko" "$@" \
	-o "$VM_OUT_HOST/stall.spulse" -- "$BIN/stall" "$secs" \
	> /out/flight.log 2>&1
echo $? > /out/flight.rc
hrun "$BIN/spulse" record --module "$BIN/spulse.ko" -F 499 --off-cpu \
	-o "$VM_OUT_HOST/whole.spulse" -- "$BIN/stall" "$secs" \
	> /out/whole.log 2>&1
echo $? > /out/whole.rc
dmesg > /out/dmesg.txt
exit 0
