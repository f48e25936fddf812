#!/usr/bin/env bash
# Memory follows what is reported, not what the spool defines (issue 25
# defect 5): a spool of N defined threads (default 1,000,000) of which only
# K (default 1000) have a sample and an off-CPU interval, then (the second
# table) the same N threads all with a sample and an interval, where what
# is reported is itself per thread. Prints one table row per analysis
# command: wall time and peak RSS (/usr/bin/time). No verdict on time
# (machine-dependent); the RSS column is the point: before the fix
# `latency --per-thread` took 4.07 GB and 37 s at 1M threads (5.2 GB with
# 1M intervals).
#
# usage: bench_threads.sh SPULSE SPOOLGEN WORKDIR
#        (env: THREADS_N, THREADS_K; THREADS_ALL=0 skips the second table)
set -eu
sp=$1
gen=$2
dir=$3
n=${THREADS_N:-1000000}
k=${THREADS_K:-1000}
mkdir -p "$dir"

row() {	# ARGS...: one command on $f
	local out t m rc=0
	/usr/bin/time -o "$dir/time.out" -f "%e %M" "$sp" "$@" "$f" \
		>/dev/null 2>"$dir/err.out" || rc=$?
	out=$(tail -n 1 "$dir/time.out")
	t=${out% *}
	m=${out#* }
	printf '%-40s %10s %12s%s\n' "$*" "$t" "$((m / 1024))" \
		"$([ "$rc" -eq 0 ] || echo "  (exit $rc: $(head -c 80 "$dir/err.out"))")"
}

table() {	# N K: N defined threads, K of them with a sample and an interval
	local n=$1 k=$2
	f=$dir/threads-$n-$k.spulse
	if [ ! -s "$f" ]; then
		python3 - "$n" "$k" <<'PY' | "$gen" >"$f"
import sys
n, k = int(sys.argv[1]), int(sys.argv[2])
w = sys.stdout.write
w('header start_us=1000000 interval_us=1000\n')
w('frame id=0 kind=user addr=0x1000\nframe id=1 kind=user addr=0x2000\n')
w('stack id=0 parent=root frame=0\nstack id=1 parent=0 frame=1\n')
step = max(1, n // k)
for i in range(n):
    w('thread id=%d pid=%d tid=%d comm=t%d\n' % (i, i // 4 + 1, i + 1, i % 1000))
for j in range(k):
    w('sample dt_ns=1000 thread=%d stack=1\n' % (j * step))
for j in range(k):
    w('offcpu t=%d thread=%d stack=1 state=S cpu_out=0 cpu_in=0 '
      'blocked_ns=5000 runq_ns=100 waker=none\n' % (1000 + j, j * step))
PY
	fi
	printf '# %s: %d defined threads, %d with a sample and an interval, %d bytes\n' \
		"$(basename "$f")" "$n" "$k" "$(stat -c %s "$f")"
	printf '%-40s %10s %12s\n' command seconds "peak RSS MB"
	row check
	row latency
	row latency --per-thread
	row report
	row report --sort comm,pid
	row report --off-cpu --sort tid
	row flame --folded --root tid
	row flame --wakers --folded
	row export --format perf-script
	row export --format trace-event
}

table "$n" "$k"
# every defined thread with data: memory follows the threads because the
# report does (one row, histogram or folded line per thread)
if [ "${THREADS_ALL:-1}" != 0 ] && [ "$k" != "$n" ]; then
	echo
	table "$n" "$n"
fi
