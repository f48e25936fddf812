#!/bin/sh
# Guest side of suite nmi (tests/nmi/run.sh) on the debug kernel: the sample
# path driven from NMI context. x86 enters a kernel-mode debug exception
# like an NMI (exc_debug_kernel -> irqentry_nmi_enter), and a perf
# execute-breakpoint event's overflow handler runs from it: spulse.ko
# event=bp bp_symbol=F samples at every (freq-adjusted) entry of F.
# Raw results go to /out for the host's checks:
#   /out/bad-<case>.rc, /out/bad-<case>.dmesg   refused loads
#   /out/<phase>.spulse (+ .kallsyms), /out/<phase>.stats, /out/<phase>.drain.log
#   /out/phases.txt                             "phase NAME rc=.. key=.."
# Phases (whole system, offcpu=1 offcpu_min_us=0, spulse-drain --control
# with unwind tables, while pingpong switches, a loop forks and execs
# short-lived dynamic binaries (meta rescans, unwind table MAP/DEL) and a
# loop writes flush and trigger to control):
#   tick    write watchpoint on jiffies (jiffies_64): the NMI lands in the
#           tick's hardirq, jiffies_lock (raw) held and jiffies_seq open
#   fork    write watchpoint on total_forks: in copy_process() with
#           tasklist_lock write-held and IRQs off, the forking task's user
#           stack (busybox sh: no frame pointers, table unwinding)
#   inside  read/write watchpoint on tk_fast_mono: read by every
#           ktime_get_mono_fast_ns(), i.e. inside spulse's own off-CPU
#           probes (in __schedule, rq lock held) and trigger path, so the
#           NMI lands on a CPU whose busy flag is set and must drop, never
#           wait; and written inside the timekeeping update (timekeeper
#           lock held), where the sample path itself reads the clock
#   exec    execute breakpoint at pipe_read (pingpong's reads): x86 allows
#           kernel execute breakpoints only with CONFIG_KPROBES; elsewhere
#           the load must be refused with that reason
# usage (via run-vm.sh): guest.sh BIN SECS
#   BIN  host path with spulse.ko (built for this kernel), spulse-drain,
#        pingpong
. "$VM_LIB"
BIN=$1
SECS=$2
KO=$BIN/spulse.ko
D=/sys/kernel/debug/spulse
P=/out/phases.txt
: > $P

ins() { hrun /sbin/insmod "$KO" "$@"; }
unload() { hrun /sbin/rmmod spulse; }
# addr NAME: NAME's address in /proc/kallsyms (text symbols), 0x-prefixed
addr() { awk -v n="$1" '$3 == n && ($2 == "t" || $2 == "T") { print "0x" $1; exit }' /proc/kallsyms; }

echo "nmi: kernel $(uname -r) ($(uname -v))"
cat /proc/kallsyms > /out/kallsyms.txt
PR=$(addr pipe_read)
CF=$(addr copy_from_user_nmi)
echo "nmi: pipe_read=$PR copy_from_user_nmi=$CF"

# 1. refused loads: each must fail (insmod non-zero) with its dmesg line
bad() {
	name=$1
	shift
	dmesg -c > /dev/null
	ins "$@" > /out/bad-$name.out 2>&1
	echo $? > /out/bad-$name.rc
	dmesg > /out/bad-$name.dmesg
	[ -d /sys/module/spulse ] && unload
}
JF=$(awk '$3 == "jiffies" { print "0x" $1; exit }' /proc/kallsyms)
bad no_symbol event=bp
bad unknown_symbol event=bp bp_symbol=spulse_no_such_function bp_addr=$PR
bad wrong_addr event=bp bp_symbol=pipe_read bp_addr=$CF
bad mid_function event=bp bp_symbol=pipe_read bp_addr=$(printf '0x%x' $((PR + 1)))
bad without_bp bp_symbol=pipe_read bp_addr=$PR
bad bad_access event=bp bp_symbol=jiffies bp_addr=$JF bp_access=read
bad access_mismatch event=bp bp_symbol=jiffies bp_addr=$JF bp_access=x

# 2. the phases
hrun "$BIN/pingpong" -n 1000000000 > /out/pp.log 2>&1 &
for _ in $(seq 300); do
	grep -q '^pingpong pid' /out/pp.log 2>/dev/null && break
	sleep 0.1
done
PP=$(sed -n 's/^pingpong pid \([0-9]*\)$/\1/p' /out/pp.log)
echo "nmi: pingpong pid $PP"

# phase NAME SYMBOL ACCESS
phase() {
	name=$1 sym=$2 acc=$3
	at=$(awk -v n="$sym" '$3 == n { print "0x" $1; exit }' /proc/kallsyms)
	dmesg -c > /dev/null
	ins event=bp bp_symbol=$sym bp_addr=$at bp_access=$acc offcpu=1 offcpu_min_us=0
	rc=$?
	if [ $rc != 0 ]; then
		echo "phase $name insmod_rc=$rc" >> $P
		dmesg > /out/$name.dmesg
		return
	fi
	# short-lived dynamic processes: fork, exec/exit, meta rescans, table MAP/DEL
	( while :; do hrun /bin/true; hrun /bin/sh -c ':'; done ) > /dev/null 2>&1 &
	churn=$!
	# flushes (an IPI per CPU under its busy flag) and trigger marks
	( while :; do
		echo flush > $D/control
		echo trigger > $D/control
		sleep 0.2
	done ) > /dev/null 2>&1 &
	ctl=$!
	hrun "$BIN/spulse-drain" -o "$VM_OUT_HOST/$name.spulse" --control \
		--duration "$SECS" --unwind-cache "$VM_OUT_HOST/uwcache" \
		2> /out/$name.drain.log
	drc=$?
	kill $ctl $churn 2>/dev/null
	wait $ctl $churn 2>/dev/null
	cat $D/stats > /out/$name.stats
	unload
	urc=$?
	dmesg > /out/$name.dmesg
	echo "phase $name insmod_rc=0 drain_rc=$drc rmmod_rc=$urc" >> $P
}
phase tick jiffies w
phase fork total_forks w
phase inside tk_fast_mono rw
phase exec pipe_read x
kill "$PP" 2>/dev/null
wait
echo done >> $P
exit 0
