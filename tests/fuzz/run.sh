#!/usr/bin/env bash
# Run each libFuzzer target for FUZZ_SECONDS on a work corpus seeded from
# the committed one; write "PASSED FAILED" (targets) to RESULT.
# usage: run.sh RESULT BINDIR SEEDDIR TARGET...
set -u
result=$1 bindir=$2 seeds=$3
shift 3
secs=${FUZZ_SECONDS:-15}
passed=0
failed=0
for t in "$@"; do
	work=$bindir/work/$t
	mkdir -p "$work"
	log=$bindir/$t.log
	if (cd "$bindir" && "$bindir/fuzz_$t" -max_total_time="$secs" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		"$work" "$seeds/$t") >"$log" 2>&1; then
		echo "ok fuzz_$t: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') runs in ${secs}s"
		passed=$((passed + 1))
	else
		echo "FAILED fuzz_$t (log: $log)"
		grep -E 'ERROR|invariant|SUMMARY' "$log" | head -5
		failed=$((failed + 1))
	fi
done
mkdir -p "$(dirname "$result")"
echo "$passed $failed" > "$result"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
