# Guest side of `make bench-offcpu` (bench/vm/offcpu-run.sh): pingpong -n
# ROUNDS unprofiled, under spulse.ko offcpu=1 + spulse-drain, under
# `perf record -e sched:sched_switch -g` and under `perf sched record`, REPS
# times each in one boot, the modes interleaved in rotating order (rep i
# starts with mode i mod 4). One line per run in /out/offcpu.txt:
#   run rep=I mode=M s=WALL nvcsw=V nivcsw=I bytes=B [seen=N] [key=value...]
# s is pingpong's own clock of its round trips. The last repetition's
# outputs are copied to /out for the host-side counts.
# usage (via run-vm.sh): offcpu-guest.sh BIN ROUNDS REPS CPU FREQ SPULSE
#   BIN     host path of a directory with pingpong, spulse.ko, spulse-drain
#   CPU     vCPU to pin pingpong's threads to, or "" for no pinning
#   FREQ    spulse.ko freq= (on-CPU sampling) in spulse mode
#   SPULSE  1: run the spulse mode; 0: skip it (module without offcpu=)
. "$VM_LIB"
BIN=$1
N=$2
R=$3
CPU=$4
FREQ=$5
SPULSE=$6
D=/sys/kernel/debug/spulse
PP=/host$BIN/pingpong
PIN=
[ -n "$CPU" ] && PIN="-c $CPU"
res=/out/offcpu.txt
: > $res

fail() {
	echo "offcpu-guest: $*" >&2
	echo "error $*" >> $res
	exit 1
}

# pingpong's "done" line -> s=... nvcsw=... nivcsw=...
pp_result() {
	sed -n 's/^pingpong done [0-9]* round trips in \([0-9.]*\) s, [0-9]* switches\/s (nvcsw \([0-9]*\) nivcsw \([0-9]*\))$/s=\1 nvcsw=\2 nivcsw=\3/p' "$1"
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

# "perf record: Captured and wrote X MB FILE (N samples)" -> N
perf_samples() {
	sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$1" | tail -n 1
}

run_base() {
	$PP -n $N $PIN > /tmp/pp.log || fail "pingpong failed"
	r=$(pp_result /tmp/pp.log)
	[ -n "$r" ] || fail "no pingpong result (base)"
	echo "run rep=$1 mode=base $r bytes=0" >> $res
}

run_spulse() {
	$PP -g -n $N $PIN > /tmp/pp.log &
	pp=$!
	wait_for /tmp/pp.log "^pingpong pid" 30 || fail "pingpong did not start"
	chroot /host /sbin/insmod "$BIN/spulse.ko" target_pid=$pp offcpu=1 \
		offcpu_min_us=0 freq=$FREQ || fail "insmod spulse.ko offcpu=1 failed"
	# The spool goes to the guest's tmpfs, like perf.data.
	rm -f /host/tmp/offcpu.spulse
	chroot /host "$BIN/spulse-drain" --control -o /tmp/offcpu.spulse \
		2> /tmp/drain.log &
	drain=$!
	wait_for $D/control "^running" 30 || fail "spulse did not start"
	kill -USR1 $pp
	wait $pp || fail "pingpong failed under spulse"
	# the drainer's CPU time (utime + stime, 10 ms ticks)
	dcpu=$(awk '{ printf "%.2f", ($14 + $15) / 100 }' /proc/$drain/stat)
	kill -TERM $drain
	wait $drain
	drc=$?
	# every "key number" line of the module's stats, as spulse_key=number
	st=$(awk 'NF == 2 && $2 ~ /^[0-9]+$/ { printf " spulse_%s=%s", $1, $2 }' $D/stats)
	chroot /host /sbin/rmmod spulse || fail "rmmod spulse failed"
	r=$(pp_result /tmp/pp.log)
	[ -n "$r" ] || fail "no pingpong result (spulse)"
	echo "run rep=$1 mode=spulse $r bytes=$(wc -c < /host/tmp/offcpu.spulse) drain_rc=$drc drain_cpu_s=$dcpu$st" >> $res
	[ $drc -eq 0 ] || cat /tmp/drain.log >&2
	cp /host/tmp/offcpu.spulse /out/offcpu.spulse
}

# run_perf REP MODE FILE PERF-ARGS...
run_perf() {
	rep=$1 mode=$2 f=$3
	shift 3
	rm -f /host/tmp/$f
	hrun perf "$@" -o /tmp/$f -- $BIN/pingpong -n $N $PIN \
		> /tmp/pp.log 2> /tmp/perf.err || { cat /tmp/perf.err >&2; fail "perf $* failed"; }
	r=$(pp_result /tmp/pp.log)
	[ -n "$r" ] || fail "no pingpong result ($mode)"
	n=$(perf_samples /tmp/perf.err)
	echo "run rep=$rep mode=$mode $r bytes=$(wc -c < /host/tmp/$f) seen=${n:-0}" >> $res
	cp /host/tmp/$f /out/$f
}

run_mode() {
	case $2 in
	base) run_base $1 ;;
	spulse) run_spulse $1 ;;
	perfsw) run_perf $1 perfsw perf.data record -e sched:sched_switch -g ;;
	perfsched) run_perf $1 perfsched sched.data sched record ;;
	esac
}

# perf needs tracefs for the tracepoints' formats.
grep -q ' /host/sys/kernel/tracing ' /proc/mounts ||
	mount -t tracefs tracefs /host/sys/kernel/tracing || fail "cannot mount tracefs"
echo "kernel $(uname -r)" >> $res
echo "perf $(hrun perf --version 2>&1)" >> $res
echo "cpus $(grep -c ^processor /proc/cpuinfo)" >> $res
modes="base perfsw perfsched"
[ "$SPULSE" = 1 ] && modes="base spulse perfsw perfsched"
set -- $modes
nm=$#
$PP -n 1000 $PIN > /dev/null || fail "pingpong does not run" # warm the page cache
i=1
while [ $i -le $R ]; do
	k=0
	while [ $k -lt $nm ]; do
		j=$(( (i - 1 + k) % nm + 1 ))
		eval "m=\${$j}"
		echo "offcpu-guest: rep $i mode $m"
		run_mode $i $m
		k=$((k + 1))
	done
	i=$((i + 1))
done
echo done >> $res
cat $res
