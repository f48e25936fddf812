# Suite nmi (issue 21 item 2; tests/nmi/, docs/RT.md): the sample path in
# NMI context on the KUnit debug kernel. spulse.ko event=bp samples from a
# perf execute breakpoint (x86 runs a kernel-mode #DB as an NMI) at
# pipe_read while pingpong switches, and at copy_from_user_nmi (hit inside
# spulse's own off-CPU probes), with off-CPU recording, flushes, triggers
# and unwind-table churn; refused parameters; zero splats.
#
#   make check-nmi   suite "nmi" (NMI_SECS per phase, default 25)
#   make nmi-rt      the same on the PREEMPT_RT debug kernel (not in check)

CHECK_SUITES += nmi
.PHONY: check-nmi

check-nmi:
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) $(TOP)/tests/nmi/run.sh

# The same on the PREEMPT_RT debug kernel (tests/rt/rt.config; not in make
# check: a cold build of that kernel is 30+ minutes, see mk/rt.mk)
.PHONY: nmi-rt
nmi-rt:
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) NMI_KERNEL=rt $(TOP)/tests/nmi/run.sh
