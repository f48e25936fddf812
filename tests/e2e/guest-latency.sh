# Guest side of the latency suite (busybox sh in the stock-kernel VM; see
# docs/VM.md). One boot, three runs of the off-CPU injector
# (tests/workload/inject.c) with spulse.ko offcpu=1; raw results go to
# /out/RUN/ for the host checker tests/e2e/check_latency.py, which asserts
# everything (this script asserts nothing):
#   raw     module only; the per-CPU relay streams are read after stop
#           (one kind-3 record is injected with `echo trigger > control`)
#   drain   module + spulse-drain -> one spool
#   flight  `spulse record --flight` with an offcpu>50ms trigger around a
#           100 ms injected stall (only when spulse record has --flight)
#   perf    Debian's python3 (threads sleeping, waiting on a queue and a
#           lock) under `spulse record --off-cpu` while `perf sched record
#           -a` runs in the same boot; the checker compares per-thread
#           off-CPU time with `perf sched timehist`
#
# usage (via run-vm.sh): guest-latency.sh BIN
#   BIN: host path of a directory holding spulse.ko, spulse, spulse-drain
#   and inject (run-latency.sh copies them into the VM's output directory).
# Environment (from run-latency.sh through the command line): none; the
# knobs are in /out/params (written by run-latency.sh).
. "$VM_LIB"
BIN=$1
KO=$BIN/spulse.ko
D=/sys/kernel/debug/spulse
. /out/params	# FREQ MIN_US NWAITS RUNQ_MS FLIGHT_S STALL_MS PRE_MS POST_MS

ins() { hrun /sbin/insmod "$KO" "$@"; }
unload() { hrun /sbin/rmmod spulse; }
loaded() { [ -d /sys/module/spulse ]; }
ctl() { echo "$1" > $D/control; }
dclear() { dmesg -c >> /out/dmesg.acc; }

# Optional (TRACE_CPU0=1 in /out/params, LATENCY_TRACE=1 on the host):
# the kernel's own sched_switch/sched_wakeup and workqueue execute events
# of the control spinner's CPU 0, clock mono (the injector's), into
# /out/RUN/sched-cpu0.trace; the checker then names who ran on CPU 0 while
# the spinner waited (tests/e2e/latency_cpu0.py).
T=/sys/kernel/debug/tracing
# trace_start CPUMASK KB EVENT...: a fresh trace (mono clock) of the
# events (group/name) on the CPUs of CPUMASK, KB per CPU
trace_start() {
	_m=$1 _kb=$2
	shift 2
	echo 0 > $T/tracing_on
	echo > $T/trace
	echo mono > $T/trace_clock
	echo "$_m" > $T/tracing_cpumask
	echo "$_kb" > $T/buffer_size_kb
	for _e in "$@"; do
		echo 1 > "$T/events/$_e/enable"
	done
	echo 1 > $T/tracing_on
}
trace_on() {
	[ "${TRACE_CPU0:-0}" = 1 ] && [ -d $T ] || return 0
	trace_start 1 8192 sched/sched_switch sched/sched_wakeup \
		workqueue/workqueue_execute_start workqueue/workqueue_execute_end
}
trace_off() {
	[ "${TRACE_CPU0:-0}" = 1 ] && [ -d $T ] || return 0
	echo 0 > $T/tracing_on
	cat $T/trace > "$1/sched-cpu0.trace"
	echo 0 > $T/events/sched/enable
	echo 0 > $T/events/workqueue/enable
	echo > $T/trace
}

# start_inject RUN GOFILE ARGS...: start the injector in the background of
# this shell (it waits for GOFILE); sets $inj (job) and $pid (its pid)
start_inject() {
	r=$1; go=$2; shift 2
	rm -f "/out/$go"
	chroot /host "$BIN/inject" -g "$VM_OUT_HOST/$go" -o "$VM_OUT_HOST/$r/truth.jsonl" "$@" \
		> /out/$r/inject.log 2>&1 &
	inj=$!
	i=0
	while ! grep -q '^inject pid' /out/$r/inject.log 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 300 ] || break
		sleep 0.1
	done
	pid=$(sed -n 's/^inject pid //p' /out/$r/inject.log)
	echo "$pid" > /out/$r/pid
}

IARGS="-p pmsr -n $NWAITS -r $RUNQ_MS"
OPTS="offcpu=1 offcpu_min_us=$MIN_US freq=$FREQ"

run_raw() {
	o=/out/raw; mkdir -p $o
	start_inject raw go.raw $IARGS
	dclear
	ins target_pid=$pid $OPTS subbuf_size=1048576 n_subbufs=16 2> $o/insmod.err
	echo $? > $o/insmod.rc
	# let the load settle first, as the drain run does (its drainer's
	# start): the first phase (pipe) run right after insmod had as few as
	# 3 of 40 waits with an exact truth on a loaded host (the time check
	# needs 8), against 24-39 in the later phases and runs
	sleep 1
	ctl start; echo $? > $o/start.rc
	trace_on
	touch /out/go.raw
	wait $inj; echo $? > $o/inject.rc
	trace_off $o
	ctl trigger; echo $? > $o/trigger.rc
	sleep 0.2
	ctl stop
	cat $D/stats > $o/stats
	for f in $D/cpu*; do cat "$f" > "$o/${f##*/}"; done
	unload; echo $? > $o/rmmod.rc
	dmesg > $o/dmesg
}

run_drain() {
	o=/out/drain; mkdir -p $o
	start_inject drain go.drain $IARGS
	dclear
	ins target_pid=$pid $OPTS 2> $o/insmod.err
	echo $? > $o/insmod.rc
	# on CPU 1 (the contended one): CPU 0 stays uncontended for the control
	chroot /host taskset -c 1 "$BIN/spulse-drain" -o "$VM_OUT_HOST/drain/drain.spulse" \
		2> $o/drain.log &
	drain=$!
	sleep 1
	ctl start; echo $? > $o/start.rc
	trace_on
	touch /out/go.drain
	wait $inj; echo $? > $o/inject.rc
	trace_off $o
	sleep 0.3
	ctl stop
	sleep 0.5
	cat $D/stats > $o/stats
	kill -TERM $drain; wait $drain; echo $? > $o/drain.rc
	unload; echo $? > $o/rmmod.rc
	dmesg > $o/dmesg
}

run_flight() {
	o=/out/flight; mkdir -p $o
	hrun "$BIN/spulse" record --help > $o/record.help 2>&1
	if ! grep -q -- '--flight' $o/record.help; then
		echo "spulse record has no --flight" > $o/skipped
		return
	fi
	oc=
	grep -q -- '--off-cpu' $o/record.help && oc=--off-cpu
	echo "$oc" > $o/offcpu_opt
	dclear
	hrun "$BIN/spulse" record --module "$KO" -F "$FREQ" $oc \
		--flight "$FLIGHT_S" --trigger 'offcpu>50ms' --post 1 \
		-o "$VM_OUT_HOST/flight/flight.spulse" -- \
		"$BIN/inject" -p f -S "$STALL_MS" -P "$PRE_MS" -A "$POST_MS" \
		-o "$VM_OUT_HOST/flight/truth.jsonl" > $o/record.out 2>&1
	echo $? > $o/record.rc
	loaded && unload
	dmesg > $o/dmesg
}

# Debian's python3, side by side with perf sched in the same run. Threads
# created after the recording started are compared whole.
PYW='
import threading, time, queue
q = queue.Queue()
lock = threading.Lock()
def sleeper():
    for _ in range(60):
        time.sleep(0.01)
def consumer():
    for _ in range(60):
        q.get()
def locker():
    for _ in range(30):
        with lock:
            time.sleep(0.004)
        time.sleep(0.001)
time.sleep(0.3)
ts = [threading.Thread(target=f, name=f.__name__) for f in (sleeper, consumer, locker, locker)]
for t in ts:
    t.start()
for _ in range(60):
    time.sleep(0.007)
    q.put(1)
for t in ts:
    t.join()
'
run_perf() {
	o=/out/perf; mkdir -p $o
	[ -x /host/usr/bin/perf ] || { echo "no perf in the guest" > $o/skipped; return; }
	dclear
	hrun /usr/bin/perf sched record -k CLOCK_MONOTONIC -a -o /tmp/perf-sched.data -- sleep 12 \
		> $o/perf.log 2>&1 &
	pp=$!
	sleep 2
	hrun "$BIN/spulse" record --module "$KO" -F 99 --off-cpu --offcpu-min-us 0 \
		-o "$VM_OUT_HOST/perf/py.spulse" -- /usr/bin/python3 -c "$PYW" \
		> $o/record.out 2>&1
	echo $? > $o/record.rc
	wait $pp; echo $? > $o/perf.rc
	hrun /usr/bin/perf sched timehist -i /tmp/perf-sched.data > $o/timehist.txt 2> $o/timehist.err
	echo $? > $o/timehist.rc
	loaded && unload
	dmesg > $o/dmesg
}

# The stop path (issue 19 item 5), traced (workqueue events, all CPUs, with
# trace_marker lines around every stop):
#   1. stopmap (static, tests/e2e/stopmap.c) runs in this root, outside the
#      /host chroot, and maps a file under /host executable right before a
#      `stop` written by its child chrooted into /host: the stop's last
#      meta scan must give the new mapping's path as the target sees it
#      (/host/...), not as the stopper does (the path inside its chroot);
#   2. then start/stop cycles while the target re-executes itself every ms
#      (each exec event queues the meta work): the meta work must never
#      be queued or run after a stop returned (until the next start).
# The checker reads stop/meta, stop/sched.trace and stop/cycles.
mark() { echo "$1" > $T/trace_marker 2>/dev/null; }
run_stop() {
	o=/out/stop; mkdir -p $o
	[ -d $T/events/workqueue ] || { echo "no workqueue trace events" > $o/skipped; return; }
	[ -x /out/bin/stopmap ] || { echo "no stopmap binary" > $o/skipped; return; }
	cp /out/bin/inject $o/stopmap.bin
	rm -f $o/go $o/mapped $o/stop.rc
	/out/bin/stopmap $o "/host$VM_OUT_HOST/stop/stopmap.bin" /host > $o/target.log 2>&1 &
	py=$!
	i=0
	while ! grep -q '^pid' $o/target.log 2>/dev/null && [ $i -lt 300 ]; do
		i=$((i + 1)); sleep 0.1
	done
	pid=$(sed -n 's/^pid //p' $o/target.log)
	echo "$pid" > $o/pid
	dclear
	ins target_pid=$pid freq=$FREQ 2> $o/insmod.err
	echo $? > $o/insmod.rc
	trace_start 3 4096 workqueue/workqueue_queue_work \
		workqueue/workqueue_execute_start workqueue/workqueue_execute_end
	mark "spulse-test start"
	ctl start; echo $? > $o/start.rc
	sleep 1
	touch $o/go
	i=0
	while [ ! -e $o/mapped ] && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.01; done
	mark "spulse-test stopped"
	sleep 0.5
	cat $D/meta > $o/meta
	cat $D/stats > $o/stats
	kill $py; wait $py
	unload; echo $? > $o/rmmod.rc
	# 2. cycles: the target re-executes itself every ms (an exec event,
	# which queues the meta work, each time)
	rm -f /tmp/stop-exec-end
	/out/bin/stopmap -e /tmp/stop-exec-end &
	ex=$!
	ins target_pid=$ex freq=$FREQ 2>> $o/insmod.err
	echo $? > $o/insmod2.rc
	n=0
	while [ $n -lt 30 ]; do
		mark "spulse-test start"
		ctl start
		sleep 0.$((n % 5))
		mark "spulse-test stop"
		ctl stop
		mark "spulse-test stopped"
		sleep 0.1
		n=$((n + 1))
	done
	echo $n > $o/cycles
	sleep 0.5
	mark "spulse-test end"
	touch /tmp/stop-exec-end
	wait $ex
	echo 0 > $T/tracing_on
	cat $T/trace > $o/sched.trace
	echo 0 > $T/events/workqueue/enable
	echo > $T/trace
	echo ff > $T/tracing_cpumask 2>/dev/null
	unload; echo $? >> $o/rmmod.rc
	dmesg > $o/dmesg
}

rm -f /out/dmesg.acc /out/complete
cat /proc/kallsyms > /out/kallsyms
nproc > /out/nproc 2>/dev/null || grep -c ^processor /proc/cpuinfo > /out/nproc
# hang_dump RUN: what every process of the run is blocked in, the module's
# stats and control, into /out/RUN/hung (the checker fails RUN.no_hang with
# it); then SIGKILL the run's user processes so the next runs still run
hang_dump() {
	h=/out/$1/hung
	mkdir -p /out/$1
	echo "run $1 still running after ${RUN_LIMIT}s" > $h
	for d in /proc/[0-9]*; do
		read -r c < $d/comm 2>/dev/null || continue
		st=$(sed -n 's/^State:[[:space:]]*//p' $d/status 2>/dev/null)
		case "$c:$st" in
		inject*|spulse*|perf*|stopmap*|chroot*|rmmod*|insmod*|*:D*) ;;
		*) continue ;;
		esac
		echo "-- pid ${d#/proc/} $c ($st) wchan $(cat $d/wchan 2>/dev/null)" >> $h
		cat $d/stack >> $h 2>/dev/null
	done
	echo "-- control: $(cat $D/control 2>/dev/null)" >> $h
	cat $D/stats >> $h 2>/dev/null
	for d in /proc/[0-9]*; do
		read -r c < $d/comm 2>/dev/null || continue
		case "$c" in inject*|spulse*|perf*|stopmap*) kill -KILL ${d#/proc/} 2>/dev/null ;; esac
	done
}

# RUN_LIMIT s per run (a run took 8-40 s, up to load 25): a hung run is
# named with its stacks instead of eating the VM's whole timeout
RUN_LIMIT=${RUN_LIMIT:-75}
for r in ${RUNS:-raw drain flight perf stop}; do
	vm_log "latency run $r"
	loaded && unload
	t0=$(date +%s)
	( sleep $RUN_LIMIT; [ -e /out/$r.secs ] || hang_dump $r ) &
	wd=$!
	run_$r
	echo $(( $(date +%s) - t0 )) > /out/$r.secs
	kill $wd 2>/dev/null
	wait $wd 2>/dev/null
done
dclear
echo done > /out/complete
exit 0
