#!/usr/bin/env bash
# `make check-rt`: spulse.ko on the RT debug kernel, zero splats.
#
#   tests/rt/run-rt.sh
#
# 1. builds or reuses the RT debug kernel: Debian's linux-source-6.12
#    (bookworm-backports; fetched through a private apt config) with
#    tests/kunit/debug.config + tests/rt/rt.config (PREEMPT_RT, lockdep with
#    PROVE_RAW_LOCK_NESTING, DEBUG_ATOMIC_SLEEP, DEBUG_PREEMPT, KASAN, UBSAN,
#    KFENCE, DEBUG_LIST), cached in ~/.cache/spulse/kunit-<pkgver>-<hash>/
#    (tests/kunit/build-kernel.sh; a cold build is 30+ minutes on 2 cores);
# 2. runs tests/kunit/run-kunit.sh on it (KUNIT_NAME=rt): the KUnit suites,
#    the e2e scenarios (off-CPU storms with thread churn, rmmod during the
#    storm, hotplug, exec/exit) and tests/rt/guest-rt.sh (storm with churn,
#    rmmod during the storm x3, RT_ROUNDS hotplug rounds while recording and
#    while loading/unloading, lockdep still on at the end), one boot;
# 3. tests/rt/splat-check.sh over the console and the guest's dmesg.
# Result: $BUILD/check/rt.result ("passed failed"); the last line
# "N passed, N failed". Environment: BUILD, RT_ROUNDS (default 10),
# RT_VM_TIMEOUT (s, default 2400), KUNIT_APPEND, VM_TCG_THREAD (default
# single).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$top/build}
result=$build/check/rt.result
mkdir -p "$build/check"
t0=$(date +%s)
# One host thread for all vCPUs (docs/VM.md, "Text patching under TCG"):
# the scenarios load and unload the module, patching the scheduler's
# tracepoint and jump-label sites, while storms switch flat out.
export VM_TCG_THREAD=${VM_TCG_THREAD:-single}
BUILD=$build KUNIT_NAME=rt KUNIT_KSRC=6.12 \
	KUNIT_KCONFIG="$top/tests/kunit/debug.config $here/rt.config" \
	KUNIT_RT_ROUNDS=${RT_ROUNDS:-10} KUNIT_VM_TIMEOUT=${RT_VM_TIMEOUT:-2400} \
	"$top/tests/kunit/run-kunit.sh"
krc=$?
p=0 f=1
[ ! -f "$result" ] || read -r p f < "$result"
echo "rt: splat check of $build/rt/vm/console.log and dmesg.txt:"
"$here/splat-check.sh" "$build/rt/vm/console.log" "$build/rt/vm/dmesg.txt"
src=$?
if [ "$src" -eq 0 ]; then p=$((p + 1)); else f=$((f + 1)); fi
echo "$p $f" > "$result"
echo "rt: total $(( $(date +%s) - t0 )) s"
echo "$p passed, $f failed"
[ "$krc" -eq 0 ] && [ "$src" -eq 0 ]
