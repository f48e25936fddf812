#!/usr/bin/env bash
# What spulse-drain costs in the VM (tests/vm/run-vm.sh, stock kernel, TCG,
# 2 vCPUs): spulse.ko at FREQ Hz on a 2-thread CPU-bound workload (gt); per
# mode the drainer's CPU from /proc/PID/stat over SECONDS (threads too),
# its start-up CPU (first 3 s: open, kallsyms copy, start). TCG runs
# everything (the drainer too) many times slower than the host; bench.sh
# gives the host-side figure.
#   cost-vm.sh [SECONDS] [FREQ] [MODE...]   (guest-cost.sh: MODE syntax)
# Default modes: tmp (spool on the guest's tmpfs) and out (on the 9p
# share), both with build/spulse-drain.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
secs=${1:-20}
freq=${2:-1000}
shift 2 2>/dev/null || shift $#
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(tmp:tmp:spulse-drain out:out:spulse-drain)
out=${COST_OUT:-$BUILD/drain-cost}
make --no-print-directory -C "$top" module "$BUILD/spulse-drain" workloads >/dev/null ||
	{ echo "cost-vm: build failed" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
"$top/tests/vm/run-vm.sh" --timeout $(((secs + 40) * ${#modes[@]} + 200)) --out "$out" -- \
	"$top/tests/drain/guest-cost.sh" "$BUILD" "$secs" "$freq" "${modes[@]}" \
	>"$out/run-vm.log" 2>&1 ||
	{ echo "cost-vm: run-vm failed (see $out/console.log)" >&2; exit 1; }
v() { awk -v k="$1" '$1 == k { $1 = ""; print substr($0, 2) }' "$out/cost.txt"; }
hz=$(v clk_tck)
printf '%s\n' "spulse-drain in the VM (TCG, 2 vCPUs, spulse.ko freq $freq, gt burning 2 threads, ${secs} s windows)"
printf '  %-10s %9s %9s %9s %9s %9s %9s %9s\n' mode samples/s "user s" "sys s" "CPU %" "us/sample" "start s" "sched %"
for m in "${modes[@]}"; do
	n=${m%%:*}
	read -r su ss <<<"$(v "$n.startup")"
	read -r eu es <<<"$(v "$n.end")"
	ws=$(v "$n.window_s")
	wn=$(v "$n.window_samples")
	u=$(echo "($eu - $su) / $hz" | bc -l)
	s=$(echo "($es - $ss) / $hz" | bc -l)
	ra=$(v "$n.run_ns_a")
	rb=$(v "$n.run_ns_b")
	printf '  %-10s %9.0f %9.2f %9.2f %9.2f %9.1f %9.2f %9.2f\n' "$n" "$(echo "$wn / $ws" | bc -l)" \
		"$u" "$s" "$(echo "($u + $s) / $ws * 100" | bc -l)" \
		"$(echo "($u + $s) / ($wn + 0.000001) * 1000000" | bc -l)" \
		"$(echo "($su + $ss) / $hz" | bc -l)" \
		"$(echo "(${rb:-0} - ${ra:-0}) / 1000000000 / $ws * 100" | bc -l)"
done
printf '%s\n' "  user/sys/CPU %: /proc/PID/stat utime+stime over the window (tick-sampled);" \
	"  sched %: the threads' on-CPU time from /proc/PID/task/*/schedstat; start s: CPU" \
	"  in the first 3 s (open, kernel symbols copy, start)" 
