#!/usr/bin/env bash
# Drainer throughput: a fake debugfs dir of CPUS x SAMPLES samples drained
# with --once by the optimized build/spulse-drain. Prints a table; then the
# same with off-CPU intervals (one per ten samples), plainly and in flight
# mode (10 s ring, an offcpu>50ms trigger, three stalls -> three dumps). The fake
# stacks are random (few shared prefixes), so the intern tables are larger
# than a real profile's. Needs /usr/bin/time (Debian package "time").
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
