# spulse.ko on the PREEMPT_RT debug kernel (tests/rt, docs/KUNIT.md "RT
# debug kernel"): linux-source-6.12 with PREEMPT_RT, lockdep
# (PROVE_RAW_LOCK_NESTING), DEBUG_ATOMIC_SLEEP, KASAN and the KUnit kernel's
# other debug options; the KUnit suites, the e2e scenarios and the RT
# scenarios (storm with thread churn, rmmod during the storm, hotplug
# rounds) in one boot, zero splats.
#
#   make check-rt      build/reuse the RT debug kernel and run it all, as
#                      suite "rt" ($(BUILD)/check/rt.result)
#   make rt-kernel     only build/reuse the RT debug kernel
#
# Not in CHECK_SUITES: a cold kernel build (30+ minutes on 2 cores) does not
# fit CI's budget on top of make check. Cached under
# ~/.cache/spulse/kunit-<pkgver>-<confighash>/ like the KUnit kernel.

.PHONY: check-rt rt-kernel
check-rt:
	@BUILD=$(BUILD) $(TOP)/tests/rt/run-rt.sh

rt-kernel:
	@$(TOP)/tests/kunit/build-kernel.sh --source 6.12 \
		--config $(TOP)/tests/kunit/debug.config --config $(TOP)/tests/rt/rt.config
