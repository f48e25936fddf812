#!/usr/bin/env bash
# make bench-rt: the wakeup latency spulse adds on a PREEMPT_RT kernel
# (issue 21 item 3; docs/RT.md). In ONE boot of Debian's stock RT kernel
# (default 6.12-rt of tests/kernels/kernels.list; QEMU TCG, single host
# thread for both vCPUs), cyclictest (Debian rt-tests) measures timer
# wakeup latency while tests/workload/pingpong storms context switches,
# without a profiler, under `spulse record`, under `spulse record
# --off-cpu` and under `perf record -e sched:sched_switch -g` (all whole
# system), REPS times each, interleaved (bench/rt/guest.sh); then prints
# max and p99 per mode (bench/rt/table.py). Not part of make check.
#
#   BENCH_RT_KERNEL  kernel id (default 6.12-rt)
#   BENCH_RT_SECS    cyclictest duration per run in s (default 20)
#   BENCH_RT_REPS    repetitions per mode (default 3)
#   BENCH_RT_FREQ    spulse record -F (default 999, its default)
#   BENCH_RT_MODES   subset of "base spulse offcpu perfsw perfboth perfwake"
#                    (default "base spulse offcpu perfsw"; perfboth: perf
#                    record -g -e cpu-clock/freq=FREQ/ -e sched:sched_switch,
#                    with the on-CPU samples --off-cpu also takes)
#   BENCH_RT_CPUS    vCPUs (default 1: with two, single-threaded TCG runs
#                    one vCPU at a time and a wakeup waits for the other's
#                    time slice, so any work a profiler adds on the other
#                    vCPU shows up as latency; docs/RT.md)
#   BENCH_RT_ICOUNT  QEMU -icount shift (default 4: every guest instruction
#                    advances the guest clock by 2^4 ns, whatever the host
#                    does; "off" = the guest clock follows the host's, and a
#                    loaded host's preemption of QEMU becomes guest latency)
#   BENCH_RT_KPARAMS more spulse.ko parameters for the spulse modes
#                    (spulse record --module-params; e.g. offcpu_phase_stats=1
#                    puts the probes' phase times in the run lines)
#   BENCH_RT_OUT     output directory (default $BUILD/bench-rt)
#   BENCH_RT_SRC     head (default): spulse.ko from the committed sources
#                    (git archive HEAD: the checkout is shared and may hold
#                    half-done edits); worktree: from the checkout as it is
#
# cyclictest comes from the host release's rt-tests package (it runs in
# the host root inside the guest, like every tool there), fetched once with
# apt-get download through a private apt config under ~/.cache/spulse/apt/
# (tests/kernels/lib.sh) into ~/.cache/spulse/rt-tests-<version>/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
kl_prog=bench-rt
# shellcheck source=tests/kernels/lib.sh
. "$top/tests/kernels/lib.sh"
BUILD=${BUILD:-$top/build}
kid=${BENCH_RT_KERNEL:-6.12-rt}
secs=${BENCH_RT_SECS:-20}
reps=${BENCH_RT_REPS:-3}
freq=${BENCH_RT_FREQ:-999}
modes=${BENCH_RT_MODES:-base spulse offcpu perfsw}
cpus=${BENCH_RT_CPUS:-1}
srcmode=${BENCH_RT_SRC:-head}
icount=${BENCH_RT_ICOUNT:-4}
kparams=${BENCH_RT_KPARAMS:-}
out=${BENCH_RT_OUT:-$BUILD/bench-rt}
for v in "$secs" "$reps" "$freq" "$cpus"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || kl_die "BENCH_RT_SECS/REPS/FREQ/CPUS must be positive integers (got '$v')"
done
[[ $icount =~ ^([0-9]|10|off)$ ]] || kl_die "BENCH_RT_ICOUNT must be 0..10 or off (got '$icount')"
case $srcmode in head|worktree) ;; *) kl_die "BENCH_RT_SRC must be head or worktree (got '$srcmode')" ;; esac
for m in $modes; do
	case $m in base|spulse|offcpu|perfsw|perfboth|perfwake) ;; *) kl_die "unknown mode '$m' (base spulse offcpu perfsw perfboth perfwake)" ;; esac
done

# cyclictest: the host release's rt-tests, cached by version.
fetch_rt_tests() {
	local suite ver d tmp
	# shellcheck source=/dev/null
	suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$suite" ] || kl_die "cannot tell the host's Debian release (/etc/os-release)"
	kl_apt_update "$suite"
	ver=$(apt-cache "${KL_APT[@]}" show rt-tests 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -n 1)
	[ -n "$ver" ] || kl_die "no rt-tests package in $suite"
	d=$kl_cache/rt-tests-$ver
	if [ ! -x "$d/usr/bin/cyclictest" ]; then
		tmp=$(mktemp -d "$kl_cache/rt-tests.XXXXXX")
		(cd "$tmp" && apt-get "${KL_APT[@]}" -q download "rt-tests=$ver" >&2) ||
			{ rm -rf "$tmp"; kl_die "apt-get download rt-tests=$ver failed"; }
		dpkg-deb -x "$tmp"/rt-tests_*.deb "$tmp/x"
		rm -rf "$d"
		mv "$tmp/x" "$d"
		rm -rf "$tmp"
	fi
	echo "$d/usr/bin/cyclictest"
}

rm -rf "$out"
mkdir -p "$out/bin"
cyc=$(fetch_rt_tests)
cp "$cyc" "$out/bin/"
ldd "$out/bin/cyclictest" | grep -q 'not found' &&
	kl_die "cyclictest needs libraries the host lacks: $(ldd "$out/bin/cyclictest" | grep 'not found' | tr '\n' ' ')"
make --no-print-directory -C "$top" BUILD="$BUILD" "$BUILD/spulse" \
	"$BUILD/workload/pingpong" > "$out/build.log" 2>&1 ||
	{ tail -n 20 "$out/build.log" >&2; kl_die "building spulse and pingpong failed"; }
cp "$BUILD/spulse" "$BUILD/workload/pingpong" "$out/bin/"
# spulse.ko for that kernel (its headers, in its suite's chroot if listed
# so; kept beside the results, so kbuild rebuilds only what changed)
kmod=$BUILD/bench-rt-kmod/$kid
src=$top
if [ "$srcmode" = head ]; then
	src=$BUILD/bench-rt-kmod/src
	rm -rf "$src"
	mkdir -p "$src"
	git -C "$top" archive HEAD Kbuild kmod include | tar -x -C "$src" ||
		kl_die "git archive HEAD failed (BENCH_RT_SRC=worktree builds the checkout)"
fi
SRC=$src "$top/tests/kernels/build-module.sh" "$kid" "$kmod" > "$out/kmod.log" 2>&1 ||
	{ tail -n 20 "$out/kmod.log" >&2; kl_die "building spulse.ko for $kid failed"; }
cp "$kmod/spulse.ko" "$out/bin/"
{
	dirty=
	[ "$srcmode" = head ] ||
		dirty=$(git -C "$top" status --porcelain -- kmod Kbuild include 2>/dev/null | awk '{ print $2 }' | tr '\n' ' ')
	echo "module from $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)${dirty:+ + uncommitted: $dirty}"
	echo "rt-tests $(basename "$(dirname "$(dirname "$(dirname "$cyc")")")")"
	[ -z "$kparams" ] || echo "spulse.ko extra parameters: $kparams"
	echo "secs $secs reps $reps freq $freq vcpus $cpus (TCG, one host thread)$([ "$icount" = off ] || echo ", guest clock = instructions x 2^$icount ns (-icount shift=$icount,sleep=off)")"
} > "$out/host.txt"

nm=$(wc -w <<< "$modes")
# (with -icount the guest clock may run several times slower than the host's)
timeout=$((600 + reps * nm * (4 * secs + 60)))
vmrc=0
qargs=${VM_QEMU_ARGS:-}
[ "$icount" = off ] || qargs="$qargs -icount shift=$icount,sleep=off"
VM_QEMU_ARGS=$qargs VM_TCG_THREAD=${VM_TCG_THREAD:-single} "$top/tests/vm/run-vm.sh" \
	--kernel-id "$kid" --cpus "$cpus" --mem 2G --timeout "$timeout" --out "$out" -- \
	"$here/guest.sh" "$out/bin" "$secs" "$reps" "$freq" "$modes" "$kparams" >/dev/null || vmrc=$?
if [ "$vmrc" != 0 ]; then
	echo "bench-rt: the guest failed (run-vm exit $vmrc); $out/guest.log:" >&2
	tail -n 20 "$out/guest.log" >&2 || true
	grep -q '^run ' "$out/rt.txt" 2>/dev/null || exit 1
fi
# the spools of the last repetition: valid?
for f in spulse offcpu; do
	[ -s "$out/$f.spulse" ] || continue
	if "$out/bin/spulse" check "$out/$f.spulse" > "$out/$f.check" 2>&1; then
		echo "spool_check $f ok" >> "$out/host.txt"
	else
		echo "spool_check $f FAILED: $(head -n 1 "$out/$f.check")" >> "$out/host.txt"
	fi
done
python3 "$here/table.py" "$out" | tee "$out/table.txt"
[ "$vmrc" = 0 ] || { echo "bench-rt: INCOMPLETE (guest failed)" >&2; exit 1; }
