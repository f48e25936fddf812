#!/usr/bin/env bash
# make bench-clickhouse: ClickHouse ingest rate of spulse push, and the time
# of a fleet top-N (spulse report --clickhouse, GROUP BY on the server) over
# HOSTS x SAMPLES synthetic samples against spulse report over the same
# samples in one merged spool (spulse merge), or, while spulse merge is not
# built, over the hosts' spools one after another.
# A private clickhouse-server (tests/clickhouse/server.sh) with a fresh
# data directory under $BUILD/bench/clickhouse/, stopped at the end.
#
# usage: bench_clickhouse.sh SPULSE
# env: BENCH_CH_HOSTS (5), BENCH_CH_SAMPLES (10000000 per host),
#      BENCH_CH_TOP (20), BENCH_CH_RUNS (3 query runs, median kept)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
BUILD=${BUILD:-$top/build}
# a private copy: a rebuild during the run must not change the binary
mkdir -p "$BUILD/bench/clickhouse"
cp "$1" "$BUILD/bench/clickhouse/spulse" || exit 1
sp=$BUILD/bench/clickhouse/spulse
hosts=${BENCH_CH_HOSTS:-5}
per=${BENCH_CH_SAMPLES:-10000000}
ntop=${BENCH_CH_TOP:-20}
runs=${BENCH_CH_RUNS:-3}
dir=$BUILD/bench/clickhouse
mkdir -p "$dir"
# shellcheck source=../tests/clickhouse/server.sh
. "$top/tests/clickhouse/server.sh"
trap 'ch_stop' EXIT

now() { date +%s.%N; }
# secs START: seconds since START, 3 decimals
secs() { echo "$(now) $1" | awk '{ printf "%.3f", $1 - $2 }'; }
# median of the arguments
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "bench-clickhouse: $hosts hosts x $per samples, top $ntop, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
spools=()
for i in $(seq 1 "$hosts"); do
	f=$dir/host$i-$per.spulse
	if [ ! -s "$f" ]; then
		"$sp" synth -o "$f" --samples "$per" --seed "$i" --threads 16 \
			--kallsyms -q || exit 1
	fi
	spools+=("$f")
done
total=$((hosts * per))
bytes=$(cat "${spools[@]}" | wc -c)

rm -rf "$dir/server"
ch_start "$dir/server" || exit 1
echo "clickhouse-server $CH_URL, data in $dir/server"

# ---- ingest ---------------------------------------------------------------
t0=$(now)
for i in $(seq 1 "$hosts"); do
	"$sp" push --clickhouse "$CH_URL" --database bench --host "host$i" \
		"${spools[$((i - 1))]}" >/dev/null 2>"$dir/push.err" ||
		{ cat "$dir/push.err"; exit 1; }
done
push_s=$(secs "$t0")
stored=$(ch_post "$CH_URL/?database=bench" "SELECT count() FROM spulse_samples")
[ "$stored" = "$total" ] || { echo "stored $stored of $total samples"; exit 1; }
disk=$(ch_post "$CH_URL/" "SELECT sum(bytes_on_disk) FROM system.parts \
WHERE database = 'bench' AND active")
# re-push: nothing is sent (the idempotency check's cost)
t0=$(now)
"$sp" push --clickhouse "$CH_URL" --database bench --host host1 \
	"${spools[0]}" >/dev/null 2>&1
repush_s=$(secs "$t0")

# ---- merged spool ---------------------------------------------------------
merged=$dir/merged-$hosts-$per.spulse
merge_s=-
if [ ! -s "$merged" ]; then
	t0=$(now)
	if "$sp" merge -o "$merged" "${spools[@]}" >/dev/null 2>&1; then
		merge_s=$(secs "$t0")
	else
		rm -f "$merged"
	fi
fi

# ---- fleet top-N ----------------------------------------------------------
ch=() ; chh=() ; loc=()
for _ in $(seq 1 "$runs"); do
	t0=$(now)
	"$sp" report --clickhouse "$CH_URL" --database bench --top "$ntop" \
		>"$dir/ch.txt" || exit 1
	ch+=("$(secs "$t0")")
	t0=$(now)
	"$sp" report --clickhouse "$CH_URL" --database bench --top "$ntop" \
		--host host2 --time 1000,2000 >"$dir/chh.txt" || exit 1
	chh+=("$(secs "$t0")")
	t0=$(now)
	if [ -s "$merged" ]; then
		"$sp" report "$merged" --top "$ntop" >"$dir/loc.txt" 2>/dev/null || exit 1
	else
		for f in "${spools[@]}"; do
			"$sp" report "$f" --top "$ntop" >/dev/null 2>&1 || exit 1
		done
	fi
	loc+=("$(secs "$t0")")
done
if [ -s "$merged" ]; then
	tail -n +2 "$dir/loc.txt" > "$dir/a"; tail -n +2 "$dir/ch.txt" > "$dir/b"
	cmp -s "$dir/a" "$dir/b" && same="equal rows" || same="ROWS DIFFER"
	locname="spulse report merged spool"
else
	same="(no spulse merge yet)"
	locname="spulse report x $hosts spools"
fi
chm=$(median "${ch[@]}"); chhm=$(median "${chh[@]}"); locm=$(median "${loc[@]}")

printf '\n%-44s %14s %14s\n' "measure" "value" "rate"
printf '%-44s %14s %14s\n' "samples (hosts x per host)" "$total" "$hosts x $per"
printf '%-44s %12.1f MB %14s\n' "spool bytes" "$(echo "$bytes" | awk '{print $1/1e6}')" \
	"$(echo "$bytes $total" | awk '{printf "%.2f B/sample", $1/$2}')"
printf '%-44s %12s s %10.0f k/s\n' "spulse push (ingest, all hosts)" "$push_s" \
	"$(echo "$total $push_s" | awk '{print $1/$2/1e3}')"
printf '%-44s %12.1f MB %14s\n' "ClickHouse bytes on disk" "$(echo "$disk" | awk '{print $1/1e6}')" \
	"$(echo "$disk $total" | awk '{printf "%.2f B/sample", $1/$2}')"
printf '%-44s %12s s %14s\n' "re-push of a pushed spool (nothing sent)" "$repush_s" ""
printf '%-44s %12s s %14s\n' "spulse merge ($hosts spools)" "$merge_s" ""
printf '%-44s %12s s %10.0f M/s\n' "fleet top-$ntop: report --clickhouse" "$chm" \
	"$(echo "$total $chm" | awk '{print $1/$2/1e6}')"
printf '%-44s %12s s %14s\n' "  --host host2 --time 1000,2000" "$chhm" ""
printf '%-44s %12s s %10.0f M/s\n' "fleet top-$ntop: $locname" "$locm" \
	"$(echo "$total $locm" | awk '{print $1/$2/1e6}')"
printf '%-44s %14s\n' "report --clickhouse vs local" "$same"
echo "(query times: median of $runs runs)"
