#!/bin/sh
# Guest script (tests/vm/run-vm.sh): the unwind-table path of spulse.ko on
# the stock kernel, with hand-made tables (tests/kmod/vm-unwind.py): parameters,
# refusals, a table of END rows (every user stack complete after the leaf)
# and of UNKNOWN rows (truncated), unwind=fp ignoring tables, DEL while
# recording, the memory bound, rmmod with tables loaded; dmesg clean.
#   make kmod-vm-unwind
# usage: vm-unwind-smoke.sh BUILD_DIR [MODULE.ko]
. "$VM_LIB"
B=$1
KO=${2:-$VM_TOP/spulse.ko}
D=/sys/kernel/debug/spulse
PY="chroot /host /usr/bin/python3 $VM_TOP/tests/kmod/vm-unwind.py"
ins() { chroot /host /sbin/insmod "$KO" "$@"; }
unload() { chroot /host /sbin/rmmod spulse; }
keys() { grep -E '^(samples_taken|unwind_[a-z_]+|ustack_[a-z_]+) ' $D/stats | tr '\n' ' '; echo; }
rec() {	# seconds label
	echo start > $D/control; sleep "$1"; echo stop > $D/control
	echo "stats $2: $(keys)"
}

for p in unwind=bogus unwind_mem_kb=0 unwind_mem_kb=4194305; do
	ins "$p" > /dev/null 2>&1
	echo "badparam $p rc=$? loaded=$([ -d /sys/module/spulse ] && echo yes || echo no)"
	[ -d /sys/module/spulse ] && unload
done

/host$B/workload/gt 900 > /out/gt.log 2>&1 &
gt=$!
sleep 1
ins target_pid=$gt unwind=tables; echo "insmod tables rc=$?"
ls -l $D/unwind
rec 2 tables-none
$PY garbage
$PY $gt end
cat $D/unwind
rec 3 tables-end
$PY del 1
$PY $gt unknown
rec 2 tables-unknown
echo start > $D/control
$PY del 1
sleep 1
echo stop > $D/control
echo "stats del-while-recording: $(keys)"
cat $D/unwind
unload; echo "rmmod rc=$?"

ins target_pid=$gt unwind=fp; echo "insmod fp rc=$?"
$PY $gt end
rec 2 fp-with-tables
unload; echo "rmmod fp rc=$?"

ins target_pid=$gt; echo "insmod auto rc=$?"
$PY $gt end
rec 2 auto-end
$PY del 1
$PY $gt none
rec 2 auto-none
# a process that exits loses its map set (tables stay)
/host$B/workload/gt 10 > /dev/null 2>&1 &
g2=$!
sleep 1
$PY $g2 end | grep '^map'
echo "exit-before $(grep -E '^(tables|processes) ' $D/unwind | tr '\n' ' ')"
wait $g2
sleep 1
echo "exit-after $(grep -E '^(tables|processes) ' $D/unwind | tr '\n' ' ')"
unload; echo "rmmod auto with tables rc=$?"

ins target_pid=$gt unwind_mem_kb=64; echo "insmod small rc=$?"
$PY big 1000
$PY big 10000
cat $D/unwind | head -n 10
unload; echo "rmmod small rc=$?"
kill $gt
dmesg > /out/dmesg
grep -E 'WARNING:|BUG:|Oops|sleeping function|circular locking|KASAN|UBSAN|KFENCE' /out/dmesg &&
	echo "dmesg: REPORTS" || echo "dmesg: clean"
