#!/bin/sh
# Guest side of `make kunit` (busybox sh, run by tests/vm/init.sh).
#
# usage: guest-kunit.sh SPULSE_KO KUNIT_KO [BUSY [RT_ROUNDS]]
#
# Paths are host paths (the guest sees the host root at /host). Loads
# spulse.ko (whose EXPORT_SYMBOL_IF_KUNIT symbols the tests use), then
# spulse_kunit.ko, whose suites run during its init. insmod succeeds even
# when tests fail: the verdict is the KTAP in
# /sys/kernel/debug/kunit/<suite>/results, copied to /out/ktap/<suite>.ktap
# before the modules (and with them the debugfs files) go away. With BUSY
# (the static workload), guest-e2e.sh then runs the end-to-end scenarios
# and writes /out/ktap/spulse_e2e.ktap. With RT_ROUNDS (the RT debug
# kernel, tests/rt/run-rt.sh), tests/rt/guest-rt.sh runs last and writes
# /out/ktap/spulse_rt.ktap.
spulse_ko=/host$1
kunit_ko=/host$2
busy=${3:+/host$3}
rt_rounds=${4:-}
mkdir -p /out/ktap
rm -f /out/ktap/*.ktap

echo "guest-kunit: insmod spulse.ko"
insmod "$spulse_ko" || { echo "guest-kunit: insmod spulse.ko failed"; exit 3; }
echo "guest-kunit: insmod spulse_kunit.ko"
insmod "$kunit_ko" || { echo "guest-kunit: insmod spulse_kunit.ko failed"; exit 4; }

n=0
for d in /sys/kernel/debug/kunit/*/; do
	s=$(basename "$d")
	[ -r "$d/results" ] || continue
	cat "$d/results" > "/out/ktap/$s.ktap"
	n=$((n + 1))
done
echo "guest-kunit: collected KTAP of $n suites"

rmmod spulse_kunit || { echo "guest-kunit: rmmod spulse_kunit failed"; exit 5; }
rmmod spulse || { echo "guest-kunit: rmmod spulse failed"; exit 6; }
echo "guest-kunit: modules unloaded"
if [ -n "$busy" ]; then
	sh "$VM_SCRIPT_DIR/guest-e2e.sh" "$spulse_ko" "$busy" /out/ktap/spulse_e2e.ktap
fi
if [ -n "$busy" ] && [ -n "$rt_rounds" ]; then
	sh "$VM_SCRIPT_DIR/../rt/guest-rt.sh" "$spulse_ko" "$busy" "$rt_rounds" \
		/out/ktap/spulse_rt.ktap
fi
exit 0
