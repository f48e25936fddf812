#!/usr/bin/env bash
# Drainer throughput: a fake debugfs dir of CPUS x SAMPLES samples drained
# with --once by the optimized build/spulse-drain. Prints a table; then the
# same with off-CPU intervals (one per ten samples), plainly and in flight
# mode (10 s ring, an offcpu>50ms trigger, three stalls -> three dumps). The fake
# stacks are random (few shared prefixes), so the intern tables are larger
# than a real profile's. Then the two targets of issue 11: merge throughput
# (decode + validate + merge + renumber + write) on 8 CPUs x 250,000 samples
# whose stacks repeat (gen_fake --stacks 2000: a pool per process, as a real
# profile), and the drainer's CPU while it drains 2 CPUs x 1,000 samples/s
# live for 20 s (gen_fake --steps appends every 200 ms; regular files, so
# the drainer sleeps --wake-ms between rounds as on relay files between
# sub-buffer switches). Needs /usr/bin/time (Debian package "time").
# The same drainer in the VM (TCG): tests/drain/cost-vm.sh (make bench-drain-vm).
#   bench.sh BINDIR [CPUS] [SAMPLES_PER_CPU]
set -eu
bin=$1
cpus=${2:-8}
per=${3:-100000}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
work=$(mktemp -d "${TMPDIR:-/tmp}/spulse-drain-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/spulse"
"$bin/gen_fake" --dir "$work/spulse" --truth "$work/truth" --cpus "$cpus" \
	--samples "$per" --seed 21
in_bytes=$(cat "$work"/spulse/cpu* "$work/spulse/meta" | wc -c)
# CPU time (user+sys) is the figure: the machine is shared, wall time is not.
# measure DIR OUT ARGS...: best of 3 by CPU time -> $best $wall $rss
measure() {
	local dir=$1 out=$2 run e u sy m cpu
	shift 2
	best=
	for run in 1 2 3; do
		read -r e u sy m < <(/usr/bin/time -f '%e %U %S %M' "$build/spulse-drain" \
			--debugfs "$dir" -o "$out" --once --no-kallsyms \
			--sync-ms 0 "$@" 2>&1 >/dev/null | tail -1)
		cpu=$(echo "$u + $sy" | bc -l)
		if [ -z "$best" ] || [ "$(echo "$cpu < $best" | bc -l)" = 1 ]; then
			best=$cpu
			wall=$e
			rss=$m
		fi
	done
}
measure "$work/spulse" "$work/out.spulse"
"$bin/verify_spool" "$work/out.spulse" "$work/truth" >/dev/null
out_bytes=$(stat -c %s "$work/out.spulse")
n=$((cpus * per))
printf '%s\n' "spulse-drain --once (best of 3 by CPU time)"
printf '  %-30s %d x %d = %d\n' "CPUs x samples" "$cpus" "$per" "$n"
printf '  %-30s %.1f MB (%.1f B/sample)\n' "input (per-CPU streams)" \
	"$(echo "$in_bytes / 1000000" | bc -l)" "$(echo "$in_bytes / $n" | bc -l)"
printf '  %-30s %.1f MB (%.1f B/sample)\n' "output spool" \
	"$(echo "$out_bytes / 1000000" | bc -l)" "$(echo "$out_bytes / $n" | bc -l)"
printf '  %-30s %.2f s (wall %.2f s)\n' "CPU time (user+sys)" "$best" "$wall"
printf '  %-30s %.0f\n' "samples/s per CPU second" "$(echo "$n / $best" | bc -l)"
printf '  %-30s %.1f\n' "input MB per CPU second" "$(echo "$in_bytes / 1000000 / $best" | bc -l)"
printf '  %-30s %s KiB\n' "peak RSS" "$rss"

# off-CPU intervals, plain and flight mode
mkdir -p "$work/oc"
"$bin/gen_fake" --dir "$work/oc" --truth "$work/oc.truth" --cpus "$cpus" \
	--samples "$per" --seed 22 --offcpu $((per / 10)) \
	--stall $((per / 4)):80 --stall $((per / 2)):80 --stall $((per * 3 / 4)):80
niv=$(grep -c '^O ' "$work/oc.truth")
measure "$work/oc" "$work/oc.spulse"
"$bin/verify_spool" "$work/oc.spulse" "$work/oc.truth" >/dev/null
printf '%s\n' "with off-CPU intervals ($niv intervals, waker stacks up to 350 frames)"
printf '  %-30s %.2f s (wall %.2f s), peak RSS %s KiB, spool %.1f MB\n' "plain: CPU time" \
	"$best" "$wall" "$rss" "$(echo "$(stat -c %s "$work/oc.spulse") / 1000000" | bc -l)"
measure "$work/oc" "$work/fl.spulse" --flight 10 --post 1 --trigger 'offcpu>50ms'
ndump=$(ls "$work"/fl-*.spulse 2>/dev/null | wc -l)
printf '  %-30s %.2f s (wall %.2f s), peak RSS %s KiB, %d dumps\n' "flight 10 s: CPU time" \
	"$best" "$wall" "$rss" "$ndump"

# ---- issue 11 targets ----------------------------------------------------
mkdir -p "$work/pool"
"$bin/gen_fake" --dir "$work/pool" --truth "$work/pool.truth" --cpus 8 \
	--samples 250000 --seed 23 --stacks 2000
measure "$work/pool" "$work/pool.spulse" --no-unwind-tables
"$bin/verify_spool" "$work/pool.spulse" "$work/pool.truth" >/dev/null
pool_n=2000000
pool_rate=$(echo "$pool_n / $best" | bc -l)
printf '%s\n' "merge throughput, stacks that repeat (8 x 250000, --stacks 2000; best of 3)"
printf '  %-30s %.3f s (wall %.2f s), %.1f B/sample in, %.1f B/sample out\n' "CPU time (user+sys)" \
	"$best" "$wall" "$(echo "$(cat "$work"/pool/cpu* | wc -c) / $pool_n" | bc -l)" \
	"$(echo "$(stat -c %s "$work/pool.spulse") / $pool_n" | bc -l)"
printf '  %-30s %.2fM\n' "samples/s per CPU second" "$(echo "$pool_rate / 1000000" | bc -l)"

# live: 2 CPUs x 1000 samples/s for 20 s
mkdir -p "$work/live"
"$bin/gen_fake" --dir "$work/live" --truth "$work/live.truth" --cpus 2 \
	--samples 20000 --steps 100 --step-ms 200 --seed 24 --stacks 500 &
gen=$!
for _ in $(seq 100); do
	[ -e "$work/live/meta" ] && break
	sleep 0.05
done
# --window-ms 1000: gen_fake writes a step CPU after CPU (the kernel's CPUs
# write at once); on a loaded machine one CPU's step can take longer than
# the default 100 ms window, and the drainer would rightly write the other
# CPU's samples first (late samples). The window does not change the cost.
"$build/spulse-drain" --debugfs "$work/live" -o "$work/live.spulse" \
	--no-kallsyms --no-unwind-tables --window-ms 1000 2>/dev/null &
dp=$!
t0=$(date +%s.%N)
wait $gen
sleep 0.5
# the drainer's CPU while it drained (/proc/PID/stat utime + stime)
read -r lu ls < <(sed 's/.*) //' "/proc/$dp/stat" | awk '{ print $12, $13 }')
le=$(echo "$(date +%s.%N) - $t0" | bc -l)
kill -INT $dp
wait $dp
"$bin/verify_spool" "$work/live.spulse" "$work/live.truth" >/dev/null
hz=$(getconf CLK_TCK)
live_cpu=$(echo "($lu + $ls) / $hz" | bc -l)
live_pct=$(echo "$live_cpu / $le * 100" | bc -l)
printf '%s\n' "live drain, 2 CPUs x 1000 samples/s, 20 s (default --wake-ms; CPU from /proc/PID/stat)"
printf '  %-30s %.2f s user+sys over %.1f s = %.3f %% of one core (%.1f us/sample)\n' \
	"drainer CPU" "$live_cpu" "$le" "$live_pct" "$(echo "$live_cpu / 40000 * 1000000" | bc -l)"

verdict() { if [ "$(echo "$1" | bc -l)" = 1 ]; then echo MET; else echo "NOT MET"; fi; }
printf '%s\n' "targets (issue 11, drainer)"
printf '  %-44s %-18s %-14s %s\n' target measured goal verdict
printf '  %-44s %-18s %-14s %s\n' "merge throughput (8 CPUs, stacks repeat)" \
	"$(printf '%.2fM samples/s' "$(echo "$pool_rate / 1000000" | bc -l)")" ">= 10M/s" \
	"$(verdict "$pool_rate >= 10000000")"
printf '  %-44s %-18s %-14s %s\n' "drainer CPU, 2 CPUs x 1000 samples/s (host)" \
	"$(printf '%.3f %%' "$live_pct")" "<= 1 %" "$(verdict "$live_pct <= 1")"
