#!/usr/bin/env bash
# Merge throughput (issue 12 Deliver 6): spulse merge of N synthetic spools
# of S samples each (different seeds, cpus and off-CPU intervals), best of
# R runs; prints a table of samples/s, MB/s and peak RSS.
#
# usage: bench_merge.sh SPULSE WORKDIR   (env: MERGE_INPUTS=4
#        MERGE_SAMPLES=2500000 MERGE_RUNS=3)
set -eu
sp=$1
dir=$2
n=${MERGE_INPUTS:-4}
samples=${MERGE_SAMPLES:-2500000}
runs=${MERGE_RUNS:-3}
mkdir -p "$dir"
ins=()
bytes_in=0
for ((i = 1; i <= n; i++)); do
	f=$dir/host$i-$samples.spulse
	[ -s "$f" ] || "$sp" synth -q -o "$f" --samples "$samples" --seed $i \
		--threads $((3 + i)) --cpus 4 --off-cpu 2000 --triggers 2
	ins+=("$f")
	bytes_in=$((bytes_in + $(stat -c %s "$f")))
done
best=
rss=
for ((r = 0; r < runs; r++)); do
	out=$( { /usr/bin/time -f "%e %M" "$sp" merge -q -o "$dir/merged.spulse" \
		"${ins[@]}"; } 2>&1 )
	t=${out% *}
	m=${out#* }
	if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then
		best=$t
		rss=$m
	fi
done
"$sp" check "$dir/merged.spulse" >/dev/null
bytes_out=$(stat -c %s "$dir/merged.spulse")
total=$((n * samples))
printf '%-8s %-12s %-10s %-10s %-9s %-14s %-9s %-9s\n' inputs samples \
	in_MB out_MB seconds samples/s MB/s rss_MB
awk -v n="$n" -v s="$total" -v bi="$bytes_in" -v bo="$bytes_out" \
	-v t="$best" -v m="$rss" 'BEGIN {
	if (t <= 0) t = 0.01
	printf "%-8d %-12d %-10.1f %-10.1f %-9.2f %-14.0f %-9.1f %-9.1f\n",
		n, s, bi / 1e6, bo / 1e6, t, s / t, bi / 1e6 / t, m / 1024 }'
rm -f "$dir/merged.spulse"
