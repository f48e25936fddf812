#!/usr/bin/env bash
# Spool bytes and cpu records with and without release()'s grouping by CPU
# (issue 11, docs/DRAIN.md "Merging"): 2 CPUs whose samples alternate in
# time (gen_fake: periods 1.000 and 1.037 ms), SAMPLES in all, drained by the
# optimized build/spulse-drain in the merge's order (SPULSE_DRAIN_MERGE_ORDER=1,
# what the drainer wrote before) and grouped (the default). Rows: --once
# with random stacks (most bytes are definitions), --once with a pool of 200
# stacks per process (a real profile's repeats: most bytes are samples), and
# the same pool appended live in 200 ms steps (1,000 samples/s per CPU) to a
# drainer at the default --wake-ms, whose releases then hold one wake-up's
# samples, as when recording. Every spool is checked against the truth.
#   group-bytes.sh BINDIR [SAMPLES]     (BINDIR: gen_fake, verify_spool)
set -eu
bin=$1
samples=${2:-10000}
per=$((samples / 2))
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
work=$(mktemp -d "${TMPDIR:-/tmp}/spulse-group-bytes.XXXXXX")
trap 'rm -rf "$work"' EXIT

# drain NAME MODE [live]: drain fake NAME; prints "bytes cpu_records"
drain() {
	local name=$1 mode=$2 env= out=$work/$1-$2.spulse dp
	[ "$mode" = merge ] && env=1
	if [ "${3:-}" = live ]; then
		rm -rf "$work/$name"
		mkdir -p "$work/$name"
		"$bin/gen_fake" --dir "$work/$name" --truth "$work/$name.truth" \
			--cpus 2 --samples "$per" --seed 61 --stacks 200 \
			--steps $((per / 200)) --step-ms 200 &
		local gp=$!
		for _ in $(seq 100); do
			[ -e "$work/$name/meta" ] && break
			sleep 0.05
		done
		# --window-ms 1000: gen_fake writes a step CPU after CPU
		# (see bench.sh's live row)
		SPULSE_DRAIN_MERGE_ORDER=$env "$build/spulse-drain" \
			--debugfs "$work/$name" -o "$out" --no-kallsyms \
			--no-unwind-tables --window-ms 1000 2>/dev/null &
		dp=$!
		wait $gp
		sleep 0.5
		kill -INT $dp
		wait $dp
	else
		SPULSE_DRAIN_MERGE_ORDER=$env "$build/spulse-drain" \
			--debugfs "$work/$name" -o "$out" --once --no-kallsyms \
			--no-unwind-tables 2>/dev/null
	fi
	"$bin/verify_spool" "$out" "$work/$name.truth" >/dev/null
	echo "$(stat -c %s "$out") $("$build/spulse" check "$out" |
		awk '$1 == "cpu-records" { print $2 }')"
}

mkdir -p "$work/random" "$work/pool"
"$bin/gen_fake" --dir "$work/random" --truth "$work/random.truth" --cpus 2 \
	--samples "$per" --seed 61
"$bin/gen_fake" --dir "$work/pool" --truth "$work/pool.truth" --cpus 2 \
	--samples "$per" --seed 61 --stacks 200

printf '2 CPUs alternating, %d samples: spool bytes and cpu records\n' "$samples"
printf '  %-30s %-12s %12s %12s %10s\n' input order "spool bytes" "cpu records" B/sample
for row in "random:--once, random stacks:" "pool:--once, 200 stacks/process:" \
	"live:live 200 ms steps, pool:live"; do
	IFS=: read -r name label live <<<"$row"
	read -r mb mc < <(drain "$name" merge $live)
	read -r gb gc < <(drain "$name" grouped $live)
	printf '  %-30s %-12s %12d %12d %10.2f\n' "$label" "merge order" "$mb" "$mc" \
		"$(echo "$mb / $samples" | bc -l)"
	printf '  %-30s %-12s %12d %12d %10.2f  (%+.1f %% bytes)\n' "" grouped "$gb" "$gc" \
		"$(echo "$gb / $samples" | bc -l)" "$(echo "($gb - $mb) * 100 / $mb" | bc -l)"
done
