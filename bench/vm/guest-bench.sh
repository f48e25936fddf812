# Guest side of `make bench-vm` (bench/vm/run-bench.sh). In one boot, REPS
# repetitions of every run below, interleaved in rotating order (rep i
# starts with the i-th run of the list):
#   WL MODE for WL in gt (build/workload/gt -n GT_ROUNDS, 2 threads) and py
#   (/usr/bin/python3 -I -S pywork.py PY_ROUNDS: no site
#   module, no environment -- the interpreter and its script only), MODE in
#     base      unprofiled
#     spF       spulse record -F F -- WL        (F in FREQS)
#     pfF       perf record -g -F F -e cpu-clock -- WL
#     pnF       perf record -F F -e cpu-clock -- WL (no -g: the floor, the
#               sampling interrupt and a ring-buffer write; F in FLOOR_FREQS)
#     snF       spulse record -F F --module-params sample_null=1 -- WL (the
#               module's own events, its handler returning at once: what
#               the event alone costs spulse; F in NULL_FREQS)
#   and the start-up runs, in every START_EVERY-th rep: true base, true
#   sp999, true pf999 (/bin/true under each).
# Every command runs under runstat (bench/vm/runstat.c): wall time fork to
# exit, guest busy CPU (/proc/stat) over that window, the profiler's own
# CPU (its zombie's /proc/PID/stat utime+stime) and its reaped children's
# (the workload). The workload's stdout goes through stamp(): at its start
# line ("gt pid", "py start") and its done line it reads /proc/stat (the
# guest CPU of the workload's window), and at the done line, while spulse
# record still has the module loaded, the module's debugfs stats. All with
# shell builtins (no fork) so the reader costs nothing measurable.
# One line per run in /out/bench.txt:
#   run rep=I wl=W mode=M work_s=S wcpu_s=C widle_s=I total_s=T cpu_s=G
#       idle_s=J self_cpu_s=P child_cpu_s=X rc=R bytes=B samples=N [spulse_KEY=V ...]
# The last rep's spools and perf.data files are copied to /out (WL-MODE.*).
# usage (via run-vm.sh): guest-bench.sh BIN GT_ROUNDS PY_ROUNDS REPS FREQS
#                        [START_EVERY] [FLOOR_FREQS] [NULL_FREQS] [WORKLOADS]
#   BIN  host path of a directory with gt, runstat, pywork.py, spulse,
#        spulse.ko (copied into the guest's tmpfs first)
. "$VM_LIB"
BIN=$1
NG=$2
NP=$3
R=$4
FREQS=$5
SE=${6:-1}
FLOOR=${7:-}
NULLF=${8:-}
WLS=${9:-gt py}
D=/sys/kernel/debug/spulse
B=/tmp/b		# inside chroot /host; /host/tmp/b in the guest root
GB=/host$B
res=/out/bench.txt
: > $res

fail() {
	echo "guest-bench: $*" >&2
	echo "error $*" >> $res
	exit 1
}

mkdir -p $GB /host/tmp/uwc
cp /host$BIN/gt /host$BIN/runstat /host$BIN/pywork.py /host$BIN/spulse \
	/host$BIN/spulse.ko $GB/ || fail "cannot copy the binaries"

# Both profilers sample through perf events: let neither be throttled by
# perf's interrupt-time watchdog, which under TCG lowers the rate limit
# below 4999 Hz (fair to both; the values at the end are logged).
echo 100000 > /proc/sys/kernel/perf_event_max_sample_rate
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent

# stamp OUT: copy the workload's stdout to /tmp/wl.log; write c0/c1 (busy
# ticks at its start and done lines), work_s and the module's stats to OUT.
stamp() {
	: > /tmp/wl.log
	: > "$1"
	while IFS= read -r l; do
		echo "$l" >> /tmp/wl.log
		case $l in
		"gt pid "*|"py start"*)
			read -r _c a b c id iw f g _r < /proc/stat
			echo "c0=$((a + b + c + f + g)) i0=$((id + iw))" >> "$1" ;;
		"gt done "*|"py done "*)
			read -r _c a b c id iw f g _r < /proc/stat
			echo "c1=$((a + b + c + f + g)) i1=$((id + iw))" >> "$1"
			ws=${l#* in }
			echo "work_s=${ws%% s*}" >> "$1"
			if [ -r $D/stats ]; then
				while read -r k v; do
					case $k in
					handler_ns|samples_taken|samples_written|samples_dropped*|seen)
						echo "spulse_$k=$v" >> "$1" ;;
					esac
				done < $D/stats
			fi ;;
		esac
	done
}

wl_cmd() {
	case $1 in
	gt) echo "$B/gt -n $NG" ;;
	py) echo "/usr/bin/python3 -I -S $B/pywork.py $NP" ;;
	true) echo "/bin/true" ;;
	esac
}

# run REP WL MODE
run() {
	rep=$1 wl=$2 mode=$3
	w=$(wl_cmd $wl)
	rm -f /host/tmp/sp.spulse /host/tmp/sp.spulse.kallsyms /host/tmp/perf.data \
		/host/tmp/rs.txt
	case $mode in
	base) pre= ;;
	sp*) pre="$B/spulse record -F ${mode#sp} --module $B/spulse.ko --unwind-cache /tmp/uwc -o /tmp/sp.spulse --" ;;
	sn*) pre="$B/spulse record -F ${mode#sn} --module $B/spulse.ko --unwind-cache /tmp/uwc -o /tmp/sp.spulse --module-params sample_null=1 --" ;;
	pf*) pre="perf record -g -F ${mode#pf} -e cpu-clock -o /tmp/perf.data --" ;;
	pn*) pre="perf record -F ${mode#pn} -e cpu-clock -o /tmp/perf.data --" ;;
	esac
	# shellcheck disable=SC2086
	hrun $B/runstat /tmp/rs.txt $pre $w 2> /tmp/err.txt | stamp /tmp/st.txt
	rs=$(cat /host/tmp/rs.txt 2>/dev/null)
	c0=$(sed -n 's/^c0=\([0-9]*\) .*/\1/p' /tmp/st.txt)
	c1=$(sed -n 's/^c1=\([0-9]*\) .*/\1/p' /tmp/st.txt)
	i0=$(sed -n 's/^c0=.* i0=//p' /tmp/st.txt)
	i1=$(sed -n 's/^c1=.* i1=//p' /tmp/st.txt)
	ws=$(sed -n 's/^work_s=//p' /tmp/st.txt)
	wc=-1 wi=-1
	[ -n "$c0" ] && [ -n "$c1" ] && wc=$(awk -v a=$c0 -v b=$c1 'BEGIN { printf "%.2f", (b - a) / 100 }') &&
		wi=$(awk -v a=$i0 -v b=$i1 'BEGIN { printf "%.2f", (b - a) / 100 }')
	st=$(grep '^spulse_' /tmp/st.txt | tr '\n' ' ')
	extra=
	case $mode in
	sp*|sn*)
		# "spulse record: samples N, dropped D, file F, size S bytes, ..."
		n=$(sed -n 's/^spulse record: samples \([0-9]*\),.*/\1/p' /tmp/wl.log)
		drp=$(sed -n 's/^spulse record: samples [0-9]*, dropped \([0-9a-z]*\),.*/\1/p' /tmp/wl.log)
		extra="bytes=$(wc -c < /host/tmp/sp.spulse 2>/dev/null || echo 0) samples=${n:-0} rec_dropped=${drp:-?} kallsyms_bytes=$(wc -c < /host/tmp/sp.spulse.kallsyms 2>/dev/null || echo 0)"
		grep -q '^spulse ' /proc/modules && chroot /host /sbin/rmmod spulse
		[ "$rep" = "$R" ] && [ -s /host/tmp/sp.spulse ] && [ $wl != true ] && cp /host/tmp/sp.spulse /out/$wl-$mode.spulse ;;
	pf*|pn*)
		# "[ perf record: Captured and wrote X MB /tmp/perf.data (N samples) ]"
		n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' /tmp/err.txt | tail -n 1)
		extra="bytes=$(wc -c < /host/tmp/perf.data 2>/dev/null || echo 0) samples=${n:-0}"
		[ "$rep" = "$R" ] && [ -s /host/tmp/perf.data ] && [ $wl != true ] && cp /host/tmp/perf.data /out/$wl-$mode.perf.data ;;
	esac
	if [ -z "$rs" ] || { [ $wl != true ] && [ -z "$ws" ]; }; then
		echo "error rep $rep $wl $mode: no result: $(head -c 300 /tmp/err.txt | tr '\n' ' ')" >> $res
		echo "guest-bench: rep $rep $wl $mode failed:" >&2
		tail -n 5 /tmp/err.txt /tmp/wl.log >&2
		return
	fi
	echo "run rep=$rep wl=$wl mode=$mode work_s=${ws:--1} wcpu_s=$wc widle_s=$wi $rs $extra $st" >> $res
}

echo "kernel $(uname -r)" >> $res
echo "perf $(hrun perf --version 2>&1)" >> $res
echo "python $(hrun /usr/bin/python3 --version 2>&1)" >> $res
echo "cpus $(grep -c ^processor /proc/cpuinfo)" >> $res
echo "gt_rounds $NG" >> $res
echo "py_rounds $NP" >> $res
echo "freqs $FREQS" >> $res
echo "floor_freqs $FLOOR" >> $res
echo "null_freqs $NULLF" >> $res
echo "workloads $WLS" >> $res

list=
for wl in $WLS; do
	list="$list $wl:base"
	for f in $FREQS; do
		list="$list $wl:sp$f $wl:pf$f"
	done
	for f in $FLOOR; do
		list="$list $wl:pn$f"
	done
	for f in $NULLF; do
		list="$list $wl:sn$f"
	done
done
start="true:base true:sp999 true:pf999"

# warm-up (not recorded): page cache, the unwind-table cache, perf's start
NG_SAVE=$NG NP_SAVE=$NP
NG=2 NP=20
warm=
for wl in $WLS; do
	warm="$warm $wl:base $wl:sp999 $wl:pf999"
done
for x in $warm $start; do
	run 0 ${x%%:*} ${x#*:}
done
NG=$NG_SAVE NP=$NP_SAVE
sed -i '/^run rep=0 /d' $res
grep '^error rep 0 ' $res >&2 && fail "warm-up failed"

i=1
while [ $i -le $R ]; do
	# the start-up runs in every START_EVERY-th rep (1st, 1+k-th, ...)
	if [ $(( (i - 1) % SE )) -eq 0 ]; then
		set -- $list $start
	else
		set -- $list
	fi
	nm=$#
	k=0
	while [ $k -lt $nm ]; do
		j=$(( (i - 1 + k) % nm + 1 ))
		eval "x=\${$j}"
		echo "guest-bench: rep $i ${x%%:*} ${x#*:}"
		run $i ${x%%:*} ${x#*:}
		k=$((k + 1))
	done
	i=$((i + 1))
done
echo "perf_event_max_sample_rate_end $(cat /proc/sys/kernel/perf_event_max_sample_rate)" >> $res
echo "perf_throttle_lines $(dmesg | grep -c 'perf: interrupt took too long')" >> $res
echo done >> $res
cat $res
