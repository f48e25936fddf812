#!/usr/bin/env bash
# bench-sym: symbolization cost per distinct frame on the real libc (its
# libc6-dbg debug file supplies .symtab and DWARF). Writes spools of N
# distinct libc frames (one sample each, so the cost is all
# symbolization) with spoolgen and prints wall time of `spulse report`
# (names + source lines) and `spulse export --format pprof --inline`
# (inline chains too). Printed, never asserted.
#   bench.sh SPULSE SPOOLGEN DIR [N...]
set -eu -o pipefail
sp=$1 gen=$2 dir=$3
shift 3
[ $# -gt 0 ] || set -- 10000 100000
libc=/lib/x86_64-linux-gnu/libc.so.6
bid=$(readelf -n "$libc" | awk '/Build ID/ { print $3 }')
mkdir -p "$dir"
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'; }
printf '%-10s %12s %12s %14s %14s\n' frames "report s" "us/frame" "--inline s" "us/frame"
for n in "$@"; do
	awk -v n="$n" -v bid="$bid" -v libc="$libc" 'BEGIN {
		print "# header start_us=1700000000000000 interval_us=1000"
		printf "module id=0 pid=100 start=0x7f0000000000 end=0x7f0010000000 file_offset=0x0 path=%s build_id=%s\n", libc, bid
		print "thread id=0 pid=100 tid=100 comm=bench"
		for (i = 0; i < n; i++)	# 13-byte steps through the text
			printf "frame id=%d kind=module module=0 rel=0x%x\n", i, 163840 + i * 13
		for (i = 0; i < n; i++) printf "stack id=%d parent=root frame=%d\n", i, i
		for (i = 0; i < n; i++) printf "sample dt_ns=1000 thread=0 stack=%d\n", i
	}' | "$gen" >"$dir/libc-$n.spulse"
	r=$(secs "$sp" report "$dir/libc-$n.spulse" --top 1)
	i=$(secs "$sp" export "$dir/libc-$n.spulse" --format pprof --inline \
		-o "$dir/libc-$n.pb")
	awk -v n="$n" -v r="$r" -v i="$i" 'BEGIN {
		printf "%-10d %12.3f %12.1f %14.3f %14.1f\n", n, r, r * 1e6 / n, i, i * 1e6 / n }'
	rm -f "$dir/libc-$n.spulse" "$dir/libc-$n.pb"
done
