#!/usr/bin/env bash
# The latency suite: off-CPU capture checked against the injector's own
# truth (tests/workload/inject.c). Builds what it needs, copies the
# binaries into the VM output directory (visible in the guest at the same
# path even when BUILD is under the host's /tmp, which the guest hides),
# boots the stock-kernel VM once (tests/e2e/guest-latency.sh), then checks
# on the host (tests/e2e/check_latency.py). Writes $BUILD/check/latency.result.
#
# Environment: BUILD (default <repo>/build), LATENCY_KO (spulse.ko to test,
# default <repo>/spulse.ko built by `make module`), LATENCY_TIMEOUT (VM
# hang guard, s, default 360: the guest's runs took 158 s at load 25),
# LATENCY_FREQ (on-CPU sampling Hz, 199), LATENCY_MIN_US
# (offcpu_min_us, 100), LATENCY_WAITS (waits per blocking scenario, 40),
# LATENCY_RUNQ_MS (run-queue phase, 1500), LATENCY_RUNS (the guest's runs,
# "raw drain flight perf stop"), LATENCY_RUN_LIMIT (s a guest run may take
# before its stacks are saved and its processes killed, 75), LATENCY_TRACE=1 (trace CPU 0's scheduler and
# workqueue events in the raw and drain runs: the checker then names who ran
# on CPU 0 while the control spinner waited, tests/e2e/latency_cpu0.py).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/latency
result=$BUILD/check/latency.result
mkdir -p "$BUILD/check"
rm -f "$result"

ko=${LATENCY_KO:-$top/spulse.ko}
if [ -z "${LATENCY_KO:-}" ]; then
	make --no-print-directory -C "$top" module >/dev/null ||
		echo "latency: building spulse.ko (make module) failed"
fi
for t in "$BUILD/spulse-drain" "$BUILD/spulse" "$BUILD/workload/inject"; do
	make --no-print-directory -C "$top" BUILD="$BUILD" "$t" >/dev/null ||
		echo "latency: building $t failed"
done

# the stop run's target (static: it runs outside the guest's /host chroot)
cc -static -O1 -Wall -Wextra -Werror -o "$BUILD/latency-stopmap" "$top/tests/e2e/stopmap.c" ||
	echo "latency: building stopmap failed"

rm -rf "$out"
mkdir -p "$out/bin" "$out/raw" "$out/drain" "$out/flight" "$out/stop"
for f in "$ko" "$BUILD/spulse" "$BUILD/spulse-drain" "$BUILD/workload/inject"; do
	[ -f "$f" ] && cp -p "$f" "$out/bin/" || echo "latency: missing $f"
done
cp -p "$BUILD/latency-stopmap" "$out/bin/stopmap" 2>/dev/null || echo "latency: missing stopmap"
cat > "$out/params" <<P
FREQ=${LATENCY_FREQ:-199}
MIN_US=${LATENCY_MIN_US:-100}
NWAITS=${LATENCY_WAITS:-80}
RUNQ_MS=${LATENCY_RUNQ_MS:-1500}
FLIGHT_S=2
STALL_MS=100
PRE_MS=3000
POST_MS=1500
TRACE_CPU0=${LATENCY_TRACE:-0}
RUNS="${LATENCY_RUNS:-raw drain flight perf stop}"
RUN_LIMIT=${LATENCY_RUN_LIMIT:-75}
P
t0=$(date +%s)
# tsc=reliable: under TCG the guest's clocksource watchdog marks the TSC
# unstable, and the unstable sched_clock is clamped to a tick past the last
# tick, so a thread waking on an idle vCPU is charged CPU time it never ran
# (the injector's truth then has its waits "on CPU" for 4 or 8 ms, a tick
# or two at HZ=250; raw.pipe had 0-11 of 40 waits with an exact truth). The
# TCG TSC is the host clock, the same on every vCPU.
"$top/tests/vm/run-vm.sh" --timeout "${LATENCY_TIMEOUT:-360}" --out "$out" \
	--append "${LATENCY_APPEND-tsc=reliable}" -- \
	"$top/tests/e2e/guest-latency.sh" "$out/bin"
echo "latency: vm exit $? after $(( $(date +%s) - t0 )) s (console: $out/console.log)"
python3 "$top/tests/e2e/check_latency.py" "$out" "$result"
read -r p f < "$result" || { p=0; f=1; }
# The checker's own self-test: streams of a perfect kernel, hand-encoded
# from a host run of the injector, pass; planted faults are caught.
self=$(python3 "$top/tests/e2e/fake_latency.py" "$out/bin/inject" "$out/bin/spulse" \
	"$out/selftest" 2>&1)
echo "$self"
sp=$(grep -c '^PASS' <<< "$self")
sf=$(grep -c '^FAIL' <<< "$self")
[ "$sp" -gt 0 ] || sf=$((sf + 1))
p=$((p + sp)); f=$((f + sf))
echo "$p $f" > "$result"
echo "latency: $p passed, $f failed"
[ "$f" -eq 0 ]
