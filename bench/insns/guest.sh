# Guest side of `make bench-insns` (bench/insns/run.sh), run by
# tests/vm/run-vm.sh under QEMU with the instruction-counting plugin
# (bench/insns/insns.c, one TCG thread). Every run executes four markers
# (the instruction xchg %bx,%bx; the plugin snapshots its counts at each):
#
#   pre    this script, before the command (closes the gap: warm-ups,
#          bookkeeping)
#   start  markrun (bench/insns/markrun.c), the profiled command, just
#          before it execs the workload in its own pid: the profiler's
#          start-up is over
#   done   markrun's watcher, as soon as the workload has exited
#   end    this script, after the profiler (or the bare workload) exited
#
# so the plugin's snapshots at start, done and end hold the command's
# start-up, the workload's own run (the window) and the teardown. Each
# marker's label goes to /tmp/marks.txt (builtins only: the same cost in
# every run); the plugin numbers snapshots in order, the host pairs them.
# Runs, REPS repetitions interleaved in rotating order (rep i starts with
# the i-th run of the list), for WL in WORKLOADS and each of its lengths:
#   gt  build/workload/gt -n ROUNDS (2 frame-pointer threads)
#   py  /usr/bin/python3 -I -S pywork.py ROUNDS (no frame pointers)
#   pp  pingpong -n ROUNDS -c 1 (context-switch storm; off-CPU modes)
# MODE (gt, py):
#   base  unprofiled
#   sp    spulse record -F 999
#   pg    perf record -g -F 999 -e cpu-clock
#   pn    perf record -F 999 -e cpu-clock          (no stacks)
#   sn    spulse record -F 999 --module-params sample_null=1 (samples: the
#         module's "seen", from its stats copied by markrun as the
#         workload exits)
#   pd    perf record --call-graph dwarf -F 999 -e cpu-clock
# MODE (pp): base; so spulse record --off-cpu --offcpu-min-us 0 -F 1 (the
#   on-CPU sampler idles, as bench-offcpu); ps perf record -e
#   sched:sched_switch -g; pS perf sched record
# One line per run in /out/runs.txt:
#   run rep=I wl=W mode=M len=L rc=R samples=N bytes=B switches=S work_s=T
#
# usage (via run-vm.sh): guest.sh BIN REPS WORKLOADS GT_LENS PY_LENS PP_LENS
#                                 MODES PP_MODES
#   BIN  host path of a directory with gt, pingpong, pywork.py, spulse,
#        spulse.ko, mark, markrun (copied into the guest's tmpfs first)
. "$VM_LIB"
BIN=$1
R=$2
WLS=$3
GT_LENS=$4
PY_LENS=$5
PP_LENS=$6
MODES=$7
PP_MODES=$8
B=/tmp/b		# inside chroot /host; /host/tmp/b in the guest root
GB=/host$B
res=/out/runs.txt
: > $res
: > /tmp/marks.txt

fail() {
	echo "guest-insns: $*" >&2
	echo "error $*" >> $res
	cp /tmp/marks.txt /out/marks.txt
	exit 1
}

mkdir -p $GB /host/tmp/uwc /host/tmp/ksc
cp /host$BIN/gt /host$BIN/pingpong /host$BIN/pywork.py /host$BIN/spulse \
	/host$BIN/spulse.ko /host$BIN/mark /host$BIN/markrun $GB/ || fail "cannot copy the binaries"

# as bench-vm: neither profiler throttled by perf's interrupt-time watchdog
echo 100000 > /proc/sys/kernel/perf_event_max_sample_rate
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent

# mark LABEL: one marker instruction, then its label (builtins only)
mark() {
	$GB/mark
	echo "$1" >> /tmp/marks.txt
}

wl_cmd() {
	case $1 in
	gt) echo "$B/gt -n $2" ;;
	py) echo "/usr/bin/python3 -I -S $B/pywork.py $2" ;;
	pp) echo "$B/pingpong -n $2 -c 1" ;;
	esac
}

SP="$B/spulse record -F 999 --module $B/spulse.ko --unwind-cache /tmp/uwc --kallsyms-cache /tmp/ksc -o /tmp/sp.spulse"
pre_cmd() {
	case $1 in
	base) echo "" ;;
	sp) echo "$SP --" ;;
	sn) echo "$SP --module-params sample_null=1 --" ;;
	so) echo "$B/spulse record -F 1 --off-cpu --offcpu-min-us 0 --module $B/spulse.ko --kallsyms-cache /tmp/ksc -o /tmp/sp.spulse --" ;;
	pg) echo "perf record -g -F 999 -e cpu-clock -o /tmp/perf.data --" ;;
	pn) echo "perf record -F 999 -e cpu-clock -o /tmp/perf.data --" ;;
	pd) echo "perf record --call-graph dwarf -F 999 -e cpu-clock -o /tmp/perf.data --" ;;
	ps) echo "perf record -e sched:sched_switch -g -o /tmp/perf.data --" ;;
	pS) echo "perf sched record -o /tmp/perf.data --" ;;
	esac
}

# run REP WL MODE LEN [nomark]
run() {
	rep=$1 wl=$2 mode=$3 len=$4
	tag="rep=$rep wl=$wl mode=$mode len=$len"
	w=$(wl_cmd $wl $len)
	pre=$(pre_cmd $mode)
	# the warm-up's spulse runs wait for every table (no --unwind-wait
	# bound): a short warm-up whose recording ended while a table was still
	# being built left it uncached, and a measured run built it in its
	# window (python3 len 1000 rep 1: +32M user instructions, once)
	case $5:$mode in nomark:s*) pre="${pre% --} --unwind-wait 0 --" ;; esac
	rm -f /host/tmp/sp.spulse /host/tmp/sp.spulse.kallsyms /host/tmp/perf.data /tmp/err.txt
	rm -f /host/tmp/stats.txt /host/tmp/markrun.flag
	cp=
	case $mode in s*) cp="-c /sys/kernel/debug/spulse/stats /tmp/stats.txt" ;; esac
	if [ "$5" = nomark ]; then
		# shellcheck disable=SC2086
		hrun $pre $w > /tmp/wl.log 2> /tmp/err.txt
		rc=$?
	else
		mark "pre $tag"
		# shellcheck disable=SC2086
		hrun $pre $B/markrun $cp -f /tmp/markrun.flag $w > /tmp/wl.log 2> /tmp/err.txt
		rc=$?
		# markrun's two markers, which it executes whatever happens; the
		# watcher's is done long before a profiler has torn down
		wk=0	# (sh variables are global: not the caller's k)
		while [ ! -e /host/tmp/markrun.flag ] && [ $wk -lt 100 ]; do
			sleep 0.1
			wk=$((wk + 1))
		done
		[ -e /host/tmp/markrun.flag ] || echo "error $tag: markrun's watcher did not finish" >> $res
		echo "start $tag" >> /tmp/marks.txt
		echo "done $tag" >> /tmp/marks.txt
		mark "end $tag"
	fi
	n= bytes=0
	case $mode in
	s*)
		# "spulse record: samples N, dropped D, file F, size S bytes, ..."
		n=$(sed -n 's/^spulse record: samples \([0-9]*\),.*/\1/p' /tmp/wl.log)
		# the null handler writes no sample: count the events it saw
		[ $mode = sn ] && [ "$5" != nomark ] && n=$(sed -n 's/^seen \([0-9]*\)$/\1/p' /host/tmp/stats.txt | head -n 1)
		bytes=$(wc -c < /host/tmp/sp.spulse 2>/dev/null || echo 0)
		grep -q '^spulse ' /proc/modules && chroot /host /sbin/rmmod spulse ;;
	p*)
		# "[ perf record: Captured and wrote X MB /tmp/perf.data (N samples) ]"
		n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' /tmp/err.txt | tail -n 1)
		bytes=$(wc -c < /host/tmp/perf.data 2>/dev/null || echo 0) ;;
	b*) n=0 ;;
	esac
	ws=$(sed -n 's/.* in \([0-9.]*\) s.*/\1/p' /tmp/wl.log | tail -n 1)
	# pingpong: "... (nvcsw V nivcsw I)"
	sw=$(sed -n 's/.*(nvcsw \([0-9]*\) nivcsw \([0-9]*\)).*/\1 \2/p' /tmp/wl.log)
	[ -n "$sw" ] && sw=$(( ${sw% *} + ${sw#* } ))
	[ "$5" = nomark ] && return 0
	if [ "$rc" != 0 ] || [ -z "$n" ] || [ -z "$ws" ]; then
		echo "error $tag: rc=$rc samples=${n:-none} work=${ws:-none}: $(tail -c 300 /tmp/err.txt | tr '\n' ' ')" >> $res
		echo "guest-insns: $tag failed:" >&2
		tail -n 5 /tmp/err.txt /tmp/wl.log >&2
		return 0
	fi
	echo "run $tag rc=$rc samples=$n bytes=$bytes switches=${sw:-0} work_s=$ws" >> $res
	if [ "$rep" = "$R" ]; then
		# the last rep's outputs, for a look on the host
		cp /host/tmp/sp.spulse /out/$wl-$mode-$len.spulse 2>/dev/null
		[ -s /host/tmp/perf.data ] && [ "$mode" != pd ] && cp /host/tmp/perf.data /out/$wl-$mode-$len.perf.data
		cp /tmp/err.txt /out/$wl-$mode-$len.err 2>/dev/null
		cp /tmp/wl.log /out/$wl-$mode-$len.out 2>/dev/null
	fi
	return 0
}

# perf needs tracefs for the tracepoints' formats (pp modes)
grep -q ' /host/sys/kernel/tracing ' /proc/mounts ||
	mount -t tracefs tracefs /host/sys/kernel/tracing || fail "cannot mount tracefs"
echo "kernel $(uname -r)" >> $res
echo "perf $(hrun perf --version 2>&1)" >> $res
echo "python $(hrun /usr/bin/python3 --version 2>&1)" >> $res
echo "cpus $(grep -c ^processor /proc/cpuinfo)" >> $res

# the kernel's symbols, spulse.ko's included (loaded, not started), for the
# plugin; it reads them at the first marker
hrun /sbin/insmod $B/spulse.ko || fail "insmod spulse.ko failed"
cat /proc/kallsyms > /out/kallsyms.txt
grep '\[spulse\]' /proc/kallsyms | sort | head -n 3 > /out/spulse-syms-begin.txt
chroot /host /sbin/rmmod spulse || fail "rmmod spulse failed"
mark open

modes_of() {
	if [ "$1" = pp ]; then echo "$PP_MODES"; else echo "$MODES"; fi
}
lens_of() {
	case $1 in
	gt) echo "$GT_LENS" ;;
	py) echo "$PY_LENS" ;;
	pp) echo "$PP_LENS" ;;
	esac
}

list=
for wl in $WLS; do
	for m in $(modes_of $wl); do
		for l in $(lens_of $wl); do
			list="$list $wl:$m:$l"
		done
	done
done

# warm-up, no markers (its cost lands in the next run's gap): the page
# cache, spulse's unwind-table and kernel-symbol caches, perf's first start.
# The warm-up runs the workloads without markrun, which every marked run
# execs first: its table is built here, else the first marked spulse run
# builds it (~15M user instructions in its start-up, one rep's intercept)
hrun $B/spulse unwind build $B/markrun -o /tmp/uwc > /dev/null ||
	fail "spulse unwind build markrun failed"
for wl in $WLS; do
	for m in $(modes_of $wl); do
		case $wl in gt) l=2 ;; py) l=20 ;; pp) l=200 ;; esac
		echo "guest-insns: warm-up $wl $m"
		run 0 $wl $m $l nomark
	done
done

i=1
while [ $i -le $R ]; do
	# shellcheck disable=SC2086
	set -- $list
	nm=$#
	k=0
	while [ $k -lt $nm ]; do
		j=$(( (i - 1 + k) % nm + 1 ))
		eval "x=\${$j}"
		wl=${x%%:*} r=${x#*:}
		m=${r%%:*} l=${r#*:}
		echo "guest-insns: rep $i $wl $m $l"
		run $i $wl $m $l
		k=$((k + 1))
	done
	i=$((i + 1))
done
mark close
cp /tmp/marks.txt /out/marks.txt

hrun /sbin/insmod $B/spulse.ko && {
	grep '\[spulse\]' /proc/kallsyms | sort | head -n 3 > /out/spulse-syms-end.txt
	chroot /host /sbin/rmmod spulse
}
echo "perf_throttle_lines $(dmesg | grep -c 'perf: interrupt took too long')" >> $res
echo done >> $res
