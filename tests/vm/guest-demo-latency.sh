# Guest side of `make demo-latency`: record build/workload/stall with
# spulse record --off-cpu as a flight recorder (keep 3 s, cut a dump when a
# thread is off CPU > 50 ms), and also one whole recording for comparison.
# usage (via run-vm.sh): guest-demo-latency.sh BINDIR SECONDS
. "$VM_LIB"
BIN=$1
secs=${2:-6}
cd /out
hrun "$BIN/spulse" record --module "$BIN/spulse.ko" -F 499 --off-cpu \
	--flight 3 --post 0.5 --trigger 'offcpu>50ms' \
	-o "$VM_OUT_HOST/stall.spulse" -- "$BIN/stall" "$secs" \
	> /out/flight.log 2>&1
echo $? > /out/flight.rc
hrun "$BIN/spulse" record --module "$BIN/spulse.ko" -F 499 --off-cpu \
	-o "$VM_OUT_HOST/whole.spulse" -- "$BIN/stall" "$secs" \
	> /out/whole.log 2>&1
echo $? > /out/whole.rc
dmesg > /out/dmesg.txt
exit 0
