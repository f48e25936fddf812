# Guest side of `make demo`: record the ground-truth workload with spulse.ko
# + spulse-drain and leave /out/demo.spulse (+ .kallsyms).
# usage (via run-vm.sh): guest-demo.sh BUILD_DIR SECONDS
. "$VM_LIB"
B=$1
secs=${2:-8}
D=/sys/kernel/debug/spulse
# $B is the host path, bound at the same path in the guest (tests/vm/init.sh).
"$B/workload/gt" $((secs + 4)) &
gt=$!
sleep 1
chroot /host /sbin/insmod "$VM_TOP/spulse.ko" target_pid=$gt freq=999 || exit 1
chroot /host "$B/spulse-drain" -o "$VM_OUT_HOST/demo.spulse" &
drain=$!
sleep 1
echo start > $D/control
vm_log "recording gt (pid $gt) for ${secs}s"
sleep "$secs"
echo stop > $D/control
sleep 1
cat $D/stats > /out/stats
kill -TERM $drain
wait $drain
rc=$?
chroot /host /sbin/rmmod spulse
wait $gt
exit $rc
