#!/bin/sh
# Guest side of `make bench-rt` (bench/rt/run.sh): cyclictest's wakeup
# latency on Debian's PREEMPT_RT kernel while a context-switch storm runs,
# in each of MODES, REPS times each in ONE boot, the modes interleaved in
# rotating order (repetition i starts with the i-th mode):
#   base       nothing profiles the machine
#   spulse     spulse record (whole system, on-CPU sampling at FREQ Hz)
#   offcpu     spulse record --off-cpu --offcpu-min-us 0 (whole system)
#   perfsw     perf record -a -e sched:sched_switch -g (the anchor)
#   perfboth   perf record -a -g -e cpu-clock/freq=FREQ/ -e sched:sched_switch
#              (a second anchor doing what --off-cpu does: on-CPU samples
#              and the switches, all with stacks)
#   perfwake   perfboth + sched:sched_waking with stacks (a third anchor,
#              like for like: on-CPU samples, switches and wakers, each
#              with its stack, as spulse record --off-cpu takes them)
# In every mode the load is tests/workload/pingpong (two threads passing a
# byte over pipes: two voluntary switches per round trip, with wakeups
# across the pipes) and the measurement is
#   cyclictest -m -S -p 95 -i 1000 -D SECS -q -h 100000 --json FILE
# (one SCHED_FIFO thread per vCPU, pinned, 1 ms period), started once the
# profiler is recording and stopped before it. The JSON (histogram per
# thread in us) goes to /out/rep<I>-<MODE>.json; one line per run in
# /out/rt.txt:
#   run rep=I mode=M json=FILE prof_rc=RC [key=value...]
# usage (via run-vm.sh): guest.sh BIN SECS REPS FREQ MODES [KPARAMS]
#   KPARAMS  more spulse.ko parameters (spulse record --module-params)
#   BIN    host path of a directory with cyclictest, pingpong, spulse,
#          spulse.ko (built for this kernel)
. "$VM_LIB"
BIN=$1
SECS=$2
R=$3
FREQ=$4
MODES=$5
KPARAMS=${6:-}
D=/sys/kernel/debug/spulse
res=/out/rt.txt
: > $res

fail() {
	echo "rt-guest: $*" >&2
	echo "error $*" >> $res
	exit 1
}

# wait_for FILE PATTERN SECONDS: poll until FILE has PATTERN
wait_for() {
	t=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		t=$((t + 1))
		[ $t -le $(($3 * 10)) ] || return 1
		sleep 0.1
	done
}

# cyclictest for SECS into /out/rep$1-$2.json; its stdout/stderr in /out too
cyc() {
	hrun "$BIN/cyclictest" -m -S -p 95 -i 1000 -D "$SECS" -q -h 100000 \
		--json="$VM_OUT_HOST/rep$1-$2.json" > "/out/rep$1-$2.cyc" 2>&1
}

load_start() {
	hrun "$BIN/pingpong" -n 1000000000 > /tmp/pp.log 2>&1 &
	LOAD=$!
	wait_for /tmp/pp.log "^pingpong pid" 30 || fail "pingpong did not start"
	PPID_=$(sed -n 's/^pingpong pid \([0-9]*\)$/\1/p' /tmp/pp.log)
}

load_stop() {
	kill -TERM "$PPID_" 2>/dev/null
	wait $LOAD 2>/dev/null
}

run_one() {
	rep=$1 mode=$2 extra=
	load_start
	prc=0
	case $mode in
	base)
		cyc $rep $mode || extra="$extra cyc_rc=$?"
		;;
	spulse|offcpu)
		rm -f /host/tmp/rt.spulse /host/tmp/rt.spulse.kallsyms
		oc=
		[ $mode = offcpu ] && oc="--off-cpu --offcpu-min-us 0"
		# whole system; signals must reach spulse record itself (no hrun)
		chroot /host /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			"$BIN/spulse" record -F "$FREQ" $oc --module "$BIN/spulse.ko" \
			${KPARAMS:+--module-params "$KPARAMS"} \
			-o /tmp/rt.spulse > /tmp/rec.log 2>&1 &
		rec=$!
		ok=0
		for _ in $(seq 600); do
			grep -q '^running' $D/control 2>/dev/null && { ok=1; break; }
			kill -0 $rec 2>/dev/null || break
			sleep 0.1
		done
		if [ $ok = 1 ]; then
			sleep 1
			cyc $rep $mode || extra="$extra cyc_rc=$?"
			st=$(awk 'NF == 2 && $2 ~ /^[0-9]+$/ && ($1 ~ /^(handler_ns|seen)$/ || $1 ~ /^(offcpu_|wakeups_|early_|phase_)/) { printf " spulse_%s=%s", $1, $2 }' $D/stats)
			extra="$extra$st"
		else
			extra="$extra not_running=1"
		fi
		kill -INT $rec 2>/dev/null
		wait $rec
		prc=$?
		grep '^spulse record:' /tmp/rec.log | tail -n 1 | sed 's/^/rt-guest: /'
		[ $prc = 0 ] || tail -n 5 /tmp/rec.log >&2
		[ -d /sys/module/spulse ] && { chroot /host /sbin/rmmod spulse; extra="$extra left_loaded=1"; }
		[ -s /host/tmp/rt.spulse ] && extra="$extra bytes=$(wc -c < /host/tmp/rt.spulse)" &&
			cp /host/tmp/rt.spulse /out/$mode.spulse
		;;
	perfsw|perfboth|perfwake)
		pev="-e sched:sched_switch -g"
		# the second anchor: what spulse record --off-cpu does, in perf
		# (on-CPU samples at FREQ Hz and the switches, both with stacks)
		[ $mode = perfboth ] && pev="-g -e cpu-clock/freq=$FREQ/ -e sched:sched_switch"
		[ $mode = perfwake ] && pev="-g -e cpu-clock/freq=$FREQ/ -e sched:sched_switch -e sched:sched_waking"
		rm -f /host/tmp/perf.data /host/tmp/perf.ctl /host/tmp/perf.ack
		mkfifo /host/tmp/perf.ctl /host/tmp/perf.ack
		# started with its events off (-D -1); "enable" on the control
		# fifo turns them on, and the ack says it is done
		chroot /host /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			perf record -D -1 --control fifo:/tmp/perf.ctl,/tmp/perf.ack \
			-a $pev -o /tmp/perf.data \
			> /tmp/perf.log 2>&1 &
		rec=$!
		# (bounded: a perf that died before opening the fifos never answers)
		ack=$(timeout 120 sh -c 'echo enable > /host/tmp/perf.ctl &&
			read -r a < /host/tmp/perf.ack && echo "$a"')
		if [ "$ack" = ack ] && kill -0 $rec 2>/dev/null; then
			sleep 1
			cyc $rep $mode || extra="$extra cyc_rc=$?"
		else
			extra="$extra not_running=1"
		fi
		kill -INT $rec 2>/dev/null
		wait $rec
		prc=$?
		# perf record -a ends with 130 after the SIGINT that stops it
		[ $prc = 130 ] && prc=0
		n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' /tmp/perf.log | tail -n 1)
		extra="$extra perf_samples=${n:-0}"
		[ $prc = 0 ] || tail -n 5 /tmp/perf.log >&2
		cp /tmp/perf.log /out/rep$rep-$mode.log
		;;
	esac
	load_stop
	echo "run rep=$rep mode=$mode json=rep$rep-$mode.json prof_rc=$prc$extra" >> $res
}

# perf needs tracefs for the tracepoints' formats.
grep -q ' /host/sys/kernel/tracing ' /proc/mounts ||
	mount -t tracefs tracefs /host/sys/kernel/tracing || fail "cannot mount tracefs"
echo "kernel $(uname -r) realtime=$(cat /sys/kernel/realtime 2>/dev/null || echo 0)" >> $res
echo "uname_v $(uname -v)" >> $res
echo "perf $(hrun perf --version 2>&1)" >> $res
echo "cyclictest $(hrun "$BIN/cyclictest" --help 2>&1 | head -n 1)" >> $res
echo "cpus $(grep -c ^processor /proc/cpuinfo)" >> $res
rep_mode() {
	echo "rt-guest: rep $1 mode $2"
	run_one "$1" "$2"
}
# shellcheck disable=SC2086
interleave "$R" rep_mode $MODES
dmesg | grep -E 'BUG:|WARNING:|Oops|panic|spulse' | tail -n 40 > /out/dmesg-notes.txt
echo done >> $res
cat $res
