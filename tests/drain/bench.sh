#!/usr/bin/env bash
# Drainer throughput: a fake debugfs dir of CPUS x SAMPLES samples drained
# with --once by the optimized build/spulse-drain. Prints a table. The fake
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
best=
wall=
rss=
for run in 1 2 3; do
	read -r e u sy m < <(/usr/bin/time -f '%e %U %S %M' "$build/spulse-drain" \
		--debugfs "$work/spulse" -o "$work/out.spulse" --once --no-kallsyms \
		--sync-ms 0 2>&1 >/dev/null | tail -1)
	cpu=$(echo "$u + $sy" | bc -l)
	if [ -z "$best" ] || [ "$(echo "$cpu < $best" | bc -l)" = 1 ]; then
		best=$cpu
		wall=$e
		rss=$m
	fi
done
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
