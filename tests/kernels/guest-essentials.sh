#!/bin/sh
# Guest side of the kernel matrix (tests/kernels/matrix.sh boot): the
# essentials of spulse.ko on one kernel, short. Raw results go to /out for
# tests/kernels/essentials-check.sh. Run by tests/vm/run-vm.sh --kernel-id.
# usage: guest-essentials.sh BIN   (BIN: host path holding spulse.ko,
#        spulse, spulse-drain, workload/gt, workload/pingpong)
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
X=$1
KO=$X/spulse.ko
D=/sys/kernel/debug/spulse
ins() { hrun /sbin/insmod "$KO" "$@"; }
unload() { hrun /sbin/rmmod spulse; }
# running: wait (up to 20 s) until the module's control file says so
running() {
	for _ in $(seq 200); do
		grep -q running $D/control 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# pid_of FILE NAME: the pid a workload prints first ("NAME pid N"), waited
# for (up to 30 s); hrun'd in the background, $! is the subshell's pid
pid_of() {
	for _ in $(seq 300); do
		p=$(sed -n "s/^$2 pid \([0-9]*\)$/\1/p" "$1" 2>/dev/null)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.1
	done
	echo "ess: $2 printed no pid" >&2
	echo 0
}
echo "ess: kernel $(uname -r)"

# 1. load and unload, nothing else
ins; echo "ess: load rc=$?"
[ -f $D/control ] && echo "ess: debugfs present" || echo "ess: debugfs missing"
unload; echo "ess: rmmod idle rc=$?"

# 2. on-CPU sampling of gt (user burn + read(2) in the kernel: mixed
#    stacks) drained by spulse-drain for 4 s; the module's stats after the
#    stop are the truth the spool's counts are checked against
# 600 s, killed after the drain: the drainer builds the target's unwind
# tables before it starts the module, which took over 50 s of a loaded
# host's TCG guest (a 60 s gt had exited by then: start refused, ESRCH)
hrun "$X/workload/gt" 600 > /out/gt.log 2>&1 &
gtsh=$!
gt=$(pid_of /out/gt.log gt)
ins target_pid=$gt freq=999; echo "ess: insmod sample rc=$?"
hrun "$X/spulse-drain" -o "$VM_OUT_HOST/sample.spulse" --control --duration 4 \
	--unwind-cache "$VM_OUT_HOST/uwcache" 2> /out/sample.drain.log
echo "ess: drain sample rc=$?"
cat $D/stats > /out/sample.stats
unload; echo "ess: rmmod sample rc=$?"
kill $gt 2>/dev/null
wait $gtsh 2>/dev/null

# 3. off-CPU: pingpong's two threads wake each other through pipes
#    (blocked in read: state S, the waker is the other thread)
hrun "$X/workload/pingpong" -n 3000 -g > /out/pp.log 2>&1 &
ppsh=$!
pp=$(pid_of /out/pp.log pingpong)
ins target_pid=$pp offcpu=1 offcpu_min_us=0; echo "ess: insmod offcpu rc=$?"
(hrun "$X/spulse-drain" -o "$VM_OUT_HOST/offcpu.spulse" --control --duration 5 \
	--no-unwind-tables 2> /out/offcpu.drain.log; echo "ess: drain offcpu rc=$?") &
dr=$!
running || echo "ess: offcpu recording did not start"
kill -USR1 $pp
wait $ppsh
echo "ess: pingpong rc=$?"
wait $dr
cat $D/stats > /out/offcpu.stats
unload; echo "ess: rmmod offcpu rc=$?"

# 4. flight recorder through spulse record: a manual trigger, SIGUSR1,
#    then Ctrl-C (guest-lib.sh flight_round)
FR_MODULE=$KO flight_round "$X" fl 1.5 1.5 1.5
echo "ess: flight rc=$?"
[ -d /sys/module/spulse ] && echo "ess: loaded after record" || echo "ess: unloaded after record"

dmesg > /out/ess.dmesg
exit 0
