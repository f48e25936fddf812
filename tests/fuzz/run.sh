#!/usr/bin/env bash
# Run each libFuzzer target for FUZZ_SECONDS on a work corpus seeded from
# the committed one; write "PASSED FAILED" (targets) to RESULT.
# FUZZ_FORK=N: N worker processes per target (libFuzzer -fork=N).
# FUZZ_REPORT=1: also print coverage, corpus size and findings per target
# (make fuzz-long).
# usage: run.sh RESULT BINDIR SEEDDIR TARGET...
set -u
result=$1 bindir=$2 seeds=$3
shift 3
secs=${FUZZ_SECONDS:-15}
fork=${FUZZ_FORK:-}
passed=0
failed=0
for t in "$@"; do
	work=$bindir/work/$t
	mkdir -p "$work"
	log=$bindir/$t.log
	extra=()
	[ -n "$fork" ] && [ "$fork" -gt 1 ] && extra+=(-fork="$fork" -ignore_crashes=1)
	start=$(date +%s)
	if (cd "$work" && "$bindir/fuzz_$t" -max_total_time="$secs" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$work/" "${extra[@]}" \
		"$work" "$seeds/$t") >"$log" 2>&1; then
		ok=1
	else
		ok=0
	fi
	# libFuzzer -fork=N exits 0 even when a worker crashed: count artifacts
	found=$(find "$work" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) -newermt "@$start" | wc -l)
	[ "$found" -eq 0 ] || ok=0
	runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
	if [ "$runs" -eq 0 ]; then	# -fork prints no final stats
		runs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#')
	fi
	if [ "$ok" -eq 1 ]; then
		echo "ok fuzz_$t: ${runs:-?} runs in ${secs}s"
		passed=$((passed + 1))
	else
		echo "FAILED fuzz_$t (log: $log)"
		grep -E 'ERROR|invariant|SUMMARY' "$log" | head -5
		failed=$((failed + 1))
	fi
	if [ "${FUZZ_REPORT:-}" = 1 ]; then
		last=$(grep -E 'cov: [0-9]+' "$log" | tail -1)
		cov=$(echo "$last" | grep -oE 'cov: [0-9]+' | awk '{print $2}')
		ft=$(echo "$last" | grep -oE 'ft: [0-9]+' | awk '{print $2}')
		corp=$(find "$work" -maxdepth 1 -type f ! -name 'crash-*' ! -name 'leak-*' \
			! -name 'timeout-*' ! -name 'oom-*' | wc -l)
		echo "   fuzz_$t: execs ${runs:-?}, cov ${cov:-?}, ft ${ft:-?}," \
			"corpus $corp files, findings $found" \
			"(CPU s $(( secs * (${fork:-1} > 1 ? ${fork:-1} : 1) )))"
	fi
done
mkdir -p "$(dirname "$result")"
echo "$passed $failed" > "$result"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
