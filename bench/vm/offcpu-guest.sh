# Guest side of `make bench-offcpu` (bench/vm/offcpu-run.sh): pingpong -n
# ROUNDS in each of MODES, REPS times each in one boot, the modes
# interleaved in rotating order (rep i starts with the i-th mode):
#   base       unprofiled
#   spulserec  spulse record --off-cpu --offcpu-min-us 0 -F FREQ -- pingpong
#   spulse     insmod spulse.ko target_pid= offcpu=1 offcpu_min_us=0 freq=FREQ
#              + spulse-drain --control (the module's stats are read before
#              rmmod)
#   perfsw     perf record -e sched:sched_switch -g -- pingpong
#   perfsched  perf sched record -- pingpong
# One line per run in /out/offcpu.txt:
#   run rep=I mode=M s=WALL nvcsw=V nivcsw=I bytes=B [seen=N] [key=value...]
# s is pingpong's own clock of its round trips. The last repetition's
# outputs are copied to /out for the host-side counts.
# usage (via run-vm.sh): offcpu-guest.sh BIN ROUNDS REPS CPU FREQ MODES [KPARAMS]
#   BIN     host path of a directory with pingpong, spulse.ko, spulse-drain,
#           spulse
#   CPU     vCPU to pin pingpong's threads to, or "" for no pinning
#   FREQ    spulse.ko freq= (on-CPU sampling) in the spulse modes
#   MODES   space-separated list of the modes above
#   KPARAMS extra spulse.ko parameters of the spulse mode (A/B experiments)
. "$VM_LIB"
BIN=$1
N=$2
R=$3
CPU=$4
FREQ=$5
MODES=$6
KPARAMS=${7:-}
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

# A failure in the spulse mode is recorded and ends that mode only, so the
# other modes still give their numbers.
spulse_fail() {
	echo "offcpu-guest: spulse mode: $*" >&2
	echo "error spulse mode (rep $rep): $* -- mode dropped" >> $res
	[ -n "$pp" ] && kill -KILL $pp 2>/dev/null
	[ -n "$drain" ] && kill -TERM $drain 2>/dev/null && wait $drain
	grep -q '^spulse ' /proc/modules && chroot /host /sbin/rmmod spulse
	tail -n 5 /tmp/drain.log >&2 2>/dev/null
	SPULSE_OFF=1
}

run_spulse() {
	rep=$1 pp= drain=
	[ -z "$SPULSE_OFF" ] || return 0
	$PP -g -n $N $PIN > /tmp/pp.log &
	pp=$!
	wait_for /tmp/pp.log "^pingpong pid" 30 || { spulse_fail "pingpong did not start"; return; }
	chroot /host /sbin/insmod "$BIN/spulse.ko" target_pid=$pp offcpu=1 \
		offcpu_min_us=0 freq=$FREQ $KPARAMS || { spulse_fail "insmod spulse.ko offcpu=1 failed"; return; }
	# The spool goes to the guest's tmpfs, like perf.data.
	rm -f /host/tmp/offcpu.spulse
	chroot /host "$BIN/spulse-drain" --control -o /tmp/offcpu.spulse \
		2> /tmp/drain.log &
	drain=$!
	wait_for $D/control "^running" 30 || { spulse_fail "spulse did not start"; return; }
	kill -USR1 $pp
	wait $pp || { pp=; spulse_fail "pingpong failed under spulse"; return; }
	pp=
	# the drainer's CPU time (utime + stime, 10 ms ticks)
	dcpu=$(awk '{ printf "%.2f", ($14 + $15) / 100 }' /proc/$drain/stat)
	kill -TERM $drain
	wait $drain
	drc=$?
	drain=
	# every "key number" line of the module's stats, as spulse_key=number
	st=$(awk 'NF == 2 && $2 ~ /^[0-9]+$/ { printf " spulse_%s=%s", $1, $2 }' $D/stats)
	chroot /host /sbin/rmmod spulse || { spulse_fail "rmmod spulse failed"; return; }
	r=$(pp_result /tmp/pp.log)
	[ -n "$r" ] || { spulse_fail "no pingpong result"; return; }
	[ $drc -eq 0 ] || { cat /tmp/drain.log >&2; echo "error spulse-drain exit $drc in rep $rep" >> $res; }
	echo "run rep=$rep mode=spulse $r bytes=$(wc -c < /host/tmp/offcpu.spulse) drain_rc=$drc drain_cpu_s=$dcpu$st" >> $res
	cp /host/tmp/offcpu.spulse /out/offcpu.spulse
}

# spulse record, the user's command: like perf record, it runs pingpong.
run_spulserec() {
	rep=$1
	[ -z "$SPULSEREC_OFF" ] || return 0
	rm -f /host/tmp/rec.spulse /host/tmp/rec.spulse.kallsyms
	if ! hrun $BIN/spulse record --off-cpu --offcpu-min-us 0 -F $FREQ \
		--module $BIN/spulse.ko -o /tmp/rec.spulse -- $BIN/pingpong -n $N $PIN \
		> /tmp/pp.log 2> /tmp/rec.err; then
		cat /tmp/rec.err >&2
		echo "error spulserec mode (rep $rep): spulse record failed: $(head -n 1 /tmp/rec.err) -- mode dropped" >> $res
		SPULSEREC_OFF=1
		grep -q '^spulse ' /proc/modules && chroot /host /sbin/rmmod spulse
		return 0
	fi
	r=$(pp_result /tmp/pp.log)
	# "spulse record: samples N, dropped D, file ..., off-CPU intervals I"
	sum=$(grep '^spulse record: samples' /tmp/pp.log)
	n=$(echo "$sum" | sed -n 's/.*off-CPU intervals \([0-9]*\).*/\1/p')
	smp=$(echo "$sum" | sed -n 's/^spulse record: samples \([0-9]*\),.*/\1/p')
	drp=$(echo "$sum" | sed -n 's/.*, dropped \([0-9a-z]*\),.*/\1/p')
	if [ -z "$r" ] || [ -z "$sum" ]; then
		echo "error spulserec mode (rep $rep): no pingpong result or no summary -- mode dropped" >> $res
		SPULSEREC_OFF=1
		return 0
	fi
	echo "run rep=$rep mode=spulserec $r bytes=$(wc -c < /host/tmp/rec.spulse) seen=${n:-0} rec_samples=${smp:-0} rec_dropped=${drp:-unknown} kallsyms_bytes=$(cat /host/tmp/rec.spulse.kallsyms 2>/dev/null | wc -c)" >> $res
	grep -q '^spulse record: .* stream errors' /tmp/pp.log &&
		echo "error spulserec rep $rep: $sum" >> $res
	cp /host/tmp/rec.spulse /out/rec.spulse
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
	# switches seen: the sched:sched_switch samples (perf report --stats)
	sw=$(hrun perf report -i /tmp/$f --stats 2>/dev/null |
		awk '/^sched:sched_switch stats:/ { getline; print $3 }')
	echo "run rep=$rep mode=$mode $r bytes=$(wc -c < /host/tmp/$f) seen=${sw:-0} perf_samples=${n:-0}" >> $res
	cp /host/tmp/$f /out/$f
}

run_mode() {
	case $2 in
	base) run_base $1 ;;
	spulse) run_spulse $1 ;;
	spulserec) run_spulserec $1 ;;
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
$PP -n 1000 $PIN > /dev/null || fail "pingpong does not run" # warm the page cache
rep_mode() {
	echo "offcpu-guest: rep $1 mode $2"
	run_mode "$1" "$2"
}
# shellcheck disable=SC2086
interleave "$R" rep_mode $MODES
echo done >> $res
cat $res
