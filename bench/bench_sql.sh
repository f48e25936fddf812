#!/usr/bin/env bash
# bench-sql: `spulse sql` ingest rate and database size on a synthetic
# spool (spulse synth, N samples, --kallsyms), then the time of the views
# through the sqlite3 shell. Prints a table. Wall time and the CPU time of
# the loader (user + sys) are both given: on a shared machine the wall
# rate depends on the load (printed too).
#
# usage: bench_sql.sh SPULSE DIR SAMPLES
set -eu
sp=$1 dir=$2 n=$3
mkdir -p "$dir"
spool=$dir/synth-$n.spulse db=$dir/bench.db
if [ ! -s "$spool" ]; then
	"$sp" synth -o "$spool" --samples "$n" --kallsyms -q
fi
rm -f "$db" "$db-wal" "$db-shm"

# time_of CMD...: "wall user+sys" seconds of CMD (its output to $dir/out)
time_of() {
	/usr/bin/time -o "$dir/time" -f '%e %U %S' "$@" >"$dir/out" 2>"$dir/err"
	awk '{printf "%.3f %.3f", $1, $2 + $3}' "$dir/time"
}

read -r load_wall load_cpu <<<"$(time_of "$sp" sql -q "$db" "$spool")"
grep -q "1 spool added" "$dir/out" || { cat "$dir/out" "$dir/err"; exit 1; }
rows=$(sed -n 's/.* \([0-9]*\) rows in .*/\1/p' "$dir/out")
read -r re_wall re_cpu <<<"$(time_of "$sp" sql -q "$db" "$spool")"
grep -q "1 already present" "$dir/out" || { cat "$dir/out"; exit 1; }
db_bytes=$(stat -c %s "$db")
spool_bytes=$(stat -c %s "$spool")
samples=$(sqlite3 "$db" "SELECT count(*) FROM samples")
[ "$samples" -eq "$n" ] || { echo "bench-sql: $samples samples in db, wanted $n"; exit 1; }

echo "# bench-sql: spulse sql on a $n-sample synthetic spool (load average $(cut -d' ' -f1 /proc/loadavg), $(nproc) CPUs)"
printf '%-48s %14s %14s\n' "step" "wall s" "cpu s"
printf '%-48s %14s %14s\n' "load (symbolize + insert, 1 transaction)" "$load_wall" "$load_cpu"
printf '%-48s %14s %14s\n' "re-add (already present: nothing inserted)" "$re_wall" "$re_cpu"
for v in "top_functions LIMIT 20" "host_functions LIMIT 20" "thread_functions LIMIT 20" \
	"folded_stacks" "host_summary"; do
	read -r w c <<<"$(time_of sqlite3 "$db" "SELECT * FROM $v")"
	printf '%-48s %14s %14s\n' "query: SELECT * FROM $v" "$w" "$c"
done
read -r w c <<<"$(time_of sqlite3 "$db" "WITH o AS (SELECT min(time_ns) AS t0 FROM samples),
	w AS (SELECT spool, stack, count(*) AS n FROM samples, o
	      WHERE time_ns >= t0 + 1000000000 AND time_ns < t0 + 2000000000 GROUP BY spool, stack)
	SELECT f.name, sum(w.n * sf.self) AS self, sum(w.n) FROM w
	JOIN stack_functions sf USING (spool, stack) JOIN functions f USING (function)
	GROUP BY f.function ORDER BY self DESC LIMIT 20")"
printf '%-48s %14s %14s\n' "query: top functions of a 1 s window" "$w" "$c"
echo
printf '%-36s %16s\n' "figure" "value"
awk -v n="$n" -v w="$load_wall" -v c="$load_cpu" -v r="$rows" -v db="$db_bytes" \
	-v sb="$spool_bytes" 'BEGIN {
	printf "%-36s %16.0f\n", "ingest samples/s (wall)", n / w
	printf "%-36s %16.0f\n", "ingest samples/s (loader cpu)", n / c
	printf "%-36s %16.0f\n", "rows/s (wall, all tables)", r / w
	printf "%-36s %16d\n", "rows inserted", r
	printf "%-36s %16.1f\n", "database bytes/sample", db / n
	printf "%-36s %16.1f\n", "spool bytes/sample", sb / n
	printf "%-36s %16.1f\n", "database MiB", db / 1048576
}'
