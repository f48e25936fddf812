#!/usr/bin/env bash
# Run each libFuzzer target on a work corpus seeded from the committed one;
# write "PASSED FAILED" (targets) to RESULT.
#   FUZZ_SECONDS=N      wall seconds per target (default 15; make check)
#   FUZZ_CPU_SECONDS=N  instead: run each target in chunks of at most
#                       FUZZ_CHUNK wall seconds (default 600) until the
#                       fuzzer processes have used N CPU seconds (user+sys,
#                       measured by /usr/bin/time), so a busy or niced
#                       machine still gives each target its CPU budget
#                       (make fuzz-long: 3600 = one CPU-hour per target)
#   FUZZ_RESUME=1       with FUZZ_CPU_SECONDS: keep a ledger per target
#                       ($BINDIR/work/TARGET.ledger: one line "CPU
#                       centiseconds, executions, wall seconds, end time"
#                       per chunk), count the budget, executions and
#                       findings over every run recorded there, and
#                       continue where an interrupted run stopped
#   FUZZ_JOBS=N         targets run N at a time (default 1)
#   FUZZ_FORK=N         N libFuzzer worker processes per target (-fork=N)
#   FUZZ_REPORT=1       also print coverage, corpus size and findings
# usage: run.sh RESULT BINDIR SEEDDIR TARGET...
set -u
result=$1 bindir=$(cd "$2" && pwd) seeds=$(cd "$3" && pwd)
shift 3
secs=${FUZZ_SECONDS:-15}
cpu_budget=${FUZZ_CPU_SECONDS:-}
chunk=${FUZZ_CHUNK:-600}
jobs=${FUZZ_JOBS:-1}
fork=${FUZZ_FORK:-}

# One libFuzzer run of WALL seconds; appends to LOG; prints its CPU time
# (user+sys) in hundredths of a second.
fuzz_once() {	# target wall log
	local t=$1 wall=$2 log=$3 work=$bindir/work/$1 extra=() tf
	[ -n "$fork" ] && [ "$fork" -gt 1 ] && extra+=(-fork="$fork" -ignore_crashes=1)
	tf=$(mktemp)
	(cd "$work" && /usr/bin/time -f '%U %S' -o "$tf" \
		"$bindir/fuzz_$t" -max_total_time="$wall" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$work/" "${extra[@]}" \
		"$work" "$seeds/$t") >>"$log" 2>&1
	local rc=$?
	# time(1) may print "Command exited with non-zero status N" first
	awk 'NF == 2 && $1 ~ /^[0-9.]+$/ {printf "%d\n", ($1 + $2) * 100}' "$tf" | tail -1
	rm -f "$tf"
	return $rc
}

# Fuzz one target; writes its summary lines to $bindir/$t.summary and
# "ok" or "failed" to $bindir/$t.verdict.
run_target() {	# target
	local t=$1 work=$bindir/work/$1 log=$bindir/$1.log ok=1
	local ledger=$bindir/work/$1.ledger
	local start cpu=0 used chunks=0 wall_used=0 t0 n
	mkdir -p "$work"
	: >"$log"
	start=$(date +%s)
	if [ -n "$cpu_budget" ]; then
		if [ "${FUZZ_RESUME:-}" = 1 ] && [ -s "$ledger" ]; then
			cpu=$(awk '{s += $1} END {print s + 0}' "$ledger")
			wall_used=$(awk '{s += $3} END {print s + 0}' "$ledger")
			chunks=$(wc -l <"$ledger")
			start=0	# findings: every artifact in the corpus dir
		fi
		while [ "$cpu" -lt $((cpu_budget * 100)) ]; do
			t0=$(date +%s)
			used=$(fuzz_once "$t" "$chunk" "$log.chunk") || ok=0
			cpu=$((cpu + ${used:-0}))
			chunks=$((chunks + 1))
			wall_used=$((wall_used + $(date +%s) - t0))
			n=$(grep -E '^stat::number_of_executed_units' "$log.chunk" |
				awk '{s += $2} END {print s + 0}')
			cat "$log.chunk" >>"$log"
			rm -f "$log.chunk"
			[ "${FUZZ_RESUME:-}" = 1 ] &&
				echo "${used:-0} $n $(($(date +%s) - t0)) $(date +%s)" >>"$ledger"
			[ "$ok" -eq 1 ] || break
			[ "${used:-0}" -gt 0 ] || { ok=0; break; }
		done
	else
		cpu=$(fuzz_once "$t" "$secs" "$log") || ok=0
		cpu=${cpu:-0}
		wall_used=$(($(date +%s) - start))
		chunks=1
	fi
	# libFuzzer -fork=N exits 0 even when a worker crashed: count artifacts
	local found runs last cov ft corp
	found=$(find "$work" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) -newermt "@$start" | wc -l)
	[ "$found" -eq 0 ] || ok=0
	if [ "${FUZZ_RESUME:-}" = 1 ] && [ -s "$ledger" ]; then
		runs=$(awk '{s += $2} END {print s + 0}' "$ledger")
	else
		runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
	fi
	if [ "$runs" -eq 0 ]; then	# -fork prints no final stats
		runs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#')
	fi
	{
		if [ "$ok" -eq 1 ]; then
			echo "ok fuzz_$t: ${runs:-?} runs in ${wall_used}s"
		else
			echo "FAILED fuzz_$t (log: $log)"
			grep -E 'ERROR|invariant|SUMMARY' "$log" | head -5
		fi
		if [ "${FUZZ_REPORT:-}" = 1 ]; then
			last=$(grep -E 'cov: [0-9]+' "$log" | tail -1)
			cov=$(echo "$last" | grep -oE 'cov: [0-9]+' | awk '{print $2}')
			ft=$(echo "$last" | grep -oE 'ft: [0-9]+' | awk '{print $2}')
			corp=$(find "$work" -maxdepth 1 -type f ! -name 'crash-*' ! -name 'leak-*' \
				! -name 'timeout-*' ! -name 'oom-*' | wc -l)
			echo "   fuzz_$t: execs ${runs:-?}, cov ${cov:-?}, ft ${ft:-?}," \
				"corpus $corp files, findings $found," \
				"CPU s $((cpu / 100)) (measured), wall s $wall_used, runs $chunks"
		fi
	} >"$bindir/$t.summary"
	[ "$ok" -eq 1 ] && echo ok >"$bindir/$t.verdict" || echo failed >"$bindir/$t.verdict"
}

pids=()
for t in "$@"; do
	rm -f "$bindir/$t.verdict" "$bindir/$t.summary"
	run_target "$t" &
	pids+=($!)
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
done
wait
passed=0
failed=0
for t in "$@"; do
	cat "$bindir/$t.summary" 2>/dev/null || echo "FAILED fuzz_$t (no summary)"
	if [ "$(cat "$bindir/$t.verdict" 2>/dev/null)" = ok ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
mkdir -p "$(dirname "$result")"
echo "$passed $failed" > "$result"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
